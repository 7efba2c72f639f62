// Messages between compute nodes: exactly-once delivery, intact payloads,
// ordering after peer writes, and handler threads that sleep when idle, in
// both loopback delivery modes (inline on the sender's thread, and handler
// threads); then what inline delivery promises: the receiver's state on the
// sender's thread, the model's cost with no context switch, multicasts that
// pay the slowest exchange, and a StopHandlers that waits for running
// handlers.

#include <sys/resource.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/thread_ledger.h"
#include "gtest/gtest.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "rdma/fabric_options.h"
#include "rdma/loopback/loopback_compute_node.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using loopback::LoopbackComputeNode;

struct TestPayload {
  uint32_t sender;
  uint32_t sequence;
  uint64_t check;  // derived from the two above
  uint8_t fill[40];
};

uint64_t CheckOf(uint32_t sender, uint32_t sequence) {
  return (uint64_t{sender} << 32 | sequence) * 0x9E3779B97F4A7C15ULL;
}

class MessagesTest : public ::testing::TestWithParam<MessageDelivery> {
 protected:
  FabricOptions Options(int memory_nodes, int compute_nodes) const {
    FabricOptions o = testing::TestFabricOptions(memory_nodes, compute_nodes);
    o.message_delivery = GetParam();
    return o;
  }
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST_P(MessagesTest, ManyConcurrentSendersEachDeliveredExactlyOnceIntact) {
  constexpr int kNodes = 4;
  constexpr int kThreadsPerNode = 2;
  constexpr int kMessagesPerThread = 5000;
  auto fabric = testing::MakeTestFabric(Options(1, kNodes));
  ASSERT_NE(fabric, nullptr);

  // std::mutex: TSan sees it (Debian's abseil is not instrumented).
  std::mutex mu;
  std::condition_variable all_in_cv;
  absl::flat_hash_set<uint64_t> seen;
  int duplicates = 0;
  int corrupt = 0;
  ComputeNode* receiver = *fabric->compute_node(0);
  ASSERT_TRUE(receiver
                  ->StartHandlers(
                      [&](const Message& m, Endpoint&) {
                        auto p = m.Load<TestPayload>();
                        bool intact = m.type == 7 &&
                                      p.check == CheckOf(p.sender, p.sequence);
                        for (uint8_t b : p.fill) {
                          intact &= b == static_cast<uint8_t>(p.sequence);
                        }
                        intact &= m.source == p.sender / kThreadsPerNode;
                        std::lock_guard<std::mutex> lock(mu);
                        if (!intact) ++corrupt;
                        if (!seen.insert(uint64_t{p.sender} << 32 | p.sequence)
                                 .second) {
                          ++duplicates;
                        }
                        all_in_cv.notify_all();
                      },
                      2)
                  .ok());

  std::vector<std::thread> senders;
  for (int n = 0; n < kNodes; ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      senders.emplace_back([&, n, t] {
        auto ep = (*fabric->compute_node(n))->NewEndpoint();
        ASSERT_TRUE(ep.ok());
        const uint32_t sender = n * kThreadsPerNode + t;
        for (uint32_t i = 0; i < kMessagesPerThread; ++i) {
          TestPayload p{sender, i, CheckOf(sender, i), {}};
          std::memset(p.fill, static_cast<uint8_t>(i), sizeof(p.fill));
          Message m;
          m.type = 7;
          m.Store(p);
          ASSERT_TRUE((*ep)->Send(0, m).ok());
        }
      });
    }
  }
  for (auto& t : senders) t.join();

  constexpr size_t kTotal =
      size_t{kNodes} * kThreadsPerNode * kMessagesPerThread;
  {
    std::unique_lock<std::mutex> lock(mu);
    all_in_cv.wait_for(lock, std::chrono::seconds(120),
                       [&] { return seen.size() + duplicates >= kTotal; });
    EXPECT_EQ(seen.size(), kTotal);
    EXPECT_EQ(duplicates, 0);
    EXPECT_EQ(corrupt, 0);
  }
  receiver->StopHandlers();
  EXPECT_EQ(fabric->Counters().messages_sent, kTotal);
  EXPECT_EQ(receiver->Counters().messages_received, kTotal);
}

