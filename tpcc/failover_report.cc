#include "tpcc/failover_report.h"

#include "absl/strings/str_format.h"

namespace strand::tpcc {
namespace {

// The survivors recovered once they commit this share of their rate
// before the failure (docs/design/node_failure.md: 90% within 2 s).
constexpr double kRecoveredShare = 0.9;
// The progress sampler polls every 10 ms and the failure is timed on a
// thread of its own: a sample and a failure due at the same second land
// within this of each other, in either order.
constexpr double kSampleSlackS = 0.02;

std::optional<double> Since(absl::Time t, absl::Time origin) {
  if (t == absl::InfinitePast()) return std::nullopt;
  return absl::ToDoubleSeconds(t - origin);
}

// The sum over every compute node but `failed`.
uint64_t Survivors(const std::vector<uint64_t>& by_node,
                   rdma::ComputeNodeId failed) {
  uint64_t sum = 0;
  for (size_t n = 0; n < by_node.size(); ++n) {
    if (n != failed) sum += by_node[n];
  }
  return sum;
}

uint64_t Of(const std::vector<uint64_t>& by_node, rdma::ComputeNodeId node) {
  return node < by_node.size() ? by_node[node] : 0;
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// The survivors' rate before the failure and the first whole second after
// it back at kRecoveredShare of it.
void FindRecovery(absl::Span<const NodeSecond> seconds, FailoverReport& f) {
  const double t = *f.failed_at_s;
  const NodeSecond* before = nullptr;
  for (const NodeSecond& s : seconds) {
    if (s.at_s <= t + kSampleSlackS) before = &s;
  }
  if (before == nullptr || before->at_s <= 0) return;
  const rdma::ComputeNodeId node = f.node;
  f.survivors_txn_per_sec_before =
      static_cast<double>(Survivors(before->commits, node)) / before->at_s;
  f.survivor_aborts_per_sec_before =
      static_cast<double>(Survivors(before->aborts, node)) / before->at_s;
  const NodeSecond* last = before;
  for (const NodeSecond& s : seconds) {
    if (s.at_s <= before->at_s) continue;
    const double rate = static_cast<double>(Survivors(s.commits, node) -
                                            Survivors(last->commits, node)) /
                        (s.at_s - last->at_s);
    const bool after = last->at_s >= t - kSampleSlackS;
    last = &s;
    if (!after) continue;  // the failure's second
    if (rate >= kRecoveredShare * f.survivors_txn_per_sec_before) {
      f.recovered_after_s = s.at_s - t;
      f.survivor_aborts_until_recovered =
          Survivors(s.aborts, node) - Survivors(before->aborts, node);
      return;
    }
  }
}

std::string Seconds(const std::optional<double>& s) {
  return s.has_value() ? absl::StrFormat("%.3f s", *s) : "-";
}

// A JSON number, or null for what did not happen.
std::string Number(const std::optional<double>& v) {
  return v.has_value() ? absl::StrFormat("%.6g", *v) : "null";
}

}  // namespace

FailoverReport MakeFailoverReport(
    const FailureEvents& events,
    const std::vector<engine::ReclaimReport>& reclaims,
    absl::Span<const NodeSecond> seconds,
    const std::vector<uint64_t>& final_commits, uint64_t calls_failed,
    absl::Time window_start) {
  FailoverReport f;
  f.node = events.node;
  f.error = events.error;
  f.calls_failed = calls_failed;
  f.failed_at_s = Since(events.failed_at, window_start);
  if (!f.failed_at_s.has_value()) {
    if (f.error.empty()) f.error = "the failure did not happen in the run";
    return f;
  }
  if (events.declared_at != absl::InfinitePast()) {
    f.detection_s =
        absl::ToDoubleSeconds(events.declared_at - events.failed_at);
  }
  for (auto it = reclaims.rbegin(); it != reclaims.rend(); ++it) {
    if (it->node == events.node) {
      f.reclaim = *it;
      break;
    }
  }
  FindRecovery(seconds, f);
  const std::vector<uint64_t>& until = events.commits_at_rejoin.empty()
                                           ? final_commits
                                           : events.commits_at_rejoin;
  f.survivor_commits_during_outage =
      Survivors(until, f.node) - Survivors(events.commits_at_failure, f.node);
  if (events.rejoined_at != absl::InfinitePast()) {
    f.rejoined_at_s = Since(events.rejoin_started, window_start);
    f.rejoin_s =
        absl::ToDoubleSeconds(events.rejoined_at - events.rejoin_started);
    f.node_commits_after_rejoin =
        Of(final_commits, f.node) - Of(events.commits_at_rejoin, f.node);
  }
  return f;
}

void PrintFailover(std::ostream& out, const FailoverReport& f) {
  out << absl::StrFormat(
      "failover: compute node %d failed at %s into the run, declared failed "
      "%s later\n",
      f.node, Seconds(f.failed_at_s), Seconds(f.detection_s));
  if (const std::optional<engine::ReclaimReport>& r = f.reclaim) {
    out << absl::StrFormat(
        "failover: reclaimed by compute node %d in %.2f ms: fence %.2f ms, "
        "redo ring %.2f ms (%d records, %d redone), relog %.2f ms (%d logged "
        "again), latch scan %.2f ms (%d words, %d held exclusive and %d "
        "shared by it)\n",
        r->reclaimer, Ms(r->total_time), Ms(r->fence_time), Ms(r->ring_time),
        r->ring_records, r->records_reapplied, Ms(r->relog_time),
        r->records_relogged, Ms(r->scan_time), r->latches.lines,
        r->latches.holder_fields, r->latches.reader_bits);
    if (r->branches_committed + r->branches_aborted + r->records_undecided >
        0) {
      out << absl::StrFormat(
          "failover: 2PC: the survivors' branches of its transactions: %d "
          "committed (decision on the board), %d aborted (presumed abort); "
          "%d undecided commits dropped from its ring\n",
          r->branches_committed, r->branches_aborted, r->records_undecided);
    }
  }
  out << absl::StrFormat(
      "failover: survivors committed %.0f txn/s before the failure; %s; %d "
      "calls of node %d failed by the failure (not errors of the run)\n",
      f.survivors_txn_per_sec_before,
      f.recovered_after_s.has_value()
          ? absl::StrFormat(
                "back to >= 90%% of that %s after it (the end of the first "
                "whole second after it at that rate), with %d retried "
                "aborts meanwhile (%.0f/s before)",
                Seconds(f.recovered_after_s), f.survivor_aborts_until_recovered,
                f.survivor_aborts_per_sec_before)
          : std::string("not back to 90% of that within the run"),
      f.calls_failed, f.node);
  if (f.survivor_calls_unavailable > 0) {
    out << absl::StrFormat(
        "failover: %d calls of the survivors needed node %d's partitions and "
        "failed (unavailable until it rejoins; not errors of the run)\n",
        f.survivor_calls_unavailable, f.node);
  }
  if (f.rejoined_at_s.has_value()) {
    out << absl::StrFormat(
        "failover: node %d rejoined at %s (RejoinNode took %s) and committed "
        "%d transactions after; the survivors committed %d while it was out\n",
        f.node, Seconds(f.rejoined_at_s), Seconds(f.rejoin_s),
        f.node_commits_after_rejoin, f.survivor_commits_during_outage);
  } else {
    out << absl::StrFormat(
        "failover: node %d did not rejoin; the survivors committed %d after "
        "its failure\n",
        f.node, f.survivor_commits_during_outage);
  }
  if (!f.ok()) out << "failover: FAILED: " << f.error << "\n";
}

void AddFailoverJson(const FailoverReport& f, JsonLine& json) {
  JsonLine j;
  j.Add("node", static_cast<int64_t>(f.node))
      .AddRaw("failed_at_s", Number(f.failed_at_s))
      .AddRaw("detection_s", Number(f.detection_s))
      .Add("reclaimed", f.reclaim.has_value());
  if (const std::optional<engine::ReclaimReport>& r = f.reclaim) {
    j.Add("reclaimer", static_cast<int64_t>(r->reclaimer))
        .Add("reclaim_ms", Ms(r->total_time))
        .Add("fence_ms", Ms(r->fence_time))
        .Add("ring_ms", Ms(r->ring_time))
        .Add("relog_ms", Ms(r->relog_time))
        .Add("latch_scan_ms", Ms(r->scan_time))
        .Add("ring_records", r->ring_records)
        .Add("records_reapplied", r->records_reapplied)
        .Add("records_relogged", r->records_relogged)
        .Add("latch_words_scanned", r->latches.lines)
        .Add("latches_cleared_exclusive", r->latches.holder_fields)
        .Add("latches_cleared_shared", r->latches.reader_bits)
        .Add("branches_committed", r->branches_committed)
        .Add("branches_aborted", r->branches_aborted)
        .Add("records_undecided", r->records_undecided);
  }
  j.Add("survivors_txn_per_sec_before", f.survivors_txn_per_sec_before)
      .AddRaw("recovered_after_s", Number(f.recovered_after_s))
      .Add("survivor_aborts_until_recovered", f.survivor_aborts_until_recovered)
      .Add("survivor_aborts_per_sec_before", f.survivor_aborts_per_sec_before)
      .Add("calls_failed_by_node_failure", f.calls_failed)
      .Add("survivor_calls_unavailable", f.survivor_calls_unavailable)
      .Add("survivor_commits_during_outage", f.survivor_commits_during_outage)
      .Add("rejoined", f.rejoined_at_s.has_value())
      .AddRaw("rejoined_at_s", Number(f.rejoined_at_s))
      .AddRaw("rejoin_s", Number(f.rejoin_s))
      .Add("node_commits_after_rejoin", f.node_commits_after_rejoin)
      .Add("ok", f.ok())
      .Add("error", f.error);
  json.AddObject("failover", j);
}

}  // namespace strand::tpcc
