#ifndef STRAND_STORAGE_TABLE_OPTIONS_H_
#define STRAND_STORAGE_TABLE_OPTIONS_H_

// How a heap table (heap_table.h) lays out its rows, fixed when the table
// is created and kept in its root GCL, so every compute node that opens the
// table lays it out the same way.

#include <cstdint>

namespace strand::storage {

struct TableOptions {
  // At most this many rows per heap page; 0 (the default) means as many as
  // fit the GCL, and so does a limit larger than that. A page is the unit
  // of latching, so rows that share one conflict whenever one of them is
  // written: a small hot row that different threads or nodes update (TPC-C
  // WAREHOUSE, DISTRICT) is best alone on its page (limit 1), at the cost
  // of one GCL per row.
  uint32_t max_rows_per_page = 0;
};

}  // namespace strand::storage

#endif  // STRAND_STORAGE_TABLE_OPTIONS_H_
