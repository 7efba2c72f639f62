#include "rdma/loopback/message_inbox.h"

#include "absl/strings/str_format.h"

namespace strand::rdma::loopback {

absl::Status MessageInbox::Push(const Entry& entry) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!not_full_.wait_for(lock, absl::ToChronoNanoseconds(full_timeout_), [&] {
        return closed_ || entries_.size() < capacity_;
      })) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "message to compute node was not accepted for %s: its %d-message "
        "inbox stayed full (are its handler threads running?)",
        absl::FormatDuration(full_timeout_), capacity_));
  }
  if (closed_) {
    return absl::UnavailableError("compute node's inbox is closed");
  }
  entries_.push_back(entry);
  lock.unlock();
  not_empty_.notify_one();
  return absl::OkStatus();
}

bool MessageInbox::Pop(Entry* entry) {
  std::unique_lock<std::mutex> lock(mu_);
  not_empty_.wait(lock, [&] { return closed_ || !entries_.empty(); });
  if (closed_) return false;
  *entry = entries_.front();
  entries_.pop_front();
  lock.unlock();
  not_full_.notify_one();
  return true;
}

void MessageInbox::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

void MessageInbox::Reopen() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  closed_ = false;
}

}  // namespace strand::rdma::loopback
