#ifndef STRAND_INDEX_BLINK_NODE_H_
#define STRAND_INDEX_BLINK_NODE_H_

// The layout of one B-link tree node in a GCL payload, and the edits a tree
// makes to it. W is the tree's internal key width.
//
//   0  u32 magic 'BLNK'     4 u16 level (0 = leaf)     6 u16 entry count
//   8  u16 key width W     10 u16 flags (kLowIsMin, kHighIsMax)
//   12 u16 last insert     14 u16 0
//   16 u64 right link (raw GlobalAddress, 0 = none)
//   24 u64 version         32 u64 read_ts      40 u64 write_ts
//   48 low fence key [W]   48+W high fence key [W]
//   48+2W entries: key [W] then u64 value, sorted by key (memcmp)
//
// A node holds the keys in [low, high) and links right to the node holding
// [high, ...); inner entries are (child's low fence, child's address).
// "Last insert" is a split hint; "version" grows with every change of the
// entries; read_ts and write_ts are TO's timestamps for a leaf's key range.
// A leaf's key range read at version v changes only by changes that move v.
//
// Views: BLinkNode (under a latch, with the edits) and UnlatchedBLinkNode
// (read optimistically: cc/optimistic_read.h; any field may be garbage
// until validated) share the searches (BasicBLinkNode).
// Design: docs/design/blink_tree.md, "Versions and timestamps".

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/base/attributes.h"
#include "base/coding.h"
#include "cc/gcl_manager.h"
#include "cc/optimistic_read.h"

namespace strand::index {

// How a comparison reads the second key's bytes: with plain loads (a key
// nobody changes meanwhile), or with relaxed atomic loads (a key in a node
// read optimistically: cc/optimistic_read.h).
struct PlainLoad {
  template <typename Word>
  static Word Load(const uint8_t* p) {
    Word w;
    std::memcpy(&w, p, sizeof(Word));
    return w;
  }
};
struct RelaxedLoad {
  template <typename Word>
  static Word Load(const uint8_t* p) {
    return cc::LoadRelaxed<Word>(p);
  }
};

// Three-way compare of the big-endian `Word`s at pa and pb (memcmp order),
// pb's read as `Load` says.
template <typename Word, typename Load>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int CompareWords(const char* pa,
                                                     const uint8_t* pb) {
  Word x;
  std::memcpy(&x, pa, sizeof(Word));
  const Word y = Load::template Load<Word>(pb);
  if (x == y) return 0;
  if constexpr (sizeof(Word) == 8) {
    return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  } else if constexpr (sizeof(Word) == 4) {
    return __builtin_bswap32(x) < __builtin_bswap32(y) ? -1 : 1;
  } else if constexpr (sizeof(Word) == 2) {
    return __builtin_bswap16(x) < __builtin_bswap16(y) ? -1 : 1;
  } else {
    return x < y ? -1 : 1;
  }
}

// Three-way compare of byte strings, ordered like std::string_view's
// compare (memcmp, then length), 8 bytes at a time: keys are short and
// fixed-width, and a memcmp call per probe showed in descents' profile.
// The tail goes in one 4-, 2- and 1-byte step each rather than byte by
// byte: 4-byte keys (item, warehouse) and 4-byte tails (12-byte keys) are
// common, and a byte loop's exit mispredicts on nearly every probe.
template <typename Load>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int CompareBytes(const char* pa, size_t na,
                                                     const uint8_t* pb,
                                                     size_t nb) {
  const size_t n = na < nb ? na : nb;
  size_t i = 0;
  int c = 0;
  for (; i + 8 <= n; i += 8) {
    if ((c = CompareWords<uint64_t, Load>(pa + i, pb + i)) != 0) return c;
  }
  if (i + 4 <= n) {
    if ((c = CompareWords<uint32_t, Load>(pa + i, pb + i)) != 0) return c;
    i += 4;
  }
  if (i + 2 <= n) {
    if ((c = CompareWords<uint16_t, Load>(pa + i, pb + i)) != 0) return c;
    i += 2;
  }
  if (i < n && (c = CompareWords<uint8_t, Load>(pa + i, pb + i)) != 0) {
    return c;
  }
  return na == nb ? 0 : (na < nb ? -1 : 1);
}

// The first 8 bytes of `key` as a big-endian number, zero-filled past a
// shorter key's end: for keys of one width, a smaller prefix means a
// smaller key (CompareKeys), and equal prefixes leave the rest to compare.
inline uint64_t KeyPrefix(std::string_view key) {
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  uint64_t v = 0;
  if (key.size() >= 8) return __builtin_bswap64(DecodeFixed<uint64_t>(p));
  // Shorter (4-byte keys are common): 4, 2 and 1 bytes, high to low, not
  // a byte loop.
  int shift = 64;
  size_t i = 0;
  if (key.size() - i >= 4) {
    shift -= 32;
    v |= uint64_t{__builtin_bswap32(DecodeFixed<uint32_t>(p + i))} << shift;
    i += 4;
  }
  if (key.size() - i >= 2) {
    shift -= 16;
    v |= uint64_t{__builtin_bswap16(DecodeFixed<uint16_t>(p + i))} << shift;
    i += 2;
  }
  if (key.size() - i >= 1) {
    shift -= 8;
    v |= uint64_t{p[i]} << shift;
  }
  return v;
}

// Three-way compare of keys (CompareBytes). Always inlined, like the
// searches' other steps: whether the compiler inlined it changed with
// unrelated edits elsewhere in a file, by 2% of a transaction.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int CompareKeys(std::string_view a,
                                                    std::string_view b) {
  return CompareBytes<PlainLoad>(
      a.data(), a.size(), reinterpret_cast<const uint8_t*>(b.data()), b.size());
}

