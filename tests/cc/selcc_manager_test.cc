// SELCC driven step by step across three compute nodes: each transition of
// Table 1 and each conflict case of section 4.4, with the latch word (read
// through a raw endpoint) and every node's ownership memo asserted after
// each step, plus the round trips each step cost.

#include "cc/selcc/selcc_manager.h"

#include <atomic>
#include <cstring>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cc/root_words.h"
#include "cc/selcc/latch_word.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/test_fabric.h"

namespace strand::cc {
namespace selcc {
void PrintTo(Memo m, std::ostream* os) { *os << MemoName(m); }
}  // namespace selcc
namespace {

using selcc::LatchWord;
using selcc::Memo;

CcOptions SelccOptions() {
  CcOptions o;
  o.protocol = Protocol::kSelcc;
  o.gcl_size = 256;
  o.cache_bytes = 256 * 256;
  o.lock_timeout = absl::Milliseconds(300);
  return o;
}

class SelccManagerTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(SelccOptions()); }

  void Build(const CcOptions& o, int nodes = 3, bool fencing = false) {
    ctx_.clear();
    cluster_.reset();
    rdma::FabricOptions fabric = testing::TestFabricOptions(1, nodes);
    fabric.fencing = fencing;
    auto cluster = testing::CcCluster::Create(nodes, o, fabric);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    for (int i = 0; i < nodes; ++i) ctx_.push_back(*m(i).NewThreadContext());
    raw_ = *(*cluster_->fabric().compute_node(0))->NewEndpoint();
    gcl_ = *m(0).Allocate(*ctx_[0]);
  }
  void TearDown() override {
    ctx_.clear();
    cluster_.reset();
  }

  GclManager& m(int i) { return cluster_->manager(i); }
  SelccManager& sm(int i) {
    return static_cast<SelccManager&>(cluster_->manager(i));
  }
  ThreadContext& c(int i) { return *ctx_[i]; }
  uint64_t LatchWordNow() {
    uint64_t w = 0;
    EXPECT_TRUE(raw_->Read(gcl_, &w, 8).ok());
    return w;
  }
  uint64_t MemoryWord(uint32_t offset) {
    uint64_t w = 0;
    EXPECT_TRUE(raw_->Read(gcl_ + 8 + offset, &w, 8).ok());
    return w;
  }
  Memo MemoOf(int node) {
    auto d = sm(node).DebugState(gcl_);
    return d.cached ? d.memo : Memo::kInvalid;
  }
  uint64_t RoundTrips(int i) { return c(i).endpoint().Counters().round_trips; }
  void ExpectMemos(Memo m0, Memo m1, Memo m2) {
    EXPECT_EQ(MemoOf(0), m0) << "node 0";
    EXPECT_EQ(MemoOf(1), m1) << "node 1";
    EXPECT_EQ(MemoOf(2), m2) << "node 2";
  }
  void Write(int node, uint64_t value, uint32_t offset = 0) {
    auto x = m(node).XLock(c(node), gcl_);
    ASSERT_TRUE(x.ok()) << x.status();
    std::memcpy(x->MutableRange(offset, 8), &value, 8);
  }
  uint64_t Read(int node, uint32_t offset = 0) {
    auto s = m(node).SLock(c(node), gcl_);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return ~uint64_t{0};
    uint64_t v;
    std::memcpy(&v, s->data() + offset, 8);
    return v;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::vector<std::unique_ptr<ThreadContext>> ctx_;
  std::unique_ptr<rdma::Endpoint> raw_;
  rdma::GlobalAddress gcl_;
};

// The fabric refuses more compute nodes than the reader bitmap has bits
// (rdma::FabricOptions::kMaxComputeNodes, asserted in selcc_manager.cc),
// so a manager never sees a node id past it.
TEST_F(SelccManagerTest, NodeIdsBeyondTheReaderBitmapAreRefused) {
  CcOptions o = SelccOptions();
  auto cluster = testing::CcCluster::Create(LatchWord::kMaxNodes + 1, o);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cluster.status().message().find("use 1 to 58"), std::string::npos)
      << cluster.status();
}

TEST_F(SelccManagerTest, ExclusiveMissIsOneRoundTripThenHitsAreFree) {
  uint64_t before = RoundTrips(0);
  {
    auto x = m(0).XLock(c(0), gcl_);
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(RoundTrips(0) - before, 1u);  // CAS + READ batched
    EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(0));
  }
  // Lazy release: unlocking kept the global latch.
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(0));
  ExpectMemos(Memo::kModified, Memo::kInvalid, Memo::kInvalid);
  before = RoundTrips(0);
  Write(0, 42);
  EXPECT_EQ(Read(0), 42u);
  EXPECT_EQ(RoundTrips(0) - before, 0u);  // M: reader and writer both hit
  EXPECT_EQ(m(0).Stats().hits, 2u);
  EXPECT_EQ(MemoryWord(0), 0u);  // dirty data stays in the cache
  auto d = sm(0).DebugState(gcl_);
  EXPECT_EQ(d.dirty_begin, 0u);
  EXPECT_EQ(d.dirty_end, 8u);
}

