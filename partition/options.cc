#include "partition/options.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace strand::partition {

namespace {

constexpr OptionSetting kPartitions{"partitions", "warehouses"};
constexpr OptionSetting kSlotsPerNode{"slots_per_node", ""};
constexpr OptionSetting kReplyTimeout{"reply_timeout",
                                      "twopc_reply_timeout_ms"};
constexpr OptionSetting kInjectNoVote{"inject_no_vote", ""};
constexpr OptionSetting kInjectDrop{"inject_drop_message", ""};
constexpr OptionSetting kInjectAbort{"inject_abort_before_prepare", ""};

}  // namespace

absl::Status PartitionedOptions::Validate(int compute_nodes,
                                          const OptionNaming& naming) const {
  if (partitions < compute_nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: partitioned mode needs at least one partition per compute node "
        "(%d)",
        naming.Setting(kPartitions, partitions), compute_nodes));
  }
  if (slots_per_node < 1 || slots_per_node > 4096) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is out of range: use 1 to 4096",
                        naming.Setting(kSlotsPerNode, slots_per_node)));
  }
  if (reply_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be positive", naming.Name(kReplyTimeout)));
  }
  for (const auto& [setting, p] :
       {std::pair{kInjectNoVote, inject_no_vote},
        std::pair{kInjectDrop, inject_drop_message},
        std::pair{kInjectAbort, inject_abort_before_prepare}}) {
    if (!(p >= 0 && p <= 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is a probability: use 0 to 1", naming.Setting(setting, p)));
    }
  }
  return absl::OkStatus();
}

PartitionStats& PartitionStats::operator+=(const PartitionStats& o) {
  transactions += o.transactions;
  distributed += o.distributed;
  participants += o.participants;
  aborted += o.aborted;
  requests += o.requests;
  replies += o.replies;
  prepares += o.prepares;
  votes += o.votes;
  commits += o.commits;
  aborts += o.aborts;
  acks += o.acks;
  read_only_votes += o.read_only_votes;
  forced_writes += o.forced_writes;
  execute_ns += o.execute_ns;
  prepare_ns += o.prepare_ns;
  commit_ns += o.commit_ns;
  branch_hold_ns += o.branch_hold_ns;
  branches_ended += o.branches_ended;
  coordinator_hold_ns += o.coordinator_hold_ns;
  return *this;
}

PartitionStats operator-(PartitionStats a, const PartitionStats& b) {
  a.transactions -= b.transactions;
  a.distributed -= b.distributed;
  a.participants -= b.participants;
  a.aborted -= b.aborted;
  a.requests -= b.requests;
  a.replies -= b.replies;
  a.prepares -= b.prepares;
  a.votes -= b.votes;
  a.commits -= b.commits;
  a.aborts -= b.aborts;
  a.acks -= b.acks;
  a.read_only_votes -= b.read_only_votes;
  a.forced_writes -= b.forced_writes;
  a.execute_ns -= b.execute_ns;
  a.prepare_ns -= b.prepare_ns;
  a.commit_ns -= b.commit_ns;
  a.branch_hold_ns -= b.branch_hold_ns;
  a.branches_ended -= b.branches_ended;
  a.coordinator_hold_ns -= b.coordinator_hold_ns;
  return a;
}

}  // namespace strand::partition
