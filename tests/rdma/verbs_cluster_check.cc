// verbs_cluster_check: one compute process of the multi-process verbs run
// (tests/rdma/verbs_multiprocess.sh): strand_memnode plus two of these.
//
// Each process, once the fabric's start-up barrier let everyone in:
//  1. adds 1 to a shared word on memory node 0 --adds times from --threads
//     threads (FAA), and takes chunks with the BlockAllocator;
//  2. sends its peer the address of a registered buffer (message);
//  3. checks that a peer write with a bad key is an error (queue pair in
//     the error state, reconnected on the next call), then writes a pattern
//     into the peer's buffer (WriteToPeer) and sends a message; the peer
//     checks the data is there when the message arrives;
//  4. after the peer said it is done, reads the shared word: it must be
//     exactly compute_nodes x threads x adds, and the chunks both took must
//     be disjoint.
// Prints PASS or FAIL with what differed; exits 0 only on PASS.

#include <atomic>
#include <deque>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "base/command_line.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric_flags.h"
#include "rdma/fabric_options.h"
#include "rdma/memory_node_layout.h"

DEFINE_int32(threads, 2, "Worker threads adding to the shared word");
DEFINE_int32(adds, 2000, "FAAs per thread");

namespace strand::rdma {
namespace {

enum MessageType : uint16_t { kRegion = 1, kData = 2, kDone = 3 };

struct Payload {
  PeerAddress region;  // kRegion: where the sender accepts peer writes
  uint64_t value = 0;  // kData: the pattern seed; kDone: first chunk taken
};

constexpr uint64_t kBufferWords = 512;
// A word of memory node 0's root area; this run owns the memory node.
const GlobalAddress kSharedWord(0, kRootAreaOffset + 64);

uint64_t Pattern(uint64_t seed, uint64_t i) {
  return (seed + 1) * 0x9E3779B97F4A7C15ULL ^ i;
}

class Inbox {
 public:
  void Push(const Message& m) {
    absl::MutexLock lock(&mu_);
    messages_.push_back(m);
  }
  // The first message of `type`, waiting up to 60 s.
  absl::StatusOr<Message> Take(uint16_t type) {
    absl::MutexLock lock(&mu_);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const Message& m : messages_) {
        if (m.type == type) return true;
      }
      return false;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&has), absl::Seconds(60))) {
      return absl::DeadlineExceededError(
          absl::StrFormat("no message of type %d from the peer in 60 s", type));
    }
    for (auto it = messages_.begin(); it != messages_.end(); ++it) {
      if (it->type == type) {
        Message m = *it;
        messages_.erase(it);
        return m;
      }
    }
    return absl::InternalError("unreachable");
  }

 private:
  absl::Mutex mu_;
  std::deque<Message> messages_ ABSL_GUARDED_BY(mu_);
};