TEST_F(SelccManagerTest, SharedMissIsOneRoundTripAndReadersShare) {
  uint64_t before = RoundTrips(0);
  EXPECT_EQ(Read(0), 0u);
  EXPECT_EQ(RoundTrips(0) - before, 1u);  // FAA + READ batched
  EXPECT_EQ(LatchWordNow(), LatchWord::Reader(0));
  EXPECT_EQ(Read(1), 0u);
  EXPECT_EQ(LatchWordNow(), LatchWord::Reader(0) | LatchWord::Reader(1));
  ExpectMemos(Memo::kShared, Memo::kShared, Memo::kInvalid);
  before = RoundTrips(0);
  EXPECT_EQ(Read(0), 0u);
  EXPECT_EQ(RoundTrips(0) - before, 0u);
}

TEST_F(SelccManagerTest, LoneReaderUpgradesWithOneCas) {
  Read(0);
  auto s = m(0).SLock(c(0), gcl_);
  ASSERT_TRUE(s.ok());
  const uint64_t before = RoundTrips(0);
  auto x = m(0).Upgrade(c(0), *s);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(RoundTrips(0) - before, 1u);
  EXPECT_FALSE(s->owns_lock());
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(0));
  x->Unlock().IgnoreError();
  EXPECT_EQ(MemoOf(0), Memo::kModified);
  EXPECT_EQ(m(0).Stats().upgrades, 1u);
}

TEST_F(SelccManagerTest, WriterUpgradesOverAnotherReader) {
  Read(0);
  Read(1);
  Write(0, 5);  // memo S -> upgrade; node 1 must give its share up (case 3)
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(0));
  ExpectMemos(Memo::kModified, Memo::kInvalid, Memo::kInvalid);
  EXPECT_EQ(m(1).Stats().invalidations_received, 1u);
  EXPECT_EQ(Read(1), 5u);
}

// Case 1: a writer invalidates a Modified copy. Ownership is handed over by
// FAA and the line forwarded into the writer's frame; nothing is flushed.
TEST_F(SelccManagerTest, Case1WriterTakesModifiedLineByHandoverAndForward) {
  Write(0, 11, 16);
  ExpectMemos(Memo::kModified, Memo::kInvalid, Memo::kInvalid);
  const uint64_t before = RoundTrips(1);
  {
    auto x = m(1).XLock(c(1), gcl_);
    ASSERT_TRUE(x.ok()) << x.status();
    uint64_t v;
    std::memcpy(&v, x->data() + 16, 8);
    EXPECT_EQ(v, 11u);  // forwarded, not read from memory
    // One failed CAS+READ; the handover costs the requester nothing more.
    EXPECT_EQ(RoundTrips(1) - before, 1u);
  }
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));
  ExpectMemos(Memo::kInvalid, Memo::kModified, Memo::kInvalid);
  EXPECT_EQ(MemoryWord(16), 0u);  // no flush: the dirty range moved on
  auto d = sm(1).DebugState(gcl_);
  EXPECT_EQ(d.dirty_begin, 16u);
  EXPECT_EQ(d.dirty_end, 24u);
  EXPECT_EQ(m(0).Stats().forwards, 1u);
  EXPECT_EQ(m(0).Stats().flushes, 0u);
  EXPECT_EQ(m(1).Stats().invalidating_locks, 1u);
  // And on to node 2; the data follows.
  Write(2, 12, 0);
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(2));
  ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kModified);
  EXPECT_EQ(Read(2, 16), 11u);
}

// Case 2: a reader invalidates a Modified copy: the holder flushes and
// downgrades both to Shared in one FAA, and forwards the line.
TEST_F(SelccManagerTest, Case2ReaderDowngradesModifiedLine) {
  Write(0, 21, 8);
  EXPECT_EQ(Read(1, 8), 21u);
  EXPECT_EQ(LatchWordNow(), LatchWord::Reader(0) | LatchWord::Reader(1));
  ExpectMemos(Memo::kShared, Memo::kShared, Memo::kInvalid);
  EXPECT_EQ(MemoryWord(8), 21u);              // flushed with the downgrade
  EXPECT_EQ(m(0).Stats().flushed_bytes, 8u);  // only the dirty range
  EXPECT_EQ(m(0).Stats().forwards, 1u);
  // A third reader joins without any message.
  const uint64_t sent = m(2).Stats().invalidations_sent;
  EXPECT_EQ(Read(2, 8), 21u);
  EXPECT_EQ(m(2).Stats().invalidations_sent, sent);
  EXPECT_EQ(LatchWordNow(),
            LatchWord::Reader(0) | LatchWord::Reader(1) | LatchWord::Reader(2));
}

