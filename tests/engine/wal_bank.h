#ifndef STRAND_TESTS_ENGINE_WAL_BANK_H_
#define STRAND_TESTS_ENGINE_WAL_BANK_H_

// The bank workload of the WAL tests: accounts (id, balance) with a unique
// index, and a history table (seq, from, to, amount) with a unique index on
// seq. transfer(from, to, amount, seq) moves money and inserts the history
// row in one transaction, so its redo record has updates, a tuple insert
// and an index insert. After recovery: every acknowledged seq must be in the
// history, the total must be unchanged, and every balance must equal the
// initial one plus the history rows that touch it (atomicity).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/session.h"

namespace strand::testing {

inline constexpr int kWalBankAccounts = 32;
inline constexpr int64_t kWalBankInitialBalance = 1000;

struct HistoryRow {
  int64_t seq, from, to, amount;
};

struct WalBank {
  txn::TableId accounts = 0, history = 0;
  txn::IndexId account_by_id = 0, history_by_seq = 0;
  engine::ProcedureId create = 0, transfer = 0, balances = 0, history_rows = 0,
                      has_seq = 0;

  // Creates (`create`) or opens the tables, and registers the procedures.
  static absl::StatusOr<WalBank> Define(engine::Engine& engine, bool create);
  // Inserts the accounts (one transaction each).
  absl::Status Load(engine::Session& session) const;
  // transfer; OK means acknowledged. Aborted (user) if funds are short.
  absl::Status Transfer(engine::Session& session, int64_t from, int64_t to,
                        int64_t amount, int64_t seq) const;
  absl::StatusOr<std::vector<int64_t>> Balances(engine::Session& s) const;
  absl::StatusOr<std::vector<HistoryRow>> History(engine::Session& s) const;
  absl::StatusOr<bool> HasSeq(engine::Session& s, int64_t seq) const;

  // "" if the state is consistent (total, balances = initial + history);
  // else what is wrong.
  std::string CheckConsistent(engine::Session& s) const;
};

}  // namespace strand::testing

#endif  // STRAND_TESTS_ENGINE_WAL_BANK_H_
