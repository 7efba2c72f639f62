#ifndef STRAND_INDEX_BLINK_TREE_H_
#define STRAND_INDEX_BLINK_TREE_H_

// A B-link tree (Lehman & Yao) whose nodes are GCLs (layout: blink_node.h),
// shared by every thread of every compute node through the cc/ API. Keys
// are fixed-width byte strings ordered by memcmp (key_codec.h); values are
// 8 bytes (a storage::TupleAddress). A non-unique tree (secondary index)
// appends the value to the key, so equal keys scan in value order.
//
// Thread-safe with no global lock: mutations happen under exclusive
// latches taken top down and left to right (no deadlock). Nodes are never
// merged or freed. A forward scan sees every key that existed when it
// started, in order, once, and runs its visitor with no latch held.
// Transactions change a tree only at commit ("Commit-time writes" below).
//
// Round trips, h = height (SEL: 1 to take a latch, 1 to release it; SELCC:
// 0 on cache hits):
//   Lookup                  2h
//   Insert, Update, Delete  2h (+ per split: Allocate + 4, and the parent's
//                           2, repeated upward)
//   InsertBatch             2h per leaf the batch lands in (+ splits as for
//                           Insert, and 2h after each split)
//   Scan                    2h + 2 per further leaf
//   ScanBackward            2h per leaf
// Design and argument: docs/design/blink_tree.md.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "cc/gcl_manager.h"
#include "index/blink_tree_tuning.h"

namespace strand::index {

class BLinkNode;
class UnlatchedBLinkNode;

struct BLinkTreeOptions {
  uint16_t key_width = 8;  // bytes of a user key, 1 to kMaxKeyWidth
  bool unique = true;
};

// What the optimistic reads of inner nodes did on one thread (through one
// cc::ThreadContext), in all trees, since the context was made (tests and
// profiles).
struct OptimisticReadStats {
  uint64_t validated = 0;    // node reads that validated
  uint64_t invalidated = 0;  // node reads that did not (a writer came in)
  uint64_t unavailable = 0;  // OptimisticRead said not available
};

// What the rightmost-leaf shortcut did on one thread (through one
// cc::ThreadContext), in all trees, since the context was made (tests and
// profiles).
struct LeafHintStats {
  uint64_t hits = 0;    // the hinted leaf covered the key and was used
  uint64_t misses = 0;  // a hint existed but the insert descended
};

// A leaf a reader copied and the version it had then (blink_node.h): what a
// transaction validates at commit to know its scans and lookups still hold.
struct LeafRead {
  rdma::GlobalAddress leaf;
  uint64_t version = 0;
  friend auto operator<=>(const LeafRead&, const LeafRead&) = default;
};

// The leaves one committing transaction holds exclusively, of any trees,
// by address (BLinkTree::PrepareChanges fills it).
using LeafGuards = absl::flat_hash_map<rdma::GlobalAddress, cc::ExclusiveGuard>;

struct BLinkTreeStats {
  int height = 0;  // levels, 1 for a lone leaf
  uint64_t leaves = 0;
  uint64_t inner_nodes = 0;
  uint64_t entries = 0;  // keys in leaves
  uint64_t empty_leaves = 0;
  uint32_t node_capacity = 0;  // entries a full node holds
};

class BLinkTree {
 public:
  static constexpr uint16_t kMaxKeyWidth = 255;
  // Splits need room for this many entries per node; Create refuses a
  // key width / gcl_size pair that gives fewer.
  static constexpr uint32_t kMinEntriesPerNode = 4;

  // Allocates the anchor and an empty root leaf; returns the anchor.
  static absl::StatusOr<rdma::GlobalAddress> Create(
      cc::GclManager& manager, cc::ThreadContext& ctx,
      const BLinkTreeOptions& options);
  static absl::StatusOr<std::unique_ptr<BLinkTree>> Open(
      cc::GclManager& manager, cc::ThreadContext& ctx,
      rdma::GlobalAddress anchor, const BLinkTreeTuning& tuning = {});

  // `ctx`'s shortcut counters (BLinkTreeTuning::leaf_hint).
  static LeafHintStats ThreadLeafHintStats(cc::ThreadContext& ctx);
  // `ctx`'s optimistic read counters (BLinkTreeTuning::optimistic_reads).
  static OptimisticReadStats ThreadOptimisticReadStats(cc::ThreadContext& ctx);

  uint16_t key_width() const { return key_width_; }
  bool unique() const { return unique_; }
  rdma::GlobalAddress anchor() const { return anchor_; }

