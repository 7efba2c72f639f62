// BLinkTree's commit-time side (blink_tree.h, "Commit-time writes"): the
// all-or-nothing changes of a transaction's commit and the validation of
// the leaves it read. Split from blink_tree.cc, which holds the tree's own
// operations.
//
// Why no deadlock: PrepareChanges takes every latch with no_wait once it
// holds a leaf (leaves always; inner nodes on the way down while `held` is
// not empty), so a committer never waits for any tree latch while it holds
// a leaf (a busy latch is kBusy, answered by releasing everything and
// retrying). A leaf this thread already holds is never latched again:
// `held` is consulted before any leaf latch.

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "index/blink_node.h"
#include "index/blink_tree.h"

namespace strand::index {

using rdma::GlobalAddress;

namespace {
constexpr cc::LockOptions kNoWait{.no_wait = true};

absl::Status NotALeaf(GlobalAddress gcl) {
  return absl::DataLossError(
      absl::StrFormat("B-link node %s: not a leaf", gcl.ToString()));
}
}  // namespace

absl::StatusOr<cc::ExclusiveGuard*> BLinkTree::LatchLeafForChange(
    cc::ThreadContext& ctx, std::string_view key, LeafGuards& held) {
  if (leaf_hint_) {
    // The leaf this thread last changed for the key's prefix, when it
    // covers the key (BLinkTreeTuning::leaf_hint): a held one through its
    // guard (never latched twice), else latched with no_wait like every
    // leaf here.
    const GlobalAddress hinted = HintedLeaf(key);
    if (!hinted.is_null()) {
      if (auto it = held.find(hinted); it != held.end()) {
        const bool covers = Covers(it->second.data(), key);
        CountLeafHint(covers);
        if (covers) return &it->second;
      } else {
        auto x = LatchHintedLeaf(ctx, key, kNoWait);
        if (!x.ok()) return x.status();
        if (x->owns_lock()) {
          return &held.emplace(hinted, *std::move(x)).first->second;
        }
      }
    }
  }
  GlobalAddress leaf = GlobalAddress::FromRaw(root_hint_.load());
  std::optional<cc::SharedGuard> parent;
  OptimisticStop stop{leaf};
  if (!held.contains(leaf) && optimistic_reads_) {
    // The leaf as its parent names it, read with no latch (never waits);
    // the loop below moves right from it if it split since.
    stop = DescendOptimistic(ctx, key, Descent::kHolds, 0, nullptr);
    if (stop.level == 0) leaf = stop.at;
  }
  if (!held.contains(leaf) && stop.level != 0) {
    // Down to the leaves' parent (or to the root, if it is a leaf we do
    // not hold: then relatch it exclusively).
    // Holding other leaves, the descent must not wait either: a reader
    // that holds an inner node may be waiting for one of our leaves (and
    // a writer queued on the inner node makes us wait for that reader).
    auto g = DescendLatched(ctx, key, Descent::kHolds, 1, nullptr,
                            held.empty() ? cc::LockOptions{} : kNoWait, stop);
    if (!g.ok()) return g.status();
    const BLinkNode n(g->data(), width_);
    if (n.is_leaf()) {
      leaf = g->gcl();
      if (absl::Status s = g->Unlock(); !s.ok()) return s;
    } else {
      const uint32_t c = n.ChildFor(key);
      leaf = GlobalAddress::FromRaw(n.value(c));
      if (narrow_prefetch_) PrefetchChild(leaf, ChildProbe(n, c, key));
      parent.emplace(*std::move(g));  // coupling: kept until the leaf's latch
    }
  }
  cc::ExclusiveGuard walking;  // a leaf latched here, not yet in `held`
  for (;;) {
    cc::ExclusiveGuard* at;
    if (auto it = held.find(leaf); it != held.end()) {
      if (absl::Status s = walking.Unlock(); !s.ok()) return s;
      at = &it->second;
    } else {
      auto x = manager_.XLock(ctx, leaf, kNoWait);
      if (!x.ok()) return x.status();
      walking = *std::move(x);  // releases the leaf walked from, if any
      at = &walking;
    }
    if (parent) {
      if (absl::Status s = parent->Unlock(); !s.ok()) return s;
      parent.reset();
    }
    const BLinkNode n(at->data(), width_);
    if (!n.valid() || !n.is_leaf()) return NotALeaf(leaf);
    if (n.BelowHigh(key)) {
      if (leaf_hint_) RememberLeaf(key, leaf);
      if (at != &walking) return at;
      return &held.emplace(leaf, std::move(walking)).first->second;
    }
    leaf = GlobalAddress::FromRaw(n.right());
  }
}

absl::StatusOr<BLinkTree::Prepared> BLinkTree::PrepareChanges(
    cc::ThreadContext& ctx, absl::Span<Change> changes, LeafGuards& held,
    std::optional<uint64_t> to_ts, size_t* split_at) {
  for (const Change& c : changes) {
    if (absl::Status s = CheckKey(c.key); !s.ok()) return s;
  }
  // The tree's order; of two changes of one internal key the removal
  // first (a transaction may remove a key and add it again).
  absl::InlinedVector<std::pair<std::string, Change>, 16> sorted;
  sorted.reserve(changes.size());
  for (const Change& c : changes) {
    sorted.emplace_back(InternalKey(c.key, c.value), c);
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    const int k = CompareKeys(a.first, b.first);
    return k != 0 ? k < 0 : (a.second.remove && !b.second.remove);
  });
  // Entries each leaf gains (negative: loses) by the changes so far.
  absl::flat_hash_map<GlobalAddress, int64_t> growth;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string& key = sorted[i].first;
    Change& c = sorted[i].second;
    auto leaf = LatchLeafForChange(ctx, key, held);
    if (absl::IsAborted(leaf.status())) return Prepared::kBusy;
    if (!leaf.ok()) return leaf.status();
    c.leaf = (*leaf)->gcl();
    const BLinkNode n((*leaf)->data(), width_);
    if (to_ts && (n.read_ts() > *to_ts || n.write_ts() > *to_ts)) {
      return absl::AbortedError(absl::StrFormat(
          "TO: index leaf %s was read at %d or changed at %d, after this "
          "transaction's %d",
          c.leaf.ToString(), n.read_ts(), n.write_ts(), *to_ts));
    }
    const uint32_t pos = n.LowerBound(key);
    const bool present = pos < n.count() && n.key(pos) == key;
    const bool follows_same_key = i > 0 && sorted[i - 1].first == key;
    // On an error *split_at names the change that failed (in `changes`,
    // now in the tree's order), for the caller's message.
    auto failed = [&](absl::Status status) {
      *split_at = i;
      for (size_t j = 0; j < sorted.size(); ++j) changes[j] = sorted[j].second;
      return status;
    };
    if (c.remove) {
      // A second removal of one key finds it gone.
      if (follows_same_key || !present) {
        return failed(absl::NotFoundError("entry not in the index"));
      }
      --growth[c.leaf];
    } else {
      // Present is fine when this transaction removes it just before.
      if (follows_same_key ? !sorted[i - 1].second.remove : present) {
        return failed(absl::AlreadyExistsError(
            unique_ ? "key already in the unique index"
                    : "(key, value) pair already in the index"));
      }
      if (n.count() + ++growth[c.leaf] > capacity_) {
        *split_at = i;
        for (size_t j = 0; j < sorted.size(); ++j)
          changes[j] = sorted[j].second;
        return Prepared::kNeedSplit;
      }
    }
  }
  for (size_t j = 0; j < sorted.size(); ++j) changes[j] = sorted[j].second;
  return Prepared::kReady;
}

