#include "index/blink_tree.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_format.h"
#include "base/failure_point.h"
#include "index/blink_node.h"
#include "index/blink_tree_thread_state.h"
#include "index/key_codec.h"

namespace strand::index {
namespace {

using rdma::GlobalAddress;

constexpr uint32_t kAnchorMagic = 0x41544c42;  // "BLTA"
constexpr uint16_t kAnchorUnique = 1;
constexpr uint32_t kAnchorRootOffset = 8;
constexpr uint32_t kAnchorLevelOffset = 16;
constexpr uint32_t kAnchorBytes = 20;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Starts loading every line of a node's payload past the first (which the
// cache layer prefetches). For a leaf, which is usually cold: the binary
// search's probes then wait for one round of misses instead of a chain of
// four or five dependent ones. The full prefetch scope only
// (cc::PrefetchScope): the narrow one asks for the probed lines before
// the latch instead (BLinkTree::PrefetchChild).
void PrefetchNode(const uint8_t* payload, uint32_t bytes) {
  // Unrolled: a 4 KiB node is 63 prefetches, and the loop's own compare
  // and branch per line cost more than they do.
#pragma GCC unroll 8
  for (uint32_t offset = 64; offset < bytes; offset += 64) {
    __builtin_prefetch(payload + offset);
  }
}

std::atomic<uint64_t> next_tree_id{1};

absl::Status Corrupt(GlobalAddress gcl, const char* what) {
  return absl::DataLossError(
      absl::StrFormat("B-link node %s: %s", gcl.ToString(), what));
}

}  // namespace

// The inner node seen at each level on the way down: where a split posts
// its separator (a hint; the insert moves right from it).
struct BLinkTree::Path {
  // Inline for any realistic height: no allocation per insert.
  absl::InlinedVector<GlobalAddress, 8> at_level;
  void Record(int level, GlobalAddress gcl) {
    if (at_level.size() <= static_cast<size_t>(level)) {
      at_level.resize(level + 1);
    }
    at_level[level] = gcl;
  }
  GlobalAddress Get(int level) const {
    return static_cast<size_t>(level) < at_level.size() ? at_level[level]
                                                        : GlobalAddress();
  }
};

absl::StatusOr<GlobalAddress> BLinkTree::Create(
    cc::GclManager& manager, cc::ThreadContext& ctx,
    const BLinkTreeOptions& options) {
  const uint32_t width = options.key_width + (options.unique ? 0 : 8);
  if (options.key_width == 0 || options.key_width > kMaxKeyWidth) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "key width %d: use 1 to %d bytes", options.key_width, kMaxKeyWidth));
  }
  if (BLinkNode::Capacity(manager.payload_bytes(), width) <
      kMinEntriesPerNode) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a B-link node of EngineOptions::cc.gcl_size=%d (--gcl_size) holds "
        "fewer than %d keys of %d bytes (with fences); use a larger gcl_size "
        "or a narrower key",
        manager.options().gcl_size, kMinEntriesPerNode, width));
  }
  auto root = manager.Allocate(ctx);
  if (!root.ok()) return root.status();
  {
    auto g = manager.XLock(ctx, *root);
    if (!g.ok()) return g.status();
    BLinkNode::Init(g->MutableRange(0, BLinkNode::kHeaderBytes + 2 * width),
                    width, /*level=*/0, {}, true, {}, true, 0);
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
  }
  auto anchor = manager.Allocate(ctx);
  if (!anchor.ok()) return anchor.status();
  auto g = manager.XLock(ctx, *anchor);
  if (!g.ok()) return g.status();
  uint8_t* p = g->MutableRange(0, kAnchorBytes);
  const uint16_t key_width = options.key_width;
  const uint16_t flags = options.unique ? kAnchorUnique : 0;
  const uint64_t root_raw = root->raw();
  std::memcpy(p, &kAnchorMagic, 4);
  std::memcpy(p + 4, &key_width, 2);
  std::memcpy(p + 6, &flags, 2);
  std::memcpy(p + kAnchorRootOffset, &root_raw, 8);
  if (absl::Status s = g->Unlock(); !s.ok()) return s;
  return *anchor;
}

absl::StatusOr<std::unique_ptr<BLinkTree>> BLinkTree::Open(
    cc::GclManager& manager, cc::ThreadContext& ctx, GlobalAddress anchor,
    const BLinkTreeTuning& tuning) {
  auto g = manager.SLock(ctx, anchor);
  if (!g.ok()) return g.status();
  const uint8_t* p = g->data();
  if (Load<uint32_t>(p) != kAnchorMagic) {
    return absl::DataLossError(absl::StrFormat(
        "%s is not the anchor of a B-link tree", anchor.ToString()));
  }
  return std::unique_ptr<BLinkTree>(new BLinkTree(
      manager, anchor, Load<uint16_t>(p + 4),
      (Load<uint16_t>(p + 6) & kAnchorUnique) != 0,
      GlobalAddress::FromRaw(Load<uint64_t>(p + kAnchorRootOffset)), tuning));
}

LeafHintStats BLinkTree::ThreadLeafHintStats(cc::ThreadContext& ctx) {
  return StateOf(ctx).leaf_hint_stats;
}

OptimisticReadStats BLinkTree::ThreadOptimisticReadStats(
    cc::ThreadContext& ctx) {
  return StateOf(ctx).optimistic_read_stats;
}

BLinkTree::BLinkTree(cc::GclManager& manager, GlobalAddress anchor,
                     uint16_t key_width, bool unique, GlobalAddress root,
                     const BLinkTreeTuning& tuning)
    : manager_(manager),
      anchor_(anchor),
      key_width_(key_width),
      unique_(unique),
      width_(key_width + (unique ? 0 : 8)),
      capacity_(BLinkNode::Capacity(manager.payload_bytes(), width_)),
      narrow_prefetch_(manager.options().prefetch ==
                       cc::PrefetchScope::kNarrow),
      leaf_hint_(tuning.leaf_hint),
      optimistic_reads_(tuning.optimistic_reads),
      word_search_(tuning.word_search),
      leaf_walk_(tuning.leaf_walk),
      payload_bytes_(manager.payload_bytes()),
      hint_prefix_(key_width - std::min<uint32_t>(4, key_width / 2)),
      id_(next_tree_id.fetch_add(1, std::memory_order_relaxed)),
      root_hint_(root.raw()) {}

GlobalAddress BLinkTree::HintedLeaf(cc::ThreadContext& ctx,
                                    std::string_view key) const {
  const size_t prefix = absl::HashOf(id_, key.substr(0, hint_prefix_));
  const LeafHintSlot& slot =
      StateOf(ctx).leaf_hints[prefix % ThreadState::kLeafHintSlots];
  if (slot.tree != id_ || slot.prefix != prefix) return GlobalAddress();
  return GlobalAddress::FromRaw(slot.leaf);
}

