#ifndef STRAND_TXN_TWO_PHASE_LOCKING_H_
#define STRAND_TXN_TWO_PHASE_LOCKING_H_

// 2PL no-wait: see concurrency_control.h.

#include "txn/concurrency_control.h"

namespace strand::txn {

class TwoPhaseLocking : public ConcurrencyControl {
 public:
  absl::Status Begin(TxnState&) override { return absl::OkStatus(); }
  absl::Status Read(TxnState& txn, Access& access, bool for_update) override;
  absl::Status PrepareWrite(TxnState& txn, Access& access) override;
  absl::Status Commit(TxnState& txn) override;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TWO_PHASE_LOCKING_H_
