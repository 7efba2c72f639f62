#include "tests/engine/wal_bank.h"

#include <functional>

#include "absl/strings/str_format.h"
#include "index/key_codec.h"
#include "storage/schema.h"
#include "tests/testing/test_fabric.h"

namespace strand::testing {
namespace {

std::string Key(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }

}  // namespace

absl::StatusOr<WalBank> WalBank::Define(engine::Engine& engine, bool create) {
  WalBank b;
  if (create) {
    auto accounts =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"balance", storage::ColumnType::kInt64}});
    auto history =
        storage::Schema::Create({{"seq", storage::ColumnType::kInt64},
                                 {"from", storage::ColumnType::kInt64},
                                 {"to", storage::ColumnType::kInt64},
                                 {"amount", storage::ColumnType::kInt64}});
    if (!accounts.ok()) return accounts.status();
    if (!history.ok()) return history.status();
    auto a = engine.CreateTable("accounts", *accounts);
    if (!a.ok()) return a.status();
    b.accounts = *a;
    auto h = engine.CreateTable("history", *history);
    if (!h.ok()) return h.status();
    b.history = *h;
    auto ai = engine.CreateIndex("accounts_by_id", b.accounts, 8, true);
    if (!ai.ok()) return ai.status();
    b.account_by_id = *ai;
    auto hi = engine.CreateIndex("history_by_seq", b.history, 8, true);
    if (!hi.ok()) return hi.status();
    b.history_by_seq = *hi;
  } else {
    auto a = engine.OpenTable("accounts");
    auto h = engine.OpenTable("history");
    auto ai = engine.OpenIndex("accounts_by_id");
    auto hi = engine.OpenIndex("history_by_seq");
    for (absl::Status s : {a.status(), h.status(), ai.status(), hi.status()}) {
      if (!s.ok()) return s;
    }
    b.accounts = *a;
    b.history = *h;
    b.account_by_id = *ai;
    b.history_by_seq = *hi;
  }
  const WalBank ids = b;
  const storage::Schema* account_schema = *engine.schema(b.accounts);
  const storage::Schema* history_schema = *engine.schema(b.history);
  using txn::Txn;
  auto create_fn = engine.RegisterProcedure(
      "create", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                    [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                      storage::TupleBuffer t(*account_schema);
                      t.SetInt(0, id);
                      t.SetInt(1, kWalBankInitialBalance);
                      auto addr = txn.Insert(ids.accounts, t);
                      if (!addr.ok()) return addr.status();
                      if (absl::Status added = txn.AddIndexEntry(
                              ids.account_by_id, Key(id), *addr);
                          !added.ok()) {
                        return added;
                      }
                      return true;
                    }));
  if (!create_fn.ok()) return create_fn.status();
  b.create = *create_fn;
  auto transfer = engine.RegisterProcedure(
      "transfer", std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t,
                                                     int64_t, int64_t)>(
                      [=](Txn& txn, int64_t from, int64_t to, int64_t amount,
                          int64_t seq) -> absl::StatusOr<bool> {
                        auto a = txn.Lookup(ids.account_by_id, Key(from));
                        if (!a.ok()) return a.status();
                        auto c = txn.Lookup(ids.account_by_id, Key(to));
                        if (!c.ok()) return c.status();
                        auto fa = txn.Modify(ids.accounts, *a);
                        if (!fa.ok()) return fa.status();
                        const int64_t balance = (*fa)->view().GetInt(1);
                        if (balance < amount)
                          return txn.UserAbort("insufficient funds");
                        (*fa)->SetInt(1, balance - amount);
                        auto fc = txn.Modify(ids.accounts, *c);
                        if (!fc.ok()) return fc.status();
                        (*fc)->SetInt(1, (*fc)->view().GetInt(1) + amount);
                        storage::TupleBuffer h(*history_schema);
                        h.SetInt(0, seq);
                        h.SetInt(1, from);
                        h.SetInt(2, to);
                        h.SetInt(3, amount);
                        auto addr = txn.Insert(ids.history, h);
                        if (!addr.ok()) return addr.status();
                        if (absl::Status added = txn.AddIndexEntry(
                                ids.history_by_seq, Key(seq), *addr);
                            !added.ok()) {
                          return added;
                        }
                        return true;
                      }));
  if (!transfer.ok()) return transfer.status();
  b.transfer = *transfer;
  auto balances = engine.RegisterProcedure(
      "balances", std::function<absl::StatusOr<std::vector<int64_t>>(Txn&)>(
                      [=](Txn& txn) -> absl::StatusOr<std::vector<int64_t>> {
                        std::vector<int64_t> out;
                        for (int id = 0; id < kWalBankAccounts; ++id) {
                          auto a = txn.Lookup(ids.account_by_id, Key(id));
                          if (!a.ok()) return a.status();
                          auto t = txn.Read(ids.accounts, *a);
                          if (!t.ok()) return t.status();
                          out.push_back(t->GetInt(1));
                        }
                        return out;
                      }));
  if (!balances.ok()) return balances.status();
  b.balances = *balances;
  auto rows = engine.RegisterProcedure(
      "history_rows",
      std::function<absl::StatusOr<std::vector<HistoryRow>>(Txn&)>(
          [=](Txn& txn) -> absl::StatusOr<std::vector<HistoryRow>> {
            std::vector<HistoryRow> out;
            std::vector<storage::TupleAddress> addrs;
            absl::Status s = txn.Scan(
                ids.history_by_seq, std::nullopt, std::nullopt, true,
                UINT64_MAX, [&](std::string_view, storage::TupleAddress v) {
                  addrs.push_back(v);
                  return true;
                });
            if (!s.ok()) return s;
            for (storage::TupleAddress addr : addrs) {
              auto t = txn.Read(ids.history, addr);
              if (!t.ok()) return t.status();
              out.push_back(
                  {t->GetInt(0), t->GetInt(1), t->GetInt(2), t->GetInt(3)});
            }
            return out;
          }));
  if (!rows.ok()) return rows.status();
  b.history_rows = *rows;
  auto has = engine.RegisterProcedure(
      "has_seq", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                     [=](Txn& txn, int64_t seq) -> absl::StatusOr<bool> {
                       auto a = txn.Lookup(ids.history_by_seq, Key(seq));
                       if (absl::IsNotFound(a.status())) return false;
                       if (!a.ok()) return a.status();
                       return true;
                     }));
  if (!has.ok()) return has.status();
  b.has_seq = *has;
  return b;
}

