#ifndef STRAND_STORAGE_SCHEMA_H_
#define STRAND_STORAGE_SCHEMA_H_

// The shape of a table's tuples: fixed-size, named, typed columns laid out
// back to back after a TupleHeader (tuple_header.h). A schema is immutable
// once built; Create() checks it, so every accessor may trust it.
//
//   auto schema = Schema::Create({{"w_id", ColumnType::kInt32},
//                                 {"w_name", ColumnType::kChar, 10},
//                                 {"w_ytd", ColumnType::kDecimal, 0, 2}});
//   TupleBuffer t(*schema);
//   t.SetInt(0, 7); t.SetChars(1, "north"); t.SetDecimal(2, 30000000);
//
// Values are stored in native byte order (the tuple is never compared with
// memcmp; index keys are encoded separately by index/key_codec.h). A
// decimal is a signed integer count of 10^-scale units, so money stays
// exact; it takes 8 bytes (int64) unless its spec asks for 4 (int32) or 2
// (int16), for values the application knows are bounded:
//
//   {"i_price", ColumnType::kDecimal, 4, 2}  // int32 cents, |v| < 2^31
//
// Integers come in 1, 2, 4 and 8 bytes (kInt8 .. kInt64). Narrow columns
// exist to save memory: every byte of a column is paid once per row on the
// memory nodes. Writes CHECK that the value fits (a bug, not an input
// error: the application chose the width for the values it stores); reads
// sign-extend to int64, so callers never see the stored width.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/coding.h"

namespace strand::storage {

// The values are the serialized codes (catalog): never renumber.
enum class ColumnType : uint8_t {
  kInt32 = 1,
  kInt64 = 2,
  kDouble = 3,
  kDecimal = 4,  // int64, int32 or int16 (length 8, 4, 2) scaled by 10^scale
  kChar = 5,     // fixed array of `length` bytes, NUL-padded
  kInt8 = 6,
  kInt16 = 7,
};

const char* ColumnTypeName(ColumnType type);

struct ColumnSpec {
  std::string name;
  ColumnType type = ColumnType::kInt64;
  // kChar: bytes of the array (required). kDecimal: 8 (or 0), 4 or 2 bytes.
  // Other types: 0, or their fixed width.
  uint16_t length = 0;
  uint8_t scale = 0;  // kDecimal only: digits after the point
};

struct Column {
  std::string name;
  ColumnType type;
  uint16_t length;  // bytes the column takes in the tuple
  uint8_t scale;
  uint32_t offset;  // from the start of the tuple (header included)
};

class Schema {
 public:
  static constexpr size_t kMaxNameBytes = 31;
  static constexpr size_t kMaxColumns = 256;
  static constexpr uint16_t kMaxCharLength = 4096;

  // InvalidArgument on an empty schema, a duplicate or over-long name, an
  // unknown type, a kChar without a length, a length the type does not
  // have, or a scale above what the decimal's width holds (18 digits for 8
  // bytes, 9 for 4, 4 for 2).
  static absl::StatusOr<Schema> Create(std::vector<ColumnSpec> columns);

  // Serialized form (what the catalog stores) and back.
  std::string Serialize() const;
  static absl::StatusOr<Schema> Deserialize(std::string_view bytes);

  size_t column_count() const { return columns_.size(); }
  const Column& column(size_t i) const { return columns_[i]; }
  // The index of column `name`, or NotFound.
  absl::StatusOr<size_t> ColumnIndex(std::string_view name) const;

  // Bytes of a whole tuple, header included.
  uint32_t tuple_bytes() const { return tuple_bytes_; }
  // Bytes of the columns alone (what the user stores).
  uint32_t data_bytes() const;

  friend bool operator==(const Schema& a, const Schema& b);

  // An empty schema (no columns), only a placeholder to assign to.
  Schema() = default;