TEST_P(MessagesTest, IdleHandlersDoNotSpin) {
  auto fabric = testing::MakeTestFabric(Options(1, 2));
  ASSERT_NE(fabric, nullptr);
  for (ComputeNodeId id : {0, 1}) {
    ASSERT_TRUE((*fabric->compute_node(id))
                    ->StartHandlers([](const Message&, Endpoint&) {}, 4)
                    .ok());
  }
  absl::SleepFor(absl::Milliseconds(50));  // let the threads park
  const double cpu_before = ProcessCpuSeconds();
  absl::SleepFor(absl::Milliseconds(500));
  const double cpu_used = ProcessCpuSeconds() - cpu_before;
  // Eight spinning threads would burn >= 0.5 s of CPU (both cores). On
  // verbs the process also hosts the memory node, whose fence control
  // plane polls its header every 0.5 ms: in the emulated VM that alone
  // came to 0.054 s.
  EXPECT_LT(cpu_used, 0.1) << "idle handler threads used " << cpu_used
                           << " s of CPU in 0.5 s";
}

TEST_P(MessagesTest, MessageAfterPeerWriteSeesTheData) {
  auto fabric = testing::MakeTestFabric(Options(1, 2));
  ASSERT_NE(fabric, nullptr);
  ComputeNode* requester = *fabric->compute_node(0);
  std::vector<uint64_t> buffer(64, 0);
  auto region =
      requester->RegisterLocalMemory(buffer.data(), buffer.size() * 8);
  ASSERT_TRUE(region.ok());

  std::atomic<int> good{0}, bad{0};
  ASSERT_TRUE(requester
                  ->StartHandlers(
                      [&](const Message& m, Endpoint&) {
                        const auto slot = m.Load<uint32_t>();
                        (buffer[slot] == slot + 1000 ? good : bad)++;
                      },
                      1)
                  .ok());
  auto ep = (*fabric->compute_node(1))->NewEndpoint();
  ASSERT_TRUE(ep.ok());
  for (uint32_t slot = 0; slot < 64; ++slot) {
    const uint64_t value = slot + 1000;
    ASSERT_TRUE((*ep)->WriteToPeer(region->At(slot * 8), &value, 8).ok());
    Message m;
    m.Store(slot);
    ASSERT_TRUE((*ep)->Send(0, m).ok());
  }
  for (int i = 0; i < 6000 && good + bad < 64; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(good.load(), 64);
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(MessagesTest, HandlerEndpointCanUseTheFabric) {
  auto fabric = testing::MakeTestFabric(Options(1, 2));
  ASSERT_NE(fabric, nullptr);
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  auto alloc = BlockAllocator::Create(*fabric, 0, 64);
  GlobalAddress word = *(*alloc)->Allocate(**ep);
  std::atomic<int> done{0};
  ASSERT_TRUE((*fabric->compute_node(1))
                  ->StartHandlers(
                      [&](const Message& m, Endpoint& handler_ep) {
                        EXPECT_EQ(handler_ep.node_id(), 1);
                        EXPECT_TRUE(handler_ep.FetchAndAdd(word, 1).ok());
                        done++;
                      },
                      2)
                  .ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*ep)->Send(1, Message()).ok());
  for (int i = 0; i < 6000 && done < 100; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  uint64_t value = 0;
  ASSERT_TRUE((*ep)->Read(word, &value, 8).ok());
  EXPECT_EQ(value, 100u);
}

TEST_P(MessagesTest, BadUsesAreErrors) {
  auto fabric = testing::MakeTestFabric(Options(1, 2));
  ASSERT_NE(fabric, nullptr);
  ComputeNode* node = *fabric->compute_node(0);
  auto ep = node->NewEndpoint();
  EXPECT_EQ((*ep)->Send(5, Message()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(node->StartHandlers([](const Message&, Endpoint&) {}, 0).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(node->StartHandlers([](const Message&, Endpoint&) {}, 1).ok());
  EXPECT_EQ(node->StartHandlers([](const Message&, Endpoint&) {}, 1).code(),
            absl::StatusCode::kFailedPrecondition);
  node->StopHandlers();
  node->StopHandlers();  // idempotent
  EXPECT_EQ((*ep)->Send(0, Message()).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(node->RegisterLocalMemory(nullptr, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(
    Delivery, MessagesTest,
    ::testing::Values(MessageDelivery::kInline, MessageDelivery::kThreads),
    [](const ::testing::TestParamInfo<MessageDelivery>& info) {
      return std::string(MessageDeliveryName(info.param));
    });

// What only the loopback's inline delivery promises.
class InlineDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::TestFabricKind() != FabricKind::kLoopback) {
      GTEST_SKIP() << "inline delivery is the loopback fabric's";
    }
  }
  static std::unique_ptr<Fabric> Make(int compute_nodes, int64_t rtt_ns,
                                      MessageDelivery delivery) {
    FabricOptions o = testing::TestFabricOptions(1, compute_nodes);
    o.rtt_ns = rtt_ns;
    o.message_delivery = delivery;
    return testing::MakeTestFabric(o);
  }
};

long VoluntaryContextSwitchesOfThisThread() {
  rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw;
}

TEST_F(InlineDeliveryTest, HandlerRunsOnTheSendersThreadAsTheReceiver) {
  auto fabric = Make(2, 0, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  ComputeNode* receiver = *fabric->compute_node(1);
  std::thread::id handler_thread;
  ComputeNodeId handler_node = 99, source = 99;
  ASSERT_TRUE(
      receiver
          ->StartHandlers(
              [&](const Message& m, Endpoint& ep) {
                handler_thread = std::this_thread::get_id();
                handler_node = ep.node_id();
                source = m.source;
                // The handler's one-sided work counts as the
                // receiver's.
                EXPECT_TRUE(
                    ep.Read(GlobalAddress(0, 0), &handler_thread, 0).ok());
              },
              1)
          .ok());
  ComputeNode* sender = *fabric->compute_node(0);
  auto ep = sender->NewEndpoint();
  ASSERT_TRUE(ep.ok());
  ASSERT_TRUE((*ep)->Send(1, Message()).ok());
  // Delivered before Send returned, on this thread, with node 1's endpoint.
  EXPECT_EQ(handler_thread, std::this_thread::get_id());
  EXPECT_EQ(handler_node, 1);
  EXPECT_EQ(source, 0);
  EXPECT_EQ(sender->Counters().messages_sent, 1u);
  EXPECT_EQ(sender->Counters().messages_received, 0u);
  EXPECT_EQ(sender->Counters().round_trips, 0u);
  EXPECT_EQ(receiver->Counters().messages_received, 1u);
  EXPECT_EQ(receiver->Counters().round_trips, 1u);
}

TEST_F(InlineDeliveryTest, ThreadDeliveryRunsTheHandlerElsewhere) {
  auto fabric = Make(2, 0, MessageDelivery::kThreads);
  ASSERT_NE(fabric, nullptr);
  std::atomic<bool> on_sender{true}, done{false};
  const std::thread::id me = std::this_thread::get_id();
  ASSERT_TRUE((*fabric->compute_node(1))
                  ->StartHandlers(
                      [&](const Message&, Endpoint&) {
                        on_sender = std::this_thread::get_id() == me;
                        done = true;
                      },
                      1)
                  .ok());
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  ASSERT_TRUE((*ep)->Send(1, Message()).ok());
  for (int i = 0; i < 6000 && !done; ++i) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_TRUE(done);
  EXPECT_FALSE(on_sender);
}

// A request whose handler replies: the reply's handler runs nested, the
// whole exchange is charged once - one-way there, one-way back - and the
// sender's thread never blocks.
TEST_F(InlineDeliveryTest, ExchangeCostsTheModelWithoutAContextSwitch) {
  constexpr int64_t kRtt = 20'000;
  auto fabric = Make(2, kRtt, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  int replies = 0;
  for (ComputeNodeId id : {0, 1}) {
    ASSERT_TRUE((*fabric->compute_node(id))
                    ->StartHandlers(
                        [&](const Message& m, Endpoint& ep) {
                          if (m.type == 1) {
                            Message reply;
                            reply.type = 2;
                            EXPECT_TRUE(ep.Send(m.source, reply).ok());
                          } else {
                            ++replies;
                          }
                        },
                        1)
                    .ok());
  }
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  Message request;
  request.type = 1;
  ASSERT_TRUE((*ep)->Send(1, request).ok());  // warm: endpoints, TLS
  const ThreadLedger::Snapshot before = ThreadLedger::Mine().Read();
  const long switches = VoluntaryContextSwitchesOfThisThread();
  const absl::Time start = absl::Now();
  constexpr int kExchanges = 50;
  for (int i = 0; i < kExchanges; ++i) {
    ASSERT_TRUE((*ep)->Send(1, request).ok());
  }
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(VoluntaryContextSwitchesOfThisThread(), switches);
  EXPECT_EQ(replies, kExchanges + 1);
  const ThreadLedger::Snapshot d = ThreadLedger::Mine().Read() - before;
  EXPECT_EQ(d.fabric_model_ns, kExchanges * kRtt);
  EXPECT_GE(took, absl::Nanoseconds(kExchanges * kRtt));
  EXPECT_EQ((*fabric->compute_node(1))->Counters().messages_received,
            uint64_t{kExchanges + 1});
  EXPECT_EQ((*fabric->compute_node(0))->Counters().messages_received,
            uint64_t{kExchanges + 1});
}

// Three receivers each spend a round trip on the request: sent one after
// another that would be 3 x (rtt/2 + rtt); posted together, the sender
// pays the slowest, rtt/2 + rtt.
TEST_F(InlineDeliveryTest, MulticastPaysTheSlowestExchange) {
  constexpr int64_t kRtt = 20'000;
  auto fabric = Make(4, kRtt, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  auto alloc = BlockAllocator::Create(*fabric, 0, 64);
  const GlobalAddress word = *(*alloc)->Allocate(**ep);
  for (ComputeNodeId id : {1, 2, 3}) {
    ASSERT_TRUE((*fabric->compute_node(id))
                    ->StartHandlers(
                        [&](const Message&, Endpoint& handler_ep) {
                          EXPECT_TRUE(handler_ep.FetchAndAdd(word, 1).ok());
                        },
                        1)
                    .ok());
  }
  const ComputeNodeId dsts[] = {1, 2, 3};
  absl::Status results[3];
  const ThreadLedger::Snapshot before = ThreadLedger::Mine().Read();
  (*ep)->Multicast(dsts, Message(), absl::MakeSpan(results));
  const ThreadLedger::Snapshot d = ThreadLedger::Mine().Read() - before;
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(d.fabric_model_ns, kRtt / 2 + kRtt);
  uint64_t value = 0;
  ASSERT_TRUE((*ep)->Read(word, &value, 8).ok());
  EXPECT_EQ(value, 3u);
  const ComputeNodeId with_bad[] = {1, 7};
  absl::Status two[2];
  (*ep)->Multicast(with_bad, Message(), absl::MakeSpan(two));
  EXPECT_TRUE(two[0].ok());
  EXPECT_EQ(two[1].code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(InlineDeliveryTest, StopHandlersWaitsForARunningInlineHandler) {
  auto fabric = Make(2, 0, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  ComputeNode* receiver = *fabric->compute_node(1);
  std::atomic<bool> entered{false}, finished{false};
  ASSERT_TRUE(receiver
                  ->StartHandlers(
                      [&](const Message&, Endpoint&) {
                        entered = true;
                        absl::SleepFor(absl::Milliseconds(100));
                        finished = true;
                      },
                      1)
                  .ok());
  std::thread sender([&] {
    auto ep = (*fabric->compute_node(0))->NewEndpoint();
    EXPECT_TRUE((*ep)->Send(1, Message()).ok());
  });
  while (!entered) std::this_thread::yield();
  receiver->StopHandlers();
  EXPECT_TRUE(finished) << "StopHandlers returned while a handler ran";
  sender.join();
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  EXPECT_EQ((*ep)->Send(1, Message()).code(), absl::StatusCode::kUnavailable);
}

// A chain of forwards deeper than kMaxInlineDepth continues on the
// handler threads: nothing is lost, nothing recurses without bound.
TEST_F(InlineDeliveryTest, DeepChainsOfMessagesContinueOnHandlerThreads) {
  auto fabric = Make(2, 0, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  constexpr uint32_t kHops = 40;
  std::atomic<uint32_t> last{0};
  std::atomic<int> max_depth_seen{0};
  thread_local int depth = 0;
  for (ComputeNodeId id : {0, 1}) {
    ASSERT_TRUE((*fabric->compute_node(id))
                    ->StartHandlers(
                        [&](const Message& m, Endpoint& ep) {
                          ++depth;
                          max_depth_seen =
                              std::max(max_depth_seen.load(), depth);
                          const uint32_t hop = m.Load<uint32_t>();
                          last = hop;
                          if (hop < kHops) {
                            Message next;
                            next.Store(hop + 1);
                            EXPECT_TRUE(ep.Send(1 - ep.node_id(), next).ok());
                          }
                          --depth;
                        },
                        1)
                    .ok());
  }
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  Message first;
  first.Store(uint32_t{1});
  ASSERT_TRUE((*ep)->Send(1, first).ok());
  for (int i = 0; i < 6000 && last < kHops; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(last.load(), kHops);
  // A handler thread's run, plus the inline ones nested on it.
  EXPECT_LE(max_depth_seen.load(), LoopbackComputeNode::kMaxInlineDepth + 1);
  EXPECT_GT(max_depth_seen.load(), 1);
}

TEST_F(InlineDeliveryTest, MessagesSentBeforeHandlersStartAreDelivered) {
  auto fabric = Make(2, 0, MessageDelivery::kInline);
  ASSERT_NE(fabric, nullptr);
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*ep)->Send(1, Message()).ok());
  std::atomic<int> got{0};
  ASSERT_TRUE((*fabric->compute_node(1))
                  ->StartHandlers([&](const Message&, Endpoint&) { ++got; }, 1)
                  .ok());
  ASSERT_TRUE((*ep)->Send(1, Message()).ok());
  for (int i = 0; i < 6000 && got < 6; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(got.load(), 6);
}

// Layers share a node's messages by type range (message_router.h).
TEST(MessageRouterTest, RoutesByTypeAndRefusesOverlaps) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
  ASSERT_NE(fabric, nullptr);
  ComputeNode* node = *fabric->compute_node(1);
  std::atomic<int> low{0}, high{0};
  ASSERT_TRUE(node->AddHandler(
                      10, 19, [&](const Message&, Endpoint&) { ++low; }, 1)
                  .ok());
  ASSERT_TRUE(node->AddHandler(
                      20, 29, [&](const Message&, Endpoint&) { ++high; }, 1)
                  .ok());
  EXPECT_EQ(node->AddHandler(
                    15, 25, [](const Message&, Endpoint&) {}, 1)
                .code(),
            absl::StatusCode::kAlreadyExists);
  auto ep = (*fabric->compute_node(0))->NewEndpoint();
  for (uint16_t type : {10, 19, 20, 29, 30}) {
    Message m;
    m.type = type;
    ASSERT_TRUE((*ep)->Send(1, m).ok());  // 30: logged and dropped
  }
  for (int i = 0; i < 6000 && low + high < 4; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(low.load(), 2);
  EXPECT_EQ(high.load(), 2);
}

}  // namespace
}  // namespace strand::rdma
