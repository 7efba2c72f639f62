// CommitWatermark (txn/commit_watermark.h), driven by hand as its log's
// flusher would drive it, on two compute nodes of one fabric (each with a
// manager of its own, as if in its own process):
//   - a node mark never reaches a held slot's timestamp, nor falls below
//     the last one (a stale lower bound taken later does not pull it back);
//   - the cluster mark is the smallest node mark; a node that closed never
//     holds the others back;
//   - only persisted cluster marks acknowledge; a wait ends with the mark,
//     the log's failure, or a timeout that names the node holding it back;
//   - slots are finite and reused.
// Runs on the backend of STRAND_TEST_FABRIC (tests/testing/test_fabric.h).

#include "txn/commit_watermark.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "cc/gcl_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_fabric.h"

namespace strand::txn {
namespace {

using ::testing::HasSubstr;

constexpr int kNodes = 2;

class CommitWatermarkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric_ = testing::MakeTestFabric(testing::TestFabricOptions(1, kNodes));
    ASSERT_NE(fabric_, nullptr);
    for (int node = 0; node < kNodes; ++node) {
      auto manager = cc::GclManager::Create(*fabric_, node, cc::CcOptions());
      ASSERT_TRUE(manager.ok()) << manager.status();
      managers_.push_back(*std::move(manager));
      ctx_.push_back(*managers_.back()->NewThreadContext());
      oracles_.push_back(std::make_unique<TimestampOracle>(*managers_.back()));
      auto w = CommitWatermark::Open(*managers_.back(), *oracles_.back(), node,
                                     kNodes,
                                     {.ack_timeout = absl::Milliseconds(200)});
      ASSERT_TRUE(w.ok()) << w.status();
      marks_.push_back(*std::move(w));
    }
  }

  // A flush of `node` with nothing to write: its marks, then reported.
  wal::FlushMarks Flush(int node, bool persisted = true) {
    auto marks = marks_[node]->BeforeFlush();
    EXPECT_TRUE(marks.ok()) << marks.status();
    marks_[node]->AfterFlush(*marks, persisted);
    return *marks;
  }

  uint64_t Next(int node) { return *oracles_[node]->Next(*ctx_[node]); }

  std::unique_ptr<rdma::Fabric> fabric_;
  std::vector<std::unique_ptr<cc::GclManager>> managers_;
  std::vector<std::unique_ptr<cc::ThreadContext>> ctx_;
  std::vector<std::unique_ptr<TimestampOracle>> oracles_;
  std::vector<std::unique_ptr<CommitWatermark>> marks_;
};

TEST_F(CommitWatermarkTest, NodeMarkStaysBelowEveryHeldSlot) {
  for (int i = 0; i < 5; ++i) Next(0);  // timestamps 1..5
  auto slot = marks_[0]->NewSlot();
  ASSERT_TRUE(slot.ok());
  (*slot)->Hold(oracles_[0]->last_seen());  // a transaction begins
  EXPECT_EQ(Flush(0).node, 4u);             // it may log 5 or more
  const uint64_t ts = Next(1);              // taken on another node: 6
  (*slot)->Hold(ts);                        // e.g. a 2PC branch's
  EXPECT_EQ(Flush(0).node, ts - 1);
  (*slot)->Release();
  EXPECT_EQ(Flush(0).node, ts);  // the oracle's value now
  // A lower bound taken later but staler than the last mark (a slot held
  // from a node's old last_seen) does not pull the mark back: its holder's
  // timestamp comes after this scan, above the last mark.
  (*slot)->Hold(2);
  EXPECT_EQ(Flush(0).node, ts);
  marks_[0]->FreeSlot(*slot);
}

TEST_F(CommitWatermarkTest, ClusterMarkIsTheSmallestNodeMark) {
  for (int i = 0; i < 10; ++i) Next(0);
  auto slot = marks_[1]->NewSlot();
  ASSERT_TRUE(slot.ok());
  (*slot)->Hold(4);
  EXPECT_EQ(Flush(1).node, 3u);  // node 1 publishes 3
  const wal::FlushMarks m0 = Flush(0);
  EXPECT_EQ(m0.node, 10u);
  EXPECT_EQ(m0.cluster, 3u);
  EXPECT_EQ(marks_[0]->acknowledged(), 3u);
  (*slot)->Release();
  Flush(1);
  EXPECT_EQ(Flush(0).cluster, 10u);
  // A node whose log closed appends nothing more: only node 0 counts.
  marks_[1]->Closed();
  Next(0);
  EXPECT_EQ(Flush(0).cluster, 11u);
}

TEST_F(CommitWatermarkTest, OnlyPersistedClusterMarksAcknowledge) {
  for (int i = 0; i < 3; ++i) Next(0);
  Flush(1);
  const wal::FlushMarks m = Flush(0, /*persisted=*/false);
  EXPECT_EQ(m.cluster, 3u);
  EXPECT_EQ(marks_[0]->acknowledged(), 0u);
  // Idle, with a waiter: the writer is asked to persist the marks.
  EXPECT_FALSE(marks_[0]->WantsPersisted(m));
  marks_[0]->Want(3);
  EXPECT_TRUE(marks_[0]->WantsPersisted(m));
  std::thread waiter([&] { EXPECT_TRUE(marks_[0]->WaitAcknowledged(3).ok()); });
  absl::SleepFor(absl::Milliseconds(10));
  marks_[0]->AfterFlush(m, /*persisted=*/true);
  waiter.join();
  EXPECT_EQ(marks_[0]->acknowledged(), 3u);
  EXPECT_FALSE(marks_[0]->WantsPersisted(m));
}

TEST_F(CommitWatermarkTest, AWaitTimesOutNamingTheNodeThatHoldsItBack) {
  auto slot = marks_[1]->NewSlot();
  ASSERT_TRUE(slot.ok());
  (*slot)->Hold(1);  // node 1 stays at 0
  Flush(1);
  for (int i = 0; i < 3; ++i) Next(0);
  Flush(0);
  const absl::Status s = marks_[0]->WaitAcknowledged(3);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("held back by compute node 1"));
}

TEST_F(CommitWatermarkTest, AFailedLogEndsEveryWait) {
  std::thread waiter([&] {
    EXPECT_EQ(marks_[0]->WaitAcknowledged(100).code(),
              absl::StatusCode::kDataLoss);
  });
  absl::SleepFor(absl::Milliseconds(10));
  marks_[0]->Failed(absl::DataLossError("disk gone"));
  waiter.join();
}

TEST_F(CommitWatermarkTest, SlotsAreFiniteAndReused) {
  std::vector<CommitWatermark::Slot*> slots;
  for (size_t i = 0; i < CommitWatermark::kMaxSlots; ++i) {
    auto slot = marks_[0]->NewSlot();
    ASSERT_TRUE(slot.ok()) << i;
    slots.push_back(*slot);
  }
  EXPECT_EQ(marks_[0]->NewSlot().status().code(),
            absl::StatusCode::kResourceExhausted);
  marks_[0]->FreeSlot(slots[7]);
  auto again = marks_[0]->NewSlot();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, slots[7]);
  EXPECT_FALSE((*again)->held());
}

}  // namespace
}  // namespace strand::txn
