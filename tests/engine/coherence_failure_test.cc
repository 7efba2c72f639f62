// SELCC's coherence with compute nodes failing (docs/design/node_failure.md):
// the cache-level stress with failures injected, below transactions. Three
// compute nodes, each with a writer and a reader thread, work on a few
// GCLs through their GclManagers directly (latches, no transactions).
// A writer takes a line exclusively, reads its counter, which is stored
// twice (first and last word of the payload), and writes it back plus
// one in both places; its unlock writes the line through. A reader takes
// it shared and reads both words. In each of kCycles cycles a random node
// fails (Engine::FailNode); the survivors must go on, and then:
//   - no reader ever saw the two words differ (nothing torn) or a line's
//     counter go back (reads are coherent, across the failure too);
//   - each line's counter is at least the number of its increments whose
//     unlock returned OK (none lost) and at most that plus the increments
//     whose unlock failed (none applied twice, none invented);
// then the failed node rejoins with a new cache. The litmus tests of
// tests/cc/selcc_litmus_test.cc run the same way: message passing (each
// node publishes data, then a flag, and no reader may see a flag newer
// than its data) and store buffering (each node stores a round number in
// its line, then reads the others': no two nodes may both miss each
// other's store), across failures too. LostAnswerTest, below: a holder
// fails after serving a request, before answering it.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/failure_point.h"
#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

constexpr int kNodes = 3;
constexpr int kLines = 6;
constexpr int kCycles = 20;
constexpr absl::Duration kLease = absl::Milliseconds(40);
constexpr absl::Duration kBound = absl::Seconds(5);

// What the litmus each node runs is.
enum class Litmus { kNone, kMessagePassing, kStoreBuffering };

// One store-buffering round of a node: it stored `k` in its line, then read
// `seen` in every node's line (its own: k).
struct Round {
  int64_t k;
  int64_t seen[kNodes];
};

struct LineCounts {
  std::atomic<int64_t> acked{0};    // increments whose unlock returned OK
  std::atomic<int64_t> unknown{0};  // increments whose unlock failed
};

class CoherenceFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions o = testing::TxnTestOptions(
        {txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, kNodes});
    testing::EnableTestFailover(o, kLease);
    auto engine = Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    cc::GclManager* manager = Manager(0);
    ASSERT_NE(manager, nullptr);
    payload_ = manager->payload_bytes();
    auto ctx = manager->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    for (int i = 0; i < kLines; ++i) {
      auto gcl = manager->Allocate(**ctx);  // all zero: counter 0
      ASSERT_TRUE(gcl.ok()) << gcl.status();
      lines_.push_back(*gcl);
    }
  }
  void TearDown() override {
    for (int n = 0; n < kNodes; ++n) StopNode(n);
    engine_.reset();
  }

  cc::GclManager* Manager(int node) {
    auto m = EngineInternals::manager(*engine_, node);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : nullptr;
  }

  // The two copies of a line's counter.
  static void Read(const uint8_t* payload, uint32_t size, int64_t* first,
                   int64_t* last) {
    std::memcpy(first, payload, 8);
    std::memcpy(last, payload + size - 8, 8);
  }

  // A writer and a reader thread on `node`: the counters' stress, or a
  // litmus.
  void StartNode(int node, Litmus litmus = Litmus::kNone) {
    stop_[node] = false;
    cc::GclManager* manager = Manager(node);
    ASSERT_NE(manager, nullptr);
    for (int role = 0; role < 2; ++role) {
      auto ctx = manager->NewThreadContext();
      ASSERT_TRUE(ctx.ok()) << ctx.status();
      threads_[node].emplace_back(
          [this, node, role, litmus, manager, ctx = *std::move(ctx)]() mutable {
            std::mt19937_64 rng(node * 10 + role + 7 * seed_++);
            if (role == 0 && litmus == Litmus::kMessagePassing) {
              Publish(node, *manager, *ctx);
            } else if (role == 0 && litmus == Litmus::kStoreBuffering) {
              StoreThenLoad(node, *manager, *ctx);
            } else if (role == 0) {
              Write(node, *manager, *ctx, rng);
            } else if (litmus == Litmus::kMessagePassing) {
              Observe(node, *manager, *ctx, rng);
            } else {
              ReadLoop(node, *manager, *ctx, rng);
            }
            ctx.reset();  // before the node's manager may go (a rejoin)
          });
    }
  }
  void StopNode(int node) {
    stop_[node] = true;
    for (std::thread& t : threads_[node]) t.join();
    threads_[node].clear();
  }

  void Write(int node, cc::GclManager& manager, cc::ThreadContext& ctx,
             std::mt19937_64& rng) {
    while (!stop_[node].load()) {
      const int line = static_cast<int>(rng() % kLines);
      auto g = manager.XLock(ctx, lines_[line]);
      if (!g.ok()) {  // a conflict, or this node failed
        std::this_thread::yield();
        continue;
      }
      int64_t first, last;
      Read(g->data(), payload_, &first, &last);
      if (first != last) {
        torn_.fetch_add(1);
        continue;
      }
      const int64_t next = first + 1;
      std::memcpy(g->MutableRange(0, 8), &next, 8);
      std::memcpy(g->MutableRange(payload_ - 8, 8), &next, 8);
      if (g->Unlock().ok()) {
        counts_[line].acked.fetch_add(1);
        ++writes_[node];
      } else {
        counts_[line].unknown.fetch_add(1);
      }
    }
  }

  void ReadLoop(int node, cc::GclManager& manager, cc::ThreadContext& ctx,
                std::mt19937_64& rng) {
    std::vector<int64_t> seen(kLines, 0);
    while (!stop_[node].load()) {
      const int line = static_cast<int>(rng() % kLines);
      const int64_t value = Load(node, manager, ctx, line);  // counts torn
      if (value < 0) continue;
      if (value < seen[line]) went_back_.fetch_add(1);
      seen[line] = std::max(seen[line], value);
    }
  }

  // Writes `value` to both copies of line 0's counter through `node`,
  // which keeps the line (memo M).
  void WriteLine(int node, int64_t value) {
    auto ctx = Manager(node)->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    auto g = Manager(node)->XLock(**ctx, lines_[0]);
    ASSERT_TRUE(g.ok()) << g.status();
    std::memcpy(g->MutableRange(0, 8), &value, 8);
    std::memcpy(g->MutableRange(payload_ - 8, 8), &value, 8);
    ASSERT_TRUE(g->Unlock().ok());
  }

  // A line's counter through `manager`, its latch retried for up to
  // kBound; its two copies must agree.
  void ReadChecked(cc::GclManager& manager, cc::ThreadContext& ctx, int line,
                   int64_t* value) {
    absl::StatusOr<cc::SharedGuard> g;
    const absl::Time deadline = absl::Now() + kBound;
    do {
      g = manager.SLock(ctx, lines_[line]);
    } while (!g.ok() && absl::Now() < deadline);
    ASSERT_TRUE(g.ok()) << g.status();
    int64_t last;
    Read(g->data(), payload_, value, &last);
    EXPECT_EQ(*value, last) << "line " << line << " is torn";
    (void)g->Unlock();
  }

  // Reads every line through `node` and checks its counter against the
  // increments made.
  void CheckLines(int node) {
    cc::GclManager* manager = Manager(node);
    ASSERT_NE(manager, nullptr);
    auto ctx = manager->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    for (int line = 0; line < kLines; ++line) {
      // Counted before the read: every increment acknowledged by then is
      // in the line.
      const int64_t acked = counts_[line].acked.load();
      int64_t value;
      ReadChecked(*manager, **ctx, line, &value);
      if (HasFatalFailure()) return;
      EXPECT_GE(value, acked) << "line " << line << " lost an increment";
    }
  }

  // Message passing: node n publishes k in line 2n (data), then in line
  // 2n + 1 (flag). Retries a latch until it is granted or `node` stops;
  // false if it stopped or the unlock failed (its node failed).
  bool Store(int node, cc::GclManager& manager, cc::ThreadContext& ctx,
             int line, int64_t value) {
    while (!stop_[node].load()) {
      auto g = manager.XLock(ctx, lines_[line]);
      if (!g.ok()) {
        std::this_thread::yield();
        continue;
      }
      std::memcpy(g->MutableRange(0, 8), &value, 8);
      std::memcpy(g->MutableRange(payload_ - 8, 8), &value, 8);
      return g->Unlock().ok();
    }
    return false;
  }
  // The line's value, or -1 once `node` stops.
  int64_t Load(int node, cc::GclManager& manager, cc::ThreadContext& ctx,
               int line) {
    while (!stop_[node].load()) {
      auto g = manager.SLock(ctx, lines_[line]);
      if (!g.ok()) {
        std::this_thread::yield();
        continue;
      }
      int64_t first, last;
      Read(g->data(), payload_, &first, &last);
      if (!g->Unlock().ok()) return -1;
      if (first != last) torn_.fetch_add(1);
      return first;
    }
    return -1;
  }
  void Publish(int node, cc::GclManager& manager, cc::ThreadContext& ctx) {
    // A rejoined node goes on from what memory holds: its last data may
    // have landed although its unlock failed.
    int64_t k = Load(node, manager, ctx, 2 * node);
    while (k >= 0 && !stop_[node].load()) {
      ++k;
      if (!Store(node, manager, ctx, 2 * node, k)) return;
      data_acked_[node].store(k);
      if (!Store(node, manager, ctx, 2 * node + 1, k)) return;
      flag_acked_[node].store(k);
      ++writes_[node];
    }
  }
  void Observe(int node, cc::GclManager& manager, cc::ThreadContext& ctx,
               std::mt19937_64& rng) {
    while (!stop_[node].load()) {
      const int publisher = static_cast<int>(rng() % kNodes);
      const int64_t flag = Load(node, manager, ctx, 2 * publisher + 1);
      const int64_t data = Load(node, manager, ctx, 2 * publisher);
      if (flag < 0 || data < 0) continue;
      ++observed_;
      if (data < flag) flag_before_data_.fetch_add(1);
    }
  }
  // Through `node`: every publisher's data is at least its flag, and
  // neither lost a store whose unlock returned OK.
  void CheckPublished(int node) {
    cc::GclManager* manager = Manager(node);
    ASSERT_NE(manager, nullptr);
    auto ctx = manager->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    for (int publisher = 0; publisher < kNodes; ++publisher) {
      const int64_t flag_acked = flag_acked_[publisher].load();
      const int64_t data_acked = data_acked_[publisher].load();
      int64_t flag, data;
      ReadChecked(*manager, **ctx, 2 * publisher + 1, &flag);
      if (HasFatalFailure()) return;
      ReadChecked(*manager, **ctx, 2 * publisher, &data);
      if (HasFatalFailure()) return;
      EXPECT_GE(data, flag)
          << "node " << publisher << "'s flag is newer than its data";
      EXPECT_GE(flag, flag_acked) << "node " << publisher << " lost a flag";
      EXPECT_GE(data, data_acked) << "node " << publisher << " lost data";
    }
  }

  // Store buffering: node n stores round k in line n, then reads every
  // other node's line. Rounds are recorded once complete; a rejoined node
  // goes on from what memory holds, so a node's rounds only grow.
  void StoreThenLoad(int node, cc::GclManager& manager,
                     cc::ThreadContext& ctx) {
    int64_t k = Load(node, manager, ctx, node);
    while (k >= 0 && !stop_[node].load()) {
      ++k;
      if (!Store(node, manager, ctx, node, k)) return;
      data_acked_[node].store(k);
      Round round{.k = k, .seen = {}};
      for (int other = 0; other < kNodes; ++other) {
        round.seen[other] = other == node ? k : Load(node, manager, ctx, other);
        if (round.seen[other] < 0) return;
      }
      rounds_[node].push_back(round);
      ++writes_[node];
    }
  }
  // Through `node`: no node's line lost a store whose unlock returned OK.
  void CheckStored(int node) {
    cc::GclManager* manager = Manager(node);
    ASSERT_NE(manager, nullptr);
    auto ctx = manager->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    for (int n = 0; n < kNodes; ++n) {
      const int64_t acked = data_acked_[n].load();
      int64_t value;
      ReadChecked(*manager, **ctx, n, &value);
      if (HasFatalFailure()) return;
      EXPECT_GE(value, acked) << "node " << n << " lost a store";
    }
  }
  // Under sequential consistency, if a's round saw b's line below b's
  // round r (so it read before b stored r), b's round r cannot have seen
  // a's line below a's round (b would have read before a stored it: a
  // cycle with program order). b's rounds see a's line grow, so its first
  // recorded round above what a saw is the one to check. Returns the
  // forbidden outcomes found.
  int64_t CountBothStoresMissed() const {
    int64_t forbidden = 0;
    for (int a = 0; a < kNodes; ++a) {
      for (int b = 0; b < kNodes; ++b) {
        if (a == b) continue;
        const std::vector<Round>& of_b = rounds_[b];
        for (const Round& ra : rounds_[a]) {
          auto rb = std::upper_bound(
              of_b.begin(), of_b.end(), ra.seen[b],
              [](int64_t v, const Round& r) { return v < r.k; });
          if (rb != of_b.end() && rb->seen[a] < ra.k) ++forbidden;
        }
      }
    }
    return forbidden;
  }
  // Each node's rounds store growing values and see every line grow.
  int64_t CountRoundsGoingBack() const {
    int64_t back = 0;
    for (int n = 0; n < kNodes; ++n) {
      for (size_t i = 1; i < rounds_[n].size(); ++i) {
        const Round& r = rounds_[n][i];
        const Round& before = rounds_[n][i - 1];
        if (r.k <= before.k) ++back;
        for (int m = 0; m < kNodes; ++m) back += r.seen[m] < before.seen[m];
      }
    }
    return back;
  }

  // kCycles times: fails a random node while the threads `start` made
  // run, waits until every survivor wrote again and the node is reclaimed,
  // runs `check` through a survivor, rejoins the node and starts it again.
  void RunCycles(uint64_t seed, const std::function<void(int)>& start,
                 const std::function<void(int)>& check) {
    std::mt19937_64 rng(seed);
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      SCOPED_TRACE(absl::StrCat("cycle ", cycle));
      absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
      const int victim = static_cast<int>(rng() % kNodes);
      ASSERT_TRUE(engine_->FailNode(victim).ok());
      for (int n = 0; n < kNodes; ++n) {
        if (n == victim) continue;
        const int64_t before = writes_[n].load();
        const absl::Time deadline = absl::Now() + kBound;
        while (writes_[n].load() <= before && absl::Now() < deadline) {
          absl::SleepFor(absl::Milliseconds(1));
        }
        EXPECT_GT(writes_[n].load(), before)
            << "survivor " << n << " wrote nothing within " << kBound;
      }
      ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
      check((victim + 1) % kNodes);
      StopNode(victim);
      ASSERT_TRUE(engine_->RejoinNode(victim).ok());
      start(victim);
      if (HasFatalFailure()) return;
    }
  }

  std::unique_ptr<Engine> engine_;
  std::vector<rdma::GlobalAddress> lines_;
  uint32_t payload_ = 0;  // bytes of a line's payload
  LineCounts counts_[kLines];
  std::vector<std::thread> threads_[kNodes];
  std::atomic<bool> stop_[kNodes] = {};
  std::atomic<int64_t> writes_[kNodes] = {};
  std::atomic<int64_t> torn_{0}, went_back_{0};
  std::atomic<int64_t> data_acked_[kNodes] = {}, flag_acked_[kNodes] = {};
  std::atomic<int64_t> observed_{0}, flag_before_data_{0};
  // Written by node n's litmus thread (one at a time), read once stopped.
  std::vector<Round> rounds_[kNodes];
  std::atomic<int> seed_{1};
};

