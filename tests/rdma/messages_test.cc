// Messages between compute nodes: exactly-once delivery, intact payloads,
// ordering after peer writes, and handler threads that sleep when idle.

#include <time.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

struct TestPayload {
  uint32_t sender;
  uint32_t sequence;
  uint64_t check;  // derived from the two above
  uint8_t fill[40];
};

uint64_t CheckOf(uint32_t sender, uint32_t sequence) {
  return (uint64_t{sender} << 32 | sequence) * 0x9E3779B97F4A7C15ULL;
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(MessagesTest, ManyConcurrentSendersEachDeliveredExactlyOnceIntact) {
  constexpr int kNodes = 4;
  constexpr int kThreadsPerNode = 2;
  constexpr int kMessagesPerThread = 5000;
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, kNodes));
  ASSERT_NE(fabric, nullptr);

  absl::Mutex mu;
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
                        absl::MutexLock lock(&mu);
                        if (!intact) ++corrupt;
                        if (!seen.insert(uint64_t{p.sender} << 32 | p.sequence)
                                 .second) {
                          ++duplicates;
                        }
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
  absl::MutexLock lock(&mu);
  auto all_in = [&]() { return seen.size() + duplicates >= kTotal; };
  mu.AwaitWithTimeout(absl::Condition(&all_in), absl::Seconds(60));
  EXPECT_EQ(seen.size(), kTotal);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(corrupt, 0);
  mu.Unlock();
  receiver->StopHandlers();
  mu.Lock();
  EXPECT_EQ(fabric->Counters().messages_sent, kTotal);
  EXPECT_EQ(receiver->Counters().messages_received, kTotal);
}

TEST(MessagesTest, IdleHandlersDoNotSpin) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
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
  // Eight spinning threads would burn >= 0.5 s of CPU (both cores).
  EXPECT_LT(cpu_used, 0.05)
      << "idle handler threads used " << cpu_used << " s of CPU in 0.5 s";
}

TEST(MessagesTest, MessageAfterPeerWriteSeesTheData) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
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

TEST(MessagesTest, HandlerEndpointCanUseTheFabric) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
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

TEST(MessagesTest, BadUsesAreErrors) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
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

}  // namespace
}  // namespace strand::rdma
