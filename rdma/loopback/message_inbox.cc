#include "rdma/loopback/message_inbox.h"

#include "absl/strings/str_format.h"

namespace strand::rdma {

absl::Status MessageInbox::Push(const Entry& entry) {
  absl::MutexLock lock(&mu_);
  auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || entries_.size() < capacity_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&has_room), full_timeout_)) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "message to compute node was not accepted for %s: its %d-message "
        "inbox stayed full (are its handler threads running?)",
        absl::FormatDuration(full_timeout_), capacity_));
  }
  if (closed_) {
    return absl::UnavailableError("compute node's inbox is closed");
  }
  entries_.push_back(entry);
  return absl::OkStatus();
}

bool MessageInbox::Pop(Entry* entry) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !entries_.empty();
  };
  mu_.Await(absl::Condition(&ready));
  if (closed_) return false;
  *entry = entries_.front();
  entries_.pop_front();
  return true;
}

void MessageInbox::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

}  // namespace strand::rdma
