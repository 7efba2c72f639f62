// EpochManager across processes (docs/design/slot_reuse.md, "Across
// processes"): three compute nodes, each with a manager of its own over
// one fabric, as if each ran in its own process, so nothing is shared but
// the pool's words (txn/pool_epochs.h). Transactions are driven by hand
// (Enter, Retire, Exit) and the engine's ticker by Tick, so every step is
// deterministic:
//   - a transaction open on node A holds back every batch node B seals
//     after A began, until A ends and A's node publishes again; then
//     exactly the batches sealed before A's last publish go back;
//   - a node that never publishes holds back every batch;
//   - a node's bound never passes its cached epoch nor an open
//     transaction's announcement, never decreases (whoever publishes),
//     and survives a new manager for the node (a restarted process).
// Runs on the backend of STRAND_TEST_FABRIC (tests/testing/test_fabric.h).

#include "txn/epoch_manager.h"

#include <memory>
#include <vector>

#include "cc/gcl_manager.h"
#include "cc/root_words.h"
#include "gtest/gtest.h"
#include "storage/heap_table.h"
#include "tests/testing/test_fabric.h"

namespace strand::txn {
namespace {

constexpr int kNodes = 3;
constexpr uint64_t kBatch = EpochManager::kBatchSlots;

class PoolEpochManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // MakeTestFabric, not CcCluster: on verbs it serves the memory node in
    // this process, so the words are reached over the device.
    fabric_ = testing::MakeTestFabric(testing::TestFabricOptions(1, kNodes));
    ASSERT_NE(fabric_, nullptr);
    for (int node = 0; node < kNodes; ++node) {
      auto manager = cc::GclManager::Create(*fabric_, node, cc::CcOptions());
      ASSERT_TRUE(manager.ok()) << manager.status();
      managers_.push_back(*std::move(manager));
      ctx_.push_back(*managers_.back()->NewThreadContext());
    }
    schema_ = *storage::Schema::Create({{"id", storage::ColumnType::kInt64}});
    auto root = storage::HeapTable::Create(*managers_[1], *ctx_[1],
                                           /*table_id=*/1, schema_);
    ASSERT_TRUE(root.ok()) << root.status();
    auto table =
        storage::HeapTable::Open(*managers_[1], *ctx_[1], *root, schema_);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = *std::move(table);
    for (int node = 0; node < kNodes; ++node) {
      epochs_.push_back(OpenManager(node));
      ASSERT_NE(epochs_.back(), nullptr);
    }
  }

  std::unique_ptr<EpochManager> OpenManager(int node) {
    auto epochs = EpochManager::InPool(endpoint(node), kNodes);
    EXPECT_TRUE(epochs.ok()) << epochs.status();
    return epochs.ok() ? *std::move(epochs) : nullptr;
  }

  rdma::Endpoint& endpoint(int node) { return ctx_[node]->endpoint(); }

  void Tick(int node) { ASSERT_TRUE(epochs_[node]->Tick(endpoint(node)).ok()); }
  void TickAll() {
    for (int node = 0; node < kNodes; ++node) Tick(node);
  }

  // One transaction on `node` that deletes a batch's worth of rows and
  // commits: its Exit seals them (the slots are made up: nothing reads
  // them, the table only keeps them for its next inserts).
  void DeleteBatch(int node) {
    EpochManager& epochs = *epochs_[node];
    const EpochManager::Slot slot = epochs.Enter();
    for (uint64_t i = 0; i < kBatch; ++i) {
      epochs.Retire(slot, *table_,
                    storage::TupleAddress::FromRaw(((next_row_++) + 1) << 12));
    }
    epochs.Exit(slot, endpoint(node));
  }

  // The pool's bound word of `node`, read as every process reads it.
  uint64_t Bound(int node) {
    auto bound = endpoint(0).FetchAndAdd(
        rdma::GlobalAddress(0, cc::kEpochBoundsOffset + 8 * node), 0);
    EXPECT_TRUE(bound.ok()) << bound.status();
    return bound.value_or(0);
  }

  void TearDown() override {
    // Users of a manager before it, managers (their handler threads)
    // before the fabric.
    epochs_.clear();
    table_.reset();
    ctx_.clear();
    managers_.clear();
    fabric_.reset();
  }

  std::unique_ptr<rdma::Fabric> fabric_;
  std::vector<std::unique_ptr<cc::GclManager>> managers_;
  std::vector<std::unique_ptr<cc::ThreadContext>> ctx_;
  storage::Schema schema_;
  std::unique_ptr<storage::HeapTable> table_;
  std::vector<std::unique_ptr<EpochManager>> epochs_;
  uint64_t next_row_ = 0;
};