// A context speaks for its own node (its endpoint is the requester peers
// grant lines to), so another node's manager refuses it and the latch word
// stays intact. Before, node 0's context on node 1's manager made node 0
// downgrade to "node 0", which set node 1's reader bit, and later releases
// borrowed bits out of the word (a node then starved until lock_timeout).
TEST_F(SelccManagerTest, AnotherNodesContextIsRefusedAndTheWordStaysIntact) {
  Write(0, 5, 8);
  EXPECT_EQ(m(1).SLock(c(0), gcl_).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(m(1).XLock(c(0), gcl_).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(m(2).Free(c(1), gcl_).code(),
            absl::StatusCode::kFailedPrecondition);
  auto s = m(1).SLock(c(1), gcl_);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(m(1).Upgrade(c(2), *s).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(s->Unlock().ok());
  EXPECT_EQ(LatchWordNow(), LatchWord::Reader(0) | LatchWord::Reader(1));
  Write(2, 6, 8);
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(2));
  EXPECT_EQ(Read(1, 8), 6u);
}

// Case 3: a writer invalidates Shared copies: each sharer releases, the
// writer retries its CAS.
TEST_F(SelccManagerTest, Case3WriterInvalidatesEverySharer) {
  Read(0);
  Read(1);
  ExpectMemos(Memo::kShared, Memo::kShared, Memo::kInvalid);
  Write(2, 31);
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(2));
  ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kModified);
  EXPECT_EQ(m(2).Stats().invalidations_sent, 2u);
  EXPECT_EQ(Read(0), 31u);  // case 2 again, from node 0
  ExpectMemos(Memo::kShared, Memo::kInvalid, Memo::kShared);
}

TEST_F(SelccManagerTest, WithoutForwardingHoldersFlushAndRelease) {
  CcOptions o = SelccOptions();
  o.gcl_forwarding = false;
  Build(o);
  Write(0, 41);
  Write(1, 42, 8);  // case 1 without handover: flush, release, retry
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));
  EXPECT_EQ(MemoryWord(0), 41u);
  EXPECT_EQ(m(0).Stats().forwards, 0u);
  EXPECT_EQ(m(0).Stats().flushes, 1u);
  EXPECT_EQ(Read(2, 8), 42u);  // case 2 without forwarding
  EXPECT_EQ(LatchWordNow(), LatchWord::Reader(2));
  ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kShared);
}

TEST_F(SelccManagerTest, RunningHolderMakesNoWaitAbortAndOthersTimeOut) {
  auto x = m(0).XLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  const absl::Time start = absl::Now();
  auto y = m(1).XLock(c(1), gcl_, {.no_wait = true});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kAborted) << y.status();
  auto r = m(2).SLock(c(2), gcl_, {.no_wait = true});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  // Both gave up without waiting for the lock timeout (300 ms each).
  EXPECT_LT(absl::Now() - start, SelccOptions().lock_timeout);
  auto z = m(1).XLock(c(1), gcl_);
  EXPECT_EQ(z.status().code(), absl::StatusCode::kDeadlineExceeded);
  // The error names who holds the line in memory's latch word.
  EXPECT_THAT(z.status().message(),
              ::testing::HasSubstr("latch word in memory: (holder=0"))
      << z.status();
  // And, node 0 running in this process, what its cache says: the frame
  // is latched (x above), so its memo cannot be read.
  EXPECT_THAT(z.status().message(),
              ::testing::HasSubstr("compute node 0 (in this process): memo "
                                   "unknown (latched), local latch word 0x"))
      << z.status();
  EXPECT_EQ(m(1).Stats().lock_timeouts, 1u);
  EXPECT_GE(m(0).Stats().invalidations_dropped, 2u);
  // The words and memos did not move.
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(0));
  // Node 1 retried for 300 ms, far past kLeaseBreakPriority: the unlock
  // ends node 0's lease (5.3.1) and hands the line to node 1, its most
  // urgent dropped writer (5.3.2), although node 1 gave up meanwhile.
  x->Unlock().IgnoreError();
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));
  ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kInvalid);
  // Node 1 finds itself holder and takes the line, even under no_wait.
  auto w = m(1).XLock(c(1), gcl_, {.no_wait = true});
  EXPECT_TRUE(w.ok()) << w.status();
}

TEST_F(SelccManagerTest, LocalRunningHolderAbortsNoWaitAtOnce) {
  auto x = m(0).XLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  auto other = *m(0).NewThreadContext();
  auto y = m(0).SLock(*other, gcl_, {.no_wait = true});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kAborted);
}

