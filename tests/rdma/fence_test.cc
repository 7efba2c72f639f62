// Fabric::Fence: a fenced compute node's operations, peer writes and
// messages fail, nothing reaches it, the others go on, Unfence readmits it,
// and no peer's handler acts on its messages once the fence returned, on
// the loopback and on verbs. On the loopback (its fence gate,
// rdma/loopback/fence_gate.h) also: Fence returns only once an operation
// the node had in flight is done, and that operation may open another
// endpoint of the node meanwhile; unarmed, Fence is Unimplemented and
// costs nothing.

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "rdma/fabric_options.h"
#include "rdma/loopback/fence_gate.h"
#include "rdma/message.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using ::testing::HasSubstr;

FabricOptions Options(bool fencing, int64_t rtt_ns = 0) {
  FabricOptions o;
  o.compute_nodes = 2;
  o.pool_bytes = 16 << 20;
  o.fencing = fencing;
  o.rtt_ns = rtt_ns;
  return o;
}

struct Node {
  ComputeNode* node = nullptr;
  std::unique_ptr<Endpoint> ep;
};

Node Open(Fabric& fabric, ComputeNodeId id) {
  Node n;
  n.node = *fabric.compute_node(id);
  n.ep = *n.node->NewEndpoint();
  return n;
}

