#ifndef STRAND_INDEX_KEY_CODEC_H_
#define STRAND_INDEX_KEY_CODEC_H_

// Order-preserving key encodings: the B-link tree compares keys with
// memcmp, so a composite key such as (warehouse, district, order id) is
// encoded once, field after field, into one fixed-width byte string whose
// byte order is the tuple order.
//
//   std::string key = KeyBuilder().Int32(w).Int32(d).Int64(o).Build(16);
//
// Integers are big-endian with the sign bit flipped (so -1 < 0 < 1);
// strings are copied into a fixed field and padded with NUL bytes, so they
// order like strcmp as long as they contain no NUL themselves.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace strand::index {

class KeyBuilder {
 public:
  KeyBuilder& Uint64(uint64_t v) { return BigEndian(v, 8); }
  KeyBuilder& Uint32(uint32_t v) { return BigEndian(v, 4); }
  KeyBuilder& Int64(int64_t v) {
    return BigEndian(static_cast<uint64_t>(v) ^ (uint64_t{1} << 63), 8);
  }
  KeyBuilder& Int32(int32_t v) {
    return BigEndian(static_cast<uint32_t>(v) ^ (uint32_t{1} << 31), 4);
  }
  // `s` in a field of `width` bytes: truncated or NUL-padded.
  KeyBuilder& String(std::string_view s, size_t width) {
    bytes_.append(s.substr(0, width));
    bytes_.append(width - std::min(s.size(), width), '\0');
    return *this;
  }

  // The key padded with NUL bytes to `width`. Fields wider than `width`
  // are kept whole, never cut: the key then has the wrong width, and the
  // index it is given to refuses it (InvalidArgument naming the index and
  // the key) instead of finding some other key's row.
  std::string Build(size_t width) const {
    std::string key(std::max(width, bytes_.size()), '\0');
    bytes_.copy(key.data(), bytes_.size());
    return key;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  // One append of the field's bytes (a push_back per byte showed in the
  // profile of transactions that build a dozen keys each).
  KeyBuilder& BigEndian(uint64_t v, int bytes) {
    const uint64_t big = __builtin_bswap64(v << (8 * (8 - bytes)));
    char field[8];
    std::memcpy(field, &big, 8);
    bytes_.append(field, bytes);
    return *this;
  }
  std::string bytes_;
};

// Writes `v` big-endian into the 8 bytes at `p` (KeyBuilder's Uint64
// field, in place).
inline void EncodeUint64(char* p, uint64_t v) {
  const uint64_t big = __builtin_bswap64(v);
  std::memcpy(p, &big, 8);
}

// Decoders for fields at `p` (as KeyBuilder wrote them).
inline uint64_t DecodeUint64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline uint32_t DecodeUint32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline int64_t DecodeInt64(const char* p) {
  return static_cast<int64_t>(DecodeUint64(p) ^ (uint64_t{1} << 63));
}
inline int32_t DecodeInt32(const char* p) {
  return static_cast<int32_t>(DecodeUint32(p) ^ (uint32_t{1} << 31));
}

}  // namespace strand::index

#endif  // STRAND_INDEX_KEY_CODEC_H_