void BLinkTree::RememberLeaf(cc::ThreadContext& ctx, std::string_view key,
                             GlobalAddress leaf) const {
  const size_t prefix = absl::HashOf(id_, key.substr(0, hint_prefix_));
  StateOf(ctx).leaf_hints[prefix % ThreadState::kLeafHintSlots] = {id_, prefix,
                                                                   leaf.raw()};
}

bool BLinkTree::Covers(const uint8_t* payload, std::string_view key) const {
  const BLinkNode n = View(payload);
  return n.valid() && n.is_leaf() &&
         (n.low_is_min() || CompareKeys(key, n.low()) >= 0) && n.BelowHigh(key);
}

absl::StatusOr<cc::ExclusiveGuard> BLinkTree::LatchHintedLeaf(
    cc::ThreadContext& ctx, GlobalAddress hinted, std::string_view key,
    cc::LockOptions lock) {
  if (hinted.is_null()) return cc::ExclusiveGuard();
  auto x = manager_.XLock(ctx, hinted, lock);
  if (absl::IsAborted(x.status())) {  // busy under no_wait: descend
    CountLeafHint(ctx, false);
    return cc::ExclusiveGuard();
  }
  if (!x.ok()) return x.status();
  if (Covers(x->data(), key)) {
    CountLeafHint(ctx, true);
    return x;
  }
  CountLeafHint(ctx, false);
  if (absl::Status s = x->Unlock(); !s.ok()) return s;
  return cc::ExclusiveGuard();
}

template <typename Node>
BLinkTree::Probe BLinkTree::ChildProbe(const Node& parent, uint32_t c,
                                       std::string_view key) const {
  // The child's fences are the parent's separators c and c + 1 (entry 0
  // of an inner node is its low fence; the last child's high is the
  // parent's). An infinite one leaves nothing to interpolate over.
  const bool last = c + 1 >= parent.count();
  if ((c == 0 && parent.low_is_min()) || (last && parent.high_is_max())) {
    return Probe{0, 0};
  }
  // A copy for an unlatched node (its keys are), a view into a latched one.
  const typename Node::Key high = last ? parent.high() : parent.key(c + 1);
  // Assumed full: loads fill nodes in key order and ascending splits keep
  // the left node full (docs/design/blink_tree.md), and the read-mostly
  // indexes are such loads. A node less full is searched from a wrong
  // line: one more miss, as without the hint.
  const uint32_t guess =
      BLinkNode::GuessBetween(key, parent.key(c), high, capacity_);
  const uint32_t entry = width_ + 8;
  const uint32_t at = BLinkNode::kHeaderBytes + 2 * width_ + guess * entry;
  // The guessed entry and one on each side: the gallop's first probes.
  return Probe{at - (guess > 0 ? entry : 0), 3 * entry};
}

template BLinkTree::Probe BLinkTree::ChildProbe(const BLinkNode&, uint32_t,
                                                std::string_view) const;
template BLinkTree::Probe BLinkTree::ChildProbe(const UnlatchedBLinkNode&,
                                                uint32_t,
                                                std::string_view) const;

void BLinkTree::PrefetchChild(GlobalAddress child, const Probe& probe) const {
  // The header with the fences and the first entry: the search reads the
  // count and the fences before anything else.
  manager_.PrefetchLines(child, 0, BLinkNode::kHeaderBytes + 3 * width_ + 8);
  if (probe.bytes > 0) manager_.PrefetchLines(child, probe.offset, probe.bytes);
}

absl::Status BLinkTree::CheckKey(std::string_view key) const {
  if (key.size() != key_width_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("key of %d bytes for an index of %d-byte keys",
                        key.size(), key_width_));
  }
  return absl::OkStatus();
}