// On the loopback and, with STRAND_TEST_FABRIC=verbs, on an in-process
// verbs deployment (tests/rdma/verbs_in_vm.sh), whose memory nodes fence
// by their control plane (rdma/verbs/fence_control.h); two memory nodes,
// so both must have fenced.
TEST(FenceTest, AFencedNodeReachesNothingAndNothingReachesIt) {
  FabricOptions options = testing::TestFabricOptions(/*memory_nodes=*/2,
                                                     /*compute_nodes=*/2);
  options.pool_bytes = 16 << 20;
  options.fencing = true;
  std::unique_ptr<Fabric> fabric = testing::MakeTestFabric(options);
  ASSERT_NE(fabric, nullptr);
  Node a = Open(*fabric, 0), b = Open(*fabric, 1);
  GlobalAddress words[2];
  for (MemoryNodeId mn = 0; mn < 2; ++mn) {
    auto alloc = BlockAllocator::Create(*fabric, mn, 4096);
    ASSERT_TRUE(alloc.ok());
    words[mn] = *(*alloc)->Allocate(*a.ep);
  }
  // The word's value as node 0 reads it.
  auto value = [&](MemoryNodeId mn) {
    auto v = a.ep->FetchAndAdd(words[mn], 0);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : ~uint64_t{0};
  };
  std::atomic<int> received{0};
  ASSERT_TRUE(
      b.node->StartHandlers([&](const Message&, Endpoint&) { ++received; }, 1)
          .ok());
  char buffer[64] = {};
  auto region = b.node->RegisterLocalMemory(buffer, sizeof(buffer));
  ASSERT_TRUE(region.ok());
  ASSERT_TRUE(b.ep->FetchAndAdd(words[0], 1).ok());
  ASSERT_TRUE(a.ep->Send(1, Message{}).ok());

  ASSERT_TRUE(fabric->Fence(1).ok());
  // Node 1 reaches no memory node, no peer.
  absl::StatusOr<uint64_t> faa = b.ep->FetchAndAdd(words[0], 1);
  EXPECT_EQ(faa.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(faa.status().message()),
              HasSubstr("compute node 1 is fenced"));
  EXPECT_EQ(b.ep->Send(0, Message{}).code(), absl::StatusCode::kUnavailable);
  // A new endpoint of the node is fenced too.
  auto late = b.node->NewEndpoint();
  ASSERT_TRUE(late.ok());
  EXPECT_EQ((*late)->Write(words[1], "x", 1).code(),
            absl::StatusCode::kUnavailable);
  // Nothing reaches node 1; node 0 goes on.
  const int before = received.load();
  EXPECT_EQ(a.ep->Send(1, Message{}).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(a.ep->WriteToPeer(region->At(0), "y", 1).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(received.load(), before);
  EXPECT_EQ(buffer[0], 0);
  EXPECT_EQ(value(0), 1u) << "a fenced operation took effect";

  // Readmitted.
  ASSERT_TRUE(fabric->Unfence(1).ok());
  EXPECT_TRUE(b.ep->FetchAndAdd(words[0], 1).ok());
  EXPECT_TRUE(b.ep->FetchAndAdd(words[1], 1).ok());
  EXPECT_TRUE(a.ep->Send(1, Message{}).ok());
  EXPECT_EQ(value(0), 2u);
  EXPECT_EQ(value(1), 1u);
  b.node->StopHandlers();
}

// A message of the node is one of its operations too: a peer's handler
// thread serving it when the node is fenced delays the fence until it
// returns, and one queued behind it, handled after the fence, is dropped,
// even once the node is readmitted (its new incarnation's are not). So no
// survivor ever acts late on a failed node's request (the latch word of
// docs/design/node_failure.md, "served late"). Handler threads: the
// loopback's kThreads delivery, or verbs.
TEST(FenceTest, AHandlerOfTheNodesMessageIsWaitedForAndLaterOnesDropped) {
  FabricOptions options = testing::TestFabricOptions(/*memory_nodes=*/1,
                                                     /*compute_nodes=*/2);
  options.pool_bytes = 16 << 20;
  options.fencing = true;
  options.message_delivery = MessageDelivery::kThreads;
  std::unique_ptr<Fabric> fabric = testing::MakeTestFabric(options);
  ASSERT_NE(fabric, nullptr);
  Node a = Open(*fabric, 0), b = Open(*fabric, 1);
  absl::Notification first_in, release_first;
  std::atomic<int> handled{0};
  ASSERT_TRUE(b.node
                  ->StartHandlers(
                      [&](const Message& m, Endpoint&) {
                        if (m.type == 1) {
                          first_in.Notify();
                          release_first.WaitForNotification();
                        }
                        ++handled;
                      },
                      /*threads=*/1)
                  .ok());
  Message first;
  first.type = 1;
  ASSERT_TRUE(a.ep->Send(1, first).ok());
  ASSERT_TRUE(first_in.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(a.ep->Send(1, Message{}).ok());  // queued behind the first
  absl::Notification fenced;
  std::thread fencing([&] {
    EXPECT_TRUE(fabric->Fence(0).ok());
    fenced.Notify();
  });
  EXPECT_FALSE(fenced.WaitForNotificationWithTimeout(absl::Milliseconds(300)))
      << "the fence returned while a handler of the node's message ran";
  release_first.Notify();
  fencing.join();
  EXPECT_EQ(handled.load(), 1);
  ASSERT_TRUE(fabric->Unfence(0).ok());
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(handled.load(), 1) << "a message of the fenced incarnation, "
                                  "handled after the fence, was served";
  // The readmitted node's messages are served.
  Node again = Open(*fabric, 0);
  ASSERT_TRUE(again.ep->Send(1, Message{}).ok());
  for (int i = 0; i < 1000 && handled.load() < 2; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(handled.load(), 2);
  b.node->StopHandlers();
}

TEST(FenceTest, FenceWaitsForTheOperationsInFlight) {
  if (testing::TestFabricKind() != FabricKind::kLoopback) {
    GTEST_SKIP() << "the loopback's cost model holds an operation in flight";
  }
  // Every round trip spins 300 ms inside the operation.
  auto fabric = CreateFabric(Options(/*fencing=*/true, 300'000'000));
  ASSERT_TRUE(fabric.ok());
  Node a = Open(**fabric, 0), b = Open(**fabric, 1);
  auto alloc = BlockAllocator::Create(**fabric, 0, 4096);
  ASSERT_TRUE(alloc.ok());
  const GlobalAddress word = *(*alloc)->Allocate(*a.ep);
  // An attempt whose writer the scheduler held back until after the fence
  // (its operation then fails, fenced, and changes nothing) tests nothing:
  // it is made again.
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 5) << "the writer never started before the fence";
    std::atomic<bool> started{false};
    absl::Status slow;
    std::thread writer([&] {
      started = true;
      slow = b.ep->FetchAndAdd(word, 5).status();
    });
    while (!started) std::this_thread::yield();
    absl::SleepFor(absl::Milliseconds(50));  // inside its round trip now
    const absl::Time fence_start = absl::Now();
    ASSERT_TRUE((*fabric)->Fence(1).ok());
    const absl::Duration fence_took = absl::Now() - fence_start;
    auto value = a.ep->FetchAndAdd(word, 0);
    ASSERT_TRUE(value.ok());
    writer.join();
    if (absl::IsUnavailable(slow)) {
      EXPECT_EQ(*value, 0u) << "a fenced operation took effect";
      ASSERT_TRUE((*fabric)->Unfence(1).ok());
      continue;
    }
    // Done before Fence returned: its effect is in, and nothing after.
    EXPECT_TRUE(slow.ok()) << slow;
    EXPECT_GE(fence_took, absl::Milliseconds(100));
    EXPECT_EQ(*value, 5u);
    break;
  }
}

// A thread inside the gate may take a seat before it leaves: an inline
// handler answering the node being fenced opens an endpoint of it (its
// first message there). The fence used to wait for the seats holding the
// gate's mutex, which that seat needs: neither went on (seen as a fence
// that never ended, under TSan, in tests/engine/forced_failure_test.cc).
TEST(FenceTest, AnOperationInFlightMayOpenAnEndpointWhileTheFenceWaits) {
  loopback::FenceGate gate(/*armed=*/true);
  auto inside = gate.Sit();
  ASSERT_TRUE(gate.Enter(*inside));
  std::thread fencing([&] { EXPECT_TRUE(gate.Fence()); });
  while (!gate.fenced()) std::this_thread::yield();
  decltype(gate.Sit()) opened;
  absl::Notification sat;
  std::thread opening([&] {
    opened = gate.Sit();
    sat.Notify();
  });
  const bool in_time = sat.WaitForNotificationWithTimeout(absl::Seconds(10));
  gate.Exit(*inside);  // the fence ends now either way, and so does Sit
  fencing.join();
  opening.join();
  EXPECT_TRUE(in_time) << "a seat waited for the fence, which waited for it";
  // The fence holds for the new seat too.
  EXPECT_FALSE(gate.Enter(*opened));
  gate.Leave(std::move(opened));
  gate.Leave(std::move(inside));
}

TEST(FenceTest, UnarmedFencingIsUnimplemented) {
  if (testing::TestFabricKind() != FabricKind::kLoopback) {
    GTEST_SKIP() << "only the loopback's fencing is armed by an option";
  }
  auto fabric = CreateFabric(Options(/*fencing=*/false));
  ASSERT_TRUE(fabric.ok());
  EXPECT_EQ((*fabric)->Fence(1).code(), absl::StatusCode::kUnimplemented);
  Node b = Open(**fabric, 1);
  auto alloc = BlockAllocator::Create(**fabric, 0, 4096);
  ASSERT_TRUE(alloc.ok());
  EXPECT_TRUE((*alloc)->Allocate(*b.ep).ok());
}

}  // namespace
}  // namespace strand::rdma