// A key inside a node read optimistically (UnlatchedRead): where it is,
// not a copy. The searches compare it in place, a word at a time with
// relaxed atomic loads (cc::LoadRelaxed), which costs about what the
// memcpy loads of CompareKeys cost; a copy per probe did not.
struct UnlatchedKey {
  const uint8_t* p;
  uint32_t size;
};

// CompareKeys of a key and a key in an unlatched node, in the same steps.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int CompareKeys(std::string_view a,
                                                    UnlatchedKey b) {
  return CompareBytes<RelaxedLoad>(a.data(), a.size(), b.p, b.size);
}
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int CompareKeys(UnlatchedKey a,
                                                    std::string_view b) {
  return -CompareKeys(b, a);
}

// What the interpolating search reads of a key, for both kinds.
inline size_t KeySize(std::string_view k) { return k.size(); }
inline size_t KeySize(UnlatchedKey k) { return k.size; }
// The raw 8 bytes at `i` (i + 8 <= size).
inline uint64_t KeyWord(std::string_view k, size_t i) {
  uint64_t w;
  std::memcpy(&w, k.data() + i, 8);
  return w;
}
inline uint64_t KeyWord(UnlatchedKey k, size_t i) {
  return cc::LoadRelaxed<uint64_t>(k.p + i);
}
inline uint8_t KeyByte(std::string_view k, size_t i) {
  return static_cast<uint8_t>(k[i]);
}
inline uint8_t KeyByte(UnlatchedKey k, size_t i) {
  return cc::LoadRelaxed<uint8_t>(k.p + i);
}
// The 8 bytes of `k` from `offset` (<= size) as a big-endian number, zeros
// past its end: KeyPrefix of the rest of the key.
inline uint64_t KeyWindow(std::string_view k, size_t offset) {
  return KeyPrefix(k.substr(offset));
}
inline uint64_t KeyWindow(UnlatchedKey k, size_t offset) {
  size_t rest = k.size > offset ? k.size - offset : 0;
  if (rest >= 8) return __builtin_bswap64(KeyWord(k, offset));
  // Shorter (4-byte keys are common): 4, 2 and 1 bytes, high to low.
  uint64_t v = 0;
  int shift = 64;
  size_t i = offset;
  if (rest >= 4) {
    shift -= 32;
    v |= uint64_t{__builtin_bswap32(cc::LoadRelaxed<uint32_t>(k.p + i))}
         << shift;
    i += 4;
    rest -= 4;
  }
  if (rest >= 2) {
    shift -= 16;
    v |= uint64_t{__builtin_bswap16(cc::LoadRelaxed<uint16_t>(k.p + i))}
         << shift;
    i += 2;
    rest -= 2;
  }
  if (rest >= 1) {
    shift -= 8;
    v |= uint64_t{cc::LoadRelaxed<uint8_t>(k.p + i)} << shift;
  }
  return v;
}

