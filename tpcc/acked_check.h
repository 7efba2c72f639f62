#ifndef STRAND_TPCC_ACKED_CHECK_H_
#define STRAND_TPCC_ACKED_CHECK_H_

// After recovery: is every acknowledged New-Order (tpcc/acked_log.h) in the
// database? With the WAL on, an acknowledged New-Order is durable, so each
// must be there whole: its ORDER row, its NEW-ORDER row unless the order was
// delivered since (carrier set), and its O_OL_CNT ORDER-LINE rows.
// Used by the crash tests and by `tpcc --check_image`.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/engine.h"
#include "tpcc/acked_log.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct AckedCheck {
  int64_t checked = 0;
  int64_t lost = 0;
  // The first few losses: "w=1 d=3 o=3012: NEW-ORDER row missing (...)".
  std::vector<std::string> examples;
  bool ok() const { return lost == 0; }
};

class AckedNewOrderChecker {
 public:
  // Registers the check's stored procedure on `engine` (before its first
  // session: engine/engine.h).
  static absl::StatusOr<AckedNewOrderChecker> Register(engine::Engine& engine,
                                                       const Tables& tables);

  // Checks `orders` in one session on the engine's first hosted node, or
  // on `node`.
  absl::StatusOr<AckedCheck> Check(
      engine::Engine& engine, absl::Span<const AckedNewOrder> orders) const;
  absl::StatusOr<AckedCheck> Check(engine::Engine& engine,
                                   absl::Span<const AckedNewOrder> orders,
                                   rdma::ComputeNodeId node) const;

 private:
  explicit AckedNewOrderChecker(engine::ProcedureId id) : procedure_(id) {}
  engine::ProcedureId procedure_;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_ACKED_CHECK_H_
