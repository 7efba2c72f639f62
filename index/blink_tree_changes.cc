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
#include "index/blink_tree_thread_state.h"

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
    const GlobalAddress hinted = HintedLeaf(ctx, key);
    if (!hinted.is_null()) {
      if (auto it = held.find(hinted); it != held.end()) {
        const bool covers = Covers(it->second.data(), key);
        CountLeafHint(ctx, covers);
        if (covers) return &it->second;
      } else {
        auto x = LatchHintedLeaf(ctx, hinted, key, kNoWait);
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
    const BLinkNode n = View(g->data());
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
    const BLinkNode n = View(at->data());
    if (!n.valid() || !n.is_leaf()) return NotALeaf(leaf);
    if (n.BelowHigh(key)) {
      if (leaf_hint_) RememberLeaf(ctx, key, leaf);
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
  // The internal keys: a unique tree's are the user keys, a non-unique
  // tree's (key, value) pairs, built into one buffer (inline for a commit's
  // few changes: no allocation per key).
  absl::InlinedVector<char, 512> pairs(unique_ ? 0 : changes.size() * width_);
  for (size_t i = 0; !unique_ && i < changes.size(); ++i) {
    InternalKeyInto(changes[i].key, changes[i].value,
                    pairs.data() + i * width_);
  }
  auto key_of = [&](uint32_t i) {
    return unique_ ? changes[i].key
                   : std::string_view(pairs.data() + i * width_, width_);
  };
  // The tree's order; of two changes of one internal key the removal
  // first (a transaction may remove a key and add it again).
  absl::InlinedVector<uint32_t, 16> order(changes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const int k = CompareKeys(key_of(a), key_of(b));
    return k != 0 ? k < 0 : (changes[a].remove && !changes[b].remove);
  });
  absl::InlinedVector<Change, 16> sorted;
  sorted.reserve(changes.size());
  for (uint32_t i : order) sorted.push_back(changes[i]);
  auto put_back_sorted = [&] {
    for (size_t j = 0; j < sorted.size(); ++j) changes[j] = sorted[j];
  };
  // The changes of one leaf are consecutive: keys in order, and the leaves
  // latched so far cannot split, so each covers one contiguous run of
  // them. So a key below the current leaf's high fence goes there too (it
  // is above the previous key, hence above the low fence) with no new
  // lookup; the leaf keeps one running count of the entries it gains
  // (negative: loses), and each search in it starts at the previous one's
  // position (the entries before it are below the previous key). Without
  // BLinkTreeTuning::leaf_walk (the ablation) each key finds its leaf
  // (LatchLeafForChange: hint, held leaves) and searches it from scratch.
  cc::ExclusiveGuard* current = nullptr;
  GlobalAddress current_leaf;  // current's leaf
  int64_t growth = 0;
  uint32_t from = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string_view key = key_of(order[i]);
    Change& c = sorted[i];
    const bool same_leaf = leaf_walk_ && current != nullptr &&
                           View(current->data()).BelowHigh(key);
    bool new_leaf = false;
    if (!same_leaf) {
      auto leaf = LatchLeafForChange(ctx, key, held);
      if (absl::IsAborted(leaf.status())) return Prepared::kBusy;
      if (!leaf.ok()) return leaf.status();
      // By address, not by guard: a leaf latched here may have moved the
      // held guards (and `current`'s).
      new_leaf = current == nullptr || (*leaf)->gcl() != current_leaf;
      if (new_leaf) growth = 0;
      current = *leaf;
    }
    c.leaf = current->gcl();
    current_leaf = c.leaf;
    const BLinkNode n = View(current->data());
    if (new_leaf && to_ts && (n.read_ts() > *to_ts || n.write_ts() > *to_ts)) {
      return absl::AbortedError(absl::StrFormat(
          "TO: index leaf %s was read at %d or changed at %d, after this "
          "transaction's %d",
          c.leaf.ToString(), n.read_ts(), n.write_ts(), *to_ts));
    }
    const uint32_t pos = same_leaf    ? n.LowerBound(key, from)
                         : leaf_hint_ ? n.LowerBoundAfterLastInsert(key)
                                      : n.LowerBound(key);
    from = pos;
    const bool present = pos < n.count() && n.key(pos) == key;
    const bool follows_same_key = i > 0 && key_of(order[i - 1]) == key;
    // On an error *split_at names the change that failed (in `changes`,
    // now in the tree's order), for the caller's message.
    auto failed = [&](absl::Status status) {
      *split_at = i;
      put_back_sorted();
      return status;
    };
    if (c.remove) {
      // A second removal of one key finds it gone.
      if (follows_same_key || !present) {
        return failed(absl::NotFoundError("entry not in the index"));
      }
      --growth;
    } else {
      // Present is fine when this transaction removes it just before.
      if (follows_same_key ? !sorted[i - 1].remove : present) {
        return failed(absl::AlreadyExistsError(
            unique_ ? "key already in the unique index"
                    : "(key, value) pair already in the index"));
      }
      if (n.count() + ++growth > capacity_) {
        *split_at = i;
        put_back_sorted();
        return Prepared::kNeedSplit;
      }
    }
  }
  put_back_sorted();
  return Prepared::kReady;
}

