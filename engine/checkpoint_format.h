#ifndef STRAND_ENGINE_CHECKPOINT_FORMAT_H_
#define STRAND_ENGINE_CHECKPOINT_FORMAT_H_

// The data files of a logical checkpoint (wal/checkpoint.h has the
// directory and the manifest; docs/design/checkpoints.md the argument).
// Little endian throughout.
//
//   catalog      the tables and indexes in creation order:
//                  0 magic u64 "STRANDCO"  8 object count u32
//                then per object: kind u8 (1 table, 2 index), catalog id
//                u32, name length u8, name; a table: max rows per page u32,
//                schema length u32, the schema (storage::Schema::Serialize);
//                an index: table id u32, key width u16, unique u8, key
//                column count u8, the columns (u16 each).
//   table-<id>   0 magic u64 "STRANDCT"  8 table id u32  12 tuple bytes u32,
//                then per tuple: its address u64 (its identity in the logs
//                that follow), the whole tuple (header included); last, the
//                tuple count u64.
//   index-<id>   0 magic u64 "STRANDCI"  8 index id u32  12 key width u16,
//                14 unique u8, 15 zero, then per entry: the user key, the
//                value u64 (a tuple address); last, the entry count u64.
//
// Only live tuples (no pending or deleted one) and present entries are
// written. The files' sizes and CRCs are in the manifest, so a reader
// only checks shapes (a count that disagrees with the size is DataLoss).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/catalog.h"
#include "storage/schema.h"
#include "storage/table_options.h"

namespace strand::engine {

inline constexpr uint64_t kCheckpointCatalogMagic =
    0x4f43444e41525453;  // STRANDCO
inline constexpr uint64_t kCheckpointTableMagic =
    0x54434e4441525453;  // STRANDCT
inline constexpr uint64_t kCheckpointIndexMagic =
    0x49434e4441525453;  // STRANDCI
inline constexpr size_t kCheckpointFileHeaderBytes = 16;
inline constexpr size_t kCheckpointTrailerBytes = 8;

// One object of the catalog file.
struct CheckpointObject {
  enum class Kind : uint8_t { kTable = 1, kIndex = 2 };
  Kind kind = Kind::kTable;
  uint32_t id = 0;
  std::string name;
  // Tables.
  storage::TableOptions table_options;
  std::string schema;  // serialized
  // Indexes.
  storage::IndexSpec index;
};

std::string EncodeCatalog(const std::vector<CheckpointObject>& objects);
// DataLoss naming `path` if the bytes are not a catalog file.
absl::StatusOr<std::vector<CheckpointObject>> DecodeCatalog(
    std::string_view bytes, const std::string& path);

std::string TableFileName(uint32_t table_id);
std::string IndexFileName(uint32_t index_id);

// The 16-byte header of a table or an index file.
std::string TableFileHeader(uint32_t table_id, uint32_t tuple_bytes);
std::string IndexFileHeader(uint32_t index_id, uint16_t key_width, bool unique);

// A table or index file read whole: its records, each `record_bytes`, and
// a check of header and trailer. DataLoss naming `path` on a mismatch.
struct CheckpointRecords {
  std::string_view records;  // into the caller's bytes
  size_t record_bytes = 0;
  uint64_t count = 0;
};
absl::StatusOr<CheckpointRecords> ParseTableFile(std::string_view bytes,
                                                 uint32_t table_id,
                                                 uint32_t tuple_bytes,
                                                 const std::string& path);
absl::StatusOr<CheckpointRecords> ParseIndexFile(std::string_view bytes,
                                                 uint32_t index_id,
                                                 uint16_t key_width,
                                                 const std::string& path);

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CHECKPOINT_FORMAT_H_