 private:
  std::vector<Column> columns_;
  uint32_t tuple_bytes_ = 0;
};

// Typed access to one tuple's bytes (tuple_bytes() of them). Reading views
// const bytes; writing needs a mutable buffer, e.g. a TupleBuffer.
namespace schema_internal {

// Whether `type` is one of the integer types (kInt8 .. kInt64).
inline bool IsInt(ColumnType type) {
  constexpr uint32_t kInts = 1u << static_cast<int>(ColumnType::kInt8) |
                             1u << static_cast<int>(ColumnType::kInt16) |
                             1u << static_cast<int>(ColumnType::kInt32) |
                             1u << static_cast<int>(ColumnType::kInt64);
  return ((kInts >> static_cast<int>(type)) & 1) != 0;
}
// The column's c.length bytes at p, sign-extended.
inline int64_t LoadSigned(const uint8_t* p, const Column& c) {
  switch (c.length) {
    case 1:
      return static_cast<int8_t>(*p);
    case 2:
      return DecodeFixed<int16_t>(p);
    case 4:
      return DecodeFixed<int32_t>(p);
    default:
      return DecodeFixed<int64_t>(p);
  }
}
// The broken invariants of the accessors below (a column of another type,
// a value its width cannot hold): CHECK-fail, naming the column.
[[noreturn]] void WrongType(const Column& c, const char* wanted);
[[noreturn]] void DoesNotFit(const Column& c, int64_t value);
// Stores `value` in the column's c.length bytes at p; CHECKs that it fits.
inline void StoreSigned(uint8_t* p, int64_t value, const Column& c) {
  switch (c.length) {
    case 1: {
      const auto v = static_cast<int8_t>(value);
      if (ABSL_PREDICT_FALSE(v != value)) DoesNotFit(c, value);
      EncodeFixed(p, v);
      return;
    }
    case 2: {
      const auto v = static_cast<int16_t>(value);
      if (ABSL_PREDICT_FALSE(v != value)) DoesNotFit(c, value);
      EncodeFixed(p, v);
      return;
    }
    case 4: {
      const auto v = static_cast<int32_t>(value);
      if (ABSL_PREDICT_FALSE(v != value)) DoesNotFit(c, value);
      EncodeFixed(p, v);
      return;
    }
    default:
      EncodeFixed(p, value);
  }
}

}  // namespace schema_internal

// Reads of a tuple's columns. The integer and decimal accessors are inline
// (with their type checks): a TPC-C New-Order makes some 150 of them.
class TupleView {
 public:
  TupleView(const Schema& schema, const uint8_t* bytes)
      : schema_(&schema), bytes_(bytes) {}

  // kInt8, kInt16, kInt32 or kInt64.
  int64_t GetInt(size_t column) const {
    const Column& c = schema_->column(column);
    if (ABSL_PREDICT_FALSE(!schema_internal::IsInt(c.type))) {
      schema_internal::WrongType(c, "an integer");
    }
    return schema_internal::LoadSigned(bytes_ + c.offset, c);
  }
  double GetDouble(size_t column) const;
  // In 10^-scale units.
  int64_t GetDecimal(size_t column) const {
    const Column& c = schema_->column(column);
    if (ABSL_PREDICT_FALSE(c.type != ColumnType::kDecimal)) {
      schema_internal::WrongType(c, "a decimal");
    }
    return schema_internal::LoadSigned(bytes_ + c.offset, c);
  }
  // The bytes up to the first NUL (or the whole array).
  std::string_view GetChars(size_t column) const;

  const uint8_t* bytes() const { return bytes_; }
  const Schema& schema() const { return *schema_; }

 private:
  const Schema* schema_;
  const uint8_t* bytes_;
};

// An owned, zeroed tuple a caller fills before an insert or an update.
class TupleBuffer {
 public:
  explicit TupleBuffer(const Schema& schema)
      : schema_(&schema), bytes_(schema.tuple_bytes(), 0) {}
  TupleBuffer(const Schema& schema, absl::Span<const uint8_t> bytes)
      : schema_(&schema), bytes_(bytes.begin(), bytes.end()) {}
  // Becomes a copy of `bytes` under `schema`, reusing the capacity it has
  // (a buffer recycled from one transaction to the next).
  void Assign(const Schema& schema, absl::Span<const uint8_t> bytes) {
    schema_ = &schema;
    bytes_.assign(bytes.begin(), bytes.end());
  }

  // Both CHECK that the value fits the column's width.
  void SetInt(size_t column, int64_t value) {
    const Column& c = schema_->column(column);
    if (ABSL_PREDICT_FALSE(!schema_internal::IsInt(c.type))) {
      schema_internal::WrongType(c, "an integer");
    }
    schema_internal::StoreSigned(bytes_.data() + c.offset, value, c);
  }
  void SetDouble(size_t column, double value);
  void SetDecimal(size_t column, int64_t units) {
    const Column& c = schema_->column(column);
    if (ABSL_PREDICT_FALSE(c.type != ColumnType::kDecimal)) {
      schema_internal::WrongType(c, "a decimal");
    }
    schema_internal::StoreSigned(bytes_.data() + c.offset, units, c);
  }
  // Copies up to length bytes and NUL-pads; longer values are truncated.
  void SetChars(size_t column, std::string_view value);

  TupleView view() const { return TupleView(*schema_, bytes_.data()); }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  const Schema* schema_;
  std::vector<uint8_t> bytes_;
};

}  // namespace strand::storage

#endif  // STRAND_STORAGE_SCHEMA_H_
