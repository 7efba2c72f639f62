#include "partition/options.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace strand::partition {

namespace {

constexpr OptionSetting kPartitions{"partitions", "warehouses"};
constexpr OptionSetting kSlotsPerNode{"slots_per_node", ""};
constexpr OptionSetting kReplyTimeout{"reply_timeout",
                                      "twopc_reply_timeout_ms"};
constexpr OptionSetting kInjectNoVote{"testing_faults.no_vote", ""};
constexpr OptionSetting kInjectDrop{"testing_faults.drop_message", ""};
constexpr OptionSetting kInjectAbort{"testing_faults.abort_before_prepare", ""};

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
       {std::pair{kInjectNoVote, testing_faults.no_vote},
        std::pair{kInjectDrop, testing_faults.drop_message},
        std::pair{kInjectAbort, testing_faults.abort_before_prepare}}) {
    if (!(p >= 0 && p <= 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is a probability: use 0 to 1", naming.Setting(setting, p)));
    }
  }
  return absl::OkStatus();
}

#define STRAND_ONE(f) +1
static_assert(sizeof(PartitionStats) ==
                  (0 STRAND_PARTITION_STATS_FIELDS(STRAND_ONE)) *
                      sizeof(uint64_t),
              "a PartitionStats counter is missing from "
              "STRAND_PARTITION_STATS_FIELDS");
#undef STRAND_ONE

PartitionStats& PartitionStats::operator+=(const PartitionStats& o) {
#define STRAND_ADD(f) f += o.f;
  STRAND_PARTITION_STATS_FIELDS(STRAND_ADD)
#undef STRAND_ADD
  return *this;
}

PartitionStats operator-(PartitionStats a, const PartitionStats& b) {
#define STRAND_SUB(f) a.f -= b.f;
  STRAND_PARTITION_STATS_FIELDS(STRAND_SUB)
#undef STRAND_SUB
  return a;
}

}  // namespace strand::partition
