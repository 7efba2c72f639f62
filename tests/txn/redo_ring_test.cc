// RedoRing (txn/redo_ring.h): what a commit puts on the memory node for
// the survivors of its failure. A record written and marked done reads
// back whole, with its physical writes and logged redo; one whose done word
// was never written reads as not done; torn and stale units are skipped;
// room is reused only once a record is done and (with a log) covered by
// the node mark, and a full ring makes a commit wait, then fail naming
// the ring's size; a reopened ring starts empty.

#include "txn/redo_ring.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rdma/batch.h"
#include "rdma/memory_node_layout.h"
#include "tests/testing/test_fabric.h"

namespace strand::txn {
namespace {

constexpr rdma::ComputeNodeId kNode = 1;

class RedoRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric_ = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
    ASSERT_NE(fabric_, nullptr);
    ep_ = *(*fabric_->compute_node(kNode))->NewEndpoint();
    data_ = rdma::GlobalAddress(0, rdma::kFirstChunkOffset + (1 << 20));
  }
  std::unique_ptr<RedoRing> Open(uint64_t bytes = RedoRing::kMinBytes) {
    auto ring = RedoRing::Open(
        *fabric_, *ep_, kNode,
        {.bytes = bytes, .full_timeout = absl::Milliseconds(50)});
    EXPECT_TRUE(ring.ok()) << ring.status();
    return ring.ok() ? *std::move(ring) : nullptr;
  }
  // What a commit's write-through does: record, data, done word.
  RedoRing::Slot Commit(RedoRing& ring, uint64_t ts, std::string_view bytes,
                        bool done = true) {
    const RedoRing::Write writes[] = {{data_ + 8 * ts, bytes}};
    std::string record;
    auto slot = ring.Encode(
        ts, writes,
        {wal::RecordType::kCommit, ts, "redo-" + std::to_string(ts)}, &record);
    EXPECT_TRUE(slot.ok()) << slot.status();
    rdma::Batch batch;
    batch.Write(slot->record, record.data(), record.size());
    batch.Write(writes[0].remote, bytes.data(), bytes.size());
    if (done) batch.Write(slot->done, &ts, 8);
    EXPECT_TRUE(ep_->Execute(batch).ok());
    if (done) ring.Done(*slot);
    return *slot;
  }
  std::vector<RedoRing::Record> ReadAll() {
    auto records = RedoRing::Read(*ep_, kNode);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<RedoRing::Record>();
  }

  std::unique_ptr<rdma::Fabric> fabric_;
  std::unique_ptr<rdma::Endpoint> ep_;
  rdma::GlobalAddress data_;
};

TEST_F(RedoRingTest, RecordsReadBackWholeAndSayWhetherTheyFinished) {
  auto ring = Open();
  Commit(*ring, 5, "abcdefgh");
  Commit(*ring, 6, "0123456789abcdef", /*done=*/false);
  auto records = ReadAll();
  ASSERT_EQ(records.size(), 2u);
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.commit_ts < b.commit_ts;
  });
  EXPECT_EQ(records[0].commit_ts, 5u);
  EXPECT_TRUE(records[0].done);
  EXPECT_EQ(records[0].txn_id, 5u);
  EXPECT_EQ(records[0].redo, "redo-5");
  ASSERT_EQ(records[0].writes.size(), 1u);
  EXPECT_EQ(records[0].writes[0].remote, data_ + 40);
  EXPECT_EQ(records[0].writes[0].bytes, "abcdefgh");
  EXPECT_FALSE(records[1].done);
  EXPECT_EQ(records[1].writes[0].bytes, "0123456789abcdef");
}

TEST_F(RedoRingTest, ATornRecordIsSkipped) {
  auto ring = Open();
  const RedoRing::Slot torn = Commit(*ring, 7, "torn!!!!");
  Commit(*ring, 8, "intact!!");
  const uint64_t garbage = 0xdeadbeef;
  ASSERT_TRUE(ep_->Write(torn.record + 64, &garbage, 8).ok());
  auto records = ReadAll();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].commit_ts, 8u);
}

TEST_F(RedoRingTest, RoomIsReusedOnlyOnceDoneAndDurable) {
  auto ring = Open();
  std::atomic<uint64_t> mark{0};
  ring->set_durable_mark([&mark] { return mark.load(); });
  // Each record takes 2 units of 64 bytes; the ring holds ~1000 units.
  const std::string bytes(40, 'x');
  uint64_t ts = 1;
  for (; ts <= 400; ++ts) Commit(*ring, ts, bytes);
  EXPECT_EQ(ring->live_records(), 400u);
  // Nothing is durable: the ring fills, and a commit gives up.
  std::string record;
  const RedoRing::Write writes[] = {{data_, bytes}};
  absl::Status full;
  for (int i = 0; i < 200 && full.ok(); ++i, ++ts) {
    auto slot = ring->Encode(ts, writes, {}, &record);
    full = slot.status();
    if (slot.ok()) ring->Done(*slot);
  }
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_NE(full.message().find("--redo_ring_mb"), std::string::npos);
  // Once the log made them durable, the room comes back.
  mark = ts;
  auto slot = ring->Encode(ts + 1, writes, {}, &record);
  EXPECT_TRUE(slot.ok()) << slot.status();
  EXPECT_EQ(ring->live_records(), 1u);
}

TEST_F(RedoRingTest, AnUnfinishedRecordHoldsItsRoomAndBlocksLaterOnes) {
  auto ring = Open();
  const RedoRing::Slot pending = Commit(*ring, 1, "pending!", /*done=*/false);
  const std::string bytes(40, 'y');
  absl::Status full;
  for (uint64_t ts = 2; ts < 2000 && full.ok(); ++ts) {
    std::string record;
    const RedoRing::Write writes[] = {{data_, bytes}};
    auto slot = ring->Encode(ts, writes, {}, &record);
    full = slot.status();
    if (slot.ok()) ring->Done(*slot);
  }
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  ring->Done(pending);
  std::string record;
  const RedoRing::Write writes[] = {{data_, bytes}};
  EXPECT_TRUE(ring->Encode(5000, writes, {}, &record).ok());
}

TEST_F(RedoRingTest, RecordsWrapAroundTheEnd) {
  auto ring = Open();
  const std::string bytes(500, 'z');  // 10 units each
  for (uint64_t ts = 1; ts <= 1000; ++ts) Commit(*ring, ts, bytes);
  auto records = ReadAll();
  ASSERT_FALSE(records.empty());
  uint64_t newest = 0;
  for (const auto& r : records) {
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.writes[0].bytes, bytes);
    newest = std::max(newest, r.commit_ts);
  }
  EXPECT_EQ(newest, 1000u);
}

TEST_F(RedoRingTest, AReopenedRingIsEmptyAndKeepsItsPlace) {
  auto ring = Open();
  Commit(*ring, 3, "before!!");
  const rdma::GlobalAddress at = ring->address();
  ring.reset();
  ring = Open();
  EXPECT_EQ(ring->address(), at);
  EXPECT_TRUE(ReadAll().empty());
  // Another size than the deployment started with is refused.
  auto other =
      RedoRing::Open(*fabric_, *ep_, kNode, {.bytes = 2 * RedoRing::kMinBytes});
  EXPECT_TRUE(absl::IsFailedPrecondition(other.status())) << other.status();
}

TEST_F(RedoRingTest, ANodeWithoutARingHasNoRecords) {
  auto none = RedoRing::Read(*ep_, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace strand::txn