absl::Status WalBank::Load(engine::Session& session) const {
  for (int id = 0; id < kWalBankAccounts; ++id) {
    auto r = session.Call<bool>(create, static_cast<int64_t>(id));
    if (!r.ok()) return r.status();
  }
  return absl::OkStatus();
}

absl::Status WalBank::Transfer(engine::Session& session, int64_t from,
                               int64_t to, int64_t amount, int64_t seq) const {
  return session.Call<bool>(transfer, from, to, amount, seq).status();
}

absl::StatusOr<std::vector<int64_t>> WalBank::Balances(
    engine::Session& s) const {
  return s.Call<std::vector<int64_t>>(balances);
}

absl::StatusOr<std::vector<HistoryRow>> WalBank::History(
    engine::Session& s) const {
  return s.Call<std::vector<HistoryRow>>(history_rows);
}

absl::StatusOr<bool> WalBank::HasSeq(engine::Session& s, int64_t seq) const {
  return s.Call<bool>(has_seq, seq);
}

std::string WalBank::CheckConsistent(engine::Session& s) const {
  auto b = Balances(s);
  if (!b.ok()) return b.status().ToString();
  auto h = History(s);
  if (!h.ok()) return h.status().ToString();
  std::vector<int64_t> expected(kWalBankAccounts, kWalBankInitialBalance);
  for (const HistoryRow& row : *h) {
    expected[row.from] -= row.amount;
    expected[row.to] += row.amount;
  }
  int64_t total = 0;
  for (int i = 0; i < kWalBankAccounts; ++i) {
    total += (*b)[i];
    if ((*b)[i] != expected[i]) {
      return absl::StrFormat(
          "account %d holds %d, but the initial balance and the %d history "
          "rows give %d",
          i, (*b)[i], h->size(), expected[i]);
    }
  }
  if (total != kWalBankAccounts * kWalBankInitialBalance) {
    return absl::StrFormat("total %d, expected %d", total,
                           kWalBankAccounts * kWalBankInitialBalance);
  }
  return "";
}

engine::EngineOptions WalBankOptions(txn::CcAlgorithm algorithm,
                                     int compute_nodes) {
  engine::EngineOptions o;
  o.fabric = TestFabricOptions(1, compute_nodes);
  o.algorithm = algorithm;
  o.retry.max_retries = 1000000;
  return o;
}

absl::Status MakeWalBankImage(txn::CcAlgorithm algorithm,
                              const std::string& path) {
  auto engine = engine::Engine::Open(WalBankOptions(algorithm));
  if (!engine.ok()) return engine.status();
  auto bank = WalBank::Define(**engine, /*create=*/true);
  if (!bank.ok()) return bank.status();
  {
    auto session = (*engine)->NewSession(0);
    if (!session.ok()) return session.status();
    if (absl::Status s = bank->Load(**session); !s.ok()) return s;
  }
  auto image = (*engine)->SaveImage(path);
  if (!image.ok()) return image.status();
  if (image->database_id == 0) {
    return absl::InternalError("the image has no database id");
  }
  return absl::OkStatus();
}

std::string WalAlgorithmName(
    const ::testing::TestParamInfo<txn::CcAlgorithm>& info) {
  return std::string(txn::CcAlgorithmName(info.param));
}

void WalBankTest::SetUp() {
  image_ = dir_.path() + "/bank.img";
  wal_dir_ = dir_.path() + "/wal";
  absl::Status s = MakeWalBankImage(GetParam(), image_);
  ASSERT_TRUE(s.ok()) << s;
}

engine::EngineOptions WalBankTest::LoggedOptions(
    wal::LogFileFactory* factory, bool early_lock_release) const {
  engine::EngineOptions o = WalBankOptions(GetParam(), compute_nodes_);
  o.image_path = image_;
  o.wal.dir = wal_dir_;
  o.wal.file_factory = factory;
  o.wal.early_lock_release = early_lock_release;
  return o;
}

absl::StatusOr<std::unique_ptr<engine::Engine>> WalBankTest::Recover(
    const std::string& wal_dir) const {
  engine::EngineOptions o = WalBankOptions(GetParam());
  o.image_path = image_;
  o.recover_wal_dir = wal_dir.empty() ? wal_dir_ : wal_dir;
  return engine::Engine::Open(o);
}

}  // namespace strand::testing