TEST_F(SelccManagerTest, WaitingWriterGetsTheLineWhenTheHolderUnlocks) {
  auto x = m(0).XLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  std::memcpy(x->MutableRange(0, 4), "abcd", 4);
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(20));
    ASSERT_TRUE(x->Unlock().ok());
  });
  auto y = m(1).XLock(c(1), gcl_);
  releaser.join();
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(y->data()), 4), "abcd");
}

TEST_F(SelccManagerTest, StarvedWritersPriorityEndsWithItsUnlock) {
  // A writer that won the line after many retries (high priority) used to
  // keep outranking readers for as long as its node kept the line, even
  // idle: a no-wait reader (priority < kNoWaitAttempts) was refused forever
  // (TPC-C under 2PL hung on a line last written by a blocking index
  // insert). Its own latch is all the protection the writer needs.
  // Node 0 reads and keeps its shared latch a while: node 1's writer
  // retries (its invalidations are dropped while the latch is busy).
  auto x = m(0).SLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  std::thread releaser([&] {
    // Until node 1 counts as starved: a fixed sleep gave too few retries on
    // a loaded machine.
    for (int i = 0; i < 10000 && m(1).Stats().lock_retries < 8; ++i) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_TRUE(x->Unlock().ok());
  });
  {
    auto y = m(1).XLock(c(1), gcl_);  // retries until node 0 lets go
    releaser.join();
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_GE(m(1).Stats().lock_retries, 8u);  // won as a starved writer
    std::memcpy(y->MutableRange(0, 8), "starved!", 8);
  }
  EXPECT_EQ(MemoOf(1), Memo::kModified);  // lazy release: kept, idle
  auto r = m(2).SLock(c(2), gcl_, LockOptions{.no_wait = true});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->data()), 8),
            "starved!");
}

TEST_F(SelccManagerTest, LeaseOfZeroGivesTheLineUpAtTheNextUnlock) {
  CcOptions o = SelccOptions();
  o.lease_gamma = 0;
  o.lock_timeout = absl::Seconds(5);
  Build(o);
  auto x = m(0).XLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  std::thread writer([&] {
    auto y = m(1).XLock(c(1), gcl_);
    EXPECT_TRUE(y.ok()) << y.status();
  });
  // Wait until node 1's invalidation was dropped (node 0's latch is busy).
  for (int i = 0; i < 2000 && m(0).Stats().invalidations_dropped == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(x->Unlock().ok());
  writer.join();
  // The unlock itself released the latch (no handover was needed), or the
  // handler handed it over right after: either way node 1 holds it now.
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));
  ExpectMemos(Memo::kInvalid, Memo::kModified, Memo::kInvalid);
}

