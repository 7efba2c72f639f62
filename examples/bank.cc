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
#include "base/option_checks.h"
#include "base/run_output.h"
#include "base/status_macros.h"
#include "engine/engine.h"
#include "engine/engine_internals.h"
#include "engine/engine_options.h"
#include "engine/session.h"
#include "index/key_codec.h"
#include "rdma/fabric_flags.h"
#include "storage/tuple_header.h"

namespace strand {

// What bank is told: one field per flag, checked together by Validate
// before the engine opens.
struct BankOptions {
  int accounts = 1000;
  int threads = 2;  // per compute node
  double duration_s = 3;
  std::string cc = "2pl";
  engine::EngineOptions engine;  // the fabric's flags, and cc

  absl::Status Validate(const OptionNaming& naming) const;
};

}  // namespace strand

namespace {
// Every flag's default is the options struct's.
const strand::BankOptions kDefaults;
}  // namespace

DEFINE_int32(accounts, kDefaults.accounts, "Number of accounts");
DEFINE_int32(threads, kDefaults.threads,
             "Worker threads per compute node (1 to 256)");
DEFINE_double(duration_s, kDefaults.duration_s, "Seconds of transfers");
DEFINE_string(cc, kDefaults.cc.c_str(), "Concurrency control: 2pl, to or occ");

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
  STRAND_ASSIGN_OR_RETURN(
      const storage::Schema schema,
      storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                               {"balance", storage::ColumnType::kInt64}}));
  if (create) {
    STRAND_ASSIGN_OR_RETURN(bank.accounts,
                            engine.CreateTable("accounts", schema));
    // Declared on the id column: every Insert adds its entry, Update and
    // Delete keep it, with no help from the procedures.
    STRAND_ASSIGN_OR_RETURN(
        bank.by_id, engine.CreateIndex("accounts_by_id", bank.accounts, {"id"},
                                       /*unique=*/true));
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
  STRAND_ASSIGN_OR_RETURN(const storage::Schema* s, engine.schema(accounts));

  auto open = engine.RegisterProcedure(
      "open",
      [=](Txn& txn, int64_t first, int64_t count) -> absl::StatusOr<bool> {
        for (int64_t id = first; id < first + count; ++id) {
          storage::TupleBuffer row(*s);
          row.SetInt(0, id);
          row.SetInt(1, kInitialBalance);
          STRAND_RETURN_IF_ERROR(txn.Insert(accounts, row).status());
        }
        return true;
      });
  auto transfer = engine.RegisterProcedure(
      "transfer",
      [=](Txn& txn, int64_t from, int64_t to,
          int64_t amount) -> absl::StatusOr<bool> {
        STRAND_ASSIGN_OR_RETURN(auto a, txn.Lookup(by_id, Key(from)));
        STRAND_ASSIGN_OR_RETURN(auto b, txn.Lookup(by_id, Key(to)));
        STRAND_ASSIGN_OR_RETURN(auto src, txn.Modify(accounts, a));
        const int64_t balance = src->view().GetInt(1);
        if (balance < amount) return txn.UserAbort("insufficient funds");
        src->SetInt(1, balance - amount);
        STRAND_ASSIGN_OR_RETURN(auto dst, txn.Modify(accounts, b));
        dst->SetInt(1, dst->view().GetInt(1) + amount);
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
  STRAND_ASSIGN_OR_RETURN(bank.open, std::move(open));
  STRAND_ASSIGN_OR_RETURN(bank.transfer, std::move(transfer));
  STRAND_ASSIGN_OR_RETURN(bank.total, std::move(total));
  return bank;
}

constexpr OptionSetting kAccounts{"accounts", "accounts"};
constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr OptionSetting kCc{"cc", "cc"};
// What an account takes in the pool at least: its row (two int64 columns
// and the tuple header) and its index entry (8-byte key, 8-byte value).
constexpr uint64_t kMinBytesPerAccount = 16 + storage::kTupleHeaderBytes + 16;

}  // namespace

absl::Status BankOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(CheckChoice(naming, kCc, cc, {"2pl", "to", "occ"}));
  // Each thread opens a session and keeps a transaction going; thousands
  // of them only queue for the cores (and for the accounts' latches).
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kThreads, threads, 1, kMaxThreads,
                                      "per compute node"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kDuration, duration_s, 1e-3, 86400.0, "seconds"));
  // Over verbs the memory nodes' own --pool_mb decides.
  const rdma::FabricOptions& fabric = engine.fabric;
  const uint64_t pool = fabric.kind == rdma::FabricKind::kLoopback
                            ? fabric.pool_bytes * fabric.memory_nodes
                            : uint64_t{1} << 40;
  const int most = static_cast<int>(
      std::min<uint64_t>(INT32_MAX, pool / kMinBytesPerAccount));
  if (accounts > most && accounts >= 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s take at least %d MiB, more than the pool's %d MiB (--pool_mb x "
        "--memory_nodes): lower --accounts or raise --pool_mb",
        naming.Setting(kAccounts, accounts),
        accounts * kMinBytesPerAccount >> 20, pool >> 20));
  }
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kAccounts, accounts, 2, most,
                                      "(transfers need two)"));
  return engine.Validate(naming.uses_flags()
                             ? OptionNaming::Flags("EngineOptions::")
                             : naming.Member("engine"));
}