void BLinkTree::ApplyChanges(absl::Span<const Change> changes, LeafGuards& held,
                             std::optional<uint64_t> to_ts) {
  // Removals first: a leaf never holds more than its prepared size, and a
  // removed key is gone before it is added again.
  for (const bool removals : {true, false}) {
    for (const Change& c : changes) {
      if (c.remove != removals) continue;
      auto it = held.find(c.leaf);
      CHECK(it != held.end()) << "index leaf " << c.leaf.ToString()
                              << " of a prepared change is not latched";
      cc::ExclusiveGuard& leaf = it->second;
      const std::string key = InternalKey(c.key, c.value);
      const BLinkNode n(leaf.data(), width_);
      const uint32_t pos = n.LowerBound(key);
      if (c.remove) {
        CHECK(pos < n.count() && n.key(pos) == key)
            << "a prepared removal's key is gone from its latched leaf";
        BLinkNode::RemoveAt(leaf, width_, pos);
      } else {
        CHECK(n.count() < capacity_) << "a prepared leaf has no room";
        BLinkNode::InsertAt(leaf, width_, pos, key, c.value);
      }
      if (to_ts && n.write_ts() < *to_ts) {
        BLinkNode::PutWord(leaf, BLinkNode::kWriteTsOffset, *to_ts);
      }
    }
  }
}