// The layout's constants, shared by every view of a node.
struct BLinkNodeLayout {
  // "BLN2": the layout with version and timestamps (a pool image of the
  // older "BLNK" layout is refused as corrupt rather than misread).
  static constexpr uint32_t kMagic = 0x324e4c42;
  static constexpr uint16_t kLowIsMin = 1;
  static constexpr uint16_t kHighIsMax = 2;
  static constexpr uint32_t kVersionOffset = 24;
  static constexpr uint32_t kReadTsOffset = 32;
  static constexpr uint32_t kWriteTsOffset = 40;
  static constexpr uint32_t kHeaderBytes = 48;
  static constexpr uint32_t kCountOffset = 6;
  static constexpr uint32_t kLastInsertOffset = 12;

  // Entries a node of `payload_bytes` holds for keys of `width`.
  static uint32_t Capacity(uint32_t payload_bytes, uint32_t width) {
    const uint32_t fixed = kHeaderBytes + 2 * width;
    return payload_bytes <= fixed ? 0 : (payload_bytes - fixed) / (width + 8);
  }
};

// How a node view reads its payload: LatchedRead under a latch, where the
// bytes cannot change; UnlatchedRead for an optimistic read
// (cc/optimistic_read.h), where they may change at any moment.
struct LatchedRead {
  using Key = std::string_view;
  template <typename T>
  T Get(const uint8_t* p, uint32_t offset) const {
    T v;
    std::memcpy(&v, p + offset, sizeof(T));
    return v;
  }
  Key Bytes(const uint8_t* p, uint32_t offset, uint32_t width) const {
    return std::string_view(reinterpret_cast<const char*>(p + offset), width);
  }
  uint32_t Count(uint32_t stored) const { return stored; }
};

// Every field is read with relaxed atomic loads, keys where they are
// (UnlatchedKey). A torn node must not crash the search: the count is cut to
// the capacity, and no read leaves the payload whatever offset the search
// computes from garbage (it is clamped: the value read is garbage too, and
// the caller's validation rejects it). The searches below terminate for
// any comparison results (each loop narrows a range or doubles a step), so
// garbage costs time, never safety.
class UnlatchedRead {
 public:
  using Key = UnlatchedKey;
  // `capacity`: BLinkNodeLayout::Capacity(payload_bytes, width), which a
  // tree knows (a division per node read showed in the profile).
  UnlatchedRead(uint32_t payload_bytes, uint32_t capacity)
      : payload_bytes_(payload_bytes), capacity_(capacity) {}
  template <typename T>
  T Get(const uint8_t* p, uint32_t offset) const {
    return cc::LoadRelaxed<T>(p + Clamp(offset, sizeof(T)));
  }
  Key Bytes(const uint8_t* p, uint32_t offset, uint32_t width) const {
    return Key{p + Clamp(offset, width), width};
  }
  uint32_t Count(uint32_t stored) const { return std::min(stored, capacity_); }

