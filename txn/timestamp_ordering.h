#ifndef STRAND_TXN_TIMESTAMP_ORDERING_H_
#define STRAND_TXN_TIMESTAMP_ORDERING_H_

// Basic timestamp ordering with buffered writes: see concurrency_control.h.

#include "txn/concurrency_control.h"

namespace strand::txn {

class TimestampOrdering : public ConcurrencyControl {
 public:
  absl::Status Begin(TxnState& txn) override;
  absl::Status Read(TxnState& txn, Access& access, bool for_update) override;
  absl::Status PrepareWrite(TxnState&, Access&) override {
    return absl::OkStatus();
  }
  absl::Status Commit(TxnState& txn) override;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TIMESTAMP_ORDERING_H_
