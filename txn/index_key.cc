#include "txn/index_key.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "index/key_codec.h"

namespace strand::txn {
namespace {

using storage::Column;
using storage::ColumnType;

// Bytes `column` takes in a key (0: it cannot be a key column).
uint16_t FieldWidth(const Column& column) {
  switch (column.type) {
    case ColumnType::kInt8:
    case ColumnType::kInt16:
    case ColumnType::kInt32:
      return 4;
    case ColumnType::kInt64:
      return 8;
    case ColumnType::kDecimal:
      return column.length == 8 ? 8 : 4;
    case ColumnType::kChar:
      return column.length;
    case ColumnType::kDouble:
      return 0;
  }
  return 0;
}

}  // namespace

absl::StatusOr<IndexKey> IndexKey::Create(const storage::Schema& schema,
                                          std::vector<uint16_t> columns) {
  if (columns.empty() || columns.size() > kMaxColumns) {
    return absl::InvalidArgumentError(
        absl::StrFormat("an index key has 1 to %d columns, not %d", kMaxColumns,
                        columns.size()));
  }
  uint32_t width = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] >= schema.column_count()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "key column %d is out of range: the table has %d columns", columns[i],
          schema.column_count()));
    }
    const Column& column = schema.column(columns[i]);
    for (size_t j = 0; j < i; ++j) {
      if (columns[j] == columns[i]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("key column %s is named twice", column.name));
      }
    }
    const uint16_t field = FieldWidth(column);
    if (field == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("column %s is %s, which cannot be a key column",
                          column.name, storage::ColumnTypeName(column.type)));
    }
    width += field;
  }
  if (width > UINT16_MAX) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a key of %d bytes is too wide", width));
  }
  std::vector<Column> fields;
  for (uint16_t c : columns) fields.push_back(schema.column(c));
  return IndexKey(std::move(columns), std::move(fields),
                  static_cast<uint16_t>(width));
}

std::string IndexKey::Build(const storage::TupleView& tuple) const {
  index::KeyBuilder key;
  const storage::Schema& schema = tuple.schema();
  for (uint16_t c : columns_) {
    const Column& column = schema.column(c);
    switch (column.type) {
      case ColumnType::kInt8:
      case ColumnType::kInt16:
      case ColumnType::kInt32:
        key.Int32(static_cast<int32_t>(tuple.GetInt(c)));
        break;
      case ColumnType::kInt64:
        key.Int64(tuple.GetInt(c));
        break;
      case ColumnType::kDecimal:
        if (column.length == 8) {
          key.Int64(tuple.GetDecimal(c));
        } else {
          key.Int32(static_cast<int32_t>(tuple.GetDecimal(c)));
        }
        break;
      case ColumnType::kChar:
        key.String(tuple.GetChars(c), column.length);
        break;
      case ColumnType::kDouble:
        break;  // IndexKey::Create refuses double key columns
    }
  }
  return key.Build(width_);
}

std::string IndexKey::Describe(std::string_view key) const {
  std::string out;
  size_t at = 0;
  for (const Column& column : fields_) {
    const uint16_t field = FieldWidth(column);
    if (at + field > key.size()) break;
    const char* p = key.data() + at;
    absl::StrAppend(&out, out.empty() ? "" : ", ", column.name, "=");
    if (column.type == ColumnType::kChar) {
      absl::StrAppend(&out, "'",
                      absl::CEscape(absl::string_view(p, strnlen(p, field))),
                      "'");
    } else if (field == 8) {
      absl::StrAppend(&out, index::DecodeInt64(p));
    } else {
      absl::StrAppend(&out, index::DecodeInt32(p));
    }
    at += field;
  }
  return out;
}

}  // namespace strand::txn
