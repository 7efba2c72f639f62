#include "storage/schema.h"

#include <cstring>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "storage/tuple_header.h"

namespace strand::storage {
namespace {

// Serialized column: name (32 bytes, NUL-padded), type, scale, length.
constexpr size_t kNameField = Schema::kMaxNameBytes + 1;
constexpr size_t kColumnRecord = kNameField + 4;
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

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

namespace schema_internal {

void WrongType(const Column& c, const char* wanted) {
  LOG(FATAL) << "column " << c.name << " is " << ColumnTypeName(c.type)
             << ", not " << wanted;
}

void DoesNotFit(const Column& c, int64_t value) {
  LOG(FATAL) << value << " does not fit " << c.length << "-byte "
             << ColumnTypeName(c.type) << " column " << c.name;
}

}  // namespace schema_internal

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
  std::memcpy(out.data(), &kSchemaMagic, 4);
  std::memcpy(out.data() + 4, &count, 4);
  char* p = out.data() + 8;
  for (const Column& c : columns_) {
    std::memcpy(p, c.name.data(), c.name.size());
    p[kNameField] = static_cast<char>(c.type);
    p[kNameField + 1] = static_cast<char>(c.scale);
    std::memcpy(p + kNameField + 2, &c.length, 2);
    p += kColumnRecord;
  }
  return out;
}

absl::StatusOr<Schema> Schema::Deserialize(std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 || Load<uint32_t>(p) != kSchemaMagic) {
    return absl::DataLossError("stored schema has no valid header");
  }
  const uint32_t count = Load<uint32_t>(p + 4);
  if (bytes.size() < 8 + uint64_t{count} * kColumnRecord) {
    return absl::DataLossError("stored schema is truncated");
  }
  std::vector<ColumnSpec> specs;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* r = p + 8 + i * kColumnRecord;
    ColumnSpec spec;
    spec.name.assign(reinterpret_cast<const char*>(r),
                     strnlen(reinterpret_cast<const char*>(r), kNameField));
    spec.type = static_cast<ColumnType>(r[kNameField]);
    spec.scale = r[kNameField + 1];
    spec.length = Load<uint16_t>(r + kNameField + 2);
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

double TupleView::GetDouble(size_t column) const {
  const Column& c = schema_->column(column);
  CHECK(c.type == ColumnType::kDouble) << "column " << c.name;
  return Load<double>(bytes_ + c.offset);
}

std::string_view TupleView::GetChars(size_t column) const {
  const Column& c = schema_->column(column);
  CHECK(c.type == ColumnType::kChar) << "column " << c.name;
  const char* p = reinterpret_cast<const char*>(bytes_ + c.offset);
  return std::string_view(p, strnlen(p, c.length));
}

void TupleBuffer::SetDouble(size_t column, double value) {
  const Column& c = schema_->column(column);
  CHECK(c.type == ColumnType::kDouble) << "column " << c.name;
  std::memcpy(bytes_.data() + c.offset, &value, 8);
}

void TupleBuffer::SetChars(size_t column, std::string_view value) {
  const Column& c = schema_->column(column);
  CHECK(c.type == ColumnType::kChar) << "column " << c.name;
  uint8_t* p = bytes_.data() + c.offset;
  std::memset(p, 0, c.length);
  std::memcpy(p, value.data(), std::min<size_t>(value.size(), c.length));
}

}  // namespace strand::storage