absl::Status BLinkTree::ValidateRead(cc::ThreadContext& ctx,
                                     const LeafRead& read, LeafGuards& held,
                                     std::optional<uint64_t> to_ts) {
  auto check = [&](const uint8_t* payload) -> absl::Status {
    const BLinkNode n(payload, width_);
    if (n.version() != read.version) {
      return absl::AbortedError(absl::StrFormat(
          "index leaf %s changed since this transaction read it (version "
          "%d, now %d)",
          read.leaf.ToString(), read.version, n.version()));
    }
    if (to_ts && n.write_ts() > *to_ts) {
      return absl::AbortedError(absl::StrFormat(
          "TO: index leaf %s was changed at %d, after this transaction's %d",
          read.leaf.ToString(), n.write_ts(), *to_ts));
    }
    return absl::OkStatus();
  };
  auto raise_read_ts = [&](cc::ExclusiveGuard& leaf) {
    if (to_ts && BLinkNode(leaf.data(), width_).read_ts() < *to_ts) {
      BLinkNode::PutWord(leaf, BLinkNode::kReadTsOffset, *to_ts);
    }
  };
  if (auto it = held.find(read.leaf); it != held.end()) {
    if (absl::Status s = check(it->second.data()); !s.ok()) return s;
    raise_read_ts(it->second);
    return absl::OkStatus();
  }
  if (to_ts) {
    auto x = manager_.XLock(ctx, read.leaf, kNoWait);
    if (!x.ok()) return x.status();
    if (absl::Status s = check(x->data()); !s.ok()) return s;
    raise_read_ts(*x);
    return x->Unlock();
  }
  if (optimistic_reads_) {
    // The version with no latch: a token that validates saw no exclusive
    // holder from the read to the validation, which is what the no-wait
    // shared latch below checks, without writing the latch word.
    const cc::OptimisticToken token = manager_.OptimisticRead(ctx, read.leaf);
    if (token.ok()) {
      const uint64_t version =
          UnlatchedBLinkNode(token.data(), payload_bytes_, width_, capacity_)
              .version();
      OptimisticReadStats& stats = MutableOptimisticReadStats();
      if (!cc::GclManager::Validate(token)) {
        ++stats.invalidated;
      } else {
        ++stats.validated;
        if (version == read.version) return absl::OkStatus();
      }
    } else {
      ++MutableOptimisticReadStats().unavailable;
    }
  }
  auto g = manager_.SLock(ctx, read.leaf, kNoWait);
  if (!g.ok()) return g.status();
  if (absl::Status s = check(g->data()); !s.ok()) return s;
  return g->Unlock();
}

}  // namespace strand::index