  // Unique trees. NotFound if the key is absent. With `reads`, the leaf
  // searched (present key or absent) is appended to it; so for
  // LookupBatch (every leaf searched) and the scans (every leaf copied).
  absl::StatusOr<uint64_t> Lookup(cc::ThreadContext& ctx, std::string_view key,
                                  std::vector<LeafRead>* reads = nullptr);
  // Lookup of several keys at once into `values` (one per key, nullopt
  // for an absent key): the keys in order, one descent through the inner
  // levels (usually cached near the CPU) per run of keys under one parent
  // of leaves, then the cache misses of every leaf at once (GclManager's
  // prefetch hints), then each leaf latched and searched in turn, moving
  // right if it split meanwhile. For a
  // procedure's independent point lookups (a TPC-C order's items): their
  // leaves are usually cold, and the misses overlap instead of queueing.
  // Each value is one Lookup would have returned at some moment of the
  // call; the batch is not one atomic snapshot. InvalidArgument if the
  // sizes differ or a key has the wrong width; FailedPrecondition on a
  // non-unique tree (as Lookup).
  absl::Status LookupBatch(cc::ThreadContext& ctx,
                           absl::Span<const std::string_view> keys,
                           absl::Span<std::optional<uint64_t>> values,
                           std::vector<LeafRead>* reads = nullptr);
  // Unique: AlreadyExists if the key is present. Non-unique: AlreadyExists
  // if the very (key, value) pair is present.
  absl::Status Insert(cc::ThreadContext& ctx, std::string_view key,
                      uint64_t value);

  // One entry of an InsertBatch: a user key and its value.
  struct Entry {
    std::string_view key;
    uint64_t value;
  };
  // Inserts `entries` with the same result as calling Insert on each in
  // turn, but under one exclusive leaf latch for every run of consecutive
  // entries that fit in the same leaf (below its high fence, with room):
  // one descent and one latch pair for a TPC-C order's lines, not one per
  // key. Readers see one leaf's run appear together; the batch as a whole
  // is not atomic (it may span leaves, and stops at a duplicate).
  //
  // Order: the entries must be strictly ascending in the tree's order, by
  // key, and by value among equal keys in a non-unique tree (the value is
  // part of the internal key there). Otherwise, or if a key has the wrong
  // width, InvalidArgument and nothing is inserted: the whole batch is
  // checked before the first insert.
  //
  // Failure: stops at the first entry that fails (AlreadyExists, as Insert
  // says) and leaves the entries after it alone. `*inserted` is always set
  // to the number of entries in the tree from this call, a prefix of
  // `entries`, so a caller can undo exactly those. On an error of the cc/
  // layer (a dead fabric) the failing entry's state is unknown, as with
  // Insert.
  absl::Status InsertBatch(cc::ThreadContext& ctx,
                           absl::Span<const Entry> entries, size_t* inserted);

  // Unique trees: replaces the value (only its 8 bytes are written back).
  absl::Status Update(cc::ThreadContext& ctx, std::string_view key,
                      uint64_t value);
  // Unique trees: removes the key. NotFound if absent.
  absl::Status Delete(cc::ThreadContext& ctx, std::string_view key);
  // Non-unique trees: removes the pair. NotFound if absent.
  absl::Status DeleteEntry(cc::ThreadContext& ctx, std::string_view key,
                           uint64_t value);

  // Visits entries in key order (ties in value order) while `visit`
  // returns true, at most `limit` of them. Bounds are user keys, inclusive;
  // nullopt means unbounded. Forward: from `low` up to `high`.
  using Visitor = absl::FunctionRef<bool(std::string_view key, uint64_t value)>;
  static constexpr uint64_t kNoLimit = UINT64_MAX;
  //
  // Coverage (what `reads` promises): the leaves a scan copied hold, at the
  // versions recorded, every key from its start bound up to the last key it
  // visited (to its end bound if it ran to the end). Leaf ranges are
  // contiguous (a leaf's low fence is fixed and its high fence only shrinks
  // by a split, which moves its version), so a key inserted into or removed
  // from that range afterwards changes the version of a recorded leaf.
  absl::Status Scan(cc::ThreadContext& ctx, std::optional<std::string_view> low,
                    std::optional<std::string_view> high, uint64_t limit,
                    Visitor visit, std::vector<LeafRead>* reads = nullptr);
  // Backward: from `high` down to `low`.
  absl::Status ScanBackward(cc::ThreadContext& ctx,
                            std::optional<std::string_view> high,
                            std::optional<std::string_view> low, uint64_t limit,
                            Visitor visit,
                            std::vector<LeafRead>* reads = nullptr);

