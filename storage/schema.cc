#include "storage/schema.h"

#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_format.h"
#include "base/coding.h"
#include "glog/logging.h"
#include "storage/tuple_header.h"

namespace strand::storage {
namespace {

// Serialized column: name (32 bytes, NUL-padded), type, scale, length.
constexpr size_t kColumnNameField = Schema::kMaxNameBytes + 1;
constexpr size_t kColumnRecord = kColumnNameField + 4;
constexpr uint32_t kSchemaMagic = 0x53434831;  // "SCH1"

// The width of a fixed-size type (kDecimal: its default), 0 for kChar and
// for a code no type has.
uint16_t FixedLength(ColumnType type) {
  switch (type) {
    case ColumnType::kInt8:
      return 1;
    case ColumnType::kInt16:
      return 2;
    case ColumnType::kInt32:
      return 4;
    case ColumnType::kInt64:
    case ColumnType::kDouble:
    case ColumnType::kDecimal:
      return 8;
    case ColumnType::kChar:
      return 0;
  }
  return 0;
}

// Most digits after the point a decimal of `length` bytes may have: its
// scale unit must leave the integer room for values of at least 1.
int MaxDecimalScale(uint16_t length) {
  switch (length) {
    case 2:
      return 4;  // 10^4 < 2^15
    case 4:
      return 9;  // 10^9 < 2^31
    default:
      return 18;  // 10^18 < 2^63
  }
}

using schema_internal::FitsSigned;
using schema_internal::LoadSigned;
using schema_internal::StoreSigned;

constexpr uint32_t Bit(ColumnType type) { return Schema::TypeBit(type); }
constexpr uint32_t kIntTypes = Schema::kIntTypes;
constexpr uint32_t kDoubleType = Bit(ColumnType::kDouble);
constexpr uint32_t kDecimalType = Bit(ColumnType::kDecimal);
constexpr uint32_t kCharType = Bit(ColumnType::kChar);

// Keeps the first misuse in *errors (or logs it if there is nowhere to keep
// it): accessors never abort the process.
void Record(absl::Status* errors, absl::Status error) {
  if (errors == nullptr) {
    LOG_FIRST_N(ERROR, 10) << "misused tuple accessor: " << error;
    return;
  }
  if (errors->ok()) *errors = std::move(error);
}

// `schema`'s column `column` if its type is in `types`; else records why
// not (naming the column) and returns null.
const Column* FindColumn(const Schema& schema, size_t column, uint32_t types,
                         const char* accessor, absl::Status* errors) {
  if (column >= schema.column_count()) {
    Record(errors, absl::InvalidArgumentError(absl::StrFormat(
                       "%s(%d): no such column, the row has %d", accessor,
                       column, schema.column_count())));
    return nullptr;
  }
  const Column& c = schema.column(column);
  if ((Bit(c.type) & types) == 0) {
    Record(errors, absl::InvalidArgumentError(
                       absl::StrFormat("%s on column %s, which is %s", accessor,
                                       c.name, ColumnTypeName(c.type))));
    return nullptr;
  }
  return &c;
}

const Column* FindColumn(const Schema& schema, std::string_view column,
                         uint32_t types, const char* accessor,
                         absl::Status* errors) {
  absl::StatusOr<size_t> i = schema.ColumnIndex(column);
  if (!i.ok()) {
    Record(errors, absl::InvalidArgumentError(absl::StrFormat(
                       "%s(\"%s\"): the row has no column of that name",
                       accessor, column)));
    return nullptr;
  }
  return FindColumn(schema, *i, types, accessor, errors);
}

}  // namespace

const char* ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kInt8:
      return "int8";
    case ColumnType::kInt16:
      return "int16";
    case ColumnType::kInt32:
      return "int32";
    case ColumnType::kInt64:
      return "int64";
    case ColumnType::kDouble:
      return "double";
    case ColumnType::kDecimal:
      return "decimal";
    case ColumnType::kChar:
      return "char";
  }
  return "?";
}

