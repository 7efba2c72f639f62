#include "tpcc/driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/progress_line.h"
#include "base/run_progress.h"
#include "engine/call_status.h"
#include "engine/engine_internals.h"
#include "engine/session.h"
#include "tpcc/deferred_delivery.h"
#include "tpcc/delivery.h"
#include "tpcc/order_status.h"
#include "tpcc/payment.h"
#include "tpcc/stock_level.h"
#include "tpcc/terminal.h"
#include "wal/log_writer.h"

namespace strand::tpcc {
namespace {

// One thread's measured counts, on cache lines of their own: the thread
// writes them on every call.
struct alignas(64) ThreadResult {
  std::array<TypeResult, kTxnTypes> by_type;
  DeferredDeliveryStats deliveries;
  uint64_t commits = 0;
  uint64_t failed_by_node_failure = 0;  // while its node was down
  // Partitioned mode: its calls that needed a failed node's partitions.
  uint64_t unavailable = 0;
  std::string error;
};

// Aborted attempts the engine retries (conflicts, validation failures) of
// every procedure: what the report's abort rate counts, for the
// per-second series. New-Order's rollbacks (user aborts) are not aborts.
uint64_t RetriedAborts(const std::vector<engine::ProcedureStats>& stats) {
  uint64_t n = 0;
  for (const engine::ProcedureStats& s : stats) {
    n += s.aborts_for(txn::AbortReason::kConflict) +
         s.aborts_for(txn::AbortReason::kValidation);
  }
  return n;
}

// One hosted compute node's log and its counters.
struct NodeLog {
  const wal::LogWriter* writer = nullptr;
  WalRunStats stats;
};

// Each hosted compute node's, in local_compute_nodes' order.
std::vector<NodeLog> NodeLogs(engine::Engine& engine) {
  std::vector<NodeLog> logs;
  for (rdma::ComputeNodeId node : engine.local_compute_nodes()) {
    NodeLog& n = logs.emplace_back();
    n.writer = engine::EngineInternals::log(engine, node);
    if (n.writer == nullptr) continue;
    const wal::LogWriterStats s = n.writer->stats();
    n.stats = {
        .records = s.records, .flushes = s.flushes, .bytes = s.bytes_written};
  }
  return logs;
}

// The log work between two NodeLogs. A node that rejoined after a failure
// logs with a new writer, counting from zero: its count is the new
// writer's (what the failed one did in the window is not counted).
WalRunStats WalWorkSince(const std::vector<NodeLog>& before,
                         const std::vector<NodeLog>& now) {
  WalRunStats sum;
  for (size_t i = 0; i < now.size() && i < before.size(); ++i) {
    const WalRunStats& b = before[i].stats;
    const WalRunStats& n = now[i].stats;
    const bool restarted =
        now[i].writer != before[i].writer || n.records < b.records;
    sum.records += n.records - (restarted ? 0 : b.records);
    sum.flushes += n.flushes - (restarted ? 0 : b.flushes);
    sum.bytes += n.bytes - (restarted ? 0 : b.bytes);
  }
  return sum;
}

// Retried aborts of each hosted compute node's sessions so far, by node id
// (`slots` of them).
std::vector<uint64_t> AbortsByNode(
    engine::Engine& engine, const std::vector<rdma::ComputeNodeId>& nodes,
    size_t slots) {
  std::vector<uint64_t> aborts(slots, 0);
  for (rdma::ComputeNodeId n : nodes) {
    aborts[n] = RetriedAborts(engine.Stats(n));
  }
  return aborts;
}

// What every worker of a run shares: the database, the options, and the
// switches that open and close the measured window.
struct SharedRun {
  SharedRun(TpccDatabase& database, const DriverOptions& driver_options,
            const std::vector<rdma::ComputeNodeId>& nodes)
      : db(database),
        options(driver_options),
        hosted(nodes),
        node_slots(*std::max_element(nodes.begin(), nodes.end()) + 1),
        commits(nodes.size() * driver_options.threads_per_node) {
    const Procedures& p = db.procedures();
    ids = {p.new_order, p.payment, p.order_status, p.delivery, p.stock_level};
  }