absl::Status Run() {
  auto options = FabricOptionsFromFlags();
  if (!options.ok()) return options.status();
  auto fabric_or = CreateFabric(*options);
  if (!fabric_or.ok()) return fabric_or.status();
  Fabric& fabric = **fabric_or;
  if (fabric.compute_node_count() != 2) {
    return absl::InvalidArgumentError("the cluster must have 2 compute nodes");
  }
  const auto self = static_cast<ComputeNodeId>(options->node_id);
  const ComputeNodeId peer = 1 - self;
  ComputeNode* node = *fabric.compute_node(self);

  std::vector<uint64_t> buffer(kBufferWords, 0);
  auto region = node->RegisterLocalMemory(buffer.data(),
                                          buffer.size() * sizeof(uint64_t));
  if (!region.ok()) return region.status();
  Inbox inbox;
  Message data_message;
  bool data_intact = false;
  std::atomic<bool> got_data{false};
  if (absl::Status s = node->StartHandlers(
          [&](const Message& m, Endpoint&) {
            if (m.type == kData) {
              // Checked on arrival: the data must already be there.
              const uint64_t seed = m.Load<Payload>().value;
              bool intact = m.source == peer;
              for (uint64_t i = 0; i < kBufferWords; ++i) {
                intact &= buffer[i] == Pattern(seed, i);
              }
              data_intact = intact;
              got_data = true;
            }
            inbox.Push(m);
          },
          1);
      !s.ok()) {
    return s;
  }
  auto ep_or = node->NewEndpoint();
  if (!ep_or.ok()) return ep_or.status();
  Endpoint& ep = **ep_or;

  // 1. FAA sums from several threads, and chunks from the allocator.
  std::atomic<bool> faa_failed{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < FLAGS_threads; ++t) {
    workers.emplace_back([&] {
      auto worker_ep = node->NewEndpoint();
      if (!worker_ep.ok()) {
        faa_failed = true;
        return;
      }
      for (int i = 0; i < FLAGS_adds; ++i) {
        if (!(*worker_ep)->FetchAndAdd(kSharedWord, 1).ok()) faa_failed = true;
      }
    });
  }
  for (auto& t : workers) t.join();
  if (faa_failed) return absl::InternalError("a FetchAndAdd failed");
  auto allocator = BlockAllocator::Create(fabric, self, fabric.chunk_bytes());
  if (!allocator.ok()) return allocator.status();
  auto chunk = (*allocator)->Allocate(ep);
  if (!chunk.ok()) return chunk.status();

  // 2. Exchange buffer addresses.
  Message m;
  m.type = kRegion;
  m.Store(Payload{region->At(0), 0});
  if (absl::Status s = ep.Send(peer, m); !s.ok()) return s;
  auto peer_region = inbox.Take(kRegion);
  if (!peer_region.ok()) return peer_region.status();

  // 3. A peer write with a wrong key: the peer's NIC refuses it, the queue
  // pair goes to the error state, and the call says so instead of hanging;
  // the next call reconnects.
  PeerAddress bogus = peer_region->Load<Payload>().region;
  bogus.key ^= 0x5a5a;
  uint64_t word = 1;
  absl::Status refused = ep.WriteToPeer(bogus, &word, sizeof(word));
  if (refused.ok() || refused.message().find("remote") == std::string::npos) {
    return absl::InternalError(absl::StrFormat(
        "a peer write with a bad key returned \"%s\", not a remote access "
        "error",
        refused.ToString()));
  }
  std::cout << "bad-key peer write refused as expected: " << refused.message()
            << std::endl;

  // Peer write, then a message that must arrive after the data.
  std::vector<uint64_t> pattern(kBufferWords);
  for (uint64_t i = 0; i < kBufferWords; ++i) pattern[i] = Pattern(self, i);
  if (absl::Status s =
          ep.WriteToPeer(peer_region->Load<Payload>().region, pattern.data(),
                         pattern.size() * sizeof(uint64_t));
      !s.ok()) {
    return s;
  }
  m.type = kData;
  m.Store(Payload{{}, self});
  if (absl::Status s = ep.Send(peer, m); !s.ok()) return s;
  if (auto d = inbox.Take(kData); !d.ok()) return d.status();
  if (!data_intact) {
    return absl::DataLossError(
        "the peer's data was not (all) there when its message arrived");
  }

  // 4. Done: both sums are in; compare.
  m.type = kDone;
  m.Store(Payload{{}, chunk->raw()});
  if (absl::Status s = ep.Send(peer, m); !s.ok()) return s;
  auto done = inbox.Take(kDone);
  if (!done.ok()) return done.status();
  const uint64_t peer_chunk = done->Load<Payload>().value;
  if (peer_chunk == chunk->raw()) {
    return absl::DataLossError(
        absl::StrFormat("both compute nodes got chunk %s", chunk->ToString()));
  }
  uint64_t sum = 0;
  if (absl::Status s = ep.Read(kSharedWord, &sum, 8); !s.ok()) return s;
  const uint64_t expected = uint64_t{2} * FLAGS_threads * FLAGS_adds;
  if (sum != expected) {
    return absl::DataLossError(absl::StrFormat(
        "shared word is %d after FAAs from 2 processes, expected %d", sum,
        expected));
  }
  std::cout << absl::StrFormat(
                   "compute node %d: FAA sum %d == %d, peer write + message "
                   "ordered, chunks %s / %s disjoint; counters: %s",
                   self, sum, expected, chunk->ToString(),
                   GlobalAddress::FromRaw(peer_chunk).ToString(),
                   fabric.Counters().ToString())
            << std::endl;
  node->StopHandlers();
  return absl::OkStatus();
}

}  // namespace
}  // namespace strand::rdma

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "One compute process of the multi-process verbs check.\n"
      "  verbs_cluster_check --fabric=verbs --cluster=FILE --node_id=0|1");
  google::InitGoogleLogging(argv[0]);
  absl::Status s = strand::rdma::Run();
  std::cout << (s.ok() ? "PASS" : "FAIL: " + std::string(s.message()))
            << std::endl;
  return s.ok() ? 0 : 1;
}
