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
// Values are in native byte order. Integers come in 1, 2, 4 and 8 bytes
// (kInt8 .. kInt64), decimals in 8, 4 or 2 (ColumnSpec); reads sign-extend
// to int64, so callers never see the stored width. Columns are named by
// position (fast) or by name (a search of the columns).
// Misuse never aborts: a column out of range or unknown, a wrong type, a
// value too wide for its column or a string longer than its array changes
// nothing, reads as 0 (or ""), and is kept as the first error of the buffer
// (TupleBuffer::status()) or of the view's owner. Txn reports it as
// InvalidArgument naming table and column: at Insert, Update or Upsert, or
// at commit for a row changed through Modify's buffer or read via a view.
// Design: docs/design/storage.md, "Column encoding".

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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

// Sets of column types as bit masks (Schema::TypedColumn).
constexpr uint32_t ColumnTypeBit(ColumnType type) {
  return uint32_t{1} << static_cast<int>(type);
}
inline constexpr uint32_t kIntColumnTypes =
    ColumnTypeBit(ColumnType::kInt8) | ColumnTypeBit(ColumnType::kInt16) |
    ColumnTypeBit(ColumnType::kInt32) | ColumnTypeBit(ColumnType::kInt64);

// A column to create. A decimal is a signed integer count of 10^-scale
// units; it takes 8 bytes (int64) unless its spec asks for 4 (int32) or 2
// (int16), for values the application knows are bounded:
//   {"i_price", ColumnType::kDecimal, 4, 2}  // int32 cents, |v| < 2^31
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
  // Column `i` if there is one and its type's bit (TypeBit) is in
  // `types`; else null. What the tuple accessors check first.
  const Column* TypedColumn(size_t i, uint32_t types) const {
    if (i >= columns_.size()) return nullptr;
    const Column& c = columns_[i];
    return (TypeBit(c.type) & types) != 0 ? &c : nullptr;
  }
  static constexpr uint32_t TypeBit(ColumnType type) {
    return ColumnTypeBit(type);
  }
  static constexpr uint32_t kIntTypes = kIntColumnTypes;
  // The index of column `name`, or NotFound.
  absl::StatusOr<size_t> ColumnIndex(std::string_view name) const;

  // Bytes of a whole tuple, header included.
  uint32_t tuple_bytes() const { return tuple_bytes_; }
  // Bytes of the columns alone (what the user stores).
  uint32_t data_bytes() const;

  friend bool operator==(const Schema& a, const Schema& b);
  // A hash of the columns (names, types, widths): schemas that differ
  // have different fingerprints but for a 2^-64 chance, so comparing them
  // is a cheap test of "built for this table" on a hot path.
  uint64_t fingerprint() const { return fingerprint_; }

  // An empty schema (no columns), only a placeholder to assign to.
  Schema() = default;

 private:
  std::vector<Column> columns_;
  uint32_t tuple_bytes_ = 0;
  uint64_t fingerprint_ = 0;
};

// Typed access to one tuple's bytes (tuple_bytes() of them). Reading views
// const bytes; writing needs a mutable buffer, e.g. a TupleBuffer.
class TupleView {
 public:
  // `errors`, if given, keeps the first misuse of an accessor (see the
  // top); without it a misuse is only logged.
  TupleView(const Schema& schema, const uint8_t* bytes,
            absl::Status* errors = nullptr)
      : schema_(&schema), bytes_(bytes), errors_(errors) {}

  int64_t GetInt(size_t column) const;  // kInt8, kInt16, kInt32 or kInt64
  double GetDouble(size_t column) const;
  int64_t GetDecimal(size_t column) const;  // in 10^-scale units
  // The bytes up to the first NUL (or the whole array).
  std::string_view GetChars(size_t column) const;
  // The same, by column name.
  int64_t GetInt(std::string_view column) const;
  double GetDouble(std::string_view column) const;
  int64_t GetDecimal(std::string_view column) const;
  std::string_view GetChars(std::string_view column) const;

  const uint8_t* bytes() const { return bytes_; }
  const Schema& schema() const { return *schema_; }

 private:
  // Column `column` if its type's bit is in `types`, else records why
  // not (see the top) and returns null.
  const Column* Find(size_t column, uint32_t types, const char* accessor) const;
  const Column* Find(std::string_view column, uint32_t types,
                     const char* accessor) const;

  const Schema* schema_;
  const uint8_t* bytes_;
  absl::Status* errors_;
};

// An owned, zeroed tuple a caller fills before an insert or an update.
class TupleBuffer {
 public:
  explicit TupleBuffer(const Schema& schema)
      : schema_(&schema), bytes_(schema.tuple_bytes(), 0) {}
  TupleBuffer(const Schema& schema, absl::Span<const uint8_t> bytes)
      : schema_(&schema), bytes_(bytes.begin(), bytes.end()) {}
  // Becomes a copy of `bytes` under `schema`, reusing the capacity it has
  // (a buffer recycled from one transaction to the next); no error.
  void Assign(const Schema& schema, absl::Span<const uint8_t> bytes) {
    schema_ = &schema;
    bytes_.assign(bytes.begin(), bytes.end());
    status_ = absl::OkStatus();
  }