TEST_F(CoherenceFailureTest, NothingTornLostOrBackwardsAcrossFailures) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  RunCycles(/*seed=*/3, [this](int node) { StartNode(node); },
            [this](int survivor) { CheckLines(survivor); });
  if (HasFatalFailure()) return;
  for (int n = 0; n < kNodes; ++n) StopNode(n);
  EXPECT_EQ(torn_.load(), 0) << "a reader or writer saw a torn line";
  EXPECT_EQ(went_back_.load(), 0) << "a reader saw a counter go back";
  CheckLines(0);
  cc::GclManager* manager = Manager(0);
  auto ctx = manager->NewThreadContext();
  ASSERT_TRUE(ctx.ok());
  for (int line = 0; line < kLines; ++line) {
    auto g = manager->SLock(**ctx, lines_[line]);
    ASSERT_TRUE(g.ok()) << g.status();
    int64_t first, last;
    Read(g->data(), payload_, &first, &last);
    EXPECT_LE(first, counts_[line].acked.load() + counts_[line].unknown.load())
        << "line " << line << " holds increments nobody made";
  }
}

TEST_F(CoherenceFailureTest, MessagePassingNeverShowsAFlagBeforeItsData) {
  static_assert(kLines >= 2 * kNodes, "a data and a flag line per node");
  for (int n = 0; n < kNodes; ++n) StartNode(n, Litmus::kMessagePassing);
  RunCycles(/*seed=*/5,
            [this](int node) { StartNode(node, Litmus::kMessagePassing); },
            [this](int survivor) { CheckPublished(survivor); });
  if (HasFatalFailure()) return;
  for (int n = 0; n < kNodes; ++n) StopNode(n);
  EXPECT_GT(observed_.load(), 0);
  EXPECT_EQ(flag_before_data_.load(), 0)
      << "a reader saw a flag before the data it publishes";
  EXPECT_EQ(torn_.load(), 0) << "a reader saw a torn line";
  CheckPublished(0);
}

