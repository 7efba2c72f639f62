#ifndef STRAND_RDMA_HANDLER_THREADS_H_
#define STRAND_RDMA_HANDLER_THREADS_H_

// The message handler threads of one compute node, shared by every backend
// (ComputeNode::StartHandlers / StopHandlers). Each thread owns an endpoint
// of the node and loops: wait for the next message, count it, hand it to the
// handler. Only the wait differs between backends (a loopback inbox, a verbs
// receive ring), so the backend passes it in; it must block while idle and
// return false once the backend has been told to stop.

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "rdma/fabric.h"

namespace strand::rdma {

class HandlerThreads {
 public:
  // Waits for the next message for the node; false once stopping.
  using NextMessage = std::function<bool(Message* message)>;
  // Counts a received message on the handler thread's own endpoint.
  using CountReceived = std::function<void(Endpoint& endpoint)>;
  // After the handler returned from a message NextMessage gave (the
  // backend's admission of it ends; may be null).
  using Finished = std::function<void(const Message& message)>;

  // Starts `threads` threads with endpoints from `node`. InvalidArgument for
  // fewer than one thread, FailedPrecondition if already started.
  absl::Status Start(ComputeNode& node, MessageHandler handler, int threads,
                     NextMessage next, CountReceived count,
                     Finished finished = nullptr);
  // Joins the threads; the caller has first made NextMessage return false.
  // Idempotent.
  void Join();

 private:
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  MessageHandler handler_;
  NextMessage next_;
  CountReceived count_;
  Finished finished_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_HANDLER_THREADS_H_
