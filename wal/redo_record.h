#ifndef STRAND_WAL_REDO_RECORD_H_
#define STRAND_WAL_REDO_RECORD_H_

// The payload of a kCommit log record: the redo ops of one committed
// transaction, enough to reapply its effects to the memory pool.
//
//   op (32-byte header, then `length` bytes padded with zeros to 8 bytes):
//     0 kind u8, 3 reserved zero bytes   4 object_id u32 (table or index)
//     8 address u64 (rdma::GlobalAddress::raw() of the tuple or node)
//    16 key u64                         24 offset u32   28 length u32
//    32 after-image bytes (the op kinds: RedoKind below)
//
// What the commit path (txn/write_set.cc) logs: `object_id` is the table's
// or index's catalog id (stable across engines over the same pool, unlike
// the dense per-engine TableId), `address` the tuple's address in the run
// that wrote the log (recovery maps addresses of tuples inserted after the
// initial image to where replay put them, engine/recovery.h), `key` 0.
//
// wal/ does not depend on rdma/, so addresses travel as their raw 8 bytes.
// Why redo-only logging suffices: docs/design/wal.md.
//
//   RedoBuilder redo;
//   redo.Update(kStockTable, addr.raw(), key, /*offset=*/16, new_quantity);
//   writer->Commit(txn_id, commit_ts, redo.payload());

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace strand::wal {

// What an op says:
//   kUpdate  `length` bytes at `offset` inside the tuple at `address` now
//            hold `after_image` (only the changed bytes are logged);
//   kInsert  a new tuple with `key` at `address`: after_image is the whole
//            tuple (offset 0), the index entry key -> address is implied;
//   kDelete  the tuple with `key` at `address` is gone (no image).
//   kIndexInsert (format version 2) the entry after_image -> `address` was
//            added to index `object_id`: after_image holds the key bytes
//            (index keys are memcmp-ordered strings of up to 255 bytes, so
//            they travel as the image, not in the u64 `key` field, which is
//            0), `address` the entry's value (a storage::TupleAddress);
//   kIndexRemove (version 2) the entry after_image -> `address` was removed.
enum class RedoKind : uint8_t {
  kUpdate = 1,
  kInsert = 2,
  kDelete = 3,
  kIndexInsert = 4,  // format version 2
  kIndexRemove = 5,  // format version 2
};

inline constexpr size_t kRedoOpHeaderBytes = 32;

struct RedoOp {
  RedoKind kind = RedoKind::kUpdate;
  uint32_t object_id = 0;
  uint64_t address = 0;
  uint64_t key = 0;
  uint32_t offset = 0;
  std::string_view after_image;  // points into the payload it was parsed from

  friend bool operator==(const RedoOp&, const RedoOp&) = default;
};

// Builds one transaction's redo payload. Reuse with Clear() to keep the
// buffer's capacity.
class RedoBuilder {
 public:
  RedoBuilder& Update(uint32_t object_id, uint64_t address, uint64_t key,
                      uint32_t offset, std::string_view after_image);
  RedoBuilder& Insert(uint32_t object_id, uint64_t address, uint64_t key,
                      std::string_view tuple);
  RedoBuilder& Delete(uint32_t object_id, uint64_t address, uint64_t key);
  RedoBuilder& IndexInsert(uint32_t index_id, std::string_view key,
                           uint64_t value);
  RedoBuilder& IndexRemove(uint32_t index_id, std::string_view key,
                           uint64_t value);

  std::string_view payload() const { return payload_; }
  size_t op_count() const { return op_count_; }
  void Clear() {
    payload_.clear();
    op_count_ = 0;
  }

 private:
  void Add(const RedoOp& op);

  std::string payload_;
  size_t op_count_ = 0;
};

// Parses a payload built by RedoBuilder, appending to `ops` (whose
// after_images point into `payload`). DataLoss if the payload is malformed
// (which a record with a matching CRC only is if a writer had a bug).
absl::Status ParseRedo(std::string_view payload, std::vector<RedoOp>* ops);

}  // namespace strand::wal

#endif  // STRAND_WAL_REDO_RECORD_H_