// Priority handover (5.3.2): node 0 keeps the line busy; node 1 asks first
// and keeps retrying (its priority, its attempts, grows), node 2 asks
// later. Node 0 remembers the most urgent request; its unlock (lease 0)
// hands the line straight to that node (no free window), the other gets it
// after. Node 1 is far ahead when node 2 starts, but a loaded machine may
// stall node 1's thread while node 2 retries past it: a displacement with
// a higher priority is the protocol working, so the checks follow whichever
// node the memo named.
TEST_F(SelccManagerTest, LeaseEndHandsTheLineToTheMostUrgentDroppedWriter) {
  CcOptions o = SelccOptions();
  o.lease_gamma = 0;
  o.lock_timeout = absl::Seconds(10);
  Build(o);
  auto x = m(0).XLock(c(0), gcl_);
  ASSERT_TRUE(x.ok());
  const uint64_t value = 0x5e1cc0de;
  std::memcpy(x->MutableRange(0, 8), &value, 8);
  std::atomic<int> order{0};
  std::atomic<bool> let_go{false};
  // Each writer reads the line, says when it got it, waits for let_go and
  // writes its own mark.
  struct Writer {
    std::atomic<int> got{-1};
    uint64_t read = 0;
    uint64_t mark = 0;
  };
  Writer writers[3];
  auto write = [&](int node) {
    Writer& w = writers[node];
    auto g = m(node).XLock(c(node), gcl_);
    ASSERT_TRUE(g.ok()) << g.status();
    std::memcpy(&w.read, g->data(), 8);
    w.got = order.fetch_add(1);
    while (!let_go.load()) absl::SleepFor(absl::Milliseconds(1));
    std::memcpy(g->MutableRange(0, 8), &w.mark, 8);
  };
  writers[1].mark = value + 1;
  writers[2].mark = value + 2;
  std::thread node1(write, 1);
  // Node 1 retries until its priority (= its attempts) is far ahead.
  auto memo = [&] { return sm(0).DebugHandoverMemo(gcl_); };
  constexpr uint32_t kAhead = 200;
  for (int i = 0; i < 20000 && memo().priority < kAhead; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  const selcc::HandoverMemo ahead = memo();
  ASSERT_EQ(ahead.node, 1);
  ASSERT_GE(ahead.priority, kAhead);
  EXPECT_TRUE(ahead.exclusive);
  std::thread node2(write, 2);
  // Node 2's requests were dropped too; one displaces node 1's only with a
  // higher priority than node 1's latest.
  while (m(2).Stats().lock_retries == 0) std::this_thread::yield();
  const selcc::HandoverMemo seen = memo();
  if (seen.node != 1) {
    EXPECT_EQ(seen.node, 2);
    EXPECT_GT(seen.priority, ahead.priority);
  }
  ASSERT_TRUE(x->Unlock().ok());
  // The unlock itself handed the line over: no moment without a holder,
  // and the new holder keeps it until let_go.
  const int first = LatchWord::Holder(LatchWordNow());
  ASSERT_TRUE(first == 1 || first == 2) << LatchWord::ToString(LatchWordNow());
  const int second = 3 - first;
  EXPECT_EQ(MemoryWord(0), value);  // flushed by the handover
  EXPECT_EQ(MemoOf(0), Memo::kInvalid);
  // The unlock used the memo (the latch word above names its node) and
  // cleared it; a retry node 1 or 2 sent before the handover can still
  // reach node 0's handler while the unlocking thread holds the frame's
  // latch and leave a memo behind: stale and harmless
  // (docs/design/selcc.md).
  // It can only name a node that asked.
  const int left = sm(0).DebugHandoverMemo(gcl_).node;
  EXPECT_TRUE(left == -1 || left == 1 || left == 2)
      << "memo left for node " << left;
  for (int i = 0; i < 5000 && writers[first].got.load() < 0; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(writers[first].got.load(), 0);
  EXPECT_EQ(writers[first].read, value);
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(first));
  let_go = true;
  node1.join();
  node2.join();
  EXPECT_EQ(writers[second].got.load(), 1);
  EXPECT_EQ(writers[second].read, writers[first].mark);
  EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(second));
  EXPECT_EQ(MemoOf(first), Memo::kInvalid);
  EXPECT_EQ(MemoOf(second), Memo::kModified);
}

// A remembered writer that gave up before the handover holds the line as
// an orphan; the next request to it makes its handler release the line
// (memory is current), and its own next lock adopts it.
TEST_F(SelccManagerTest, HandoverToAWriterThatGaveUpIsHarmless) {
  CcOptions o = SelccOptions();
  o.lease_gamma = 0;
  o.lock_timeout = absl::Milliseconds(100);
  Build(o);
  for (int round = 0; round < 2; ++round) {
    auto x = m(0).XLock(c(0), gcl_);
    ASSERT_TRUE(x.ok()) << x.status();
    const uint64_t value = 1000 + round;
    std::memcpy(x->MutableRange(0, 8), &value, 8);
    auto y = m(1).XLock(c(1), gcl_);  // times out: node 0 is busy
    ASSERT_EQ(y.status().code(), absl::StatusCode::kDeadlineExceeded);
    ASSERT_EQ(sm(0).DebugHandoverMemo(gcl_).node, 1);
    ASSERT_TRUE(x->Unlock().ok());
    EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));  // the orphan
    ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kInvalid);
    if (round == 0) {
      // Another node asks the orphan's node: it lets go.
      EXPECT_EQ(Read(2), value);
      EXPECT_EQ(LatchWordNow(), LatchWord::Reader(2));
      ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kShared);
      Write(0, 0);  // back to node 0 for the next round
    } else {
      // The orphan's node reads: it finds itself holder and keeps M.
      EXPECT_EQ(Read(1), value);
      EXPECT_EQ(LatchWordNow(), LatchWord::Exclusive(1));
      ExpectMemos(Memo::kInvalid, Memo::kModified, Memo::kInvalid);
    }
  }
}