TEST_F(CoherenceFailureTest, StoreBufferingNeverMissesBothStores) {
  for (int n = 0; n < kNodes; ++n) StartNode(n, Litmus::kStoreBuffering);
  RunCycles(/*seed=*/7,
            [this](int node) { StartNode(node, Litmus::kStoreBuffering); },
            [this](int survivor) { CheckStored(survivor); });
  if (HasFatalFailure()) return;
  for (int n = 0; n < kNodes; ++n) StopNode(n);
  int64_t rounds = 0;
  for (int n = 0; n < kNodes; ++n) rounds += rounds_[n].size();
  EXPECT_GT(rounds, 1000);
  EXPECT_EQ(CountRoundsGoingBack(), 0) << "a node's stores or reads went back";
  EXPECT_EQ(CountBothStoresMissed(), 0)
      << "two nodes each read the other's line before the other's store";
  EXPECT_EQ(torn_.load(), 0) << "a reader saw a torn line";
  EXPECT_EQ(went_back_.load(), 0) << "a reader saw a line go back";
  CheckStored(0);
}

// A holder that serves a peer's invalidation and fails before it answers
// (FailurePoint::kInvalidationServed): the requester hears nothing, yet the
// holder's FAA may have granted it the line (a downgrade adds its reader
// bit, a handover names it holder). It must find that out from the latch
// word, not take the line a second time (a second reader bit carries into
// the next node's). Deterministic: one request, inline on the requester's
// thread, the holder failing at the point.
std::atomic<Engine*> served_engine{nullptr};
std::atomic<int> fail_when_served{-1};

