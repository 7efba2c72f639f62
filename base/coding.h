#ifndef STRAND_BASE_CODING_H_
#define STRAND_BASE_CODING_H_

// Fixed-width integers in byte buffers, little endian (the on-disk and
// on-the-wire formats: log records, images, schemas, 2PC messages). One
// copy of what each format used to write by hand, shaped like LevelDB's
// util/coding.h.
//
//   char header[16];
//   EncodeFixed<uint64_t>(header, lsn);
//   uint64_t lsn = DecodeFixed<uint64_t>(header);
//   std::string out;  PutFixed<uint32_t>(&out, count);
//   std::string_view in = out;  uint32_t n;  GetFixed(&in, &n);

#include <bit>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace strand {

static_assert(std::endian::native == std::endian::little,
              "strand's formats are little endian: add byte swaps here");

template <typename T>
concept FixedWidth = std::is_integral_v<T> || std::is_floating_point_v<T>;

// Writes `value` at `dst` (sizeof(T) bytes, any alignment).
template <FixedWidth T>
inline void EncodeFixed(void* dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

// The T at `src` (any alignment).
template <FixedWidth T>
inline T DecodeFixed(const void* src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

// Appends `value` to `*dst`.
template <FixedWidth T>
inline void PutFixed(std::string* dst, T value) {
  char bytes[sizeof(T)];
  EncodeFixed(bytes, value);
  dst->append(bytes, sizeof(T));
}

// Takes a T off the front of `*in`; false (and `*in` unchanged) if it is
// shorter than one.
template <FixedWidth T>
inline bool GetFixed(std::string_view* in, T* value) {
  if (in->size() < sizeof(T)) return false;
  *value = DecodeFixed<T>(in->data());
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace strand

#endif  // STRAND_BASE_CODING_H_
