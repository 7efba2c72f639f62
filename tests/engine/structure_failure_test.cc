// A compute node fails in the middle of a structure change
// (docs/design/node_failure.md): after a B-link split wrote its new right
// node, or an insert its new heap page, and before it wrote the line that
// links it (base/failure_point.h). Memory must then hold an unlinked node or
// page, never a link to one it lacks. Rows are inserted by three compute
// nodes under keys spread over the whole index, so leaves and inner nodes
// split often; in each cycle one node is failed at that point, and once it
// is reclaimed the survivors check:
//   - every acknowledged row is found by its key, with its value;
//   - a scan of the whole index is strictly ordered and holds every
//     acknowledged key (no leaf lost, no dangling right link);
//   - a checkpoint, which walks every heap page and every tree, succeeds
//     (once the failed node rejoined: compute node 0 takes it).

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/failure_point.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;

constexpr int kNodes = 3;
constexpr int kThreadsPerNode = 2;
constexpr int kCycles = 12;
constexpr absl::Duration kLease = absl::Milliseconds(40);
constexpr absl::Duration kBound = absl::Seconds(10);

// The hook (a plain function: base/failure_point.h): fails `armed_node` at the
// first `armed_step` it reaches.
std::atomic<Engine*> hook_engine{nullptr};
std::atomic<int> armed_node{-1};
std::atomic<FailurePoint> armed_step{FailurePoint::kSplitLink};
std::atomic<bool> fired{false};

void FailAtLink(uint32_t node, FailurePoint step) {
  if (step != armed_step.load()) return;
  int expected = node;
  if (!armed_node.compare_exchange_strong(expected, -1)) return;
  // As if the process died here: what it writes from now on fails.
  EXPECT_TRUE(hook_engine.load()->FailNode(node).ok());
  fired = true;
}

// A bijection of 64-bit values (odd multiplier), so unique ids land all
// over the key space.
int64_t Spread(uint64_t id) {
  return static_cast<int64_t>(id * 0x9e3779b97f4a7c15ULL >> 1);
}

class StructureFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions o = testing::TxnTestOptions(
        {txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, kNodes});
    testing::EnableTestFailover(o, kLease);
    o.retry.max_retries = 50;
    o.cc.cache_bytes = 256 * 64;  // room for a split's and a check's lines
    // A log, for the checkpoint that walks every page and tree.
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("structure_failure_", getpid());
    std::filesystem::remove_all(dir_);
    o.wal.dir = dir_.string();
    o.wal.early_lock_release = true;
    o.wal.io_mode = wal::LogIoMode::kBuffered;
    o.wal.segment_bytes = 1 << 20;
    auto engine = Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"value", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    rows_ = *engine_->CreateTable("rows", *schema);
    by_id_ = *engine_->CreateIndex("rows_by_id", rows_, 8, true);
    const txn::TableId rows = rows_;
    const txn::IndexId by_id = by_id_;
    const storage::Schema* table_schema = *engine_->schema(rows_);
    insert_ = *engine_->RegisterProcedure(
        "insert", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                      [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                        storage::TupleBuffer t(*table_schema);
                        t.SetInt(0, id);
                        t.SetInt(1, ~id);
                        auto addr = txn.Insert(rows, t);
                        if (!addr.ok()) return addr.status();
                        if (absl::Status s =
                                txn.AddIndexEntry(by_id, AccountKey(id), *addr);
                            !s.ok()) {
                          return s;
                        }
                        return true;
                      }));
    scan_ = *engine_->RegisterProcedure(
        "scan", std::function<absl::StatusOr<std::vector<std::string>>(Txn&)>(
                    [=](Txn& txn) -> absl::StatusOr<std::vector<std::string>> {
                      std::vector<std::string> keys;
                      absl::Status s = txn.Scan(
                          by_id, std::nullopt, std::nullopt, /*forward=*/true,
                          UINT64_MAX,
                          [&](std::string_view key, storage::TupleAddress) {
                            keys.emplace_back(key);
                            return true;
                          });
                      if (!s.ok()) return s;
                      return keys;
                    }));
    // The value of the row of each id, or an error naming the first
    // missing or wrong one.
    read_ = *engine_->RegisterProcedure(
        "read",
        std::function<absl::StatusOr<bool>(Txn&, std::vector<int64_t>)>(
            [=](Txn& txn, std::vector<int64_t> ids) -> absl::StatusOr<bool> {
              for (int64_t id : ids) {
                auto a = txn.Lookup(by_id, AccountKey(id));
                if (!a.ok()) return a.status();
                auto t = txn.Read(rows, *a);
                if (!t.ok()) return t.status();
                if (t->GetInt(0) != id || t->GetInt(1) != ~id) {
                  return absl::DataLossError(
                      absl::StrCat("row of id ", id, " is wrong"));
                }
              }
              return true;
            }));
    hook_engine = engine_.get();
    SetFailurePointHookForTesting(&FailAtLink);
  }
  void TearDown() override {
    SetFailurePointHookForTesting(nullptr);
    armed_node = -1;
    StopAll();
    engine_.reset();
    hook_engine = nullptr;
    std::filesystem::remove_all(dir_);
  }

  void StartNode(int node) {
    stop_[node] = false;
    for (int i = 0; i < kThreadsPerNode; ++i) {
      auto opened = engine_->NewSession(node);
      ASSERT_TRUE(opened.ok()) << opened.status();
      threads_[node].emplace_back(
          [this, node, i, session = *std::move(opened)] {
            while (!stop_[node].load()) {
              const uint64_t n = next_[node][i]++;
              const int64_t id = Spread((n << 8) | (node << 4) | i);
              auto r = session->Call(insert_, id);
              if (!r.ok()) continue;
              absl::MutexLock lock(&acked_mu_);
              acked_.push_back(id);
            }
          });
    }
  }
  void StopNode(int node) {
    stop_[node] = true;
    for (std::thread& t : threads_[node]) t.join();
    threads_[node].clear();
  }
  void StopAll() {
    for (int n = 0; n < kNodes; ++n) StopNode(n);
  }
  size_t Acked() {
    absl::MutexLock lock(&acked_mu_);
    return acked_.size();
  }

  // With every worker stopped: reads through `survivor`.
  void Check(int survivor) {
    std::vector<int64_t> acked;
    {
      absl::MutexLock lock(&acked_mu_);
      acked = acked_;
    }
    auto session = engine_->NewSession(survivor);
    ASSERT_TRUE(session.ok()) << session.status();
    // In slices: a 2PL transaction keeps every page it read latched, and
    // the cache is small.
    constexpr size_t kSlice = 32;
    for (size_t i = 0; i < acked.size(); i += kSlice) {
      const std::vector<int64_t> slice(
          acked.begin() + i,
          acked.begin() + std::min(i + kSlice, acked.size()));
      auto read = (*session)->Call(read_, slice);
      ASSERT_TRUE(read.ok())
          << "an acknowledged row is lost: " << read.status();
    }
    auto keys = (*session)->Call(scan_);
    ASSERT_TRUE(keys.ok()) << keys.status();
    EXPECT_TRUE(std::adjacent_find(keys->begin(), keys->end(),
                                   std::greater_equal<>()) == keys->end())
        << "the index scan is not strictly ordered";
    size_t missing = 0;
    for (int64_t id : acked) {
      if (!std::binary_search(keys->begin(), keys->end(), AccountKey(id))) {
        ++missing;
      }
    }
    EXPECT_EQ(missing, 0u) << "acknowledged keys the scan did not see, of "
                           << acked.size();
  }
  // Walks every heap page and every tree: a link to a page or node memory
  // lacks fails it. Through compute node 0, which must be live.
  void CheckPages() {
    auto checkpoint = engine_->Checkpoint();
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Engine> engine_;
  txn::TableId rows_ = 0;
  txn::IndexId by_id_ = 0;
  Procedure<bool(int64_t)> insert_;
  Procedure<std::vector<std::string>()> scan_;
  Procedure<bool(std::vector<int64_t>)> read_;
  std::vector<std::thread> threads_[kNodes];
  std::atomic<bool> stop_[kNodes];
  uint64_t next_[kNodes][kThreadsPerNode] = {};
  absl::Mutex acked_mu_;
  std::vector<int64_t> acked_ ABSL_GUARDED_BY(acked_mu_);
};

TEST_F(StructureFailureTest, ANodeFailedBeforeItsLinkLeavesTheStructureWhole) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(33);
  int splits = 0, pages = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    const int victim = static_cast<int>(rng() % kNodes);
    const FailurePoint step =
        cycle % 2 == 0 ? FailurePoint::kSplitLink : FailurePoint::kNewPageLink;
    fired = false;
    armed_step = step;
    armed_node = victim;
    const absl::Time deadline = absl::Now() + kBound;
    while (!fired.load() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    armed_node = -1;
    ASSERT_TRUE(fired.load()) << "node " << victim << " made no such change";
    (step == FailurePoint::kSplitLink ? splits : pages)++;
    stop_[victim] = true;
    ASSERT_TRUE(engine_->WaitReclaimed(victim, kBound).ok());
    // The survivors go on inserting into the structure it left.
    const size_t before = Acked();
    while (Acked() < before + 20 && absl::Now() < deadline + kBound) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    EXPECT_GE(Acked(), before + 20) << "the survivors stopped inserting";
    StopAll();
    Check((victim + 1) % kNodes);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(engine_->RejoinNode(victim).ok());
    CheckPages();
    for (int n = 0; n < kNodes; ++n) StartNode(n);
  }
  StopAll();
  Check(0);
  CheckPages();
  EXPECT_EQ(splits + pages, kCycles);
}

}  // namespace
}  // namespace strand::engine
