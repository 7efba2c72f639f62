#include "txn/index_iterator.h"

#include "index/blink_tree.h"
#include "txn/txn.h"

namespace strand::txn {

IndexIterator::IndexIterator(Txn& txn, IndexId index, IndexRange range)
    : txn_(&txn),
      index_(index),
      low_(std::move(range.low)),
      high_(std::move(range.high)),
      forward_(range.forward) {
  Fetch();
}

void IndexIterator::Next() {
  if (!Valid()) return;
  if (++position_ < batch_.size() || exhausted_) return;
  Fetch();
}

void IndexIterator::Fetch() {
  // Resume at the last entry fetched (a bound of the scan, inclusive) and
  // skip what was fetched already: that entry, and in a non-unique index
  // the entries of its key up to it (they come in value order).
  std::optional<std::pair<std::string, uint64_t>> last;
  if (!batch_.empty()) {
    last.emplace(std::move(batch_.back().first), batch_.back().second.raw());
  }
  batch_.clear();
  position_ = 0;
  std::optional<std::string_view> low = low_, high = high_;
  if (last) (forward_ ? low : high) = last->first;
  bool stopped = false;
  status_ = txn_->Scan(index_, low, high, forward_, index::BLinkTree::kNoLimit,
                       [&](std::string_view key, storage::TupleAddress value) {
                         if (last && key == last->first &&
                             (forward_ ? value.raw() <= last->second
                                       : value.raw() >= last->second)) {
                           return true;
                         }
                         batch_.emplace_back(std::string(key), value);
                         stopped = batch_.size() >= kBatch;
                         return !stopped;
                       });
  if (!status_.ok()) batch_.clear();
  exhausted_ = !stopped;
}

}  // namespace strand::txn