  // --- Commit-time writes (txn/index_writes.h): all-or-nothing.
  //
  // One entry change of a transaction's commit. `leaf` is PrepareChanges'.
  struct Change {
    std::string_view key;  // user key
    uint64_t value = 0;
    bool remove = false;
    rdma::GlobalAddress leaf;
  };
  // Outcome of PrepareChanges that is not an error.
  enum class Prepared {
    kReady,      // every leaf is latched and every change will succeed
    kNeedSplit,  // the leaf of changes[*split_at] has no room: release
                 // `held`, SplitLeafOf it, then prepare again
    kBusy,       // a latch was held by another thread: release `held`,
                 // back off, prepare again
  };
  // Sorts `changes` into the tree's order (removals before additions of
  // one key), X-latches the leaf of every change with no_wait, adding it to
  // `held` (a leaf already there is used as is), and checks that ApplyChanges
  // will succeed: a unique key added is absent (or removed just before),
  // a removed entry is present, each leaf has room; with `to_ts` (TO) also
  // that no leaf was read or changed at a timestamp above it. Changes
  // nothing in the tree. Never waits for a latch while it holds a leaf
  // (blink_tree_changes.cc). Errors: AlreadyExists, NotFound (then
  // changes[*split_at], `changes` in the tree's order, is the change that
  // failed), Aborted (TO's rule failed: retry the transaction),
  // InvalidArgument (a key of the wrong width). On any error the caller
  // releases `held`.
  absl::StatusOr<Prepared> PrepareChanges(cc::ThreadContext& ctx,
                                          absl::Span<Change> changes,
                                          LeafGuards& held,
                                          std::optional<uint64_t> to_ts,
                                          size_t* split_at);
  // Splits the leaf holding (key, value)'s internal key (PrepareChanges'
  // kNeedSplit names the first change that did not fit), in the middle or
  // at that key (the function's comment says when), with ordinary
  // (waiting) latches; the caller holds no leaf. Repeated, it makes room
  // for any number of entries of one commit.
  absl::Status SplitLeafOf(cc::ThreadContext& ctx, std::string_view key,
                           uint64_t value);
  // Applies prepared `changes` (PrepareChanges returned kReady, and `held`
  // still holds their leaves); with `to_ts` stamps the leaves' write_ts.
  // Cannot fail.
  void ApplyChanges(absl::Span<const Change> changes, LeafGuards& held,
                    std::optional<uint64_t> to_ts);
  // Whether the leaf of `read` still has the version read (Aborted if not,
  // or if another thread holds it exclusively: no waiting). A leaf in `held`
  // is checked through that guard. With `to_ts` (TO), also that the leaf
  // was not changed above it, and raises its read_ts to it.
  absl::Status ValidateRead(cc::ThreadContext& ctx, const LeafRead& read,
                            LeafGuards& held, std::optional<uint64_t> to_ts);

  // Walks every level and checks the invariants (order, fences, right
  // links, each child referenced by its parent level). For tests and
  // tools; run it only when no one modifies the tree.
  absl::StatusOr<BLinkTreeStats> Verify(cc::ThreadContext& ctx);

 private:
  struct Path;
  // Bytes of a node a search for a key is expected to probe (beyond the
  // header), from its parent; bytes == 0: no estimate.
  struct Probe {
    uint32_t offset = 0;
    uint32_t bytes = 0;
  };
  // Which node of a level a descent looks for.
  enum class Descent {
    kHolds,   // low <= key < high
    kBefore,  // low < key <= high: the node with the keys just below key
  };

  BLinkTree(cc::GclManager& manager, rdma::GlobalAddress anchor,
            uint16_t key_width, bool unique, rdma::GlobalAddress root,
            const BLinkTreeTuning& tuning);

  // What a thread keeps for every tree it uses, on its context
  // (cc::ThreadContext::Local): the leaf hints and the counters.
  struct ThreadState;
  static ThreadState& StateOf(cc::ThreadContext& ctx);
  // The rightmost-leaf shortcut (BLinkTreeTuning::leaf_hint). The leaf
  // `ctx`'s thread last changed for internal key `key`'s prefix, or null.
  rdma::GlobalAddress HintedLeaf(cc::ThreadContext& ctx,
                                 std::string_view key) const;
  void RememberLeaf(cc::ThreadContext& ctx, std::string_view key,
                    rdma::GlobalAddress leaf) const;
  // Counts a use of a hint into `ctx`'s LeafHintStats.
  static void CountLeafHint(cc::ThreadContext& ctx, bool hit);
  // `ctx`'s counters behind ThreadOptimisticReadStats.
  static OptimisticReadStats& MutableOptimisticReadStats(
      cc::ThreadContext& ctx);
  // Whether the latched node `payload` is a leaf whose fences cover `key`.
  bool Covers(const uint8_t* payload, std::string_view key) const;
  // `hinted` (HintedLeaf of `key`), X-latched with `lock`, when its fences
  // cover the key; else a guard that owns nothing (no hint, or a busy latch
  // under no_wait, or fences that do not cover it). Errors other than a busy
  // latch are returned.
  absl::StatusOr<cc::ExclusiveGuard> LatchHintedLeaf(cc::ThreadContext& ctx,
                                                     rdma::GlobalAddress hinted,
                                                     std::string_view key,
                                                     cc::LockOptions lock);

