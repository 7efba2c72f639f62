#ifndef STRAND_RDMA_LOOPBACK_MESSAGE_INBOX_H_
#define STRAND_RDMA_LOOPBACK_MESSAGE_INBOX_H_

// The receive ring of a loopback compute node: a bounded FIFO of messages
// that handler threads block on when it is empty. A sender blocks while it is
// full, for at most a bounded time, so a node that stopped handling messages
// is reported instead of hanging its peers. Used for handler-thread delivery
// (MessageDelivery::kThreads) and for what inline delivery cannot take.
//
// std::mutex rather than absl::Mutex: a message orders what its sender did
// before it against what the handler does after, and ThreadSanitizer sees
// that edge only through a primitive it instruments (Debian's abseil is not
// built with TSan).

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "rdma/message.h"

namespace strand::rdma::loopback {

class MessageInbox {
 public:
  struct Entry {
    Message message;
    int64_t deliver_at_ns;  // cost model: not to be handled before this
    // The sender's FenceGate::generation when it sent the message.
    uint64_t sender_generation = 0;
  };

  MessageInbox(size_t capacity, absl::Duration full_timeout)
      : capacity_(capacity), full_timeout_(full_timeout) {}

  // Appends; waits while full. Unavailable once closed, DeadlineExceeded if
  // it stayed full for the whole timeout.
  absl::Status Push(const Entry& entry);
  // Waits for an entry; false once closed.
  bool Pop(Entry* entry);
  // Wakes every waiter; later Push and Pop fail.
  void Close();
  // After Close: empty and open again (a restarted node's inbox).
  void Reopen();

 private:
  const size_t capacity_;
  const absl::Duration full_timeout_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Entry> entries_;  // guarded by mu_
  bool closed_ = false;        // guarded by mu_
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_MESSAGE_INBOX_H_