 private:
  uint32_t Clamp(uint32_t offset, uint32_t bytes) const {
    // Written so that no offset, however large, wraps past the check.
    return offset <= payload_bytes_ - bytes ? offset : payload_bytes_ - bytes;
  }
  uint32_t payload_bytes_;
  uint32_t capacity_;
};

// A read-only view of a node: its fields and the searches, with the
// payload read as `Read` says.
template <typename Read>
class BasicBLinkNode : public BLinkNodeLayout {
 public:
  using Key = typename Read::Key;

  // `word_search`: BLinkTreeTuning::word_search (false: the ablation).
  BasicBLinkNode(const uint8_t* payload, uint32_t width, Read read = Read(),
                 bool word_search = true)
      : p_(payload), width_(width), word_search_(word_search), read_(read) {}
  bool valid() const { return Get<uint32_t>(0) == kMagic; }
  uint16_t level() const { return Get<uint16_t>(4); }
  bool is_leaf() const { return level() == 0; }
  uint32_t count() const { return read_.Count(Get<uint16_t>(kCountOffset)); }
  uint16_t flags() const { return Get<uint16_t>(10); }
  // 1 + the position the last insert wrote, 0 if unknown (layout above).
  uint32_t last_insert() const { return Get<uint16_t>(kLastInsertOffset); }
  bool low_is_min() const { return (flags() & kLowIsMin) != 0; }
  bool high_is_max() const { return (flags() & kHighIsMax) != 0; }
  uint64_t right() const { return Get<uint64_t>(16); }
  uint64_t version() const { return Get<uint64_t>(kVersionOffset); }
  uint64_t read_ts() const { return Get<uint64_t>(kReadTsOffset); }
  uint64_t write_ts() const { return Get<uint64_t>(kWriteTsOffset); }
  Key low() const { return Bytes(kHeaderBytes); }
  Key high() const { return Bytes(kHeaderBytes + width_); }
  Key key(uint32_t i) const { return Bytes(EntryOffset(i)); }
  uint64_t value(uint32_t i) const {
    return Get<uint64_t>(EntryOffset(i) + width_);
  }

  uint32_t EntryOffset(uint32_t i) const {
    return kHeaderBytes + 2 * width_ + i * (width_ + 8);
  }
  uint32_t entry_bytes() const { return width_ + 8; }
  // Bytes in use: header, fences and entries.
  uint32_t used_bytes() const { return EntryOffset(count()); }