  absl::Status CheckKey(std::string_view key) const;
  // CheckKey on each scan bound that is given.
  absl::Status CheckBounds(std::optional<std::string_view> low,
                           std::optional<std::string_view> high) const;
  std::string InternalKey(std::string_view key, uint64_t value) const;
  // A non-unique tree's internal key of (key, value), written into `out`
  // (width_ bytes); the view is of `out`.
  std::string_view InternalKeyInto(std::string_view key, uint64_t value,
                                   char* out) const;

  // Where an optimistic descent stopped: the node to go on from, not
  // latched, and its level when known (-1: not read yet).
  struct OptimisticStop {
    rdma::GlobalAddress at;
    int level = -1;
    bool top = true;  // `at` is the cached root, not known to be current
  };
  // Reads of a node that did not validate, after which a descent goes on
  // latched. A read fails only while a writer changes the node, so a
  // retry usually succeeds; a node changed over and over is latched.
  static constexpr int kOptimisticAttempts = 4;
  // From the cached root down towards the node of level `stop_level` that
  // `rule` picks for `key`, with optimistic reads only (no latch): stops
  // at that node (level set; not read itself unless it is the root), or
  // earlier where a node was not available, did not validate
  // kOptimisticAttempts times, turned out to be the cached root after a
  // split, or looked corrupt (the latched path takes it from there and
  // reports what it finds). Records the inner nodes it descends through
  // in `path`.
  OptimisticStop DescendOptimistic(cc::ThreadContext& ctx, std::string_view key,
                                   Descent rule, int stop_level, Path* path);
  // From the cached root down to the node of level `stop_level` (or the
  // lowest there is, if the cached root is lower) that `rule` picks for
  // `key`, S-latched. Records the node seen at each level in `path`. With
  // optimistic reads, starts latching where DescendOptimistic stopped.
  absl::StatusOr<cc::SharedGuard> DescendShared(cc::ThreadContext& ctx,
                                                std::string_view key,
                                                Descent rule, int stop_level,
                                                Path* path,
                                                cc::LockOptions lock = {});
  // DescendShared's latched part: from `from` (a DescendOptimistic stop,
  // or the cached root with level -1), coupling S-latches.
  absl::StatusOr<cc::SharedGuard> DescendLatched(cc::ThreadContext& ctx,
                                                 std::string_view key,
                                                 Descent rule, int stop_level,
                                                 Path* path,
                                                 cc::LockOptions lock,
                                                 const OptimisticStop& from);
  // The leaf whose range holds `key`, S-latched, found from `leaf`, a leaf
  // at or left of it (nodes only ever split to the right).
  absl::StatusOr<cc::SharedGuard> LatchLeafShared(cc::ThreadContext& ctx,
                                                  rdma::GlobalAddress leaf,
                                                  std::string_view key);
  // `key`'s search in `leaf` (a leaf at or left of the key's, as a parent
  // named it) with no latch: the value (nullopt: absent) and the leaf's
  // version, as a shared latch would have shown them, when the read
  // validated and the leaf's range holds the key; nullopt otherwise (then
  // LatchLeafShared).
  struct LeafSearch {
    std::optional<uint64_t> value;
    uint64_t version = 0;
  };
  std::optional<LeafSearch> SearchLeafOptimistic(cc::ThreadContext& ctx,
                                                 rdma::GlobalAddress leaf,
                                                 std::string_view key);
  // LookupBatch's first pass with optimistic reads: the leaf of each key
  // (in `ranked` order) as its parent names it, and with narrow prefetch
  // the probe of it, into `leaves` and `probes`. False when a node was not
  // available or did not validate often enough: then the latched pass
  // runs (from scratch: what this one wrote is overwritten).
  struct RankedKey {
    uint64_t prefix;  // KeyPrefix: decides most comparisons alone
    uint32_t index;
  };
  bool FindLeavesOptimistic(cc::ThreadContext& ctx,
                            absl::Span<const std::string_view> keys,
                            absl::Span<const RankedKey> ranked,
                            absl::Span<rdma::GlobalAddress> leaves,
                            absl::Span<Probe> probes);
  // The leaf whose range holds `key`, X-latched.
  absl::StatusOr<cc::ExclusiveGuard> LockLeafExclusive(cc::ThreadContext& ctx,
                                                       std::string_view key,
                                                       Path* path);