// Two local threads keep a line busy; a peer's requests are dropped until
// its priority ends their lease (5.3.1-5.3.2): it is served, not starved.
TEST_F(SelccManagerTest, PeerIsNotStarvedByBusyLocalThreads) {
  CcOptions o = SelccOptions();
  o.lock_timeout = absl::Seconds(5);
  Build(o);
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (int i = 0; i < 2; ++i) {
    hogs.emplace_back([&] {
      auto ctx = *m(0).NewThreadContext();
      while (!stop.load()) {
        auto x = m(0).XLock(*ctx, gcl_);
        if (x.ok()) x->MutableRange(0, 1)[0]++;
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(20));
  int served = 0;
  for (int i = 0; i < 5; ++i) {
    auto y = m(1).XLock(c(1), gcl_);
    EXPECT_TRUE(y.ok()) << y.status();
    served += y.ok();
  }
  stop = true;
  for (auto& t : hogs) t.join();
  EXPECT_EQ(served, 5);
}

TEST_F(SelccManagerTest, AStarvedWritersHoldOffOnReadersIsBounded) {
  // Spin-wait (5.3.2): a starved writer's request makes the node it asks
  // hold its readers off for a time that grows with the writer's retries.
  // A writer that retried a billion times must not keep them off for
  // longer than a lock timeout (300 ms here): it retries at once after the
  // reply that lets it in.
  Write(0, 7);
  ASSERT_EQ(Read(1), 7u);  // node 1 caches the line shared
  selcc::InvalidationRequest request;
  request.gcl = gcl_.raw();
  request.slot = selcc::ReplySlots::kMaxSlots - 1;  // its reply is stale
  request.priority = 1u << 30;
  request.want = selcc::Want::kExclusive;
  rdma::Message message;
  message.type = selcc::kRequestMessage;
  message.Store(request);
  auto writer = (*cluster_->fabric().compute_node(2))->NewEndpoint();
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Send(1, message).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (MemoOf(1) == Memo::kShared && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(MemoOf(1), Memo::kInvalid) << "node 1 kept its copy";
  const absl::Time start = absl::Now();
  EXPECT_EQ(Read(1), 7u);
  EXPECT_LT(absl::Now() - start, absl::Nanoseconds(selcc::kMaxHoldOffNanos) +
                                     absl::Milliseconds(250));
}

TEST_F(SelccManagerTest, FreeInvalidatesOtherCopiesAndReturnsAZeroedBlock) {
  Write(1, 99);
  Read(2);
  ASSERT_TRUE(m(0).Free(c(0), gcl_).ok());
  ExpectMemos(Memo::kInvalid, Memo::kInvalid, Memo::kInvalid);
  EXPECT_FALSE(sm(0).DebugState(gcl_).cached);
  EXPECT_EQ(LatchWordNow(), 0u);
  EXPECT_EQ(MemoryWord(0), 0u);
  rdma::GlobalAddress again = *m(0).Allocate(c(0));
  EXPECT_EQ(again, gcl_);
  EXPECT_EQ(Read(1), 0u);
}

TEST_F(SelccManagerTest, EvictionWritesBackOnlyDirtyRangesAndReleases) {
  CcOptions o = SelccOptions();
  o.cache_bytes = 16 * o.gcl_size;  // 16 frames
  Build(o);
  std::vector<rdma::GlobalAddress> lines;
  for (int i = 0; i < 64; ++i) lines.push_back(*m(0).Allocate(c(0)));
  for (int i = 0; i < 64; ++i) {
    auto x = m(0).XLock(c(0), lines[i]);
    ASSERT_TRUE(x.ok()) << x.status();
    const uint64_t v = 1000 + i;
    std::memcpy(x->MutableRange(8, 8), &v, 8);
  }
  // The background evictor frees frames first and counts their releases
  // as it sends them (a flush, then its bytes): read the counters once
  // they stop moving, not in the middle of a pass.
  CacheStats s = m(0).Stats();
  for (const absl::Time deadline = absl::Now() + absl::Seconds(10);
       absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(20));
    const CacheStats next = m(0).Stats();
    const bool settled = next.evictions == s.evictions &&
                         next.flushes == s.flushes &&
                         next.flushed_bytes == s.flushed_bytes;
    s = next;
    if (settled) break;
  }
  EXPECT_GE(s.evictions, 48u);
  EXPECT_GE(s.flushes, 48u);
  EXPECT_EQ(s.flushed_bytes, 8 * s.flushes);  // dirty bounds
  for (int i = 0; i < 64; ++i) {
    auto r = m(1).SLock(c(1), lines[i]);
    ASSERT_TRUE(r.ok()) << r.status();
    uint64_t v;
    std::memcpy(&v, r->data() + 8, 8);
    EXPECT_EQ(v, 1000u + i) << "line " << i;
  }
}

// A pool image taken while the compute nodes stay up (engine/image.h)
// reads memory directly: after WriteBackAll every line's latest value is
// there and no latch word names a node, whether the node held it modified
// or shared.
TEST_F(SelccManagerTest, WriteBackAllLeavesTheMemoryNodesCurrent) {
  Write(0, 7, 16);  // node 0: M, dirty, memory still 0
  EXPECT_EQ(MemoryWord(16), 0u);
  const rdma::GlobalAddress second = *m(1).Allocate(c(1));
  {
    auto x = m(1).XLock(c(1), second);
    ASSERT_TRUE(x.ok()) << x.status();
    const uint64_t v = 9;
    std::memcpy(x->MutableRange(0, 8), &v, 8);
  }
  EXPECT_EQ(Read(2), 0u);  // node 2 reads the first line: 0 and 2 share it
  EXPECT_EQ(MemoryWord(16), 7u);  // the downgrade wrote it back
  Write(0, 8, 16);                // M again, dirty
  ASSERT_EQ(MemoryWord(16), 7u);

  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(m(i).WriteBackAll().ok()) << "node " << i;
    EXPECT_EQ(sm(i).free_frames(), sm(i).cache_frames()) << "node " << i;
  }
  EXPECT_EQ(MemoryWord(16), 8u);
  EXPECT_EQ(LatchWordNow(), 0u);
  uint64_t word = 1, value = 0;
  ASSERT_TRUE(raw_->Read(second, &word, 8).ok());
  ASSERT_TRUE(raw_->Read(second + 8, &value, 8).ok());
  EXPECT_EQ(word, 0u);
  EXPECT_EQ(value, 9u);
  // The nodes go on as before: misses, then hits.
  EXPECT_EQ(Read(1, 16), 8u);
  Write(2, 10, 16);
  EXPECT_EQ(Read(0, 16), 10u);
}

TEST_F(SelccManagerTest, WriteBackAllRefusesWhileALineIsLatched) {
  Write(0, 3);
  auto held = m(0).SLock(c(0), gcl_);
  ASSERT_TRUE(held.ok()) << held.status();
  const absl::Status s = m(0).WriteBackAll();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("holds or is acquiring a latch"),
            std::string::npos)
      << s;
  ASSERT_TRUE(held->Unlock().ok());
  EXPECT_TRUE(m(0).WriteBackAll().ok());
  EXPECT_EQ(MemoryWord(0), 3u);
}

TEST_F(SelccManagerTest, ForegroundEvictionWhenBatchingIsOff) {
  CcOptions o = SelccOptions();
  o.cache_bytes = 16 * o.gcl_size;
  o.batched_eviction = false;
  o.dirty_bounds = false;
  Build(o);
  std::vector<rdma::GlobalAddress> lines;
  for (int i = 0; i < 40; ++i) lines.push_back(*m(0).Allocate(c(0)));
  for (int i = 0; i < 40; ++i) {
    auto x = m(0).XLock(c(0), lines[i]);
    ASSERT_TRUE(x.ok()) << x.status();
    x->MutableRange(0, 1)[0] = static_cast<uint8_t>(i);
  }
  const CacheStats s = m(0).Stats();
  EXPECT_EQ(s.evictions, 40u - 16u);
  EXPECT_EQ(s.flushed_bytes, s.flushes * m(0).payload_bytes());  // whole
  for (int i = 0; i < 40; ++i) {
    auto r = m(2).SLock(c(2), lines[i]);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->data()[0], i);
  }
}

