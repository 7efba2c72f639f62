#ifndef STRAND_BASE_STATUS_MACROS_H_
#define STRAND_BASE_STATUS_MACROS_H_

// Early returns on errors, shaped like abseil's internal macros (and
// Google's ASSIGN_OR_RETURN), for code that calls many functions returning
// absl::Status or absl::StatusOr:
//
//   absl::StatusOr<int64_t> Transfer(Txn& txn, ...) {
//     STRAND_ASSIGN_OR_RETURN(TupleAddress at, txn.Lookup(by_id, key));
//     STRAND_ASSIGN_OR_RETURN(TupleBuffer * row, txn.Modify(accounts, at));
//     STRAND_RETURN_IF_ERROR(txn.Delete(accounts, at));
//     ...
//   }
//
// STRAND_RETURN_IF_ERROR(expr): `expr` is an absl::Status; if it is not OK
// the enclosing function returns it.
// STRAND_ASSIGN_OR_RETURN(lhs, expr): `expr` is an absl::StatusOr<T>; if it
// holds an error the enclosing function returns that status, else its value
// is moved into `lhs`, which may declare a variable ("auto x", "T* p"). It
// expands to several statements: not the sole statement of an unbraced if.

#include <utility>

#include "absl/status/status.h"

#define STRAND_RETURN_IF_ERROR(expr)                                  \
  do {                                                                \
    if (absl::Status strand_status_ = (expr); !strand_status_.ok()) { \
      return strand_status_;                                          \
    }                                                                 \
  } while (false)

#define STRAND_ASSIGN_OR_RETURN(lhs, expr) \
  STRAND_ASSIGN_OR_RETURN_IMPL_(           \
      STRAND_STATUS_MACROS_CONCAT_(strand_status_or_, __LINE__), lhs, expr)

// Implementation details of the macros above.
#define STRAND_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define STRAND_STATUS_MACROS_CONCAT_(a, b) \
  STRAND_STATUS_MACROS_CONCAT_INNER_(a, b)
#define STRAND_ASSIGN_OR_RETURN_IMPL_(status_or, lhs, expr)  \
  auto status_or = (expr);                                   \
  if (!status_or.ok()) return std::move(status_or).status(); \
  lhs = *std::move(status_or)

#endif  // STRAND_BASE_STATUS_MACROS_H_
