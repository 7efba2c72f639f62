#ifndef STRAND_TXN_INDEX_ITERATOR_H_
#define STRAND_TXN_INDEX_ITERATOR_H_

// A range of an index walked one entry at a time, forward or backward:
// the pull-style twin of Txn::Scan, for code that does other work (reads,
// writes, early exits) between entries.
//
//   txn::IndexIterator it = txn.NewIterator(by_owner, {.low = lo, .high = hi});
//   for (; it.Valid(); it.Next()) {
//     auto row = txn.Read(accounts, it.address());
//     ...
//   }
//   if (!it.status().ok()) return it.status();
//
// Guarantees are Scan's: the transaction's own index writes are seen, as
// they are when each batch is fetched (a write made while iterating may
// or may not show up ahead); the range read up to the last entry fetched
// is validated at commit. The iterator fetches kBatch entries at a time
// with a Scan that resumes after the last entry fetched, so walking n
// entries costs about n / kBatch scans. It must not outlive its
// transaction.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "storage/tuple_address.h"
#include "txn/database.h"

namespace strand::txn {

class Txn;
struct IndexRange;

class IndexIterator {
 public:
  static constexpr size_t kBatch = 64;

  // At an entry (key() and address() are valid).
  bool Valid() const { return position_ < batch_.size(); }
  // To the next entry in the range's direction.
  void Next();
  std::string_view key() const { return batch_[position_].first; }
  storage::TupleAddress address() const { return batch_[position_].second; }
  // Why the walk stopped early: a bad index or bound (the transaction
  // goes on), or the transaction aborted (a conflict). OK at the end.
  const absl::Status& status() const { return status_; }

 private:
  friend class Txn;
  IndexIterator(Txn& txn, IndexId index, IndexRange range);
  // The next batch after the last entry fetched.
  void Fetch();

  Txn* txn_;
  IndexId index_;
  std::optional<std::string> low_, high_;
  bool forward_;
  std::vector<std::pair<std::string, storage::TupleAddress>> batch_;
  size_t position_ = 0;
  bool exhausted_ = false;
  absl::Status status_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_INDEX_ITERATOR_H_