absl::StatusOr<Schema> Schema::Create(std::vector<ColumnSpec> specs) {
  if (specs.empty() || specs.size() > kMaxColumns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a schema needs 1 to %d columns, got %d", kMaxColumns, specs.size()));
  }
  Schema schema;
  absl::flat_hash_set<std::string> names;
  uint32_t offset = kTupleHeaderBytes;
  for (ColumnSpec& spec : specs) {
    if (spec.name.empty() || spec.name.size() > kMaxNameBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("column name '%s' must have 1 to %d bytes", spec.name,
                          kMaxNameBytes));
    }
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("duplicate column name '%s'", spec.name));
    }
    uint16_t length = FixedLength(spec.type);
    if (spec.type == ColumnType::kChar) {
      if (spec.length == 0 || spec.length > kMaxCharLength) {
        return absl::InvalidArgumentError(
            absl::StrFormat("char column '%s' needs a length from 1 to %d",
                            spec.name, kMaxCharLength));
      }
      length = spec.length;
    } else if (length == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("column '%s' has an unknown type %d", spec.name,
                          static_cast<int>(spec.type)));
    } else if (spec.type == ColumnType::kDecimal) {
      if (spec.length != 0 && spec.length != 2 && spec.length != 4 &&
          spec.length != 8) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "decimal column '%s' has %d bytes; it takes 2, 4 or 8", spec.name,
            spec.length));
      }
      if (spec.length != 0) length = spec.length;
      if (spec.scale > MaxDecimalScale(length)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "decimal column '%s': scale %d exceeds %d for %d bytes", spec.name,
            spec.scale, MaxDecimalScale(length), length));
      }
    } else if (spec.length != 0 && spec.length != length) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s column '%s' is %d bytes, not %d", ColumnTypeName(spec.type),
          spec.name, length, spec.length));
    }
    schema.columns_.push_back(Column{
        std::move(spec.name), spec.type, length,
        spec.type == ColumnType::kDecimal ? spec.scale : uint8_t{0}, offset});
    offset += length;
  }
  schema.tuple_bytes_ = offset;
  schema.fingerprint_ = absl::HashOf(schema.Serialize());
  return schema;
}

uint32_t Schema::data_bytes() const { return tuple_bytes_ - kTupleHeaderBytes; }

absl::StatusOr<size_t> Schema::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == name) return i;
  }
  return absl::NotFoundError(absl::StrFormat("no column named '%s'", name));
}

std::string Schema::Serialize() const {
  std::string out(8 + columns_.size() * kColumnRecord, '\0');
  const uint32_t count = columns_.size();
  EncodeFixed<uint32_t>(out.data(), kSchemaMagic);
  EncodeFixed<uint32_t>(out.data() + 4, count);
  char* p = out.data() + 8;
  for (const Column& c : columns_) {
    std::memcpy(p, c.name.data(), c.name.size());
    p[kColumnNameField] = static_cast<char>(c.type);
    p[kColumnNameField + 1] = static_cast<char>(c.scale);
    EncodeFixed<uint16_t>(p + kColumnNameField + 2, c.length);
    p += kColumnRecord;
  }
  return out;
}

absl::StatusOr<Schema> Schema::Deserialize(std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 || DecodeFixed<uint32_t>(p) != kSchemaMagic) {
    return absl::DataLossError("stored schema has no valid header");
  }
  const uint32_t count = DecodeFixed<uint32_t>(p + 4);
  if (bytes.size() < 8 + uint64_t{count} * kColumnRecord) {
    return absl::DataLossError("stored schema is truncated");
  }
  std::vector<ColumnSpec> specs;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* r = p + 8 + i * kColumnRecord;
    ColumnSpec spec;
    spec.name.assign(
        reinterpret_cast<const char*>(r),
        strnlen(reinterpret_cast<const char*>(r), kColumnNameField));
    spec.type = static_cast<ColumnType>(r[kColumnNameField]);
    spec.scale = r[kColumnNameField + 1];
    spec.length = DecodeFixed<uint16_t>(r + kColumnNameField + 2);
    specs.push_back(std::move(spec));
  }
  return Create(std::move(specs));
}

bool operator==(const Schema& a, const Schema& b) {
  if (a.columns_.size() != b.columns_.size()) return false;
  for (size_t i = 0; i < a.columns_.size(); ++i) {
    const Column& x = a.columns_[i];
    const Column& y = b.columns_[i];
    if (x.name != y.name || x.type != y.type || x.length != y.length ||
        x.scale != y.scale) {
      return false;
    }
  }
  return true;
}