  absl::Status RemoveInternal(cc::ThreadContext& ctx, std::string_view key);
  // Splits the X-latched full node in `guard` while inserting (key, value)
  // at `pos`, releases it, and posts the separator to the parent level.
  // Splits the X-latched node in `guard`, adding `added` at `pos` if
  // given, releases it, and posts the separator to the parent level. With
  // `split_key` (no `added`; low fence < split_key < high fence) the right
  // node starts at it, else the split point is chosen as the comment in
  // the function says.
  absl::Status Split(cc::ThreadContext& ctx, cc::ExclusiveGuard guard,
                     std::optional<Entry> added, uint32_t pos, Path* path,
                     std::optional<std::string_view> split_key);
  // The leaf whose range holds internal key `key`, X-latched with no_wait,
  // from `held` if it is there (then not latched again).
  absl::StatusOr<cc::ExclusiveGuard*> LatchLeafForChange(cc::ThreadContext& ctx,
                                                         std::string_view key,
                                                         LeafGuards& held);
  absl::Status SplitAndInsert(cc::ThreadContext& ctx, cc::ExclusiveGuard guard,
                              uint32_t pos, std::string_view key,
                              uint64_t value, Path* path);
  // Inserts separator (key -> child) into level `level` (idempotent).
  absl::Status InsertSeparator(cc::ThreadContext& ctx, int level,
                               std::string_view key, rdma::GlobalAddress child,
                               Path* path);
  // A node at `level` from which a move right reaches `key`'s node; grows
  // the tree when `level` is above the root.
  absl::StatusOr<rdma::GlobalAddress> FindNodeAtLevel(cc::ThreadContext& ctx,
                                                      int level,
                                                      std::string_view key);
  absl::Status GrowRoot(cc::ThreadContext& ctx, int old_root_level);
  absl::StatusOr<rdma::GlobalAddress> ReadAnchorRoot(cc::ThreadContext& ctx,
                                                     int* level,
                                                     cc::LockOptions lock = {});

  // For child `c` of the inner node `parent` (a BLinkNode or an
  // UnlatchedBLinkNode: a hint, so garbage from a torn read is harmless),
  // searched for `key`.
  template <typename Node>
  Probe ChildProbe(const Node& parent, uint32_t c, std::string_view key) const;
  // A view of one of this tree's nodes (BLinkNode, or UnlatchedBLinkNode
  // for a node read optimistically: blink_node.h) with the tree's key
  // width and search switch. A template, so that this header need not
  // include the node layout.
  template <typename Node = BLinkNode>
  Node View(const uint8_t* payload) const {
    if constexpr (std::is_same_v<Node, BLinkNode>) {
      return Node(payload, width_, word_search_);
    } else {
      return Node(payload, payload_bytes_, width_, capacity_, word_search_);
    }
  }
  // Narrow prefetch of a node about to be latched and searched: its header
  // (count, fences) and `probe`.
  void PrefetchChild(rdma::GlobalAddress child, const Probe& probe) const;

  cc::GclManager& manager_;
  const rdma::GlobalAddress anchor_;
  const uint16_t key_width_;  // user key bytes
  const bool unique_;
  const uint32_t width_;  // internal key bytes (key_width_ + 8 if !unique_)
  const uint32_t capacity_;
  // cc::PrefetchScope::kNarrow: leaves get only their probed lines
  // prefetched (ChildProbe), before their latch; else all of them after.
  const bool narrow_prefetch_;
  const bool leaf_hint_;
  const bool optimistic_reads_;
  const bool word_search_;
  const bool leaf_walk_;
  const uint32_t payload_bytes_;
  // Bytes of a user key that name its hint (BLinkTreeTuning::leaf_hint).
  const uint32_t hint_prefix_;
  // Never reused within the process: a thread's hints name the tree by it,
  // so a tree opened later at the same address (or another manager's tree
  // that a context also used) finds none of them.
  const uint64_t id_;
  std::atomic<uint64_t> root_hint_;  // raw GlobalAddress of a recent root
};

}  // namespace strand::index

#endif  // STRAND_INDEX_BLINK_TREE_H_