absl::Status BLinkTree::CheckBounds(
    std::optional<std::string_view> low,
    std::optional<std::string_view> high) const {
  if (low) {
    if (absl::Status s = CheckKey(*low); !s.ok()) return s;
  }
  if (high) {
    if (absl::Status s = CheckKey(*high); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string_view BLinkTree::InternalKeyInto(std::string_view key,
                                            uint64_t value, char* out) const {
  std::memcpy(out, key.data(), key_width_);
  EncodeUint64(out + key_width_, value);
  return std::string_view(out, width_);
}

std::string BLinkTree::InternalKey(std::string_view key, uint64_t value) const {
  std::string k(key);
  if (!unique_) {
    k.resize(key.size() + 8);
    EncodeUint64(k.data() + key.size(), value);
  }
  return k;
}

absl::StatusOr<GlobalAddress> BLinkTree::ReadAnchorRoot(cc::ThreadContext& ctx,
                                                        int* level,
                                                        cc::LockOptions lock) {
  auto g = manager_.SLock(ctx, anchor_, lock);
  if (!g.ok()) return g.status();
  const GlobalAddress root =
      GlobalAddress::FromRaw(Load<uint64_t>(g->data() + kAnchorRootOffset));
  if (level != nullptr) {
    *level = static_cast<int>(Load<uint32_t>(g->data() + kAnchorLevelOffset));
  }
  root_hint_.store(root.raw(), std::memory_order_relaxed);
  return root;
}

BLinkTree::OptimisticStop BLinkTree::DescendOptimistic(cc::ThreadContext& ctx,
                                                       std::string_view key,
                                                       Descent rule,
                                                       int stop_level,
                                                       Path* path) {
  OptimisticStop stop{GlobalAddress::FromRaw(root_hint_.load()), -1, true};
  OptimisticReadStats& stats = MutableOptimisticReadStats(ctx);
  int failures = 0;
  while (stop.level < 0 || stop.level > stop_level) {
    const cc::OptimisticToken token = manager_.OptimisticRead(ctx, stop.at);
    if (!token.ok()) {
      ++stats.unavailable;
      return stop;
    }
    // Everything this step decides on is read before the validation and
    // used only after it; until then any of it may be garbage (the view
    // keeps every read inside the payload).
    const UnlatchedBLinkNode n = View<UnlatchedBLinkNode>(token.data());
    const bool valid = n.valid();
    const int level = n.level();
    const bool high_is_max = n.high_is_max();
    const bool move_right =
        !high_is_max &&
        (rule == Descent::kHolds ? CompareKeys(key, n.high()) >= 0
                                 : CompareKeys(n.high(), key) < 0);
    const bool down = !move_right && level > stop_level;
    uint64_t next = 0;
    Probe probe;
    if (move_right) {
      next = n.right();
    } else if (down) {
      const uint32_t c =
          rule == Descent::kHolds ? n.ChildFor(key) : n.ChildBefore(key);
      next = n.value(c);
      if (level == 1 && narrow_prefetch_) probe = ChildProbe(n, c, key);
    }
    if (!cc::GclManager::Validate(token)) {
      ++stats.invalidated;
      if (++failures >= kOptimisticAttempts) return stop;
      continue;
    }
    ++stats.validated;
    // A node as a shared latch would have shown it. What the latched path
    // handles (and reports) stays with it: a bad node, a node at another
    // level than its parent said, a cached root that split (the anchor
    // names the current one), a bounded node without a right link.
    if (!valid || (stop.level >= 0 && level != stop.level) ||
        (stop.top && !high_is_max) || ((move_right || down) && next == 0)) {
      return stop;
    }
    if (!move_right && !down) {
      // The node of stop_level itself. Only a node of unknown level gets
      // here, so the cached root, at or below stop_level.
      stop.level = level;
      return stop;
    }
    if (down) {
      if (path != nullptr) path->Record(level, stop.at);
      if (probe.bytes > 0) PrefetchChild(GlobalAddress::FromRaw(next), probe);
    }
    stop.at = GlobalAddress::FromRaw(next);
    stop.level = down ? level - 1 : level;
    stop.top = false;
  }
  return stop;
}

absl::StatusOr<cc::SharedGuard> BLinkTree::DescendShared(
    cc::ThreadContext& ctx, std::string_view key, Descent rule, int stop_level,
    Path* path, cc::LockOptions lock) {
  const OptimisticStop from =
      optimistic_reads_
          ? DescendOptimistic(ctx, key, rule, stop_level, path)
          : OptimisticStop{GlobalAddress::FromRaw(root_hint_.load())};
  return DescendLatched(ctx, key, rule, stop_level, path, lock, from);
}

absl::StatusOr<cc::SharedGuard> BLinkTree::DescendLatched(
    cc::ThreadContext& ctx, std::string_view key, Descent rule, int stop_level,
    Path* path, cc::LockOptions lock, const OptimisticStop& from) {
  GlobalAddress at = from.at;
  bool top = from.top;
  auto g = manager_.SLock(ctx, at, lock);
  if (!g.ok()) return g.status();
  if (from.level == 0 && !top && !narrow_prefetch_) {
    // A leaf, as the coupled steps below prefetch one they step down to.
    PrefetchNode(g->data(), payload_bytes_);
  }
  for (;;) {
    const BLinkNode n = View(g->data());
    if (!n.valid()) return Corrupt(at, "bad magic");
    if (top && !n.high_is_max()) {
      // The cached root has split, so the tree has grown (or is growing):
      // take the anchor's root, which is at least as high.
      top = false;
      if (absl::Status s = g->Unlock(); !s.ok()) return s;
      auto root = ReadAnchorRoot(ctx, nullptr, lock);
      if (!root.ok()) return root.status();
      at = *root;
      g = manager_.SLock(ctx, at, lock);
      if (!g.ok()) return g.status();
      continue;
    }
    top = false;
    const bool move_right =
        !n.high_is_max() &&
        (rule == Descent::kHolds ? CompareKeys(key, n.high()) >= 0
                                 : CompareKeys(n.high(), key) < 0);
    if (move_right) {
      at = GlobalAddress::FromRaw(n.right());
      if (at.is_null()) return Corrupt(g->gcl(), "bounded node without right");
    } else if (n.level() <= stop_level) {
      return *std::move(g);
    } else {
      if (path != nullptr) path->Record(n.level(), at);
      const uint32_t c =
          rule == Descent::kHolds ? n.ChildFor(key) : n.ChildBefore(key);
      at = GlobalAddress::FromRaw(n.value(c));
      if (n.level() == 1 && narrow_prefetch_) {
        PrefetchChild(at, ChildProbe(n, c, key));
      }
    }
    // Take the next latch before giving up this one (coupling).
    const bool to_leaf = n.level() == 1 && !move_right;
    auto next = manager_.SLock(ctx, at, lock);
    if (!next.ok()) return next.status();
    if (to_leaf && !narrow_prefetch_) {
      PrefetchNode(next->data(), manager_.payload_bytes());
    }
    *g = *std::move(next);
  }
}

absl::StatusOr<cc::ExclusiveGuard> BLinkTree::LockLeafExclusive(
    cc::ThreadContext& ctx, std::string_view key, Path* path) {
  if (leaf_hint_) {
    // No latch is held here, so the hinted leaf may be waited for. A split
    // after it finds no path and descends to post its separator.
    auto hinted =
        LatchHintedLeaf(ctx, HintedLeaf(ctx, key), key, cc::LockOptions{});
    if (!hinted.ok()) return hinted.status();
    if (hinted->owns_lock()) return hinted;
  }
  absl::StatusOr<cc::ExclusiveGuard> x;
  const OptimisticStop stop =
      optimistic_reads_
          ? DescendOptimistic(ctx, key, Descent::kHolds, 0, path)
          : OptimisticStop{GlobalAddress::FromRaw(root_hint_.load())};
  if (stop.level == 0) {
    // The leaf as its parent named it (or a lone root leaf), read with no
    // latch: since then the key's leaf can only have moved to the right of
    // it, which the loop below follows.
    x = manager_.XLock(ctx, stop.at);
    if (x.ok() && !narrow_prefetch_) {
      PrefetchNode(x->data(), payload_bytes_);
    }
  } else {
    auto s = DescendLatched(ctx, key, Descent::kHolds, 1, path, {}, stop);
    if (!s.ok()) return s.status();
    const BLinkNode n = View(s->data());
    if (n.is_leaf()) {  // the whole tree is one leaf: relatch it
      const GlobalAddress leaf = s->gcl();
      if (absl::Status st = s->Unlock(); !st.ok()) return st;
      x = manager_.XLock(ctx, leaf);
    } else {
      const uint32_t c = n.ChildFor(key);
      const GlobalAddress leaf = GlobalAddress::FromRaw(n.value(c));
      if (narrow_prefetch_) PrefetchChild(leaf, ChildProbe(n, c, key));
      x = manager_.XLock(ctx, leaf);
      if (x.ok() && !narrow_prefetch_) {
        PrefetchNode(x->data(), payload_bytes_);
      }
      if (absl::Status st = s->Unlock(); !st.ok()) return st;
    }
  }
  if (!x.ok()) return x.status();
  for (;;) {
    const BLinkNode n = View(x->data());
    if (!n.valid() || !n.is_leaf()) return Corrupt(x->gcl(), "not a leaf");
    if (n.BelowHigh(key)) {
      if (leaf_hint_) RememberLeaf(ctx, key, x->gcl());
      return *std::move(x);
    }
    auto next = manager_.XLock(ctx, GlobalAddress::FromRaw(n.right()));
    if (!next.ok()) return next.status();
    *x = *std::move(next);
  }
}

absl::StatusOr<uint64_t> BLinkTree::Lookup(cc::ThreadContext& ctx,
                                           std::string_view key,
                                           std::vector<LeafRead>* reads) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!unique_) {
    return absl::FailedPreconditionError(
        "Lookup on a non-unique index: use Scan over the key");
  }
  OptimisticStop stop{GlobalAddress::FromRaw(root_hint_.load())};
  if (optimistic_reads_) {
    stop = DescendOptimistic(ctx, key, Descent::kHolds, 0, nullptr);
    if (stop.level == 0) {
      if (std::optional<LeafSearch> found =
              SearchLeafOptimistic(ctx, stop.at, key)) {
        if (reads != nullptr) reads->push_back({stop.at, found->version});
        if (!found->value) return absl::NotFoundError("key not in the index");
        return *found->value;
      }
    }
  }
  auto g = DescendLatched(ctx, key, Descent::kHolds, 0, nullptr, {}, stop);
  if (!g.ok()) return g.status();
  const BLinkNode leaf = View(g->data());
  const std::optional<uint64_t> value = leaf.Find(key);
  if (reads != nullptr) reads->push_back({g->gcl(), leaf.version()});
  if (absl::Status s = g->Unlock(); !s.ok()) return s;
  if (!value) return absl::NotFoundError("key not in the index");
  return *value;
}

absl::Status BLinkTree::LookupBatch(cc::ThreadContext& ctx,
                                    absl::Span<const std::string_view> keys,
                                    absl::Span<std::optional<uint64_t>> values,
                                    std::vector<LeafRead>* reads) {
  if (keys.size() != values.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("LookupBatch: %d keys but room for %d values",
                        keys.size(), values.size()));
  }
  for (std::string_view key : keys) {
    if (absl::Status s = CheckKey(key); !s.ok()) return s;
  }
  if (!unique_) {
    return absl::FailedPreconditionError(
        "LookupBatch on a non-unique index: use Scan over the key");
  }
  // Pass 1: each key's leaf, as its parent names it, in key order: keys
  // under one parent (most of a batch: a tree is a few nodes wide above its
  // leaves) share one descent and one latch. The parent's latch goes
  // before the leaves' are taken: a leaf may split in between, and pass 3
  // then moves right from it (B-link).
  absl::InlinedVector<RankedKey, 16> ranked(keys.size());
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ranked[i] = {KeyPrefix(keys[i]), i};
  }
  std::sort(ranked.begin(), ranked.end(), [&](RankedKey a, RankedKey b) {
    return a.prefix != b.prefix ? a.prefix < b.prefix
                                : CompareKeys(keys[a.index], keys[b.index]) < 0;
  });
  absl::InlinedVector<GlobalAddress, 16> leaves(keys.size());
  // Narrow prefetch: the bytes of each leaf its search will probe, as far
  // as the parent tells (ChildProbe).
  absl::InlinedVector<Probe, 16> probes(narrow_prefetch_ ? keys.size() : 0);
  const bool found =
      optimistic_reads_ &&
      FindLeavesOptimistic(ctx, keys, ranked, absl::MakeSpan(leaves),
                           absl::MakeSpan(probes));
  std::optional<cc::SharedGuard> parent;
  uint32_t child = 0;  // the previous key's child in `parent`
  for (const RankedKey& r :
       found ? absl::Span<const RankedKey>() : absl::MakeConstSpan(ranked)) {
    const uint32_t i = r.index;
    // Sorted, so the key is at or above the parent's low fence, and the
    // entries before the previous key's child are below it.
    if (parent && !View(parent->data()).BelowHigh(keys[i])) {
      if (absl::Status s = parent->Unlock(); !s.ok()) return s;
      parent.reset();
    }
    if (!parent) {
      auto g = DescendShared(ctx, keys[i], Descent::kHolds, 1, nullptr);
      if (!g.ok()) return g.status();
      parent.emplace(*std::move(g));
      child = 0;
    }
    const BLinkNode n = View(parent->data());
    if (n.is_leaf()) {
      leaves[i] = parent->gcl();  // the whole tree is one leaf
    } else {
      child = n.ChildFor(keys[i], child);
      leaves[i] = GlobalAddress::FromRaw(n.value(child));
      if (narrow_prefetch_) probes[i] = ChildProbe(n, child, keys[i]);
    }
    manager_.PrefetchEntry(leaves[i]);
  }
  if (parent) {
    if (absl::Status s = parent->Unlock(); !s.ok()) return s;
  }
  // Pass 2: every leaf's latch and header (fences, first entry), and with
  // the narrow scope the entries its search will probe: then the misses
  // of the whole batch are in flight together, a few lines per leaf.
  // Key i's search in its latched leaf.
  auto search = [&](size_t i) -> absl::Status {
    if (optimistic_reads_) {
      if (std::optional<LeafSearch> found =
              SearchLeafOptimistic(ctx, leaves[i], keys[i])) {
        values[i] = found->value;
        if (reads != nullptr) reads->push_back({leaves[i], found->version});
        return absl::OkStatus();
      }
    }
    auto g = LatchLeafShared(ctx, leaves[i], keys[i]);
    if (!g.ok()) return g.status();
    const BLinkNode leaf = View(g->data());
    values[i] = leaf.Find(keys[i]);
    if (reads != nullptr) reads->push_back({g->gcl(), leaf.version()});
    return g->Unlock();
  };
  if (narrow_prefetch_) {
    for (size_t i = 0; i < keys.size(); ++i)
      PrefetchChild(leaves[i], probes[i]);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (absl::Status s = search(i); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  const uint32_t first_entry_end =
      BLinkNode::kHeaderBytes + 2 * width_ + width_ + 8;
  for (GlobalAddress leaf : leaves) {
    manager_.PrefetchLines(leaf, 0, first_entry_end);
  }
  // Pass 3: the searches. Each leaf's search probes lines all over it, so
  // the whole payload of the leaf kLeavesAhead further on is prefetched
  // (its frame is known since pass 2): the probes then find their lines
  // in flight or arrived, with few enough prefetches outstanding at once.
  constexpr size_t kLeavesAhead = 2;
  for (size_t i = 0; i < keys.size() && i < kLeavesAhead; ++i) {
    manager_.PrefetchLines(leaves[i], 0, manager_.payload_bytes());
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kLeavesAhead < keys.size()) {
      manager_.PrefetchLines(leaves[i + kLeavesAhead], 0,
                             manager_.payload_bytes());
    }
    if (absl::Status s = search(i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool BLinkTree::FindLeavesOptimistic(cc::ThreadContext& ctx,
                                     absl::Span<const std::string_view> keys,
                                     absl::Span<const RankedKey> ranked,
                                     absl::Span<GlobalAddress> leaves,
                                     absl::Span<Probe> probes) {
  OptimisticReadStats& stats = MutableOptimisticReadStats(ctx);
  // The parent of the current run of keys, read with no latch; one token
  // serves the run, validated after each key's child is read (each
  // validation covers every read before it).
  cc::OptimisticToken parent;
  GlobalAddress parent_at;
  uint32_t child = 0;  // the previous key's child in `parent`
  int failures = 0;
  for (size_t k = 0; k < ranked.size();) {
    const uint32_t i = ranked[k].index;
    const bool fresh = !parent.ok();  // a parent found for this very key
    if (fresh) {
      const OptimisticStop stop =
          DescendOptimistic(ctx, keys[i], Descent::kHolds, 1, nullptr);
      if (stop.level < 0 || stop.level > 1) return false;
      parent_at = stop.at;
      parent = manager_.OptimisticRead(ctx, parent_at);
      if (!parent.ok()) {
        ++stats.unavailable;
        return false;
      }
      child = 0;
    }
    const UnlatchedBLinkNode n = View<UnlatchedBLinkNode>(parent.data());
    const bool usable = n.valid() && n.level() <= 1;
    const bool leaf = n.is_leaf();
    // Sorted, so the key is at or above the parent's low fence, and the
    // entries before the previous key's child are below it.
    const bool below = n.BelowHigh(keys[i]);
    uint32_t c = child;
    uint64_t value = 0;
    Probe probe;
    if (below && !leaf) {
      c = n.ChildFor(keys[i], child);
      value = n.value(c);
      if (narrow_prefetch_) probe = ChildProbe(n, c, keys[i]);
    }
    if (!cc::GclManager::Validate(parent)) {
      ++stats.invalidated;
      parent = cc::OptimisticToken();
      if (++failures >= kOptimisticAttempts) return false;
      continue;  // this key again, from a new descent
    }
    ++stats.validated;
    if (!usable) return false;  // the latched pass reports it
    if (!below) {
      // The key is right of this parent: a new descent for it, as the
      // latched pass does at the end of every run of keys under one
      // parent. Counted only when the parent was found for this key (it
      // split away in between), so a parent that keeps doing so cannot
      // hold this loop.
      parent = cc::OptimisticToken();
      if (fresh && ++failures >= kOptimisticAttempts) return false;
      continue;
    }
    if (!leaf && value == 0) return false;  // as `usable`
    leaves[i] = leaf ? parent_at : GlobalAddress::FromRaw(value);
    if (narrow_prefetch_) probes[i] = probe;
    child = c;
    manager_.PrefetchEntry(leaves[i]);
    ++k;
  }
  return true;
}

std::optional<BLinkTree::LeafSearch> BLinkTree::SearchLeafOptimistic(
    cc::ThreadContext& ctx, GlobalAddress leaf, std::string_view key) {
  OptimisticReadStats& stats = MutableOptimisticReadStats(ctx);
  const cc::OptimisticToken token = manager_.OptimisticRead(ctx, leaf);
  if (!token.ok()) {
    ++stats.unavailable;
    return std::nullopt;
  }
  // The leaf's range starts at or below the key (its parent named it, or
  // one left of it, and low fences never change), so it holds the key if
  // the key is below its high fence.
  const UnlatchedBLinkNode n = View<UnlatchedBLinkNode>(token.data());
  const bool holds = n.valid() && n.is_leaf() && n.BelowHigh(key);
  LeafSearch found;
  if (holds) found = {n.Find(key), n.version()};
  if (!cc::GclManager::Validate(token)) {
    ++stats.invalidated;
    return std::nullopt;
  }
  ++stats.validated;
  if (!holds) return std::nullopt;  // split past the key, or a bad node
  return found;
}

absl::StatusOr<cc::SharedGuard> BLinkTree::LatchLeafShared(
    cc::ThreadContext& ctx, GlobalAddress leaf, std::string_view key) {
  auto g = manager_.SLock(ctx, leaf);
  if (!g.ok()) return g.status();
  for (;;) {
    const BLinkNode n = View(g->data());
    if (!n.valid() || !n.is_leaf()) return Corrupt(g->gcl(), "not a leaf");
    if (n.BelowHigh(key)) return g;
    auto next = manager_.SLock(ctx, GlobalAddress::FromRaw(n.right()));
    if (!next.ok()) return next.status();
    *g = *std::move(next);
    if (!narrow_prefetch_) {
      PrefetchNode(g->data(), manager_.payload_bytes());  // not prefetched
    }
  }
}

absl::Status BLinkTree::Insert(cc::ThreadContext& ctx, std::string_view key,
                               uint64_t value) {
  // A batch of one: the same path, and no copy of a unique tree's key.
  size_t inserted = 0;
  const Entry entry{key, value};
  return InsertBatch(ctx, absl::MakeConstSpan(&entry, 1), &inserted);
}

absl::Status BLinkTree::InsertBatch(cc::ThreadContext& ctx,
                                    absl::Span<const Entry> entries,
                                    size_t* inserted) {
  *inserted = 0;
  for (const Entry& e : entries) {
    if (absl::Status s = CheckKey(e.key); !s.ok()) return s;
  }
  // The internal keys: a unique tree's are the user keys (no copy); a
  // non-unique tree's are (key, big-endian value) pairs as InternalKey
  // builds them, here all in one buffer (inline for a commit's few entries:
  // no allocation).
  absl::InlinedVector<char, 512> pairs(unique_ ? 0 : entries.size() * width_);
  for (size_t i = 0; !unique_ && i < entries.size(); ++i) {
    InternalKeyInto(entries[i].key, entries[i].value,
                    pairs.data() + i * width_);
  }
  auto key = [&](size_t i) {
    return unique_ ? entries[i].key
                   : std::string_view(pairs.data() + i * width_, width_);
  };
  // Checked up front so a bad batch changes nothing: the leaf test below
  // (below the high fence) only holds for keys above the last one.
  for (size_t i = 1; i < entries.size(); ++i) {
    if (CompareKeys(key(i - 1), key(i)) >= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "InsertBatch: entry %d is not above entry %d in the index order", i,
          i - 1));
    }
  }

  size_t i = 0;
  while (i < entries.size()) {
    Path path;
    auto leaf = LockLeafExclusive(ctx, key(i), &path);
    if (!leaf.ok()) return leaf.status();
    // Entries before `from` are below key(i): they were inserted under
    // this latch, so the search skips them.
    uint32_t from = 0;
    for (;;) {
      const BLinkNode n = View(leaf->data());
      const std::string_view k = key(i);
      const uint32_t pos = from > 0     ? n.LowerBound(k, from)
                           : leaf_hint_ ? n.LowerBoundAfterLastInsert(k)
                                        : n.LowerBound(k);
      if (pos < n.count() && n.key(pos) == k) {
        return absl::AlreadyExistsError(
            unique_ ? "key already in the unique index"
                    : "(key, value) pair already in the index");
      }
      if (n.count() == capacity_) {
        // The split releases the leaf; the next entry descends again, as
        // it may now belong to the new right node.
        if (absl::Status s = SplitAndInsert(ctx, *std::move(leaf), pos, k,
                                            entries[i].value, &path);
            !s.ok()) {
          return s;
        }
        *inserted = ++i;
        break;
      }
      BLinkNode::InsertAt(*leaf, width_, pos, k, entries[i].value);
      *inserted = ++i;
      from = pos + 1;
      // The next key is above this one, so above the leaf's low fence: it
      // belongs here if it is below the high fence (B-link: key < high).
      if (i == entries.size() || !n.BelowHigh(key(i))) {
        if (absl::Status s = leaf->Unlock(); !s.ok()) return s;
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status BLinkTree::SplitAndInsert(cc::ThreadContext& ctx,
                                       cc::ExclusiveGuard guard, uint32_t pos,
                                       std::string_view key, uint64_t value,
                                       Path* path) {
  return Split(ctx, std::move(guard), Entry{key, value}, pos, path,
               std::nullopt);
}

absl::Status BLinkTree::Split(cc::ThreadContext& ctx, cc::ExclusiveGuard guard,
                              std::optional<Entry> added, uint32_t pos,
                              Path* path,
                              std::optional<std::string_view> split_key) {
  const BLinkNode n = View(guard.data());
  const uint32_t eb = n.entry_bytes();
  const uint32_t total = n.count() + (added ? 1 : 0);
  // All entries with the new one in place, then halves.
  std::vector<uint8_t> entries(size_t{total} * eb);
  if (added) {
    std::memcpy(entries.data(), guard.data() + n.EntryOffset(0), pos * eb);
    std::memcpy(entries.data() + pos * eb, added->key.data(), width_);
    std::memcpy(entries.data() + pos * eb + width_, &added->value, 8);
    std::memcpy(entries.data() + (pos + 1) * eb,
                guard.data() + n.EntryOffset(pos), (n.count() - pos) * eb);
  } else {
    // (An empty leaf may be split too, at a key: memcpy of no bytes from
    // an empty vector's null data() is undefined, hence the test.)
    if (total > 0) {
      std::memcpy(entries.data(), guard.data() + n.EntryOffset(0), total * eb);
    }
    pos = total;  // no new entry: no insertion point to split at
  }
  // Where the new right node starts. An insert past the last entry is what
  // an ascending load (a loader's, any key-ordered bulk insert) does on
  // every split: a middle split would leave each left node half empty for
  // good (nodes are never merged), so split at the insertion point and keep
  // the left node full; later ascending keys fill the right one. An insert
  // right after the node's last one continues an ascending run that other
  // keys follow (two loaders filling neighbouring key ranges, or a run
  // into a range loaded before): the node splits just after the new entry,
  // so the run goes on at the end of the left node and fills it, and the
  // keys after it move right. Other inserts (and a split with no insert)
  // split in the middle, leaving room on both sides.
  const bool run =
      added && pos > 0 && pos < n.count() && n.last_insert() == pos;
  const uint32_t mid = split_key          ? n.LowerBound(*split_key)
                       : !added           ? total / 2
                       : pos == n.count() ? pos
                                          : (run ? pos + 1 : total / 2);
  const std::string sep =
      split_key ? std::string(*split_key)
                : std::string(reinterpret_cast<const char*>(&entries[mid * eb]),
                              width_);
  const int level = n.level();

  auto right = manager_.Allocate(ctx);
  if (!right.ok()) return right.status();
  std::vector<uint8_t> image(manager_.payload_bytes());
  auto build = [&](std::string_view low, bool low_min, std::string_view high,
                   bool high_max, uint64_t link, uint32_t from, uint32_t to) {
    BLinkNode::Init(image.data(), width_, level, low, low_min, high, high_max,
                    link);
    const uint16_t count = to - from;
    std::memcpy(image.data() + BLinkNode::kCountOffset, &count, 2);
    const BLinkNode view = View(image.data());
    if (count > 0) {
      std::memcpy(image.data() + view.EntryOffset(0),
                  entries.data() + size_t{from} * eb, size_t{count} * eb);
    }
    // The node that got the new entry remembers it as its last insert.
    if (added && pos >= from && pos < to) {
      BLinkNode::SetLastInsert(image.data(), pos - from + 1);
    }
    // Both halves move past the old version, and keep the TO timestamps
    // of the range they now hold (docs/design/blink_tree.md).
    BLinkNode::PutWord(image.data(), BLinkNode::kVersionOffset,
                       n.version() + 1);
    BLinkNode::PutWord(image.data(), BLinkNode::kReadTsOffset, n.read_ts());
    BLinkNode::PutWord(image.data(), BLinkNode::kWriteTsOffset, n.write_ts());
    return view.used_bytes();
  };
  {
    // The new right node is complete before anything points to it: in
    // this node's cache for its readers, and, with write_through, in
    // memory (its unlock wrote it), so a node that fails before the link
    // below leaves an unlinked node, never a link to one memory lacks.
    const uint32_t used =
        build(sep, false, n.high(), n.high_is_max(), n.right(), mid, total);
    auto r = manager_.XLock(ctx, *right);
    if (!r.ok()) return r.status();
    std::memcpy(r->MutableRange(0, used), image.data(), used);
    if (absl::Status s = r->Unlock(); !s.ok()) return s;
  }
  ReachFailurePoint(manager_.node_id(), FailurePoint::kSplitLink);
  const uint32_t used =
      build(n.low(), n.low_is_min(), sep, false, right->raw(), 0, mid);
  std::memcpy(guard.MutableRange(0, used), image.data(), used);
  if (leaf_hint_ && added && level == 0) {
    // The half that got the new key is where its run goes on (after an
    // ascending split, the new right node).
    RememberLeaf(ctx, added->key, pos >= mid ? *right : guard.gcl());
  }
  // Readers can now reach the right half through the right link; the
  // separator in the parent is only a shortcut, posted after the release.
  if (absl::Status s = guard.Unlock(); !s.ok()) return s;
  return InsertSeparator(ctx, level + 1, sep, *right, path);
}

absl::Status BLinkTree::SplitLeafOf(cc::ThreadContext& ctx,
                                    std::string_view key, uint64_t value) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  const std::string internal = InternalKey(key, value);
  Path path;
  auto leaf = LockLeafExclusive(ctx, internal, &path);
  if (!leaf.ok()) return leaf.status();
  // Where to split (another committer may have split it since: then the
  // retried prepare finds room, or asks again). Past the last entry, or
  // right after the node's last insert (an ascending run, a TPC-C
  // district's orders): at `key`, keeping the left node full, as Split
  // does for an ascending insert. Into a node more than half full: in
  // the middle, as a random insert does (a commit's one new entry then
  // fits, and nodes stay half full). Into a node at most half full that
  // still lacks room (many entries of one commit land here): at `key`, so
  // the entries below it (which fit, PrepareChanges found) stay left and
  // a next split, if any, is further right. Never at the low fence (an
  // empty left range).
  const BLinkNode n = View(leaf->data());
  const uint32_t pos = n.LowerBound(internal);
  // A leftmost node's low fence reads as zeros, and no key sorts below the
  // zero key: split there, the left range would be empty and its separator
  // (zeros) would equal the parent's first key, which never takes it.
  const bool above_low = CompareKeys(internal, n.low()) > 0;
  const bool at_key =
      above_low && (pos == n.count() || (pos > 0 && n.last_insert() == pos) ||
                    n.count() * 2 <= capacity_);
  // A leaf other committers emptied since the prepare, asked for at its
  // low fence, has no middle to split at: the retried prepare finds room,
  // or asks again at a key above the fence.
  if (!at_key && n.count() < 2) return leaf->Unlock();
  return Split(
      ctx, *std::move(leaf), std::nullopt, 0, &path,
      at_key ? std::optional<std::string_view>(internal) : std::nullopt);
}

absl::Status BLinkTree::InsertSeparator(cc::ThreadContext& ctx, int level,
                                        std::string_view key,
                                        GlobalAddress child, Path* path) {
  GlobalAddress at = path->Get(level);
  if (at.is_null()) {
    auto found = FindNodeAtLevel(ctx, level, key);
    if (!found.ok()) return found.status();
    at = *found;
  }
  auto g = manager_.XLock(ctx, at);
  if (!g.ok()) return g.status();
  for (;;) {
    const BLinkNode n = View(g->data());
    if (!n.valid() || n.level() != level) {
      return Corrupt(g->gcl(), "wrong level on a separator insert");
    }
    if (n.BelowHigh(key)) break;
    auto next = manager_.XLock(ctx, GlobalAddress::FromRaw(n.right()));
    if (!next.ok()) return next.status();
    *g = *std::move(next);
  }
  const BLinkNode n = View(g->data());
  const uint32_t pos = n.LowerBound(key);
  if (pos < n.count() && n.key(pos) == key) {
    return g->Unlock();  // posted already (a racing root growth)
  }
  if (n.count() < capacity_) {
    BLinkNode::InsertAt(*g, width_, pos, key, child.raw());
    return g->Unlock();
  }
  return SplitAndInsert(ctx, *std::move(g), pos, key, child.raw(), path);
}

absl::StatusOr<GlobalAddress> BLinkTree::FindNodeAtLevel(cc::ThreadContext& ctx,
                                                         int level,
                                                         std::string_view key) {
  for (;;) {
    auto g = DescendShared(ctx, key, Descent::kHolds, level, nullptr);
    if (!g.ok()) return g.status();
    const int found_level = View(g->data()).level();
    const GlobalAddress at = g->gcl();
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
    if (found_level == level) return at;
    // The level does not exist in the tree we see: the anchor may know a
    // higher root, or the root itself split and the tree must grow.
    int root_level = 0;
    auto root = ReadAnchorRoot(ctx, &root_level);
    if (!root.ok()) return root.status();
    if (root_level < level) {
      if (absl::Status s = GrowRoot(ctx, level - 1); !s.ok()) return s;
    }
  }
}

absl::Status BLinkTree::GrowRoot(cc::ThreadContext& ctx, int old_root_level) {
  auto anchor = manager_.XLock(ctx, anchor_);
  if (!anchor.ok()) return anchor.status();
  const uint8_t* p = anchor->data();
  const uint64_t old_root = Load<uint64_t>(p + kAnchorRootOffset);
  const int root_level =
      static_cast<int>(Load<uint32_t>(p + kAnchorLevelOffset));
  if (root_level > old_root_level) {  // someone grew it first
    root_hint_.store(old_root);
    return anchor->Unlock();
  }
  // The new root starts with the old root as its only child; the splitters
  // of the old root's level then post their separators into it as usual.
  auto root = manager_.Allocate(ctx);
  if (!root.ok()) return root.status();
  {
    auto g = manager_.XLock(ctx, *root);
    if (!g.ok()) return g.status();
    const BLinkNode view = View(g->data());
    uint8_t* q = g->MutableRange(0, view.EntryOffset(1));
    BLinkNode::Init(q, width_, static_cast<uint16_t>(old_root_level + 1), {},
                    true, {}, true, 0);
    const uint16_t one = 1;
    std::memcpy(q + BLinkNode::kCountOffset, &one, 2);
    std::memset(q + view.EntryOffset(0), 0, width_);
    std::memcpy(q + view.EntryOffset(0) + width_, &old_root, 8);
    // In memory (write_through) before the anchor names it, as a split's
    // right node.
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
  }
  ReachFailurePoint(manager_.node_id(), FailurePoint::kNewRootLink);
  const uint64_t raw = root->raw();
  const uint32_t new_level = old_root_level + 1;
  uint8_t* w = anchor->MutableRange(kAnchorRootOffset, 12);
  std::memcpy(w, &raw, 8);
  std::memcpy(w + 8, &new_level, 4);
  if (absl::Status s = anchor->Unlock(); !s.ok()) return s;
  root_hint_.store(raw);
  return absl::OkStatus();
}

absl::Status BLinkTree::Update(cc::ThreadContext& ctx, std::string_view key,
                               uint64_t value) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!unique_) {
    return absl::FailedPreconditionError(
        "Update on a non-unique index: delete and insert the pair");
  }
  auto leaf = LockLeafExclusive(ctx, key, nullptr);
  if (!leaf.ok()) return leaf.status();
  const BLinkNode n = View(leaf->data());
  const uint32_t pos = n.LowerBound(key);
  if (pos == n.count() || n.key(pos) != key) {
    return absl::NotFoundError("key not in the index");
  }
  BLinkNode::SetValue(*leaf, width_, pos, value);
  return leaf->Unlock();
}

absl::Status BLinkTree::Delete(cc::ThreadContext& ctx, std::string_view key) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!unique_) {
    return absl::FailedPreconditionError(
        "Delete(key) on a non-unique index: use DeleteEntry(key, value)");
  }
  return RemoveInternal(ctx, key);
}

absl::Status BLinkTree::DeleteEntry(cc::ThreadContext& ctx,
                                    std::string_view key, uint64_t value) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (unique_) {
    return absl::FailedPreconditionError(
        "DeleteEntry on a unique index: use Delete(key)");
  }
  return RemoveInternal(ctx, InternalKey(key, value));
}

