#ifndef STRAND_PARTITION_OPTIONS_H_
#define STRAND_PARTITION_OPTIONS_H_

// Partitioned mode's settings (EngineOptions::partitioned) and counters.
// The three protocol switches default to the strong protocol; with all
// three off it behaves like the SELCC authors' 2PC (every transaction pays
// a prepare round, read-only participants log and wait like writers,
// prepares go out one at a time), so both can be shown.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/option_naming.h"

namespace strand::partition {

// Points of two-phase commit where a failover test fails a node.
enum class TwoPhasePoint {
  kCoordinatorBeforeDecision,  // every vote is yes, nothing decided yet
  kCoordinatorAfterDecision,   // decided, logged and published; no COMMIT
  kParticipantBeforeVote,      // PREPARE arrived, nothing done yet
  kParticipantAfterVote,       // its yes vote sent, its record in memory
  kParticipantBeforeCommit,    // COMMIT arrived (decided), nothing done yet
};

// Faults a 2PC test injects, probabilities in [0, 1].
struct PartitionFaults {
  double no_vote = 0;               // a participant votes no
  double drop_message = 0;          // a work, prepare or vote message is lost
  double abort_before_prepare = 0;  // the coordinator aborts after the work
  // Called by the node that reaches each point, with its id (a test may
  // fail that node there); null: nothing.
  std::function<void(TwoPhasePoint, uint32_t node)> at_point;
};

struct PartitionedOptions {
  // Partitions 1..partitions, split into contiguous ranges over the
  // compute nodes (partition_map.h). TPC-C: the warehouses.
  int64_t partitions = 0;
  // A transaction that touched only its own node commits in one phase,
  // exactly as in shared mode (off: it logs a prepare record, then its
  // decision, both forced).
  bool one_phase_local = true;
  // A participant that wrote nothing votes read-only: it releases its
  // shared latches and logs nothing, and gets no second phase (off: it
  // prepares and commits like a writer).
  bool read_only_vote = true;
  // PREPARE goes to every participant at once (off: one after another,
  // each waiting for the previous vote).
  bool parallel_prepare = true;
  // A coordinator waits this long for an answer before it aborts (a lost
  // message, a node that died).
  absl::Duration reply_timeout = absl::Seconds(10);
  // Concurrent coordinators (sessions) per compute node: sizes the
  // mailboxes (protocol.h).
  int slots_per_node = 64;

  // Faults the 2PC tests inject (no flag sets them; a deployment leaves
  // them off).
  PartitionFaults testing_faults;

  // InvalidArgument naming the setting as `naming` says
  // (base/option_naming.h).
  absl::Status Validate(int compute_nodes,
                        const OptionNaming& naming =
                            OptionNaming::Fields("PartitionedOptions::")) const;
};

// What partitioned mode did, summed over sessions (per node or all).
struct PartitionStats {
  uint64_t transactions = 0;  // committed through a coordinator
  uint64_t distributed = 0;   // ... that touched another node
  uint64_t participants = 0;  // remote branches of committed ones
  uint64_t aborted = 0;       // attempts that ended in an abort
  // Attempts refused or ended because a node they needed had failed
  // (failover): its partitions are unavailable until it rejoins.
  uint64_t unavailable = 0;
  // Messages sent, by kind (both directions, coordinators' and
  // participants'): requests = kWork, replies = kWorkReply.
  uint64_t requests = 0, replies = 0, prepares = 0, votes = 0, commits = 0,
           aborts = 0, acks = 0;
  uint64_t read_only_votes = 0;
  // Forced log writes: prepare records and decisions waited for.
  uint64_t forced_writes = 0;
  // Time of committed distributed transactions, nanoseconds in total:
  // execution (begin to commit call), prepare (to the last vote), commit
  // (decision logged, writes applied, latches released).
  uint64_t execute_ns = 0, prepare_ns = 0, commit_ns = 0;
  // How long latches were held: a participant's branch from its first
  // work to its end (commit, read-only vote or abort), summed over
  // `branches_ended`; a coordinator's from the transaction's begin to the
  // release of its latches, for committed distributed ones (their count:
  // `distributed`).
  uint64_t branch_hold_ns = 0, branches_ended = 0, coordinator_hold_ns = 0;

  PartitionStats& operator+=(const PartitionStats& o);
  friend PartitionStats operator-(PartitionStats a, const PartitionStats& b);
};

// Every counter of PartitionStats, for its arithmetic (options.cc). A
// counter added above goes here too (options.cc checks the count).
// clang-format off
#define STRAND_PARTITION_STATS_FIELDS(X) \
  X(transactions) X(distributed) X(participants) X(aborted) X(unavailable) \
  X(requests) X(replies) X(prepares) X(votes) X(commits) X(aborts) X(acks) \
  X(read_only_votes) X(forced_writes) \
  X(execute_ns) X(prepare_ns) X(commit_ns) \
  X(branch_hold_ns) X(branches_ended) X(coordinator_hold_ns)
// clang-format on

}  // namespace strand::partition

#endif  // STRAND_PARTITION_OPTIONS_H_
