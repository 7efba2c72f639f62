#ifndef STRAND_INDEX_BLINK_TREE_TUNING_H_
#define STRAND_INDEX_BLINK_TREE_TUNING_H_

// The B-link tree's CPU-path switches (blink_tree.h), apart so that the
// engine's options can name them without the tree.

namespace strand::index {

// Runtime switches of a tree's CPU path, chosen per opened tree (not kept
// in the pool, so nodes that open one tree may differ), each with the old
// behaviour as the ablation.
struct BLinkTreeTuning {
  // The rightmost-leaf shortcut for ascending inserts (--index_leaf_hint).
  // Each thread remembers, per tree and per key prefix (the user key
  // without its last min(4, width / 2) bytes: a TPC-C district's orders),
  // the leaf it last changed; the next insert or commit-time change of a
  // key with that prefix latches that leaf directly instead of descending
  // from the root, and uses it only when, under the exclusive latch, the
  // leaf's fences cover the key (low <= key < high). Leaves are never
  // freed or merged, a low fence never changes and a high fence only
  // shrinks by a split that links the right half first (blink_node.h), so
  // a leaf that covers a key under its latch is the one leaf that holds
  // it. Otherwise (the leaf split past the key, a key below it, a busy
  // latch under no-wait) the latch goes and the insert descends as
  // without the hint.
  bool leaf_hint = true;
  // Optimistic reads of inner nodes (--optimistic_reads). Descents read
  // the nodes above the leaves with no latch (cc::GclManager::
  // OptimisticRead), validate after taking the child pointer or right link
  // from a node, and latch only the leaf, as every operation did before.
  // A latch on a cache hit writes the latch word, so the upper nodes every
  // transaction reads (the root, level 1) kept moving between the cores
  // that read them; an optimistic read writes nothing. Why a pointer read
  // this way is safe to follow although the node may change right after
  // the validation: nodes are never freed or merged and split only to the
  // right, so the child named is at or left of the key's node at its level
  // at any later moment, and the descent moves right from it as it does
  // after a latch released too early (Lehman-Yao). A node that is not
  // cached, held exclusively, or changes under the read (a few retries)
  // is latched as without the switch, and so is every node of a protocol
  // without a cache (SEL). Changes no result. false: every node latched,
  // coupled (the ablation).
  // Lookups and LookupBatch read their leaves the same way (a leaf that
  // validates and whose high fence is above the key holds the key: low
  // fences never change), and ValidateRead checks a leaf's version with
  // no latch; so a point lookup on a cached tree writes nothing shared.
  // Scans and every change still latch their leaves.
  bool optimistic_reads = true;
  // Word searches (--index_word_search). A node search for a key of
  // exactly the node's width of 4 or 8 bytes (TPC-C's item, warehouse,
  // district, customer, order, new-order and stock keys) compares one
  // big-endian word per probe and interpolates in integers. Changes no
  // result. false: every search compares bytes (CompareKeys), as other
  // widths do (the ablation).
  bool word_search = true;
  // Commit-time changes walk each leaf once (--index_leaf_walk). A
  // transaction's index changes are sorted and the leaves it latched
  // cannot split, so one leaf's changes are consecutive: a key below the
  // current leaf's high fence goes there with no lookup, and each search
  // starts where the previous change's left off. false: each change finds
  // its leaf (hint, held leaves, descent) and searches it from scratch
  // (the ablation).
  bool leaf_walk = true;
};

}  // namespace strand::index

#endif  // STRAND_INDEX_BLINK_TREE_TUNING_H_