TEST_F(SelccManagerTest, InvalidationBetweenHitsIsNeverMissed) {
  // A hit goes straight to the frame the cache's frame table names for the
  // line, without the shard lock; a peer's invalidation in between must
  // still be seen.
  Write(0, 1);
  EXPECT_EQ(Read(0), 1u);
  uint64_t before = RoundTrips(0);
  EXPECT_EQ(Read(0), 1u);
  EXPECT_EQ(RoundTrips(0) - before, 0u);  // a hit
  Write(1, 2);                            // node 0's copy is invalidated
  ExpectMemos(Memo::kInvalid, Memo::kModified, Memo::kInvalid);
  before = RoundTrips(0);
  EXPECT_EQ(Read(0), 2u);
  EXPECT_GE(RoundTrips(0) - before, 1u);  // a miss, not the stale copy
  Write(0, 3);
  before = RoundTrips(0);
  Write(0, 4);
  EXPECT_EQ(RoundTrips(0) - before, 0u);  // M: an exclusive hit
  EXPECT_EQ(Read(2), 4u);                 // downgrades node 0 to S
  ExpectMemos(Memo::kShared, Memo::kInvalid, Memo::kShared);
  before = RoundTrips(0);
  Write(0, 5);  // S is no exclusive hit: the upgrade invalidates node 2
  EXPECT_GE(RoundTrips(0) - before, 1u);
  EXPECT_EQ(Read(2), 5u);
  EXPECT_EQ(Read(1), 5u);
}

