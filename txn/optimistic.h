#ifndef STRAND_TXN_OPTIMISTIC_H_
#define STRAND_TXN_OPTIMISTIC_H_

// OCC: see concurrency_control.h.

#include "txn/concurrency_control.h"

namespace strand::txn {

class Optimistic : public ConcurrencyControl {
 public:
  absl::Status Begin(TxnState&) override { return absl::OkStatus(); }
  absl::Status Read(TxnState& txn, Access& access, bool for_update) override;
  absl::Status PrepareWrite(TxnState&, Access&) override {
    return absl::OkStatus();
  }
  absl::Status Commit(TxnState& txn) override;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_OPTIMISTIC_H_
