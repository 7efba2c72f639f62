#ifndef STRAND_PUBLIC_STATUS_H_
#define STRAND_PUBLIC_STATUS_H_

// Early returns on errors for code that calls many functions returning
// absl::Status or absl::StatusOr, as procedures do:
//   STRAND_ASSIGN_OR_RETURN(strand::TupleAddress at, txn.Lookup(by_id, key));
//   STRAND_RETURN_IF_ERROR(txn.Delete(accounts, at));
// (base/status_macros.h has the contract.)

#include "base/status_macros.h"  // IWYU pragma: export

#endif  // STRAND_PUBLIC_STATUS_H_