TEST_F(SelccManagerTest, FrameReusedForAnotherLineIsNotTakenForTheOld) {
  CcOptions o = SelccOptions();
  o.cache_bytes = 16 * o.gcl_size;  // 16 frames for 64 lines
  Build(o, 1);
  std::vector<rdma::GlobalAddress> lines;
  for (int i = 0; i < 64; ++i) lines.push_back(*m(0).Allocate(c(0)));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 64; ++i) {
      auto x = m(0).XLock(c(0), lines[i]);
      ASSERT_TRUE(x.ok()) << x.status();
      uint64_t v;
      std::memcpy(&v, x->data(), 8);
      // The frame this context last used for the line now caches another.
      ASSERT_EQ(v, round == 0 ? 0u : uint64_t(1000 * round + i))
          << "line " << i << " round " << round;
      v = 1000 * (round + 1) + i;
      std::memcpy(x->MutableRange(0, 8), &v, 8);
    }
    for (int i = 63; i >= 0; --i) {
      auto r = m(0).SLock(c(0), lines[i]);
      ASSERT_TRUE(r.ok()) << r.status();
      uint64_t v;
      std::memcpy(&v, r->data(), 8);
      ASSERT_EQ(v, uint64_t(1000 * (round + 1) + i)) << "line " << i;
    }
  }
  EXPECT_GE(m(0).Stats().evictions, 100u);
}

TEST_F(SelccManagerTest, GlobalAtomicsOnRootWords) {
  const rdma::GlobalAddress ts = RootWordAddress(RootWord::kTimestampOracle);
  EXPECT_EQ(*m(0).FetchAndAdd(c(0), ts, 1), 0u);
  EXPECT_EQ(*m(1).FetchAndAdd(c(1), ts, 1), 1u);
  EXPECT_EQ(*m(1).CompareAndSwap(c(1), ts, 2, 10), 2u);
}

TEST_F(SelccManagerTest, HoldingEveryFrameIsReportedNotWaitedOut) {
  CcOptions o = SelccOptions();
  o.cache_bytes = 256 * 16;  // 16 frames
  o.lock_timeout = absl::Seconds(10);
  Build(o, 1);
  std::vector<rdma::GlobalAddress> lines;
  for (int i = 0; i < 17; ++i) lines.push_back(*m(0).Allocate(c(0)));
  // Like a 2PL transaction whose working set exceeds the cache.
  std::vector<ExclusiveGuard> held;
  for (int i = 0; i < 16; ++i) {
    auto g = m(0).XLock(c(0), lines[i], {.no_wait = true});
    ASSERT_TRUE(g.ok()) << g.status();
    held.push_back(*std::move(g));
  }
  const absl::Time start = absl::Now();
  auto one_more = m(0).XLock(c(0), lines[16], {.no_wait = true});
  EXPECT_EQ(one_more.status().code(), absl::StatusCode::kResourceExhausted)
      << one_more.status();
  EXPECT_NE(one_more.status().message().find("--cache_mb"), std::string::npos);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // not the 10 s timeout
  held.clear();
  EXPECT_TRUE(m(0).XLock(c(0), lines[16], {.no_wait = true}).ok());
}

// A paused node declared failed and fenced: a peer's answer to its
// invalidation is lost at the fabric. Once it learns it is fenced (its
// own bit in SetPeerStates, from its failure monitor), its thread stops
// waiting for that answer at once, not after kReplyGrace (30 s), and
// fails at the fabric. Here the answer is lost because the peer crashed
// (Fabric::Crash: what is sent to it is dropped): the same wait.
TEST_F(SelccManagerTest, AFencedNodeStopsWaitingForItsPeersAnswers) {
  if (testing::TestFabricKind() != rdma::FabricKind::kLoopback) {
    GTEST_SKIP() << "fencing is built for the loopback only";
  }
  CcOptions o = SelccOptions();
  o.lock_timeout = absl::Seconds(60);
  Build(o, 2, /*fencing=*/true);
  Write(1, 7);  // node 1 holds the line Modified
  ASSERT_TRUE(cluster_->fabric().Crash(1).ok());
  absl::Status taken;
  std::thread requester([&] { taken = m(0).XLock(c(0), gcl_).status(); });
  const absl::Time sent_by = absl::Now() + absl::Seconds(5);
  while (m(0).Stats().invalidations_sent == 0 && absl::Now() < sent_by) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_GT(m(0).Stats().invalidations_sent, 0u);
  absl::SleepFor(absl::Milliseconds(20));  // into its wait for the answer
  ASSERT_TRUE(cluster_->fabric().Fence(0).ok());
  const absl::Time fenced = absl::Now();
  m(0).SetPeerStates(/*fenced=*/1, /*stealable=*/0);  // node 0 learns it
  requester.join();
  EXPECT_LT(absl::Now() - fenced, absl::Seconds(5))
      << "the fenced node waited for an answer that could not come";
  EXPECT_EQ(taken.code(), absl::StatusCode::kUnavailable) << taken;
}

}  // namespace
}  // namespace strand::cc