absl::Status BLinkTree::RemoveInternal(cc::ThreadContext& ctx,
                                       std::string_view key) {
  auto leaf = LockLeafExclusive(ctx, key, nullptr);
  if (!leaf.ok()) return leaf.status();
  const BLinkNode n = View(leaf->data());
  const uint32_t pos = n.LowerBound(key);
  if (pos == n.count() || n.key(pos) != key) {
    return absl::NotFoundError("key not in the index");
  }
  BLinkNode::RemoveAt(*leaf, width_, pos);
  return leaf->Unlock();
}

namespace {

// Entries copied out of one leaf under its latch, visited after release.
class LeafBatch {
 public:
  explicit LeafBatch(uint32_t width) : width_(width) {}
  void Clear() {
    keys_.clear();
    values_.clear();
  }
  void Add(std::string_view key, uint64_t value) {
    keys_.append(key);
    values_.push_back(value);
  }
  size_t size() const { return values_.size(); }
  std::string_view key(size_t i) const {
    return std::string_view(keys_).substr(i * width_, width_);
  }
  uint64_t value(size_t i) const { return values_[i]; }

 private:
  uint32_t width_;
  std::string keys_;
  std::vector<uint64_t> values_;
};

}  // namespace

absl::Status BLinkTree::Scan(cc::ThreadContext& ctx,
                             std::optional<std::string_view> low,
                             std::optional<std::string_view> high,
                             uint64_t limit, Visitor visit,
                             std::vector<LeafRead>* reads) {
  if (absl::Status s = CheckBounds(low, high); !s.ok()) return s;
  const std::string from =
      low ? InternalKey(*low, 0) : std::string(width_, '\0');
  std::optional<std::string> to;
  if (high) to = InternalKey(*high, ~uint64_t{0});
  if (limit == 0) return absl::OkStatus();

  auto g = DescendShared(ctx, from, Descent::kHolds, 0, nullptr);
  if (!g.ok()) return g.status();
  LeafBatch batch(width_);
  std::string last;  // the last key visited: never visit it or less again
  uint64_t visited = 0;
  for (;;) {
    const BLinkNode n = View(g->data());
    batch.Clear();
    bool done = n.high_is_max() || (to && *to < n.high());
    for (uint32_t i = n.LowerBound(from); i < n.count(); ++i) {
      const std::string_view k = n.key(i);
      if (!last.empty() && k <= last) continue;
      if (to && k > *to) {
        done = true;
        break;
      }
      batch.Add(k, n.value(i));
    }
    const GlobalAddress right = GlobalAddress::FromRaw(n.right());
    if (reads != nullptr) reads->push_back({g->gcl(), n.version()});
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!visit(batch.key(i).substr(0, key_width_), batch.value(i)) ||
          ++visited == limit) {
        return absl::OkStatus();
      }
    }
    if (batch.size() > 0) last = std::string(batch.key(batch.size() - 1));
    if (done || right.is_null()) return absl::OkStatus();
    g = manager_.SLock(ctx, right);
    if (!g.ok()) return g.status();
  }
}

