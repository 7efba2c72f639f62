// bank: a complete strand application (examples/embed/ is a smaller one).
// It defines a table and an index, registers three stored procedures (open,
// transfer, total), and runs transfers from every compute node's threads
// while checking that the total balance never changes.
//
//   bank                                  # embedded: 2 compute nodes here
//   bank --fabric=verbs --cluster=FILE --node_id=N   # one process per node
//
// Over verbs, compute node 0 creates and fills the table; the others find
// it in the shared catalog and start once every account is there. Every process
// checks the total while the others keep transferring: serializable reads must
// see it exact at any moment.

#include <gflags/gflags.h>

#include <atomic>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/run_output.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "index/key_codec.h"
#include "rdma/fabric_flags.h"

DEFINE_int32(accounts, 1000, "Number of accounts");
DEFINE_int32(threads, 2, "Worker threads per compute node (1 to 256)");
DEFINE_double(duration_s, 3, "Seconds of transfers");
DEFINE_string(cc, "2pl", "Concurrency control: 2pl, to or occ");

namespace strand {
namespace {

using engine::Engine;
using txn::Txn;

constexpr int64_t kInitialBalance = 100;
// Worker threads per compute node; tpcc allows as many.
constexpr int kMaxThreads = 256;

std::string Key(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }

struct Bank {
  txn::TableId accounts;
  txn::IndexId by_id;
  engine::Procedure<bool(int64_t, int64_t)> open;
  engine::Procedure<bool(int64_t, int64_t, int64_t)> transfer;
  engine::Procedure<int64_t()> total;
};

// Tables and procedures; node 0 creates the table, others open it.
absl::StatusOr<Bank> Define(Engine& engine, bool create) {
  Bank bank;
  auto schema =
      storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                               {"balance", storage::ColumnType::kInt64}});
  if (!schema.ok()) return schema.status();
  if (create) {
    auto t = engine.CreateTable("accounts", *schema);
    if (!t.ok()) return t.status();
    bank.accounts = *t;
    // Declared on the id column: every Insert adds its entry, Update and
    // Delete keep it, with no help from the procedures.
    auto i = engine.CreateIndex("accounts_by_id", bank.accounts, {"id"},
                                /*unique=*/true);
    if (!i.ok()) return i.status();
    bank.by_id = *i;
  } else {
    // Wait for node 0 to create the table, then its index.
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    absl::StatusOr<txn::TableId> table;
    absl::StatusOr<txn::IndexId> index;
    while (!(table = engine.OpenTable("accounts")).ok() ||
           !(index = engine.OpenIndex("accounts_by_id")).ok()) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError("node 0 never created the bank");
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    bank.accounts = *table;
    bank.by_id = *index;
  }
  const txn::TableId accounts = bank.accounts;
  const txn::IndexId by_id = bank.by_id;
  auto schema_of = engine.schema(accounts);
  if (!schema_of.ok()) return schema_of.status();
  const storage::Schema* s = *schema_of;