TEST_F(PoolEpochManagerTest, OpenReaderOnOneNodeHoldsBackAnothersBatches) {
  TickAll();
  // A reader on node 0 has looked a row up and stays open.
  const EpochManager::Slot reader = epochs_[0]->Enter();
  // Node 1 deletes 3 batches; each seal tries to reclaim the earlier ones.
  for (int i = 0; i < 3; ++i) DeleteBatch(1);
  TickAll();
  TickAll();
  DeleteBatch(1);
  EXPECT_EQ(epochs_[1]->reclaimed(), 0u)
      << "a batch went back while a reader that may hold its slots is open";
  EXPECT_EQ(epochs_[1]->queued(), 4 * kBatch);
  // Node 0's bound stays at or below the reader's announcement however
  // often it publishes.
  EXPECT_LT(Bound(0), epochs_[1]->epoch());

  epochs_[0]->Exit(reader, endpoint(0));
  // Ended, but node 0 has not published since: still held back.
  DeleteBatch(1);
  EXPECT_EQ(epochs_[1]->reclaimed(), 0u);
  // Node 0 publishes (the engine's ticker would, within a few ms); node
  // 2 has published already but its cached epoch is old: it must too.
  TickAll();
  DeleteBatch(1);
  // Every batch sealed before the last publishes goes; the one sealed
  // just now waits (the others' bounds are not past it yet).
  EXPECT_EQ(epochs_[1]->reclaimed(), 5 * kBatch);
  EXPECT_EQ(epochs_[1]->queued(), kBatch);
}

TEST_F(PoolEpochManagerTest, NodeThatNeverPublishesHoldsBackEveryBatch) {
  Tick(0);
  Tick(1);  // node 2 never publishes (not started, or crashed)
  for (int i = 0; i < 4; ++i) {
    DeleteBatch(1);
    Tick(0);
    Tick(1);
  }
  DeleteBatch(1);
  EXPECT_EQ(epochs_[1]->reclaimed(), 0u);
  EXPECT_EQ(Bound(2), 0u);
  TickAll();
  DeleteBatch(1);
  EXPECT_EQ(epochs_[1]->reclaimed(), 5 * kBatch);
}

// Two publishers of one node's bound (a sealing transaction and the
// ticker; here two handles, one with a stale idea of the word): the word
// keeps the larger value whatever order they publish in.
TEST_F(PoolEpochManagerTest, PublishKeepsTheMaximum) {
  auto stale = PoolEpochs::Open(endpoint(1), kNodes);
  auto fresh = PoolEpochs::Open(endpoint(1), kNodes);
  ASSERT_TRUE(stale.ok() && fresh.ok());
  ASSERT_TRUE((*fresh)->Publish(endpoint(1), 7).ok());
  EXPECT_EQ(Bound(1), 7u);
  ASSERT_TRUE((*stale)->Publish(endpoint(1), 5).ok());
  EXPECT_EQ(Bound(1), 7u) << "a smaller bound overwrote a larger one";
  EXPECT_EQ((*stale)->published(), 7u);
  ASSERT_TRUE((*stale)->Publish(endpoint(1), 9).ok());
  ASSERT_TRUE((*fresh)->Publish(endpoint(1), 8).ok());
  EXPECT_EQ(Bound(1), 9u);
  auto min = (*fresh)->MinBound(endpoint(1));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(*min, 0u);  // nodes 0 and 2 have not published
}

TEST_F(PoolEpochManagerTest, BoundStaysBelowAnnouncementsAndNeverDecreases) {
  // A fresh pool: E = 0 and no node has published.
  EXPECT_EQ(epochs_[0]->epoch(), 0u);
  EXPECT_EQ(Bound(0), 0u);
  TickAll();
  const EpochManager::Slot old_reader = epochs_[0]->Enter();  // announces 0
  // E = 3.
  for (int i = 0; i < 3; ++i) DeleteBatch(2);
  TickAll();
  // The bound is min(cached epoch, announcements): the reader's 0.
  EXPECT_EQ(epochs_[0]->epoch(), 3u);
  EXPECT_EQ(Bound(0), 0u);
  epochs_[0]->Exit(old_reader, endpoint(0));
  const EpochManager::Slot reader = epochs_[0]->Enter();  // announces 3
  TickAll();
  EXPECT_EQ(Bound(0), 3u);
  DeleteBatch(2);  // E = 4
  TickAll();
  EXPECT_EQ(Bound(0), 3u) << "published past an open transaction";
  epochs_[0]->Exit(reader, endpoint(0));
  TickAll();
  // Nothing open: the bound is the cached epoch, never more.
  EXPECT_EQ(Bound(0), 4u);
  EXPECT_EQ(epochs_[0]->pool()->published(), 4u);

  // A new manager for node 0 (its process restarted) keeps the bound its
  // predecessor left, and a transaction open there holds the bound where
  // it is: it never goes down, and stays <= the new transaction's 4.
  epochs_[0] = OpenManager(0);
  ASSERT_NE(epochs_[0], nullptr);
  EXPECT_EQ(epochs_[0]->epoch(), 4u);
  EXPECT_EQ(epochs_[0]->pool()->published(), 4u);
  const EpochManager::Slot after_restart = epochs_[0]->Enter();
  DeleteBatch(2);  // E = 5
  TickAll();
  EXPECT_EQ(Bound(0), 4u);
  epochs_[0]->Exit(after_restart, endpoint(0));
  TickAll();
  EXPECT_EQ(Bound(0), 5u);
}

}  // namespace
}  // namespace strand::txn