void BLinkTree::ApplyChanges(absl::Span<const Change> changes, LeafGuards& held,
                             std::optional<uint64_t> to_ts) {
  char pair[kMaxKeyWidth + 8];
  // Removals first: a leaf never holds more than its prepared size, and a
  // removed key is gone before it is added again.
  for (const bool removals : {true, false}) {
    // The changes of one leaf are consecutive and in key order
    // (PrepareChanges), so a leaf's guard is looked up once, and each
    // search in it starts where the previous change left the entries
    // below its key.
    GlobalAddress current;
    cc::ExclusiveGuard* leaf = nullptr;
    uint32_t from = 0;
    for (const Change& c : changes) {
      if (c.remove != removals) continue;
      const bool same_leaf = leaf_walk_ && leaf != nullptr && c.leaf == current;
      if (!same_leaf) {
        auto it = held.find(c.leaf);
        CHECK(it != held.end()) << "index leaf " << c.leaf.ToString()
                                << " of a prepared change is not latched";
        current = c.leaf;
        leaf = &it->second;
      }
      const std::string_view key =
          unique_ ? c.key : InternalKeyInto(c.key, c.value, pair);
      const BLinkNode n = View(leaf->data());
      const uint32_t pos = same_leaf    ? n.LowerBound(key, from)
                           : leaf_hint_ ? n.LowerBoundAfterLastInsert(key)
                                        : n.LowerBound(key);
      if (c.remove) {
        CHECK(pos < n.count() && n.key(pos) == key)
            << "a prepared removal's key is gone from its latched leaf";
        BLinkNode::RemoveAt(*leaf, width_, pos);
        from = pos;
      } else {
        CHECK(n.count() < capacity_) << "a prepared leaf has no room";
        BLinkNode::InsertAt(*leaf, width_, pos, key, c.value);
        from = pos + 1;
      }
      if (to_ts && n.write_ts() < *to_ts) {
        BLinkNode::PutWord(*leaf, BLinkNode::kWriteTsOffset, *to_ts);
      }
    }
  }
}

absl::Status BLinkTree::ValidateRead(cc::ThreadContext& ctx,
                                     const LeafRead& read, LeafGuards& held,
                                     std::optional<uint64_t> to_ts) {
  auto check = [&](const uint8_t* payload) -> absl::Status {
    const BLinkNode n = View(payload);
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
    if (to_ts && View(leaf.data()).read_ts() < *to_ts) {
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
      const uint64_t version = View<UnlatchedBLinkNode>(token.data()).version();
      OptimisticReadStats& stats = MutableOptimisticReadStats(ctx);
      if (!cc::GclManager::Validate(token)) {
        ++stats.invalidated;
      } else {
        ++stats.validated;
        if (version == read.version) return absl::OkStatus();
      }
    } else {
      ++MutableOptimisticReadStats(ctx).unavailable;
    }
  }
  auto g = manager_.SLock(ctx, read.leaf, kNoWait);
  if (!g.ok()) return g.status();
  if (absl::Status s = check(g->data()); !s.ok()) return s;
  return g->Unlock();
}

}  // namespace strand::index