void FailWhenServed(uint32_t node, FailurePoint point) {
  int expected = static_cast<int>(node);
  if (point == FailurePoint::kInvalidationServed &&
      fail_when_served.compare_exchange_strong(expected, -1)) {
    EXPECT_TRUE(served_engine.load()->FailNode(node).ok());
  }
}

class LostAnswerTest : public CoherenceFailureTest {
 protected:
  void SetUp() override {
    CoherenceFailureTest::SetUp();
    served_engine = engine_.get();
    SetFailurePointHookForTesting(&FailWhenServed);
  }
  void TearDown() override {
    SetFailurePointHookForTesting(nullptr);
    fail_when_served = -1;
    served_engine = nullptr;
    CoherenceFailureTest::TearDown();
  }

  // `holder` writes `value` to line 0 and keeps it (memo M), then fails
  // when it serves `requester`'s request for it (shared or exclusive).
  // After the reclaim, the third node must write the line within the lock
  // timeout (a stray reader bit would keep it out), and the requester
  // must then read that write (a copy it believes shared without its bit
  // in the word would never be invalidated).
  void HolderFailsBeforeAnswering(int holder, int requester, bool exclusive) {
    const int third = 3 - holder - requester;
    constexpr int64_t kValue = 41;
    WriteLine(holder, kValue);
    if (HasFatalFailure()) return;
    fail_when_served = holder;
    {
      cc::GclManager* manager = Manager(requester);
      auto ctx = manager->NewThreadContext();
      ASSERT_TRUE(ctx.ok()) << ctx.status();
      int64_t first, last;
      if (exclusive) {
        auto g = manager->XLock(**ctx, lines_[0]);
        ASSERT_TRUE(g.ok()) << g.status();
        Read(g->data(), payload_, &first, &last);
        ASSERT_TRUE(g->Unlock().ok());
      } else {
        auto g = manager->SLock(**ctx, lines_[0]);
        ASSERT_TRUE(g.ok()) << g.status();
        Read(g->data(), payload_, &first, &last);
        ASSERT_TRUE(g->Unlock().ok());
      }
      EXPECT_EQ(first, kValue);
      EXPECT_EQ(last, kValue);
    }
    ASSERT_EQ(fail_when_served.load(), -1)
        << "node " << holder << " was never asked for the line";
    ASSERT_TRUE(engine_->WaitReclaimed(holder, absl::Seconds(10)).ok());
    constexpr int64_t kNext = 42;
    WriteLine(third, kNext);
    if (HasFatalFailure()) return;
    auto ctx = Manager(requester)->NewThreadContext();
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    int64_t value;
    ReadChecked(*Manager(requester), **ctx, 0, &value);
    EXPECT_EQ(value, kNext) << "node " << requester << " read a stale copy";
    ctx->reset();
    ASSERT_TRUE(engine_->RejoinNode(holder).ok());
  }
};

TEST_F(LostAnswerTest, ADowngradeWhoseAnswerWasLostIsNotTakenTwice) {
  HolderFailsBeforeAnswering(/*holder=*/0, /*requester=*/1, false);
}

TEST_F(LostAnswerTest, ADowngradeToTheLastNodeWhoseAnswerWasLost) {
  // The carry of a second bit would name node 3, which does not exist.
  HolderFailsBeforeAnswering(/*holder=*/1, /*requester=*/2, false);
}

TEST_F(LostAnswerTest, AHandoverWhoseAnswerWasLostIsKept) {
  HolderFailsBeforeAnswering(/*holder=*/0, /*requester=*/1, true);
}

}  // namespace
}  // namespace strand::engine