  TpccDatabase& db;
  const DriverOptions& options;
  // The hosted compute nodes; worker g runs on hosted[g / threads per
  // node]. Per-node figures are indexed by node id, node_slots of them.
  const std::vector<rdma::ComputeNodeId> hosted;
  const size_t node_slots;
  std::array<engine::ProcedureId, kTxnTypes> ids;
  // Not null with DriverOptions::failure.
  FailureInjector* injector = nullptr;
  // The flags every call reads, and each worker's commit count for the
  // progress line, on cache lines of their own: one counter that every
  // worker bumped per commit, next to the flags all read per call, made
  // the line move between the cores several times per transaction.
  alignas(64) std::atomic<bool> measuring{false};
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  struct alignas(64) Counter {
    std::atomic<uint64_t> n{0};
  };
  // Measured commits of each worker, for the progress line.
  std::vector<Counter> commits;

  uint64_t TotalCommits() const {
    uint64_t sum = 0;
    for (const Counter& c : commits) sum += c.n.load();
    return sum;
  }
  std::vector<uint64_t> CommitsByNode() const {
    std::vector<uint64_t> by_node(node_slots, 0);
    for (size_t g = 0; g < commits.size(); ++g) {
      by_node[hosted[g / options.threads_per_node]] += commits[g].n.load();
    }
    return by_node;
  }
};

// One terminal: a thread with a session on its compute node, running the
// mix back to back, one method per transaction type. Every call goes
// through CallAsync; with wal_pipeline 0 it returns only once its own
// outcome is reported, as Call would. A call is counted when its outcome
// is reported: at acknowledgement (with a log, once durable).
class Worker {
 public:
  // Worker `index` of this process, on compute node `node`, executing the
  // Deliveries its node queues on `deliveries`.
  Worker(SharedRun& run, int index, rdma::ComputeNodeId node,
         DeliveryQueue& deliveries, ThreadResult& out)
      : run_(run),
        options_(run.options),
        index_(index),
        node_(node),
        deliveries_(deliveries),
        out_(out),
        terminal_(MakeTerminal()) {}

  // The thread's body: runs until the run stops or (with --txns) this
  // worker's quota of measured transactions is done.
  void Run(WorkerWindow& window, uint64_t quota);

 private:
  Terminal MakeTerminal() const;
  absl::Status OpenSession();
  // With DriverOptions::failure: whether this thread's node is down.
  bool NodeDown() const {
    return run_.injector != nullptr && run_.injector->down(node_);
  }
  // Its node failed: every call fails from now on. Delivers the outcomes
  // still pending (each failed), destroys the session, waits for the
  // node's rejoin and opens a new one; false if the run ends first.
  bool SitOut();
  void Record(int type, absl::Time start, const absl::Status& status);
  // The deferred-execution path (clause 2.7.2): a queued Delivery runs
  // and its result is recorded.
  void ExecuteDelivery(const QueuedDelivery& q);

  void NewOrder(int32_t now, absl::Time start);
  void Payment(int32_t now, absl::Time start);
  void OrderStatus(absl::Time start);
  // Queued: the terminal's response is the queueing.
  void QueueDelivery(int32_t now, absl::Time start);
  void StockLevel(absl::Time start);

  bool measuring() const {
    return run_.measuring.load(std::memory_order_relaxed);
  }
  // A side file could not be written: the run stops with the error.
  void Fail(const absl::Status& status) {
    out_.error = status.ToString();
    run_.stop = true;
  }