const Column* TupleView::Find(size_t column, uint32_t types,
                              const char* accessor) const {
  return FindColumn(*schema_, column, types, accessor, errors_);
}

const Column* TupleView::Find(std::string_view column, uint32_t types,
                              const char* accessor) const {
  return FindColumn(*schema_, column, types, accessor, errors_);
}

double TupleView::GetDouble(size_t column) const {
  const Column* c = Find(column, kDoubleType, "GetDouble");
  return c == nullptr ? 0 : DecodeFixed<double>(bytes_ + c->offset);
}

namespace {

std::string_view CharsAt(const uint8_t* bytes, const Column* c) {
  if (c == nullptr) return {};
  const char* p = reinterpret_cast<const char*>(bytes + c->offset);
  return std::string_view(p, strnlen(p, c->length));
}

}  // namespace

int64_t TupleView::GetInt(std::string_view column) const {
  const Column* c = Find(column, kIntTypes, "GetInt");
  return c == nullptr ? 0 : LoadSigned(bytes_ + c->offset, c->length);
}

double TupleView::GetDouble(std::string_view column) const {
  const Column* c = Find(column, kDoubleType, "GetDouble");
  return c == nullptr ? 0 : DecodeFixed<double>(bytes_ + c->offset);
}

int64_t TupleView::GetDecimal(std::string_view column) const {
  const Column* c = Find(column, kDecimalType, "GetDecimal");
  return c == nullptr ? 0 : LoadSigned(bytes_ + c->offset, c->length);
}

std::string_view TupleView::GetChars(std::string_view column) const {
  return CharsAt(bytes_, Find(column, kCharType, "GetChars"));
}

const Column* TupleBuffer::Find(size_t column, uint32_t types,
                                const char* accessor) {
  return FindColumn(*schema_, column, types, accessor, &status_);
}

const Column* TupleBuffer::Find(std::string_view column, uint32_t types,
                                const char* accessor) {
  return FindColumn(*schema_, column, types, accessor, &status_);
}

void TupleBuffer::SetIntColumn(const Column* c, int64_t value) {
  if (c == nullptr) return;
  if (!FitsSigned(value, c->length)) {
    Record(&status_, absl::InvalidArgumentError(absl::StrFormat(
                         "%d does not fit column %s (%d-byte %s)", value,
                         c->name, c->length, ColumnTypeName(c->type))));
    return;
  }
  StoreSigned(bytes_.data() + c->offset, value, c->length);
}

void TupleBuffer::SetDoubleColumn(const Column* c, double value) {
  if (c == nullptr) return;
  EncodeFixed<double>(bytes_.data() + c->offset, value);
}

void TupleBuffer::SetCharsColumn(const Column* c, std::string_view value) {
  if (c == nullptr) return;
  if (value.size() > c->length) {
    Record(&status_, absl::InvalidArgumentError(absl::StrFormat(
                         "a string of %d bytes does not fit column %s "
                         "(char of %d)",
                         value.size(), c->name, c->length)));
    return;
  }
  uint8_t* p = bytes_.data() + c->offset;
  std::memcpy(p, value.data(), value.size());
  std::memset(p + value.size(), 0, c->length - value.size());
}

void TupleBuffer::SetDouble(size_t column, double value) {
  SetDoubleColumn(Find(column, kDoubleType, "SetDouble"), value);
}

void TupleBuffer::SetInt(std::string_view column, int64_t value) {
  SetIntColumn(Find(column, kIntTypes, "SetInt"), value);
}

void TupleBuffer::SetDouble(std::string_view column, double value) {
  SetDoubleColumn(Find(column, kDoubleType, "SetDouble"), value);
}

void TupleBuffer::SetDecimal(std::string_view column, int64_t units) {
  SetIntColumn(Find(column, kDecimalType, "SetDecimal"), units);
}

void TupleBuffer::SetChars(std::string_view column, std::string_view value) {
  SetCharsColumn(Find(column, kCharType, "SetChars"), value);
}

}  // namespace strand::storage
