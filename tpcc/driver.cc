#include "tpcc/driver.h"

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
#include "base/run_progress.h"
#include "engine/call_status.h"
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

// One thread's measured counts.
struct ThreadResult {
  std::array<TypeResult, kTxnTypes> by_type;
  DeferredDeliveryStats deliveries;
  uint64_t commits = 0;
  std::string error;
};

// Aborted attempts of every procedure, for the per-second series.
uint64_t AbortedAttempts(const std::vector<engine::ProcedureStats>& stats) {
  uint64_t n = 0;
  for (const engine::ProcedureStats& s : stats) n += s.aborts_total();
  return n;
}

WalRunStats SumWalStats(engine::Engine& engine) {
  WalRunStats sum;
  for (rdma::ComputeNodeId node : engine.local_compute_nodes()) {
    const wal::LogWriter* log = engine.log(node);
    if (log == nullptr) continue;
    const wal::LogWriterStats s = log->stats();
    sum.records += s.records;
    sum.flushes += s.flushes;
    sum.bytes += s.bytes_written;
  }
  return sum;
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
  engine::Engine& engine = db.engine();
  const Procedures& p = db.procedures();
  const engine::ProcedureId ids[kTxnTypes] = {
      p.new_order, p.payment, p.order_status, p.delivery, p.stock_level};
  const Scale& scale = db.scale();
  const int W = options.warehouses;
  const std::vector<rdma::ComputeNodeId> nodes = engine.local_compute_nodes();
  const int total_threads = nodes.size() * options.threads_per_node;
  const uint64_t quota =
      options.txns == 0 ? 0
                        : (options.txns + total_threads - 1) / total_threads;

  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<int> running{0};
  std::atomic<uint64_t> progress_commits{0};
  std::vector<ThreadResult> results(total_threads);
  WorkerWindow window(total_threads);
  std::vector<std::unique_ptr<DeliveryQueue>> delivery_queues;
  for (size_t n = 0; n < nodes.size(); ++n) {
    delivery_queues.push_back(std::make_unique<DeliveryQueue>());
  }
  std::vector<std::thread> threads;
  for (int g = 0; g < total_threads; ++g) {
    const rdma::ComputeNodeId node = nodes[g / options.threads_per_node];
    ++running;
    threads.emplace_back([&, g, node] {
      ThreadResult& out = results[g];
      auto session = engine.NewSession(node);
      if (!session.ok()) {
        out.error = session.status().ToString();
        stop = true;
        window.Leave();
        --running;
        return;
      }
      window.Join(g);
      // With owners (tpcc/remote_policy.h), terminals are homed at their
      // own node's warehouses, numbered per node.
      const partition::PartitionMap* owners = options.remote.owners;
      HomeRange homes;
      if (owners != nullptr) {
        homes.first = static_cast<int>(owners->First(node));
        homes.count = static_cast<int>(owners->Last(node) - homes.first + 1);
        homes.position = g % options.threads_per_node;
      }
      // Numbered across the deployment, so that compute nodes in other
      // processes get terminals (home warehouses, seeds) of their own.
      const int terminal_id =
          node * options.threads_per_node + g % options.threads_per_node;
      Terminal terminal(terminal_id, W, options.home_warehouse, scale,
                        options.mix, options.remote, options.seed,
                        db.run_constants(), homes);
      // Every call goes through CallAsync; with wal_pipeline 0 it returns
      // only once its own outcome is reported, as Call would.
      (*session)->set_max_unacknowledged(options.wal_pipeline);
      // Counts a call when its outcome is reported: at acknowledgement
      // (with a log, once durable).
      auto record = [&](int type, absl::Time start,
                        const absl::Status& status) {
        const uint64_t nanos = absl::ToInt64Nanoseconds(absl::Now() - start);
        if (!measuring.load(std::memory_order_relaxed)) return;
        TypeResult& t = out.by_type[type];
        if (status.ok()) {
          ++t.commits;
          ++out.commits;
          t.latency.Record(nanos);
          progress_commits.fetch_add(1, std::memory_order_relaxed);
        } else if (engine::IsUserAbort(status)) {
          ++t.user_aborts;
        } else {
          ++t.errors;
          if (out.error.empty()) out.error = status.ToString();
        }
      };
      DeliveryQueue& deliveries =
          *delivery_queues[g / options.threads_per_node];
      // Executes a queued Delivery and records its result (clause 2.7.2).
      auto run_deferred = [&](const QueuedDelivery& q) {
        const absl::Time start = absl::Now();
        (*session)->CallAsync<DeliveryOutput>(
            ids[kDelivery],
            [&, start, q](absl::StatusOr<DeliveryOutput> result) {
              const absl::Time done = absl::Now();
              if (result.ok() && options.delivery_results != nullptr) {
                if (absl::Status s =
                        options.delivery_results->Append(q, *result, done);
                    !s.ok()) {
                  out.error = s.ToString();
                  stop = true;
                }
              }
              if (result.ok() && measuring.load(std::memory_order_relaxed)) {
                DeferredDeliveryStats& d = out.deliveries;
                ++d.executed;
                d.orders_delivered += result->delivered;
                d.districts_skipped += result->skipped;
                d.queue_to_done.Record(
                    absl::ToInt64Nanoseconds(done - q.queued));
              }
              record(kDelivery, start, result.status());
            },
            q.input);
      };
      uint64_t measured = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        // The deferred-execution path: this node's oldest queued Delivery
        // first (tpcc/deferred_delivery.h says why no thread of its own).
        if (std::optional<QueuedDelivery> q = deliveries.Pop()) {
          run_deferred(*q);
        }
        const TxnType type = terminal.NextType();
        const int32_t now =
            static_cast<int32_t>(absl::ToUnixSeconds(absl::Now()));
        const absl::Time start = absl::Now();
        switch (type) {
          case kNewOrder: {
            const NewOrderInput in = terminal.NewOrder(now);
            (*session)->CallAsync<NewOrderOutput>(
                ids[type],
                [&, start, wd = std::pair(in.w, in.d)](
                    absl::StatusOr<NewOrderOutput> result) {
                  // Only an acknowledged New-Order goes to the side file:
                  // the crash test demands each one after recovery.
                  if (result.ok() && options.acked_log != nullptr) {
                    if (absl::Status s = options.acked_log->Append(
                            wd.first, wd.second, result->o_id);
                        !s.ok()) {
                      out.error = s.ToString();
                      stop = true;
                    }
                  }
                  record(kNewOrder, start, result.status());
                },
                in);
            break;
          }
          case kPayment:
            (*session)->CallAsync<PaymentOutput>(
                ids[type],
                [&, start](absl::StatusOr<PaymentOutput> result) {
                  record(kPayment, start, result.status());
                },
                terminal.Payment(now));
            break;
          case kOrderStatus:
            (*session)->CallAsync<OrderStatusOutput>(
                ids[type],
                [&, start](absl::StatusOr<OrderStatusOutput> result) {
                  record(kOrderStatus, start, result.status());
                },
                terminal.OrderStatus());
            break;
          case kDelivery:
            // Queued: the terminal's response is the queueing.
            deliveries.Push({terminal.Delivery(now), start});
            if (measuring.load(std::memory_order_relaxed)) {
              ++out.deliveries.queued;
            }
            break;
          default:
            (*session)->CallAsync<StockLevelOutput>(
                ids[type],
                [&, start](absl::StatusOr<StockLevelOutput> result) {
                  record(kStockLevel, start, result.status());
                },
                terminal.StockLevel());
        }
        if (quota > 0 && measuring.load(std::memory_order_relaxed) &&
            ++measured >= quota) {
          break;
        }
      }
      // The node's queue is emptied before its last worker goes (a worker
      // queues only in the loop above, then empties the queue here), and
      // outcomes still in flight are reported (and New-Orders written to
      // the side file) before the session goes.
      while (std::optional<QueuedDelivery> q = deliveries.Pop()) {
        run_deferred(*q);
      }
      (*session)->Drain();
      --running;
    });
  }

  const absl::Time warm_start = absl::Now();
  while (running.load() > 0 &&
         absl::Now() - warm_start < absl::Seconds(options.warmup_s)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const std::vector<engine::ProcedureStats> stats_before = engine.Stats();
  const rdma::FabricCounters fabric_before = engine.FabricCounters();
  const cc::CacheStats cache_before = engine.CacheStats();
  const WalRunStats wal_before = SumWalStats(engine);
  const partition::PartitionStats partition_before = engine.PartitionStats();
  window.Start();
  const absl::Time start = absl::Now();
  measuring = true;
  RunProgress progress({.aborts_at_start = AbortedAttempts(stats_before),
                        .series = options.progress_series,
                        .stderr_line = options.progress});
  while (running.load() > 0) {
    const absl::Time now = absl::Now();
    if (options.txns == 0 && now - start >= absl::Seconds(options.duration_s)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
    progress.Poll(progress_commits.load(), [&] {
      return std::optional<uint64_t>(AbortedAttempts(engine.Stats()));
    });
  }
  // The measured window ends here: calls acknowledged while the threads
  // stop and drain their pipelines do not count.
  measuring = false;
  const absl::Time end = absl::Now();
  window.End();
  stop = true;
  for (auto& t : threads) t.join();
  progress.Finish();
  RunResult result;
  result.seconds = absl::ToDoubleSeconds(end - start);
  result.window_start = start;
  result.workers = window.workers();
  result.process_cpu_s = window.process_cpu_s();
  result.worker_threads = total_threads;
  result.fabric = engine.FabricCounters() - fabric_before;
  result.cache = engine.CacheStats() - cache_before;
  result.partition = engine.PartitionStats() - partition_before;
  const WalRunStats wal_after = SumWalStats(engine);
  result.wal.records = wal_after.records - wal_before.records;
  result.wal.flushes = wal_after.flushes - wal_before.flushes;
  result.wal.bytes = wal_after.bytes - wal_before.bytes;
  const std::vector<engine::ProcedureStats> stats_after = engine.Stats();
  for (int type = 0; type < kTxnTypes; ++type) {
    const engine::ProcedureStats& a = stats_after[ids[type]];
    const engine::ProcedureStats& b = stats_before[ids[type]];
    for (int i = 0; i < txn::kAbortReasonCount; ++i) {
      result.by_type[type].aborts[i] = a.aborts[i] - b.aborts[i];
    }
  }
  int max_node = 0;
  for (rdma::ComputeNodeId n : nodes) max_node = std::max<int>(max_node, n);
  result.commits_by_node.assign(max_node + 1, 0);
  for (int g = 0; g < total_threads; ++g) {
    const ThreadResult& t = results[g];
    for (int type = 0; type < kTxnTypes; ++type) {
      // A thread counts no aborted attempts (taken from the engine above).
      result.by_type[type].Merge(t.by_type[type]);
      result.commit_latency.Merge(t.by_type[type].latency);
    }
    result.deliveries.Merge(t.deliveries);
    result.commits_by_node[nodes[g / options.threads_per_node]] += t.commits;
    if (result.first_error.empty()) result.first_error = t.error;
  }
  return result;
}

}  // namespace strand::tpcc
