#ifndef STRAND_STORAGE_HEAP_TABLE_TUNING_H_
#define STRAND_STORAGE_HEAP_TABLE_TUNING_H_

// The heap table's runtime switches (heap_table.h), apart so that the
// engine's options can name them without the table.

namespace strand::storage {

// Runtime switches of a table's insert path, chosen per opened table (not
// kept in the pool), each with the old behaviour as the ablation.
struct HeapTableTuning {
  // An insert into the thread's own page, with no released slot waiting,
  // takes no table-wide lock (--unlocked_inserts): at two threads TPC-C's
  // inserts met on each table's mutex (docs/design/storage.md). false:
  // every insert takes it (the ablation).
  bool unlocked_inserts = true;
};

}  // namespace strand::storage

#endif  // STRAND_STORAGE_HEAP_TABLE_TUNING_H_
