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
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_file.h"

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

// What the WAL suites share: `compute_nodes` and one memory node on the
// test fabric, `algorithm`, and enough retries that conflicts never end a
// call.
engine::EngineOptions WalBankOptions(txn::CcAlgorithm algorithm,
                                     int compute_nodes = 1);

// Creates the bank in a fresh pool (loaded) and saves its image at `path`.
absl::Status MakeWalBankImage(txn::CcAlgorithm algorithm,
                              const std::string& path);

// The algorithms the WAL suites run under, and their test-name suffix:
//   INSTANTIATE_TEST_SUITE_P(Algorithms, Suite,
//                            ::testing::ValuesIn(kWalAlgorithms),
//                            WalAlgorithmName);
inline constexpr txn::CcAlgorithm kWalAlgorithms[] = {
    txn::CcAlgorithm::kTwoPhaseLocking, txn::CcAlgorithm::kTimestampOrdering,
    txn::CcAlgorithm::kOptimistic};
std::string WalAlgorithmName(
    const ::testing::TestParamInfo<txn::CcAlgorithm>& info);

// A suite over a fresh bank image per test: image_ in dir_, logs in
// wal_dir_.
class WalBankTest : public ::testing::TestWithParam<txn::CcAlgorithm> {
 protected:
  void SetUp() override;
  // Opens the image with the log in wal_dir_ (factory null: io_uring).
  engine::EngineOptions LoggedOptions(wal::LogFileFactory* factory,
                                      bool early_lock_release) const;
  // Opens the image and replays `wal_dir` (default wal_dir_) over it.
  absl::StatusOr<std::unique_ptr<engine::Engine>> Recover(
      const std::string& wal_dir = "") const;

  wal::testing::TempDir dir_;
  std::string image_, wal_dir_;
  int compute_nodes_ = 1;  // of LoggedOptions' engine
};

}  // namespace strand::testing

#endif  // STRAND_TESTS_ENGINE_WAL_BANK_H_
