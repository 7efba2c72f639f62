// The smallest complete strand program: two compute nodes in this process
// share a table of accounts with two indexes. It opens accounts, withdraws
// on the other node, has an overdraft refused, then reads and closes
// accounts in an interactive transaction: Read, Scan, the iterator and
// Delete, each seeing the transaction's own writes. docs/embedding.md
// explains each step; examples/bank.cc is a larger application.
//
// It includes strand's public headers only ("strand/..."), as every
// application should: scripts/embed_check.sh builds it against an
// installed strand whose include directory holds nothing else.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "strand/strand.h"

namespace {

using strand::ColumnType;
using strand::Engine;
using strand::KeyBuilder;
using strand::Txn;

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

// Index keys are the declared columns' values, encoded as KeyBuilder does
// (txn/index_key.h): an int64 column is Int64, a char(n) column String.
std::string IdKey(int64_t id) { return KeyBuilder().Int64(id).Build(8); }
std::string OwnerKey(const std::string& owner) {
  return KeyBuilder().String(owner, 12).Build(12);
}

}  // namespace

int main() {
  // 1. Open: one memory node and two compute nodes, all in this process
  // (the loopback fabric). Over RDMA only the fabric options change.
  strand::EngineOptions options;
  options.fabric.compute_nodes = 2;
  options.fabric.pool_bytes = 64 << 20;
  auto engine = Need(Engine::Open(options), "open");

  // 2. Tables and indexes, before any session. A row lives in one GCL:
  // it may have up to engine->max_row_bytes() bytes of columns
  // (CreateTable refuses a wider one, naming EngineOptions::cc.gcl_size).
  // Both indexes are declared on columns, so inserts, updates and deletes
  // keep them with no help from the procedures.
  auto schema = Need(strand::Schema::Create({{"id", ColumnType::kInt64},
                                             {"owner", ColumnType::kChar, 12},
                                             {"balance", ColumnType::kInt64}}),
                     "schema");
  std::cout << "embed_example: a row of " << schema.data_bytes()
            << " bytes of columns (at most " << engine->max_row_bytes()
            << " fit one GCL)\n";
  const auto accounts = Need(engine->CreateTable("accounts", schema), "table");
  const auto by_id = Need(
      engine->CreateIndex("accounts_by_id", accounts, {"id"}, /*unique=*/true),
      "index by id");
  const auto by_owner = Need(engine->CreateIndex("accounts_by_owner", accounts,
                                                 {"owner"}, /*unique=*/false),
                             "index by owner");

  // 3. Stored procedures: plain lambdas; each call is one transaction,
  // committed when it returns OK. Sessions run them concurrently. An error
  // returned early (STRAND_ASSIGN_OR_RETURN, strand/status.h) rolls the
  // call back.
  auto open =
      Need(engine->RegisterProcedure(
               "open",
               [=](Txn& txn, int64_t id, std::string owner,
                   int64_t balance) -> absl::StatusOr<bool> {
                 STRAND_ASSIGN_OR_RETURN(strand::TupleBuffer row,
                                         txn.NewRow(accounts));
                 row.SetInt("id", id);
                 row.SetChars("owner", owner);
                 row.SetInt("balance", balance);
                 // A taken id fails this statement (AlreadyExists, naming the
                 // index and the key); the procedure passes it on.
                 STRAND_RETURN_IF_ERROR(txn.Insert(accounts, row).status());
                 return true;
               }),
           "register open");
  auto withdraw = Need(
      engine->RegisterProcedure(
          "withdraw",
          [=](Txn& txn, int64_t id, int64_t amount) -> absl::StatusOr<int64_t> {
            // NotFound if there is no such account.
            STRAND_ASSIGN_OR_RETURN(strand::TupleAddress at,
                                    txn.Lookup(by_id, IdKey(id)));
            STRAND_ASSIGN_OR_RETURN(strand::TupleBuffer * row,
                                    txn.Modify(accounts, at));
            const int64_t balance = row->view().GetInt("balance");
            if (balance < amount) return txn.UserAbort("insufficient funds");
            row->SetInt("balance", balance - amount);
            return balance - amount;
          }),
      "register withdraw");

  // 4. Sessions: one per thread, on a compute node of this process.
  auto on_node0 = Need(engine->NewSession(0), "session on node 0");
  auto on_node1 = Need(engine->NewSession(1), "session on node 1");
  Need(on_node0->Call(open, 7, "ada", 100), "open account 7");
  Need(on_node0->Call(open, 8, "ada", 50), "open account 8");
  Need(on_node1->Call(open, 9, "bob", 10), "open account 9");
  // Typed calls: the compiler checks the arguments against the procedure.
  const int64_t left = Need(on_node1->Call(withdraw, 7, 30), "withdraw 30");
  Expect(left == 70, "node 1 saw the balance node 0 wrote");

  // 5. Errors: a refusal is a user abort, told apart without reading
  // text; a taken key is AlreadyExists; neither changed anything.
  absl::StatusOr<int64_t> overdraft = on_node0->Call(withdraw, 7, 500);
  Expect(strand::IsUserAbort(overdraft.status()),
         "an overdraft is refused as a user abort");
  absl::StatusOr<bool> again = on_node0->Call(open, 7, "eve", 1);
  Expect(absl::IsAlreadyExists(again.status()), "a taken id is refused");

  // 6. An interactive transaction: any callable, no registration, retried
  // on conflicts like a call. It totals ada's accounts with the iterator,
  // closes account 8 (Delete), and sees its own writes: the iterator and
  // a backward Scan no longer find account 8, nor does Lookup.
  absl::StatusOr<std::string> report =
      on_node1->Run([&](Txn& txn) -> absl::StatusOr<std::string> {
        int64_t total = 0;
        strand::IndexIterator it = txn.NewIterator(
            by_owner, {.low = OwnerKey("ada"), .high = OwnerKey("ada")});
        for (; it.Valid(); it.Next()) {
          auto row = txn.Read(accounts, it.address());
          if (!row.ok()) return row.status();
          total += row->GetInt("balance");
        }
        if (!it.status().ok()) return it.status();
        auto eight = txn.Lookup(by_id, IdKey(8));
        if (!eight.ok()) return eight.status();
        if (absl::Status s = txn.Delete(accounts, *eight); !s.ok()) return s;
        std::string ids;
        absl::Status scan = txn.Scan(
            by_id, std::nullopt, std::nullopt, /*forward=*/false, UINT64_MAX,
            [&](std::string_view, strand::TupleAddress at) {
              auto row = txn.Read(accounts, at);
              if (row.ok()) ids += std::to_string(row->GetInt("id")) + " ";
              return row.ok();
            });
        if (!scan.ok()) return scan;
        if (!absl::IsNotFound(txn.Lookup(by_id, IdKey(8)).status())) {
          return absl::InternalError("account 8 is still found");
        }
        return "ada had " + std::to_string(total) + "; accounts now " + ids;
      });
  Expect(Need(report, "interactive transaction") ==
             "ada had 120; accounts now 9 7 ",
         "the interactive transaction saw its own delete");

  std::cout << "embed_example: ok: account 7 holds " << left
            << " after a withdrawal on another compute node; the overdraft "
               "was refused ("
            << overdraft.status().message() << "); " << *report << "\n";
  return 0;
}