namespace {

// The options from the flags, validated: exits with status 2 naming the
// flag on any misuse, before the engine opens.
BankOptions OptionsFromFlags() {
  BankOptions o;
  o.accounts = FLAGS_accounts;
  o.threads = FLAGS_threads;
  o.duration_s = FLAGS_duration_s;
  o.cc = FLAGS_cc;
  o.engine.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  if (o.engine.fabric.kind == rdma::FabricKind::kLoopback &&
      !FlagsGiven().contains("compute_nodes")) {
    o.engine.fabric.compute_nodes = 2;  // show two nodes sharing the data
  }
  if (auto algorithm = txn::ParseCcAlgorithm(o.cc); algorithm.ok()) {
    o.engine.algorithm = *algorithm;
  }
  ExitIfUsageError(o.Validate(OptionNaming::Flags("BankOptions::")));
  return o;
}

// Node 0 opens the accounts, 100 a transaction; another process waits
// until every account is there.
absl::Status OpenAccounts(const BankOptions& o, Engine& engine,
                          const Bank& bank, bool creator) {
  const std::vector<rdma::ComputeNodeId> nodes = engine.local_compute_nodes();
  STRAND_ASSIGN_OR_RETURN(auto session, engine.NewSession(nodes.front()));
  if (creator) {
    for (int64_t first = 0; first < o.accounts; first += 100) {
      STRAND_RETURN_IF_ERROR(
          session
              ->Call(bank.open, first,
                     std::min<int64_t>(100, o.accounts - first))
              .status());
    }
    return absl::OkStatus();
  }
  const int64_t expected = int64_t{o.accounts} * kInitialBalance;
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  for (;;) {
    auto total = session->Call(bank.total);
    if (total.ok() && *total == expected) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("the accounts were never loaded");
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

// The transfers' outcomes, and the total's checks while they ran.
struct Outcome {
  std::atomic<uint64_t> transfers{0}, refused{0}, gave_up{0}, failed{0};
  int checks = 0, wrong = 0;
  double seconds = 0;
};

// Transfers from --threads threads on every hosted node for --duration_s,
// while this thread checks the total in every snapshot it reads.
void RunTransfers(const BankOptions& o, Engine& engine, const Bank& bank,
                  Outcome& out) {
  const std::vector<rdma::ComputeNodeId> nodes = engine.local_compute_nodes();
  const int64_t expected = int64_t{o.accounts} * kInitialBalance;
  const absl::Time start = absl::Now();
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (rdma::ComputeNodeId node : nodes) {
    for (int t = 0; t < o.threads; ++t) {
      workers.emplace_back([&, node, t] {
        auto session = *engine.NewSession(node);
        std::mt19937_64 rng(node * 1000 + t);
        while (!stop.load()) {
          const int64_t from = rng() % o.accounts;
          const int64_t to = (from + 1 + rng() % (o.accounts - 1)) % o.accounts;
          const int64_t amount = rng() % 50;
          auto r = session->Call(bank.transfer, from, to, amount);
          if (r.ok()) {
            out.transfers++;
          } else if (engine::IsUserAbort(r.status())) {
            out.refused++;  // insufficient funds
          } else if (engine::IsRetriesExhausted(r.status())) {
            out.gave_up++;  // contention: not an error, but counted apart
          } else {
            std::cerr << "bank: transfer: " << r.status() << "\n";
            out.failed++;
          }
        }
      });
    }
  }
  auto checker = *engine.NewSession(nodes.front());
  auto check = [&] {
    auto total = checker->Call(bank.total);
    if (!total.ok() || *total != expected) {
      std::cerr << "bank: total is "
                << (total.ok() ? absl::StrCat(*total)
                               : total.status().ToString())
                << ", expected " << expected << "\n";
      ++out.wrong;
    }
    ++out.checks;
  };
  const absl::Time end = absl::Now() + absl::Seconds(o.duration_s);
  while (absl::Now() < end) check();
  stop = true;
  for (auto& w : workers) w.join();
  out.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  check();  // once more, quiescent
}

void Report(const BankOptions& o, Engine& engine, const Outcome& out,
            const engine::ProcedureStats& stats, const cc::CacheStats& cache,
            RunOutput& output) {
  const uint64_t transfers = out.transfers.load();
  output.human() << absl::StrFormat(
      "bank: compute nodes here %d, %d transfers (%.0f/s), %d refused for "
      "insufficient funds, %d gave up on contention, %d failed; total "
      "checked %d times while running: %s\ntransfer stats: %s\n",
      engine.local_compute_nodes().size(), transfers, transfers / out.seconds,
      out.refused.load(), out.gave_up.load(), out.failed.load(), out.checks,
      out.wrong == 0 ? "always exact" : "WRONG", stats.ToString());
  const double txns = std::max<double>(transfers, 1);
  JsonLine j = output.Record();
  rdma::AddFabricJson(o.engine.fabric, engine::EngineInternals::fabric(engine),
                      j);
  j.Add("bench", "bank")
      .Add("cc", o.cc)
      .Add("accounts", o.accounts)
      .Add("threads", o.threads)
      .Add("duration_s", out.seconds)
      .Add("transfers", transfers)
      .Add("txn_per_sec", transfers / out.seconds)
      .Add("refused", out.refused.load())
      .Add("gave_up", out.gave_up.load())
      .Add("failed", out.failed.load())
      .Add("total_checks", out.checks)
      .Add("total_always_exact", out.wrong == 0)
      .AddObject("aborts_by_reason", txn::AbortCountsJson(stats.aborts))
      .Add("invalidations_per_txn", cache.invalidations_sent / txns)
      .Add("evictions_per_txn", cache.evictions / txns)
      .Add("cache_hit_ratio", cache.hit_ratio());
  // Transfers that committed, from the call to the commit, retries included:
  // they run in this window only, so the engine's histogram is the run's.
  stats.latency.AddTo(j, "commit", LatencyHistogram::Unit::kMicros);
  output.Print(j);
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const BankOptions options = OptionsFromFlags();
  auto fail = [](absl::string_view what, const absl::Status& s) {
    std::cerr << "bank: " << what << s << "\n";
    return 1;
  };
  auto engine = Engine::Open(options.engine);
  if (!engine.ok()) return fail("", engine.status());
  const bool creator = (*engine)->local_compute_nodes().front() == 0;
  auto bank = Define(**engine, creator);
  if (!bank.ok()) return fail("", bank.status());
  if (absl::Status s = OpenAccounts(options, **engine, *bank, creator);
      !s.ok()) {
    return fail("loading: ", s);
  }
  // The transfers' figures are the run's: what loading did is subtracted.
  const engine::ProcedureStats before = (*engine)->Stats()[bank->transfer];
  const cc::CacheStats cache_before = (*engine)->CacheStats();
  Outcome out;
  RunTransfers(options, **engine, *bank, out);
  engine::ProcedureStats stats = (*engine)->Stats()[bank->transfer];
  for (size_t i = 0; i < stats.aborts.size(); ++i) {
    stats.aborts[i] -= before.aborts[i];
  }
  Report(options, **engine, out, stats, (*engine)->CacheStats() - cache_before,
         output);
  return (out.wrong == 0 && out.failed == 0) ? 0 : 1;
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