  // key < high (the key belongs here or to the left).
  bool BelowHigh(std::string_view key) const {
    return high_is_max() || CompareKeys(key, high()) < 0;
  }
  // First entry whose key is >= `key` (count() if none). Keys in a node
  // are often dense (ids loaded in order), so the search guesses the
  // position by interpolating, then gallops from the guess: two or three
  // probes instead of a binary search's eight or so on a cold 4 KiB node,
  // each probe a dependent cache miss. Skewed keys cost at most about twice
  // a binary search. The guess interpolates between the fences when both
  // are finite: they sit in the header, which the reader has fetched
  // anyway, where the first and the last key cost up to two more misses
  // (the last key is 4 KiB away); else between the first and the last key.
  // A caller that knows every entry before `from` is < `key` (the next key
  // of an ascending batch) passes it: the search starts there, galloping
  // when few entries are left, else interpolating between key(from) and
  // the last key (the next of a batch of random keys, each far from the
  // previous in a node of a few hundred, as a TPC-C order's items: a
  // gallop took some ten probes to get there).
  uint32_t LowerBound(std::string_view key, uint32_t from = 0) const {
    return WithSearch(key, [&](const auto& search) {
      return SearchLowerBound(search, from);
    });
  }
  // LowerBound of a key expected right after the node's last insert (the
  // next key of an ascending run: a district's next order, an order's
  // next line), found with one or two comparisons when it is there, and
  // by LowerBound when not.
  uint32_t LowerBoundAfterLastInsert(std::string_view key) const {
    return WithSearch(key, [&](const auto& search) {
      const uint32_t n = count();
      const uint32_t p = last_insert();
      if (p > 0 && p <= n && search.Below(p - 1) &&
          (p == n || !search.Below(p))) {
        return p;
      }
      return SearchLowerBound(search, 0);
    });
  }
  // Where `key` sits among `n` entries (n > 0) spread evenly over
  // [low, high): the guess LowerBound starts from, in [0, n - 1]. Also for
  // a node not latched yet, from its parent's separators and an assumed
  // count (BLinkTree's narrow prefetch).
  // `low` and `high` are keys of one kind: string_views (or strings), or
  // an unlatched node's UnlatchedKeys.
  template <typename K>
  static uint32_t GuessBetween(std::string_view key, const K& low,
                               const K& high, uint32_t n) {
    return std::min(n - 1, Interpolate(key, low, high, n + 1));
  }
  // Leaves of a unique tree: the value stored under exactly `key`.
  std::optional<uint64_t> Find(std::string_view key) const {
    return WithSearch(key, [&](const auto& search) -> std::optional<uint64_t> {
      const uint32_t pos = SearchLowerBound(search, 0);
      if (pos == count() || !search.Equal(pos)) return std::nullopt;
      return value(pos);
    });
  }
  // Inner nodes: the child whose range holds `key` (last entry <= key;
  // entry 0 stands for the low fence, which is <= key once moved right).
  // `from` as for LowerBound: the child of a smaller key, when the caller
  // walks keys in order (entries before it are below `key`).
  uint32_t ChildFor(std::string_view key, uint32_t from = 0) const {
    return WithSearch(key, [&](const auto& search) {
      const uint32_t i = SearchLowerBound(search, from);
      if (i < count() && search.Equal(i)) return i;
      return i == 0 ? 0 : i - 1;
    });
  }
  // Inner nodes: the child whose range holds the keys just below `bound`
  // (last entry < bound).
  uint32_t ChildBefore(std::string_view bound) const {
    const uint32_t i = LowerBound(bound);
    return i == 0 ? 0 : i - 1;
  }

 private:
  // Below this many entries a binary search is as short.
  static constexpr uint32_t kInterpolateMin = 16;

  // What a search compares the node's keys with. Any key: CompareKeys on
  // the bytes (GenericSearch). A key of exactly the node's width of 4 or 8
  // bytes (TPC-C's item, warehouse and district keys; customer, order,
  // new-order and stock keys): one load and a byte swap per probe, and
  // the interpolation in integers (WordSearch), which took a node search
  // from some 350 instructions to a fraction.
  // Below(i): entry i < key. Equal(i): entry i == key. Guess(a, b, n):
  // where key sits among n entries spread evenly from the key at offset a
  // to the key at offset b (entries or fences), in [0, n - 1].
  class GenericSearch {
   public:
    GenericSearch(const BasicBLinkNode& node, std::string_view key)
        : node_(node), key_(key) {}
    bool Below(uint32_t i) const { return CompareKeys(node_.key(i), key_) < 0; }
    bool Equal(uint32_t i) const {
      return CompareKeys(node_.key(i), key_) == 0;
    }
    uint32_t Guess(uint32_t a, uint32_t b, uint32_t n) const {
      return Interpolate(key_, node_.Bytes(a), node_.Bytes(b), n);
    }

   private:
    const BasicBLinkNode& node_;
    const std::string_view key_;
  };
  template <typename Word>
  class WordSearch {
   public:
    WordSearch(const BasicBLinkNode& node, std::string_view key)
        : node_(node),
          key_(BigEndian(PlainLoad::Load<Word>(
              reinterpret_cast<const uint8_t*>(key.data())))) {}
    bool Below(uint32_t i) const { return At(node_.EntryOffset(i)) < key_; }
    bool Equal(uint32_t i) const { return At(node_.EntryOffset(i)) == key_; }
    uint32_t Guess(uint32_t a, uint32_t b, uint32_t n) const {
      return Spread(key_, At(a), At(b), n);
    }

