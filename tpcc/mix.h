#ifndef STRAND_TPCC_MIX_H_
#define STRAND_TPCC_MIX_H_

// The transaction mix (clause 5.2.3): the five types and their weights.

#include <array>
#include <string>

#include "absl/status/statusor.h"

namespace strand::tpcc {

enum TxnType { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel };
inline constexpr int kTxnTypes = 5;
const char* TxnTypeName(int type);

// Weights of the five types in percent, summing to 100.
struct Mix {
  std::array<int, kTxnTypes> weights = {45, 43, 4, 4, 4};

  // "standard", a type name (new_order, payment, order_status, delivery,
  // stock_level: 100% of it) or five comma-separated weights summing to
  // 100. InvalidArgument otherwise.
  static absl::StatusOr<Mix> Parse(const std::string& text);
  std::string ToString() const;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_MIX_H_
