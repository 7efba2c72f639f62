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
// decimal is an int64 count of 10^-scale units, so money stays exact.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strand::storage {

enum class ColumnType : uint8_t {
  kInt32 = 1,
  kInt64 = 2,
  kDouble = 3,
  kDecimal = 4,  // int64 scaled by 10^scale
  kChar = 5,     // fixed array of `length` bytes, NUL-padded
};

const char* ColumnTypeName(ColumnType type);

struct ColumnSpec {
  std::string name;
  ColumnType type = ColumnType::kInt64;
  uint16_t length = 0;  // kChar only: bytes of the array
  uint8_t scale = 0;    // kDecimal only: digits after the point
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

  // InvalidArgument on an empty schema, a duplicate or over-long name, a
  // kChar without a length, or a scale above 18.
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
class TupleView {
 public:
  TupleView(const Schema& schema, const uint8_t* bytes)
      : schema_(&schema), bytes_(bytes) {}

  int64_t GetInt(size_t column) const;  // kInt32 or kInt64
  double GetDouble(size_t column) const;
  int64_t GetDecimal(size_t column) const;  // in 10^-scale units
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

  void SetInt(size_t column, int64_t value);  // CHECKs the range of kInt32
  void SetDouble(size_t column, double value);
  void SetDecimal(size_t column, int64_t units);
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
