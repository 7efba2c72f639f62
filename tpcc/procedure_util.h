#ifndef STRAND_TPCC_PROCEDURE_UTIL_H_
#define STRAND_TPCC_PROCEDURE_UTIL_H_

// What the five TPC-C procedures share: the status macros
// (base/status_macros.h) and the customer selection of clause 2.5.2.2 /
// 2.6.2.2 (by id, or by last name taking the middle row in first-name
// order).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "tpcc/schema.h"
#include "txn/txn.h"

namespace strand::tpcc {

// A customer chosen by id (c_id > 0) or by last name (c_id == 0).
struct CustomerSelector {
  int c_id = 0;
  std::string last;
};

// The address of the selected customer of district (w, d). By last name:
// the rows with that name sorted by C_FIRST, the one at position
// ceil(n / 2). NotFound if none matches.
inline absl::StatusOr<storage::TupleAddress> FindCustomer(
    txn::Txn& txn, const Tables& t, int w, int d, const CustomerSelector& c) {
  if (c.c_id > 0) return txn.Lookup(t.customer_pk, CustomerKey(w, d, c.c_id));
  const std::string low = CustomerNameKey(w, d, c.last, "", 0);
  const std::string high =
      CustomerNameKey(w, d, c.last, std::string(16, '\xff'), -1);
  std::vector<storage::TupleAddress> rows;
  STRAND_RETURN_IF_ERROR(
      txn.Scan(t.customer_by_name, low, high, /*forward=*/true,
               /*limit=*/1000, [&](std::string_view, storage::TupleAddress a) {
                 rows.push_back(a);
                 return true;
               }));
  if (rows.empty()) {
    return absl::NotFoundError("no customer with last name " + c.last);
  }
  return rows[(rows.size() + 1) / 2 - 1];
}

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_PROCEDURE_UTIL_H_
