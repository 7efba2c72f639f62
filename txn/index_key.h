#ifndef STRAND_TXN_INDEX_KEY_H_
#define STRAND_TXN_INDEX_KEY_H_

// An index key made of a tuple's columns: the index declares its key
// columns once (Engine::CreateIndex(name, table, {"w_id", "o_id"}, ...)),
// and the transaction keeps their entries from the rows
// (txn/declared_indexes.h). The hand-built keys of index/key_codec.h remain
// for indexes declared by width only, and for lookups.
//
// Encoding: field after field, as KeyBuilder writes them, so the byte
// order of keys is the order of the column values:
//   kInt8, kInt16, kInt32, kDecimal of 2 or 4 bytes   KeyBuilder::Int32 (4)
//   kInt64, kDecimal of 8 bytes                       KeyBuilder::Int64 (8)
//   kChar(n)                                          String(value, n) (n)
// kDouble columns cannot be key columns (no memcmp-ordered encoding here).
// So a key built from a tuple equals the hand-built
// KeyBuilder().Int32(w).Int64(o).Build(12) for (kInt32 w, kInt64 o).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/catalog.h"
#include "storage/schema.h"

namespace strand::txn {

class IndexKey {
 public:
  // What the catalog can record.
  static constexpr size_t kMaxColumns = storage::IndexSpec::kMaxKeyColumns;

  // The key of `columns` of `schema`, in that order. InvalidArgument for
  // no columns, more than kMaxColumns, a column out of range or repeated,
  // or a kDouble column.
  static absl::StatusOr<IndexKey> Create(const storage::Schema& schema,
                                         std::vector<uint16_t> columns);

  // Bytes of a key: the index's key width.
  uint16_t width() const { return width_; }
  const std::vector<uint16_t>& columns() const { return columns_; }

  // The key of `tuple`, a tuple of the schema given to Create.
  std::string Build(const storage::TupleView& tuple) const;
  // `key` (width() bytes, as Build makes them) as its columns' values, for
  // messages: "city=-7, name='eve'".
  std::string Describe(std::string_view key) const;

 private:
  IndexKey(std::vector<uint16_t> columns, std::vector<storage::Column> fields,
           uint16_t width)
      : columns_(std::move(columns)),
        fields_(std::move(fields)),
        width_(width) {}

  std::vector<uint16_t> columns_;
  std::vector<storage::Column> fields_;  // the key columns, in key order
  uint16_t width_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_INDEX_KEY_H_