absl::Status BLinkTree::ScanBackward(cc::ThreadContext& ctx,
                                     std::optional<std::string_view> high,
                                     std::optional<std::string_view> low,
                                     uint64_t limit, Visitor visit,
                                     std::vector<LeafRead>* reads) {
  if (absl::Status s = CheckBounds(low, high); !s.ok()) return s;
  const std::string from =
      high ? InternalKey(*high, ~uint64_t{0}) : std::string(width_, '\xff');
  std::optional<std::string> to;
  if (low) to = InternalKey(*low, 0);
  if (limit == 0) return absl::OkStatus();

  // First leaf: the one holding `from` (keys <= from). Then each time the
  // leaf holding the keys just below the previous leaf's low fence.
  auto g = DescendShared(ctx, from, Descent::kHolds, 0, nullptr);
  if (!g.ok()) return g.status();
  bool first = true;
  std::string bound;  // later leaves: only keys < bound
  std::string last;   // the last key visited: only smaller ones from now on
  bool have_last = false;
  LeafBatch batch(width_);
  uint64_t visited = 0;
  for (;;) {
    const BLinkNode n = View(g->data());
    batch.Clear();
    bool done = n.low_is_min() || (to && n.low() <= *to);
    for (uint32_t i = n.count(); i-- > 0;) {
      const std::string_view k = n.key(i);
      if (first ? k > from : k >= bound) continue;
      if (have_last && k >= last) continue;
      if (to && k < *to) {
        done = true;
        break;
      }
      batch.Add(k, n.value(i));
    }
    if (!n.low_is_min()) bound = std::string(n.low());
    if (reads != nullptr) reads->push_back({g->gcl(), n.version()});
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!visit(batch.key(i).substr(0, key_width_), batch.value(i)) ||
          ++visited == limit) {
        return absl::OkStatus();
      }
    }
    if (batch.size() > 0) {
      last = std::string(batch.key(batch.size() - 1));
      have_last = true;
    }
    if (done) return absl::OkStatus();
    first = false;
    g = DescendShared(ctx, bound, Descent::kBefore, 0, nullptr);
    if (!g.ok()) return g.status();
  }
}

