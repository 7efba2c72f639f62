#include "partition/fragment.h"

namespace strand::partition {

FragmentId FragmentRegistry::Add(std::string name, ErasedFragment fn) {
  absl::MutexLock lock(&mu_);
  all_.push_back(std::make_unique<std::pair<std::string, ErasedFragment>>(
      std::move(name), std::move(fn)));
  return static_cast<FragmentId>(all_.size() - 1);
}

const ErasedFragment* FragmentRegistry::Find(FragmentId id) const {
  absl::MutexLock lock(&mu_);
  return id < all_.size() ? &all_[id]->second : nullptr;
}

const std::string& FragmentRegistry::name(FragmentId id) const {
  static const std::string* unknown = new std::string("(unknown fragment)");
  absl::MutexLock lock(&mu_);
  return id < all_.size() ? all_[id]->first : *unknown;
}

absl::Status FragmentBatch::Run() {
  txn::RemoteBranches* remote = txn_.remote();
  std::vector<txn::RemoteBranches::Call> calls;
  std::vector<size_t> remote_of;  // pending index of each call
  if (remote != nullptr) {
    for (size_t i = 0; i < pending_.size(); ++i) {
      const rdma::ComputeNodeId owner = remote->OwnerOf(pending_[i].partition);
      if (owner == remote->self()) continue;
      txn::RemoteBranches::Call c;
      c.node = owner;
      c.fragment = pending_[i].fragment;
      c.input = pending_[i].input;
      calls.push_back(std::move(c));
      remote_of.push_back(i);
    }
  }
  // A failed round ends the transaction: its branches' outcomes are
  // unknown to the procedure.
  auto abort = [&](const absl::Status& s) {
    if (txn_.active()) {
      txn_.Abort(absl::IsAborted(s) ? txn::AbortReason::kConflict
                                    : txn::AbortReason::kError);
    }
    return s;
  };
  if (!calls.empty()) {
    if (absl::Status s = remote->StartCalls(absl::MakeSpan(calls)); !s.ok()) {
      return abort(s);
    }
  }
  size_t next_remote = 0;
  absl::Status local_failure;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (next_remote < remote_of.size() && remote_of[next_remote] == i) {
      ++next_remote;
      continue;
    }
    Pending& p = pending_[i];
    std::string out;
    absl::Status s = (*p.fn)(txn_, p.input, &out);
    if (!txn_.active()) {  // the local branch aborted
      local_failure = s.ok() ? absl::AbortedError("transaction aborted") : s;
      break;
    }
    p.deliver(s, out);
  }
  if (!calls.empty()) {
    // Every answer is in before the calls go away, whatever happened here.
    absl::Status s = remote->FinishCalls();
    if (local_failure.ok() && !s.ok()) return abort(s);
    if (s.ok()) {
      for (size_t k = 0; k < calls.size(); ++k) {
        pending_[remote_of[k]].deliver(calls[k].status, calls[k].output);
      }
    }
  }
  if (!local_failure.ok()) return abort(local_failure);
  return absl::OkStatus();
}

}  // namespace strand::partition