  SharedRun& run_;
  const DriverOptions& options_;
  const int index_;
  const rdma::ComputeNodeId node_;
  DeliveryQueue& deliveries_;
  ThreadResult& out_;
  Terminal terminal_;
  std::unique_ptr<engine::Session> session_;
};

Terminal Worker::MakeTerminal() const {
  const int position = index_ % options_.threads_per_node;
  // With owners (tpcc/remote_policy.h), terminals are homed at their own
  // node's warehouses, numbered per node.
  HomeRange homes;
  if (const partition::PartitionMap* owners = options_.remote.owners) {
    homes.first = static_cast<int>(owners->First(node_));
    homes.count = static_cast<int>(owners->Last(node_) - homes.first + 1);
    homes.position = position;
  }
  // Numbered across the deployment, so that compute nodes in other
  // processes get terminals (home warehouses, seeds) of their own.
  const int terminal_id = node_ * options_.threads_per_node + position;
  return Terminal(terminal_id, options_.warehouses, options_.home_warehouse,
                  run_.db.scale(), options_.mix, options_.remote, options_.seed,
                  run_.db.run_constants(), homes);
}

absl::Status Worker::OpenSession() {
  auto session = run_.db.engine().NewSession(node_);
  if (!session.ok()) return session.status();
  session_ = *std::move(session);
  session_->set_max_unacknowledged(options_.wal_pipeline);
  return absl::OkStatus();
}

bool Worker::SitOut() {
  session_->Drain();
  session_.reset();
  run_.injector->SessionClosed();
  if (!run_.injector->WaitUntilUp()) return false;
  if (absl::Status s = OpenSession(); !s.ok()) {
    Fail(s);
    return false;
  }
  return true;
}

void Worker::Run(WorkerWindow& window, uint64_t quota) {
  if (absl::Status s = OpenSession(); !s.ok()) {
    out_.error = s.ToString();
    run_.stop = true;
    window.Leave();
    --run_.running;
    return;
  }
  window.Join(index_);
  uint64_t measured = 0;
  while (!run_.stop.load(std::memory_order_relaxed)) {
    if (NodeDown()) {
      if (!SitOut()) break;
      continue;
    }
    // This node's oldest queued Delivery first (tpcc/deferred_delivery.h
    // says why no thread of its own).
    if (std::optional<QueuedDelivery> q = deliveries_.Pop()) {
      ExecuteDelivery(*q);
    }
    const TxnType type = terminal_.NextType();
    const int32_t now = static_cast<int32_t>(absl::ToUnixSeconds(absl::Now()));
    const absl::Time start = absl::Now();
    switch (type) {
      case kNewOrder:
        NewOrder(now, start);
        break;
      case kPayment:
        Payment(now, start);
        break;
      case kOrderStatus:
        OrderStatus(start);
        break;
      case kDelivery:
        QueueDelivery(now, start);
        break;
      case kStockLevel:
        StockLevel(start);
        break;
    }
    if (quota > 0 && measuring() && ++measured >= quota) break;
  }
  // The node's queue is emptied before its last worker goes (a worker
  // queues only in the loop above, then empties the queue here), and
  // outcomes still in flight are reported (and New-Orders written to the
  // side file) before the session goes. A failed node's thread has none.
  if (session_ != nullptr) {
    while (std::optional<QueuedDelivery> q = deliveries_.Pop()) {
      ExecuteDelivery(*q);
    }
    session_->Drain();
  }
  --run_.running;
}

void Worker::Record(int type, absl::Time start, const absl::Status& status) {
  const uint64_t nanos = absl::ToInt64Nanoseconds(absl::Now() - start);
  if (!status.ok() && !engine::IsUserAbort(status) && NodeDown()) {
    // The failure's doing, whenever it is delivered.
    ++out_.failed_by_node_failure;
    return;
  }
  if (absl::IsUnavailable(status) && run_.injector != nullptr) {
    // Partitioned mode: it needed the failed node's partitions, which are
    // unavailable until it rejoins (partition/node.h); the comparison's
    // cost, counted apart from the run's errors.
    ++out_.unavailable;
    return;
  }
  if (!measuring()) return;
  TypeResult& t = out_.by_type[type];
  if (status.ok()) {
    ++t.commits;
    ++out_.commits;
    t.latency.Record(nanos);
    std::atomic<uint64_t>& mine = run_.commits[index_].n;
    mine.store(mine.load(std::memory_order_relaxed) + 1,
               std::memory_order_relaxed);
  } else if (engine::IsUserAbort(status)) {
    ++t.user_aborts;
  } else {
    ++t.errors;
    if (out_.error.empty()) out_.error = status.ToString();
  }
}

void Worker::ExecuteDelivery(const QueuedDelivery& q) {
  const absl::Time start = absl::Now();
  session_->CallAsync<DeliveryOutput>(
      run_.ids[kDelivery],
      [this, start, q](absl::StatusOr<DeliveryOutput> result) {
        const absl::Time done = absl::Now();
        if (result.ok() && options_.delivery_results != nullptr) {
          if (absl::Status s =
                  options_.delivery_results->Append(q, *result, done);
              !s.ok()) {
            Fail(s);
          }
        }
        if (result.ok() && measuring()) {
          DeferredDeliveryStats& d = out_.deliveries;
          ++d.executed;
          d.orders_delivered += result->delivered;
          d.districts_skipped += result->skipped;
          d.queue_to_done.Record(absl::ToInt64Nanoseconds(done - q.queued));
        }
        Record(kDelivery, start, result.status());
      },
      q.input);
}

void Worker::NewOrder(int32_t now, absl::Time start) {
  const NewOrderInput in = terminal_.NewOrder(now);
  session_->CallAsync<NewOrderOutput>(
      run_.ids[kNewOrder],
      [this, start, w = in.w, d = in.d](absl::StatusOr<NewOrderOutput> result) {
        // Only an acknowledged New-Order goes to the side file: the crash
        // test demands each one after recovery.
        if (result.ok() && options_.acked_log != nullptr) {
          if (absl::Status s = options_.acked_log->Append(w, d, result->o_id);
              !s.ok()) {
            Fail(s);
          }
        }
        Record(kNewOrder, start, result.status());
      },
      in);
}

void Worker::Payment(int32_t now, absl::Time start) {
  session_->CallAsync<PaymentOutput>(
      run_.ids[kPayment],
      [this, start](absl::StatusOr<PaymentOutput> result) {
        Record(kPayment, start, result.status());
      },
      terminal_.Payment(now));
}

void Worker::OrderStatus(absl::Time start) {
  session_->CallAsync<OrderStatusOutput>(
      run_.ids[kOrderStatus],
      [this, start](absl::StatusOr<OrderStatusOutput> result) {
        Record(kOrderStatus, start, result.status());
      },
      terminal_.OrderStatus());
}

void Worker::QueueDelivery(int32_t now, absl::Time start) {
  deliveries_.Push({terminal_.Delivery(now), start});
  if (measuring()) ++out_.deliveries.queued;
}

void Worker::StockLevel(absl::Time start) {
  session_->CallAsync<StockLevelOutput>(
      run_.ids[kStockLevel],
      [this, start](absl::StatusOr<StockLevelOutput> result) {
        Record(kStockLevel, start, result.status());
      },
      terminal_.StockLevel());
}

// The engine's counters as the measured window opens, to subtract.
struct CountersAtStart {
  explicit CountersAtStart(engine::Engine& engine)
      : stats(engine.Stats()),
        fabric(engine.FabricCounters()),
        cache(engine.CacheStats()),
        wal(NodeLogs(engine)),
        partition(engine.PartitionStats()) {}