absl::StatusOr<BLinkTreeStats> BLinkTree::Verify(cc::ThreadContext& ctx) {
  int root_level = 0;
  auto root = ReadAnchorRoot(ctx, &root_level);
  if (!root.ok()) return root.status();
  BLinkTreeStats stats;
  stats.height = root_level + 1;
  stats.node_capacity = capacity_;
  // (low fence, node) expected at the next level down, from the parents.
  std::vector<std::pair<std::string, GlobalAddress>> expected = {
      {std::string(), *root}};
  for (int level = root_level; level >= 0; --level) {
    std::vector<std::pair<std::string, GlobalAddress>> children;
    GlobalAddress at = expected.front().second;
    std::string prev_high;
    size_t index = 0;
    while (!at.is_null()) {
      auto g = manager_.SLock(ctx, at);
      if (!g.ok()) return g.status();
      const BLinkNode n = View(g->data());
      auto fail = [&](const std::string& what) {
        return absl::InternalError(
            absl::StrFormat("B-link node %s (level %d, #%d): %s", at.ToString(),
                            level, index, what));
      };
      if (!n.valid() || n.level() != level) return fail("bad magic or level");
      if (index >= expected.size() || expected[index].second != at) {
        return fail("not referenced by its parent level in order");
      }
      if (index == 0 ? !n.low_is_min()
                     : n.low_is_min() || n.low() != prev_high) {
        return fail("low fence differs from the left neighbour's high fence");
      }
      if (index > 0 && n.low() != expected[index].first) {
        return fail("low fence differs from the parent's separator");
      }
      for (uint32_t i = 0; i < n.count(); ++i) {
        const std::string_view k = n.key(i);
        const bool key0_is_low = level > 0 && i == 0;
        if (key0_is_low) {
          if (!n.low_is_min() && k != n.low()) return fail("entry 0 != low");
        } else {
          if (i > 0 && !(n.key(i - 1) < k)) return fail("keys out of order");
          if (!n.low_is_min() && k < n.low()) return fail("key below low");
        }
        if (!n.high_is_max() && k >= n.high()) return fail("key above high");
        if (level > 0) {
          children.emplace_back(std::string(k),
                                GlobalAddress::FromRaw(n.value(i)));
        }
      }
      if (level > 0) {
        ++stats.inner_nodes;
        if (n.count() == 0) return fail("empty inner node");
      } else {
        ++stats.leaves;
        stats.entries += n.count();
        if (n.count() == 0) ++stats.empty_leaves;
      }
      const GlobalAddress right = GlobalAddress::FromRaw(n.right());
      if (n.high_is_max() != right.is_null()) {
        return fail("right link and +inf high fence disagree");
      }
      prev_high = std::string(n.high());
      at = right;
      ++index;
    }
    if (index != expected.size()) {
      return absl::InternalError(
          absl::StrFormat("level %d: %d nodes linked, parents reference %d",
                          level, index, expected.size()));
    }
    expected = std::move(children);
  }
  return stats;
}

}  // namespace strand::index
