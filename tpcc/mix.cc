#include "tpcc/mix.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace strand::tpcc {
namespace {

constexpr const char* kTypeNames[kTxnTypes] = {
    "new_order", "payment", "order_status", "delivery", "stock_level"};

}  // namespace

const char* TxnTypeName(int type) { return kTypeNames[type]; }

absl::StatusOr<Mix> Mix::Parse(const std::string& text) {
  Mix mix;
  if (text == "standard") return mix;
  for (int i = 0; i < kTxnTypes; ++i) {
    if (text == kTypeNames[i]) {
      mix.weights.fill(0);
      mix.weights[i] = 100;
      return mix;
    }
  }
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != kTxnTypes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--mix=%s: expected 'standard', a transaction type (new_order, "
        "payment, order_status, delivery, stock_level) or 5 comma-separated "
        "weights",
        text));
  }
  int sum = 0;
  for (int i = 0; i < kTxnTypes; ++i) {
    if (!absl::SimpleAtoi(parts[i], &mix.weights[i]) || mix.weights[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--mix=%s: '%s' is not a weight", text, parts[i]));
    }
    sum += mix.weights[i];
  }
  if (sum != 100) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--mix=%s: the weights sum to %d, not 100", text, sum));
  }
  return mix;
}

std::string Mix::ToString() const { return absl::StrJoin(weights, ","); }

}  // namespace strand::tpcc
