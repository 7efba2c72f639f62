// The smallest complete strand program: two compute nodes in this process
// share one table of accounts. Node 0 opens an account, node 1 withdraws
// from it, and an overdraft is refused. docs/embedding.md explains each
// step; examples/bank.cc is a larger application.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "index/key_codec.h"

namespace {

using strand::engine::Engine;
using strand::storage::ColumnType;
using strand::txn::Txn;

constexpr int kId = 0, kBalance = 1;  // the columns

// The value of `result`, or exit(1) with what failed.
template <typename T>
T Need(absl::StatusOr<T> result, const std::string& what) {
  if (!result.ok()) {
    std::cerr << "embed_example: " << what << ": " << result.status() << "\n";
    std::exit(1);
  }
  return *std::move(result);
}

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "embed_example: " << what << "\n";
    std::exit(1);
  }
}

}  // namespace

int main() {
  // 1. Open: one memory node and two compute nodes, all in this process
  // (the loopback fabric). Over RDMA only the fabric options change.
  strand::engine::EngineOptions options;
  options.fabric.compute_nodes = 2;
  options.fabric.pool_bytes = 64 << 20;
  auto engine = Need(Engine::Open(options), "open");

  // 2. Tables and indexes, before any session. The index is declared on
  // the id column, so inserts add its entries themselves.
  auto schema =
      Need(strand::storage::Schema::Create(
               {{"id", ColumnType::kInt64}, {"balance", ColumnType::kInt64}}),
           "schema");
  const auto accounts = Need(engine->CreateTable("accounts", schema), "table");
  const auto by_id = Need(
      engine->CreateIndex("accounts_by_id", accounts, {"id"}, /*unique=*/true),
      "index");
  const strand::storage::Schema* row_schema = &engine->schema(accounts);

  // 3. Stored procedures: plain lambdas; each call is one transaction,
  // committed when it returns OK. Sessions run them concurrently. An error
  // returned early (STRAND_ASSIGN_OR_RETURN, base/status_macros.h) rolls
  // the call back.
  auto open = Need(
      engine->RegisterProcedure(
          "open",
          [=](Txn& txn, int64_t id, int64_t balance) -> absl::StatusOr<bool> {
            strand::storage::TupleBuffer row(*row_schema);
            row.SetInt(kId, id);
            row.SetInt(kBalance, balance);
            STRAND_ASSIGN_OR_RETURN(auto at, txn.Insert(accounts, row));
            STRAND_RETURN_IF_ERROR(
                txn.AddIndexEntries(accounts, row.view(), at));
            return true;
          }),
      "register open");
  auto withdraw = Need(
      engine->RegisterProcedure(
          "withdraw",
          [=](Txn& txn, int64_t id, int64_t amount) -> absl::StatusOr<int64_t> {
            const std::string key =
                strand::index::KeyBuilder().Int64(id).Build(8);
            STRAND_ASSIGN_OR_RETURN(auto at, txn.Lookup(by_id, key));
            STRAND_ASSIGN_OR_RETURN(auto row, txn.Modify(accounts, at));
            const int64_t balance = row->view().GetInt(kBalance);
            if (balance < amount) return txn.UserAbort("insufficient funds");
            row->SetInt(kBalance, balance - amount);
            return balance - amount;
          }),
      "register withdraw");

  // 4. Sessions: one per thread, on a compute node of this process.
  auto on_node0 = Need(engine->NewSession(0), "session on node 0");
  auto on_node1 = Need(engine->NewSession(1), "session on node 1");
  Expect(Need(on_node0->Call(open, 7, 100), "open account 7"), "open");
  // Typed calls: the compiler checks the arguments against the procedure.
  const int64_t left = Need(on_node1->Call(withdraw, 7, 30), "withdraw 30");
  Expect(left == 70, "node 1 saw the balance node 0 wrote");

  // 5. Errors: a refusal is a user abort, told apart without reading text.
  absl::StatusOr<int64_t> overdraft = on_node0->Call(withdraw, 7, 500);
  Expect(strand::engine::IsUserAbort(overdraft.status()),
         "an overdraft is refused as a user abort");
  Expect(Need(on_node0->Call(withdraw, 7, 0), "read") == 70,
         "the refused withdrawal changed nothing");

  std::cout << "embed_example: ok: account 7 holds " << left
            << " after a withdrawal on another compute node; the overdraft "
               "was refused ("
            << overdraft.status().message() << ")\n";
  return 0;
}
