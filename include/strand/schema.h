#ifndef STRAND_PUBLIC_SCHEMA_H_
#define STRAND_PUBLIC_SCHEMA_H_

// Rows: a table's schema (named, typed, fixed-width columns), the buffer a
// row is built in and the view a row is read through, with columns named
// by position or by name; and the keys of indexes declared by key width.
// Misusing a column (wrong type, unknown, a value too wide) never aborts
// the process: the transaction reports it as a Status naming the column.

#include "index/key_codec.h"        // IWYU pragma: export
#include "storage/schema.h"         // IWYU pragma: export
#include "storage/table_options.h"  // IWYU pragma: export
#include "storage/tuple_address.h"  // IWYU pragma: export

namespace strand {

using index::KeyBuilder;
using storage::ColumnSpec;
using storage::ColumnType;
using storage::Schema;
using storage::TableOptions;
using storage::TupleAddress;
using storage::TupleBuffer;
using storage::TupleView;

}  // namespace strand

#endif  // STRAND_PUBLIC_SCHEMA_H_