  auto open = engine.RegisterProcedure(
      "open",
      [=](Txn& txn, int64_t first, int64_t count) -> absl::StatusOr<bool> {
        for (int64_t id = first; id < first + count; ++id) {
          storage::TupleBuffer row(*s);
          row.SetInt(0, id);
          row.SetInt(1, kInitialBalance);
          auto at = txn.Insert(accounts, row);
          if (!at.ok()) return at.status();
        }
        return true;
      });
  auto transfer = engine.RegisterProcedure(
      "transfer",
      [=](Txn& txn, int64_t from, int64_t to,
          int64_t amount) -> absl::StatusOr<bool> {
        auto a = txn.Lookup(by_id, Key(from));
        if (!a.ok()) return a.status();
        auto b = txn.Lookup(by_id, Key(to));
        if (!b.ok()) return b.status();
        auto src = txn.Modify(accounts, *a);
        if (!src.ok()) return src.status();
        const int64_t balance = (*src)->view().GetInt(1);
        if (balance < amount) return txn.UserAbort("insufficient funds");
        (*src)->SetInt(1, balance - amount);
        auto dst = txn.Modify(accounts, *b);
        if (!dst.ok()) return dst.status();
        (*dst)->SetInt(1, (*dst)->view().GetInt(1) + amount);
        return true;
      });
  auto total = engine.RegisterProcedure(
      "total", [=](Txn& txn) -> absl::StatusOr<int64_t> {
        int64_t sum = 0;
        absl::Status read;
        absl::Status scan = txn.Scan(
            by_id, std::nullopt, std::nullopt, /*forward=*/true, UINT64_MAX,
            [&](std::string_view, storage::TupleAddress at) {
              auto row = txn.Read(accounts, at);
              if (!row.ok()) read = row.status();
              if (row.ok()) sum += row->GetInt(1);
              return row.ok();
            });
        if (!scan.ok()) return scan;
        if (!read.ok()) return read;
        return sum;
      });
  if (!open.ok()) return open.status();
  if (!transfer.ok()) return transfer.status();
  if (!total.ok()) return total.status();
  bank.open = *open;
  bank.transfer = *transfer;
  bank.total = *total;
  return bank;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  auto fabric = rdma::FabricOptionsFromFlags();
  if (!fabric.ok()) ExitWithUsageError(std::string(fabric.status().message()));
  auto algorithm = txn::ParseCcAlgorithm(FLAGS_cc);
  if (!algorithm.ok()) {
    ExitWithUsageError(std::string(algorithm.status().message()));
  }
  if (FLAGS_accounts < 2 || !(FLAGS_duration_s > 0)) {
    ExitWithUsageError("--accounts >= 2, --duration_s > 0");
  }
  // Each thread opens a session and keeps a transaction going; thousands
  // of them only queue for the cores (and for the accounts' latches).
  if (FLAGS_threads < 1 || FLAGS_threads > kMaxThreads) {
    ExitWithUsageError(
        absl::StrFormat("--threads=%d is out of range: use 1 to %d",
                        FLAGS_threads, kMaxThreads));
  }
  engine::EngineOptions options;
  options.fabric = *fabric;
  options.algorithm = *algorithm;
  if (fabric->kind == rdma::FabricKind::kLoopback &&
      fabric->compute_nodes == 1 &&
      gflags::GetCommandLineFlagInfoOrDie("compute_nodes").is_default) {
    options.fabric.compute_nodes = 2;  // show two nodes sharing the data
  }
  auto engine = Engine::Open(options);
  if (!engine.ok()) {
    std::cerr << "bank: " << engine.status() << "\n";
    return 1;
  }
  const std::vector<rdma::ComputeNodeId> nodes =
      (*engine)->local_compute_nodes();
  const bool creator = nodes.front() == 0;
  auto bank = Define(**engine, creator);
  if (!bank.ok()) {
    std::cerr << "bank: " << bank.status() << "\n";
    return 1;
  }
  const int64_t expected = int64_t{FLAGS_accounts} * kInitialBalance;
  if (creator) {
    auto session = *(*engine)->NewSession(0);
    for (int64_t first = 0; first < FLAGS_accounts; first += 100) {
      auto r = session->Call(bank->open, first,
                             std::min<int64_t>(100, FLAGS_accounts - first));
      if (!r.ok()) {
        std::cerr << "bank: loading: " << r.status() << "\n";
        return 1;
      }
    }
  } else {
    // Another process loads: start once every account is there.
    auto session = *(*engine)->NewSession(nodes.front());
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    for (;;) {
      auto total = session->Call(bank->total);
      if (total.ok() && *total == expected) break;
      if (absl::Now() > deadline) {
        std::cerr << "bank: the accounts were never loaded\n";
        return 1;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  // The transfers' figures are the run's: what loading did is subtracted.
  const engine::ProcedureStats stats_before =
      (*engine)->Stats()[bank->transfer];
  const cc::CacheStats cache_before = (*engine)->CacheStats();
  const absl::Time start = absl::Now();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> transfers{0}, refused{0}, gave_up{0}, failed{0};
  std::vector<std::thread> workers;
  for (rdma::ComputeNodeId node : nodes) {
    for (int t = 0; t < FLAGS_threads; ++t) {
      workers.emplace_back([&, node, t] {
        auto session = *(*engine)->NewSession(node);
        std::mt19937_64 rng(node * 1000 + t);
        while (!stop.load()) {
          const int64_t from = rng() % FLAGS_accounts;
          const int64_t to =
              (from + 1 + rng() % (FLAGS_accounts - 1)) % FLAGS_accounts;
          const int64_t amount = rng() % 50;
          auto r = session->Call(bank->transfer, from, to, amount);
          if (r.ok()) {
            transfers++;
          } else if (engine::IsUserAbort(r.status())) {
            refused++;  // insufficient funds
          } else if (engine::IsRetriesExhausted(r.status())) {
            gave_up++;  // contention: not an error, but counted apart
          } else {
            std::cerr << "bank: transfer: " << r.status() << "\n";
            failed++;
          }
        }
      });
    }
  }
  // Check the total while transfers run.
  auto checker = *(*engine)->NewSession(nodes.front());
  int checks = 0, wrong = 0;
  const absl::Time end = absl::Now() + absl::Seconds(FLAGS_duration_s);
  while (absl::Now() < end) {
    auto total = checker->Call(bank->total);
    if (!total.ok() || *total != expected) {
      std::cerr << "bank: total is "
                << (total.ok() ? absl::StrCat(*total)
                               : total.status().ToString())
                << ", expected " << expected << "\n";
      ++wrong;
    }
    ++checks;
  }
  stop = true;
  for (auto& w : workers) w.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  auto final_total = checker->Call(bank->total);
  if (!final_total.ok() || *final_total != expected) ++wrong;

  engine::ProcedureStats stats = (*engine)->Stats()[bank->transfer];
  for (size_t i = 0; i < stats.aborts.size(); ++i) {
    stats.aborts[i] -= stats_before.aborts[i];
  }
  const cc::CacheStats cache = (*engine)->CacheStats() - cache_before;
  output.human() << absl::StrFormat(
      "bank: compute nodes here %d, %d transfers (%.0f/s), %d refused for "
      "insufficient funds, %d gave up on contention, %d failed; total "
      "checked %d times while running: %s\ntransfer stats: %s\n",
      nodes.size(), transfers.load(), transfers.load() / seconds,
      refused.load(), gave_up.load(), failed.load(), checks + 1,
      wrong == 0 ? "always exact" : "WRONG", stats.ToString());
  const double txns = std::max<double>(transfers.load(), 1);
  JsonLine j = output.Record();
  rdma::AddFabricJson(options.fabric, (*engine)->fabric(), j);
  j.Add("bench", "bank")
      .Add("cc", FLAGS_cc)
      .Add("accounts", FLAGS_accounts)
      .Add("threads", FLAGS_threads)
      .Add("duration_s", seconds)
      .Add("transfers", transfers.load())
      .Add("txn_per_sec", transfers.load() / seconds)
      .Add("refused", refused.load())
      .Add("gave_up", gave_up.load())
      .Add("failed", failed.load())
      .Add("total_checks", checks + 1)
      .Add("total_always_exact", wrong == 0)
      .AddObject("aborts_by_reason", txn::AbortCountsJson(stats.aborts))
      .Add("invalidations_per_txn", cache.invalidations_sent / txns)
      .Add("evictions_per_txn", cache.evictions / txns)
      .Add("cache_hit_ratio", cache.hit_ratio());
  // Transfers that committed, from the call to the commit, retries included:
  // they run in this window only, so the engine's histogram is the run's.
  stats.latency.AddTo(j, "commit", LatencyHistogram::Unit::kMicros);
  output.Print(j);
  return (wrong == 0 && failed == 0) ? 0 : 1;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Bank transfers on strand: the example embedding application.\n"
      "Usage: bank [--compute_nodes=2] [--threads=2] [--cc=2pl|to|occ] "
      "[--json|--csv]");
  return strand::Main();
}