  std::vector<engine::ProcedureStats> stats;
  rdma::FabricCounters fabric;
  cc::CacheStats cache;
  std::vector<NodeLog> wal;
  partition::PartitionStats partition;
};

// Runs the warm-up, showing how far it is, until it is over or every
// worker stopped.
void WarmUp(const SharedRun& run) {
  const absl::Time start = absl::Now();
  const absl::Duration length = absl::Seconds(run.options.warmup_s);
  ProgressLine line(run.options.progress);
  while (run.running.load() > 0 && absl::Now() - start < length) {
    absl::SleepFor(absl::Milliseconds(20));
    line.Update([&] {
      return absl::StrFormat("  warm-up: %.0f s of %.0f s (not measured)",
                             absl::ToDoubleSeconds(absl::Now() - start),
                             run.options.warmup_s);
    });
  }
  line.Clear();
}

// Polls the measured window, opened at `from`, until its end (--duration_s,
// or every worker done with its --txns quota), showing progress; every
// second's figures by compute node go to `seconds` and, as each node's
// rate, to the series ("txn_per_sec_by_node").
void Measure(SharedRun& run, uint64_t aborts_at_start, absl::Time from,
             std::vector<NodeSecond>& seconds) {
  const DriverOptions& options = run.options;
  engine::Engine& engine = run.db.engine();
  const std::vector<uint64_t> aborts_before =
      AbortsByNode(engine, run.hosted, run.node_slots);
  auto sample = [&](int64_t elapsed_s, double span_s, JsonLine& line) {
    NodeSecond s{.elapsed_s = elapsed_s,
                 .span_s = span_s,
                 .at_s = absl::ToDoubleSeconds(absl::Now() - from),
                 .commits = run.CommitsByNode(),
                 .aborts = AbortsByNode(engine, run.hosted, run.node_slots)};
    std::string rates;
    for (size_t n = 0; n < run.node_slots; ++n) {
      s.aborts[n] -= aborts_before[n];
      const uint64_t last = seconds.empty() ? 0 : seconds.back().commits[n];
      absl::StrAppendFormat(&rates, "%s%.1f", n == 0 ? "" : ",",
                            (s.commits[n] - last) / span_s);
    }
    line.AddRaw("txn_per_sec_by_node", "[" + rates + "]");
    seconds.push_back(std::move(s));
  };
  RunProgress progress({.aborts_at_start = aborts_at_start,
                        .duration = options.txns == 0
                                        ? absl::Seconds(options.duration_s)
                                        : absl::InfiniteDuration(),
                        .target_count = options.txns,
                        .series = options.progress_series,
                        .stderr_line = options.progress,
                        .on_sample = sample});
  const absl::Time start = absl::Now();
  while (run.running.load() > 0) {
    if (options.txns == 0 &&
        absl::Now() - start >= absl::Seconds(options.duration_s)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
    progress.Poll(run.TotalCommits(), [&] {
      return std::optional<uint64_t>(RetriedAborts(engine.Stats()));
    });
  }
  progress.Finish();
}

// The run's figures: the engine's counters less `before`, and every
// worker's counts.
RunResult Collect(const SharedRun& run, const CountersAtStart& before,
                  const std::vector<ThreadResult>& results) {
  engine::Engine& engine = run.db.engine();
  RunResult result;
  result.fabric = engine.FabricCounters() - before.fabric;
  result.cache = engine.CacheStats() - before.cache;
  result.partition = engine.PartitionStats() - before.partition;
  result.wal = WalWorkSince(before.wal, NodeLogs(engine));
  const std::vector<engine::ProcedureStats> stats = engine.Stats();
  for (int type = 0; type < kTxnTypes; ++type) {
    const engine::ProcedureStats& a = stats[run.ids[type]];
    const engine::ProcedureStats& b = before.stats[run.ids[type]];
    for (int i = 0; i < txn::kAbortReasonCount; ++i) {
      result.by_type[type].aborts[i] = a.aborts[i] - b.aborts[i];
    }
  }
  result.commits_by_node.assign(run.node_slots, 0);
  const int per_node = run.options.threads_per_node;
  for (size_t g = 0; g < results.size(); ++g) {
    const ThreadResult& t = results[g];
    for (int type = 0; type < kTxnTypes; ++type) {
      // A thread counts no aborted attempts (taken from the engine above).
      result.by_type[type].Merge(t.by_type[type]);
      result.commit_latency.Merge(t.by_type[type].latency);
    }
    result.deliveries.Merge(t.deliveries);
    result.commits_by_node[run.hosted[g / per_node]] += t.commits;
    result.calls_failed_by_node_failure += t.failed_by_node_failure;
    result.calls_unavailable += t.unavailable;
    if (result.first_error.empty()) result.first_error = t.error;
  }
  return result;
}

}  // namespace

void TypeResult::Merge(const TypeResult& other) {
  commits += other.commits;
  user_aborts += other.user_aborts;
  errors += other.errors;
  for (size_t i = 0; i < aborts.size(); ++i) aborts[i] += other.aborts[i];
  latency.Merge(other.latency);
}

void DeferredDeliveryStats::Merge(const DeferredDeliveryStats& other) {
  queued += other.queued;
  executed += other.executed;
  orders_delivered += other.orders_delivered;
  districts_skipped += other.districts_skipped;
  queue_to_done.Merge(other.queue_to_done);
}

uint64_t RunResult::commits() const {
  uint64_t n = 0;
  for (const TypeResult& t : by_type) n += t.commits;
  return n;
}
uint64_t RunResult::retried_aborts() const {
  uint64_t n = 0;
  for (const TypeResult& t : by_type) n += t.retried_aborts();
  return n;
}
txn::AbortCounts RunResult::aborts() const {
  txn::AbortCounts sum{};
  for (const TypeResult& t : by_type) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += t.aborts[i];
  }
  return sum;
}
uint64_t RunResult::errors() const {
  uint64_t n = 0;
  for (const TypeResult& t : by_type) n += t.errors;
  return n;
}
double RunResult::abort_rate() const {
  uint64_t attempts = retried_aborts() + errors();
  for (const TypeResult& t : by_type) attempts += t.commits + t.user_aborts;
  return attempts == 0 ? 0 : static_cast<double>(retried_aborts()) / attempts;
}

absl::StatusOr<RunResult> RunDriver(TpccDatabase& db,
                                    const DriverOptions& options) {
  const std::vector<rdma::ComputeNodeId> nodes =
      db.engine().local_compute_nodes();
  const int total_threads = nodes.size() * options.threads_per_node;
  SharedRun run(db, options, nodes);
  std::unique_ptr<FailureInjector> injector;
  if (options.failure.has_value()) {
    injector = std::make_unique<FailureInjector>(
        db.engine(), *options.failure, options.threads_per_node,
        [&run] { return run.CommitsByNode(); });
    run.injector = injector.get();
  }
  const uint64_t quota =
      options.txns == 0 ? 0
                        : (options.txns + total_threads - 1) / total_threads;
  std::vector<ThreadResult> results(total_threads);
  std::vector<std::unique_ptr<DeliveryQueue>> delivery_queues;
  for (size_t n = 0; n < nodes.size(); ++n) {
    delivery_queues.push_back(std::make_unique<DeliveryQueue>());
  }
  WorkerWindow window(total_threads);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (int g = 0; g < total_threads; ++g) {
    const int n = g / options.threads_per_node;
    workers.push_back(std::make_unique<Worker>(
        run, g, nodes[n], *delivery_queues[n], results[g]));
    ++run.running;
    threads.emplace_back(
        [&, worker = workers.back().get()] { worker->Run(window, quota); });
  }
  WarmUp(run);
  const CountersAtStart before(db.engine());
  const absl::Time window_start = absl::Now();
  window.Start();
  run.measuring = true;
  // The failure's time and the per-second samples count from here.
  const absl::Time measured_from = absl::Now();
  if (injector != nullptr) injector->Start(measured_from);
  std::vector<NodeSecond> seconds;
  Measure(run, RetriedAborts(before.stats), measured_from, seconds);
  // The measured window ends here: calls acknowledged while the threads
  // stop and drain their pipelines do not count.
  run.measuring = false;
  window.End();
  run.stop = true;
  // A failed node's threads waiting for its rejoin wake up and end.
  if (injector != nullptr) injector->Stop();
  for (auto& t : threads) t.join();
  RunResult result = Collect(run, before, results);
  result.per_second = std::move(seconds);
  if (injector != nullptr) {
    result.failover =
        MakeFailoverReport(injector->events(), db.engine().ReclaimReports(),
                           result.per_second, result.commits_by_node,
                           result.calls_failed_by_node_failure, measured_from);
    result.failover->survivor_calls_unavailable = result.calls_unavailable;
  }
  result.seconds = window.seconds();
  result.window_start = window_start;
  result.workers = window.workers();
  result.process_cpu_s = window.process_cpu_s();
  result.worker_threads = total_threads;
  return result;
}

}  // namespace strand::tpcc