  // A value that does not fit the column's width, or a string longer than
  // its array, leaves the column as it was and is kept in status().
  void SetInt(size_t column, int64_t value);
  void SetDouble(size_t column, double value);
  void SetDecimal(size_t column, int64_t units);
  // Copies `value` and NUL-pads the rest of the array.
  void SetChars(size_t column, std::string_view value);
  // The same, by column name.
  void SetInt(std::string_view column, int64_t value);
  void SetDouble(std::string_view column, double value);
  void SetDecimal(std::string_view column, int64_t units);
  void SetChars(std::string_view column, std::string_view value);

  // The first misuse of this buffer or of a view of it (see the top), or
  // OK. InvalidArgument naming the column.
  const absl::Status& status() const { return status_; }

  // A view that reports misuse into status().
  TupleView view() const {
    return TupleView(*schema_, bytes_.data(), &status_);
  }
  const Schema& schema() const { return *schema_; }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  // As TupleView::Find, into status_.
  const Column* Find(size_t column, uint32_t types, const char* accessor);
  const Column* Find(std::string_view column, uint32_t types,
                     const char* accessor);
  void SetIntColumn(const Column* c, int64_t value);
  void SetCharsColumn(const Column* c, std::string_view value);
  void SetDoubleColumn(const Column* c, double value);

  const Schema* schema_;
  std::vector<uint8_t> bytes_;
  // Written through const views too (a misread is the buffer's error).
  mutable absl::Status status_;
};

namespace schema_internal {

// The signed integer of `bytes` (1, 2, 4 or 8) bytes at p, sign-extended.
inline int64_t LoadSigned(const uint8_t* p, uint16_t bytes) {
  switch (bytes) {
    case 1:
      return DecodeFixed<int8_t>(p);
    case 2:
      return DecodeFixed<int16_t>(p);
    case 4:
      return DecodeFixed<int32_t>(p);
    default:
      return DecodeFixed<int64_t>(p);
  }
}

// Whether `value` fits a signed integer of `bytes` bytes.
inline bool FitsSigned(int64_t value, uint16_t bytes) {
  if (bytes >= 8) return true;
  const int64_t bound = int64_t{1} << (8 * bytes - 1);
  return value >= -bound && value < bound;
}

// Stores `value` (FitsSigned) in the `bytes` bytes at p.
inline void StoreSigned(uint8_t* p, int64_t value, uint16_t bytes) {
  switch (bytes) {
    case 1:
      return EncodeFixed(p, static_cast<int8_t>(value));
    case 2:
      return EncodeFixed(p, static_cast<int16_t>(value));
    case 4:
      return EncodeFixed(p, static_cast<int32_t>(value));
    default:
      return EncodeFixed(p, value);
  }
}

}  // namespace schema_internal

// The positional accessors' common case inline (TPC-C's rows are built
// and read column by column); misuse goes out of line.
inline int64_t TupleView::GetInt(size_t column) const {
  const Column* c = schema_->TypedColumn(column, Schema::kIntTypes);
  if (c == nullptr) c = Find(column, Schema::kIntTypes, "GetInt");
  return c == nullptr
             ? 0
             : schema_internal::LoadSigned(bytes_ + c->offset, c->length);
}

inline int64_t TupleView::GetDecimal(size_t column) const {
  constexpr uint32_t kDecimal = Schema::TypeBit(ColumnType::kDecimal);
  const Column* c = schema_->TypedColumn(column, kDecimal);
  if (c == nullptr) c = Find(column, kDecimal, "GetDecimal");
  return c == nullptr
             ? 0
             : schema_internal::LoadSigned(bytes_ + c->offset, c->length);
}

inline std::string_view TupleView::GetChars(size_t column) const {
  constexpr uint32_t kChar = ColumnTypeBit(ColumnType::kChar);
  const Column* c = schema_->TypedColumn(column, kChar);
  if (c == nullptr) c = Find(column, kChar, "GetChars");
  if (c == nullptr) return {};
  const char* p = reinterpret_cast<const char*>(bytes_ + c->offset);
  return std::string_view(p, strnlen(p, c->length));
}

inline void TupleBuffer::SetChars(size_t column, std::string_view value) {
  constexpr uint32_t kChar = ColumnTypeBit(ColumnType::kChar);
  const Column* c = schema_->TypedColumn(column, kChar);
  if (c != nullptr && value.size() <= c->length) {
    uint8_t* p = bytes_.data() + c->offset;
    std::memcpy(p, value.data(), value.size());
    std::memset(p + value.size(), 0, c->length - value.size());
    return;
  }
  SetCharsColumn(c != nullptr ? c : Find(column, kChar, "SetChars"), value);
}

inline void TupleBuffer::SetInt(size_t column, int64_t value) {
  const Column* c = schema_->TypedColumn(column, Schema::kIntTypes);
  if (c != nullptr && schema_internal::FitsSigned(value, c->length)) {
    schema_internal::StoreSigned(bytes_.data() + c->offset, value, c->length);
    return;
  }
  SetIntColumn(c != nullptr ? c : Find(column, Schema::kIntTypes, "SetInt"),
               value);
}

inline void TupleBuffer::SetDecimal(size_t column, int64_t units) {
  constexpr uint32_t kDecimal = Schema::TypeBit(ColumnType::kDecimal);
  const Column* c = schema_->TypedColumn(column, kDecimal);
  if (c != nullptr && schema_internal::FitsSigned(units, c->length)) {
    schema_internal::StoreSigned(bytes_.data() + c->offset, units, c->length);
    return;
  }
  SetIntColumn(c != nullptr ? c : Find(column, kDecimal, "SetDecimal"), units);
}

}  // namespace strand::storage

#endif  // STRAND_STORAGE_SCHEMA_H_