   private:
    static Word BigEndian(Word w) {
      if constexpr (sizeof(Word) == 8) {
        return __builtin_bswap64(w);
      } else {
        return __builtin_bswap32(w);
      }
    }
    Word At(uint32_t offset) const {
      return BigEndian(node_.template Get<Word>(offset));
    }
    const BasicBLinkNode& node_;
    const Word key_;
  };
  // Calls fn(search) with the search that fits `key`.
  template <typename Fn>
  ABSL_ATTRIBUTE_ALWAYS_INLINE auto WithSearch(std::string_view key,
                                               Fn fn) const {
    if (word_search_ && key.size() == width_) {
      if (width_ == 8) return fn(WordSearch<uint64_t>(*this, key));
      if (width_ == 4) return fn(WordSearch<uint32_t>(*this, key));
    }
    return fn(GenericSearch(*this, key));
  }

  template <typename Search>
  uint32_t SearchLowerBound(const Search& search, uint32_t from) const {
    const uint32_t n = count();
    if (from > 0) {
      if (from >= n || n - from < kInterpolateMin) {
        return GallopRight(search, from, n);
      }
      if (!search.Below(from)) return from;
      if (search.Below(n - 1)) return n;
      return SearchFrom(
          search,
          from + search.Guess(EntryOffset(from), EntryOffset(n - 1), n - from),
          n);
    }
    if (n < kInterpolateMin) return BinaryLowerBound(search, 0, n);
    if (!low_is_min() && !high_is_max()) {
      return SearchFrom(
          search,
          std::min(n - 1,
                   search.Guess(kHeaderBytes, kHeaderBytes + width_, n + 1)),
          n);
    }
    if (!search.Below(0)) return 0;
    if (search.Below(n - 1)) return n;
    // first < key <= last: the answer is in [1, n - 1].
    return SearchFrom(search,
                      search.Guess(EntryOffset(0), EntryOffset(n - 1), n), n);
  }
  // First entry >= the key in [0, n), starting from `guess` (< n, any
  // value is correct): gallops from it toward the answer, then
  // binary-searches the last step.
  template <typename Search>
  uint32_t SearchFrom(const Search& search, uint32_t guess, uint32_t n) const {
    if (search.Below(guess)) return GallopRight(search, guess + 1, n);
    uint32_t hi = guess;  // key(hi) >= key: the answer is at most hi
    for (uint32_t step = 1; hi > 0; step *= 2) {
      const uint32_t probe = hi > step ? hi - step : 0;
      if (search.Below(probe)) return BinaryLowerBound(search, probe + 1, hi);
      hi = probe;
    }
    return 0;
  }
  // First entry >= the key in [lo, n), knowing the entries before lo are
  // below it: gallops right from lo, then searches the last step.
  template <typename Search>
  uint32_t GallopRight(const Search& search, uint32_t lo, uint32_t n) const {
    uint32_t hi = n;
    for (uint32_t step = 1;; step *= 2) {
      const uint32_t probe = lo + step - 1;
      if (probe >= n) break;
      if (!search.Below(probe)) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
    return BinaryLowerBound(search, lo, hi);
  }
  // First entry in [lo, hi) whose key is >= the key, hi if none.
  template <typename Search>
  uint32_t BinaryLowerBound(const Search& search, uint32_t lo,
                            uint32_t hi) const {
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (search.Below(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  // Where `key` would sit among n entries from `first` to `last` if keys
  // were spread evenly, in [0, n - 1] whatever `key` is: the keys are read
  // as big-endian numbers over the 8 bytes from where first and last start
  // to differ (all of a key up to 8 bytes wide).
  template <typename K>
  static uint32_t Interpolate(std::string_view key, const K& first,
                              const K& last, uint32_t n) {
    const size_t size = KeySize(first);
    const size_t offset =
        size <= 8 ? 0 : std::min(CommonPrefix(first, last), size - 8);
    return Spread(KeyWindow(key, offset), KeyWindow(first, offset),
                  KeyWindow(last, offset), n);
  }
  // Where `at` sits among n values spread evenly from `lo` to `hi`, in
  // [0, n - 1].
  static uint32_t Spread(uint64_t at, uint64_t lo, uint64_t hi, uint32_t n) {
    if (hi <= lo || at <= lo) return 0;
    if (at >= hi) return n - 1;
    // A double is exact enough for a guess and far cheaper than a 128-bit
    // division.
    const double share =
        static_cast<double>(at - lo) / static_cast<double>(hi - lo);
    return std::min(n - 1, static_cast<uint32_t>(share * (n - 1)));
  }
  // Bytes a and b (of equal width) share at the front.
  template <typename K>
  static size_t CommonPrefix(const K& a, const K& b) {
    const size_t size = KeySize(a);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      const uint64_t x = KeyWord(a, i);
      const uint64_t y = KeyWord(b, i);
      if (x != y) return i + __builtin_ctzll(x ^ y) / 8;
    }
    while (i < size && KeyByte(a, i) == KeyByte(b, i)) ++i;
    return i;
  }

  template <typename T>
  T Get(uint32_t offset) const {
    return read_.template Get<T>(p_, offset);
  }
  Key Bytes(uint32_t offset) const { return read_.Bytes(p_, offset, width_); }

  const uint8_t* p_;
  uint32_t width_;
  bool word_search_;
  Read read_;
};

// A node under a latch: the view, and the edits a tree makes through an
// exclusive guard.
class BLinkNode : public BasicBLinkNode<LatchedRead> {
 public:
  BLinkNode(const uint8_t* payload, uint32_t width, bool word_search = true)
      : BasicBLinkNode(payload, width, LatchedRead(), word_search) {}

  // Edits through an exclusive guard; each marks only what it writes.
  // Writes a whole empty node (header and fences) into `dst`.
  static void Init(uint8_t* dst, uint32_t width, uint16_t level,
                   std::string_view low, bool low_is_min, std::string_view high,
                   bool high_is_max, uint64_t right);
  // Opens a gap at `pos` and writes the entry (count() < capacity); the
  // node's last insert becomes pos + 1.
  static void InsertAt(cc::ExclusiveGuard& guard, uint32_t width, uint32_t pos,
                       std::string_view key, uint64_t value);
  // Closes the gap at `pos`; the last insert becomes unknown.
  static void RemoveAt(cc::ExclusiveGuard& guard, uint32_t width, uint32_t pos);
  // Sets the last insert of a node image being built (0: unknown).
  static void SetLastInsert(uint8_t* dst, uint16_t last_insert) {
    std::memcpy(dst + kLastInsertOffset, &last_insert, 2);
  }
  static void SetValue(cc::ExclusiveGuard& guard, uint32_t width, uint32_t pos,
                       uint64_t value);
  // Writes one of the u64 header words (kVersionOffset, kReadTsOffset,
  // kWriteTsOffset) of a latched node or of a node image.
  static void PutWord(cc::ExclusiveGuard& guard, uint32_t offset,
                      uint64_t value) {
    std::memcpy(guard.MutableRange(offset, 8), &value, 8);
  }
  static void PutWord(uint8_t* dst, uint32_t offset, uint64_t value) {
    std::memcpy(dst + offset, &value, 8);
  }
  static void BumpVersion(cc::ExclusiveGuard& guard) {
    PutWord(guard, kVersionOffset, BLinkNode(guard.data(), 0).version() + 1);
  }
};

// A node read optimistically (cc::OptimisticToken): every value may be
// garbage until the token validates.
class UnlatchedBLinkNode : public BasicBLinkNode<UnlatchedRead> {
 public:
  UnlatchedBLinkNode(const uint8_t* payload, uint32_t payload_bytes,
                     uint32_t width, uint32_t capacity, bool word_search = true)
      : BasicBLinkNode(payload, width, UnlatchedRead(payload_bytes, capacity),
                       word_search) {}
  UnlatchedBLinkNode(const uint8_t* payload, uint32_t payload_bytes,
                     uint32_t width)
      : UnlatchedBLinkNode(payload, payload_bytes, width,
                           Capacity(payload_bytes, width)) {}
};

inline void BLinkNode::Init(uint8_t* dst, uint32_t width, uint16_t level,
                            std::string_view low, bool low_is_min,
                            std::string_view high, bool high_is_max,
                            uint64_t right) {
  std::memset(dst, 0, kHeaderBytes + 2 * width);
  const uint32_t magic = kMagic;
  const uint16_t w = width;
  const uint16_t flags =
      (low_is_min ? kLowIsMin : 0) | (high_is_max ? kHighIsMax : 0);
  std::memcpy(dst, &magic, 4);
  std::memcpy(dst + 4, &level, 2);
  std::memcpy(dst + 8, &w, 2);
  std::memcpy(dst + 10, &flags, 2);
  std::memcpy(dst + 16, &right, 8);
  if (!low_is_min) std::memcpy(dst + kHeaderBytes, low.data(), width);
  if (!high_is_max) std::memcpy(dst + kHeaderBytes + width, high.data(), width);
}

inline void BLinkNode::InsertAt(cc::ExclusiveGuard& guard, uint32_t width,
                                uint32_t pos, std::string_view key,
                                uint64_t value) {
  const BLinkNode node(guard.data(), width);
  const uint16_t count = node.count();
  const uint32_t at = node.EntryOffset(pos);
  const uint32_t tail = node.EntryOffset(count) - at;
  uint8_t* p = guard.MutableRange(at, tail + node.entry_bytes());
  std::memmove(p + node.entry_bytes(), p, tail);
  std::memcpy(p, key.data(), width);
  std::memcpy(p + width, &value, 8);
  // The count and the last insert share one written range of the header.
  const uint16_t grown = count + 1;
  const uint16_t last = pos + 1;
  uint8_t* h =
      guard.MutableRange(kCountOffset, kLastInsertOffset + 2 - kCountOffset);
  std::memcpy(h, &grown, 2);
  std::memcpy(h + (kLastInsertOffset - kCountOffset), &last, 2);
  BumpVersion(guard);
}

inline void BLinkNode::RemoveAt(cc::ExclusiveGuard& guard, uint32_t width,
                                uint32_t pos) {
  const BLinkNode node(guard.data(), width);
  const uint16_t count = node.count();
  const uint32_t at = node.EntryOffset(pos);
  const uint32_t tail = node.EntryOffset(count) - at - node.entry_bytes();
  if (tail > 0) {
    uint8_t* p = guard.MutableRange(at, tail);
    std::memmove(p, p + node.entry_bytes(), tail);
  }
  const uint16_t shrunk = count - 1;
  const uint16_t unknown = 0;
  uint8_t* h =
      guard.MutableRange(kCountOffset, kLastInsertOffset + 2 - kCountOffset);
  std::memcpy(h, &shrunk, 2);
  std::memcpy(h + (kLastInsertOffset - kCountOffset), &unknown, 2);
  BumpVersion(guard);
}

inline void BLinkNode::SetValue(cc::ExclusiveGuard& guard, uint32_t width,
                                uint32_t pos, uint64_t value) {
  const BLinkNode node(guard.data(), width);
  std::memcpy(guard.MutableRange(node.EntryOffset(pos) + width, 8), &value, 8);
  BumpVersion(guard);
}

}  // namespace strand::index

#endif  // STRAND_INDEX_BLINK_NODE_H_
