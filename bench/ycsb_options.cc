#include "bench/ycsb_options.h"

#include "absl/strings/str_format.h"
#include "base/option_checks.h"
#include "base/status_macros.h"
#include "storage/heap_page.h"
#include "storage/tuple_address.h"
#include "storage/tuple_header.h"

namespace strand {
namespace {

constexpr OptionSetting kRecords{"records", "records"};
constexpr OptionSetting kValueBytes{"value_bytes", "value_bytes"};
constexpr OptionSetting kWorkloads{"workloads", "workloads"};
constexpr OptionSetting kDistribution{"distribution", "distribution"};
constexpr OptionSetting kZipfTheta{"zipf_theta", "zipf_theta"};
constexpr OptionSetting kScanLength{"scan_length", "scan_length"};
constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr OptionSetting kProtocol{"protocol", "protocol"};
constexpr OptionSetting kCacheMb{"cache_mb", "cache_mb"};
constexpr OptionSetting kGclSize{"gcl_size", "gcl_size"};

constexpr absl::string_view kMixNames[] = {
    "read_only", "read_mostly", "update_heavy", "insert_heavy", "scan_heavy"};

// The records must fit the memory nodes: each takes at least its index
// entry (8-byte key, 8-byte value) and, with a wider value, a heap tuple.
// A lower bound (leaves are never full), so what it refuses cannot fit.
absl::Status CheckRecordsFit(const YcsbOptions& o, const OptionNaming& naming) {
  // Over verbs the memory nodes' own --pool_mb decides.
  if (o.fabric.kind != rdma::FabricKind::kLoopback) return absl::OkStatus();
  const uint64_t per_record =
      16 + (o.value_bytes > 8 ? o.value_bytes + storage::kTupleHeaderBytes : 0);
  const uint64_t pool = o.fabric.pool_bytes * o.fabric.memory_nodes;
  if (o.records <= pool / per_record) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s of --value_bytes=%d take at least %d MiB, more than the pool's %d "
      "MiB (--pool_mb x --memory_nodes): lower --records or raise --pool_mb",
      naming.Setting(kRecords, o.records), o.value_bytes,
      static_cast<uint64_t>(
          (static_cast<unsigned __int128>(o.records) * per_record) >> 20),
      pool >> 20));
}

// A value wider than 8 bytes is a heap tuple: it must fit a GCL's page.
absl::Status CheckValueFits(const YcsbOptions& o, const OptionNaming& naming) {
  if (o.value_bytes <= 8) return absl::OkStatus();
  const uint32_t tuple = o.value_bytes + storage::kTupleHeaderBytes;
  const uint32_t payload = o.CcOptionsForRun().payload_bytes();
  if (storage::heap_page::SlotsPerPage(payload, tuple,
                                       storage::TupleAddress::kMaxSlots) > 0) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s makes heap tuples of %d bytes, which do not fit a GCL of %s (%d "
      "bytes for the page): lower --value_bytes or raise --gcl_size",
      naming.Setting(kValueBytes, o.value_bytes), tuple,
      naming.Setting(kGclSize, o.gcl_size),
      payload - storage::heap_page::kPageHeaderBytes));
}

}  // namespace

const std::vector<YcsbMix>& YcsbMixes() {
  static const auto* mixes = new std::vector<YcsbMix>{
      {"read_only", 1, 0, 0, 0},      {"read_mostly", .95, .05, 0, 0},
      {"update_heavy", .5, .5, 0, 0}, {"insert_heavy", .5, 0, .5, 0},
      {"scan_heavy", 0, 0, .05, .95},
  };
  return *mixes;
}

absl::Status YcsbOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint64_t>(naming, kRecords, records, 1, uint64_t{1} << 40));
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint32_t>(naming, kValueBytes, value_bytes, 8, 4096));
  STRAND_RETURN_IF_ERROR(
      ParseChoiceList(naming, kWorkloads, workloads, kMixNames).status());
  STRAND_RETURN_IF_ERROR(
      CheckChoice(naming, kDistribution, distribution, {"uniform", "zipf"}));
  if (zipf()) {
    // The generator's formula needs theta strictly between 0 and 1.
    STRAND_RETURN_IF_ERROR(CheckInRange(naming, kZipfTheta, zipf_theta, 1e-6,
                                        1 - 1e-6,
                                        "(0 and 1 themselves excluded)"));
  }
  STRAND_RETURN_IF_ERROR(CheckOnlyWith(naming, kZipfTheta,
                                       given.contains("zipf_theta"), zipf(),
                                       "--distribution=zipf"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint32_t>(naming, kScanLength, scan_length, 1, 100000));
  bool scans = false;
  for (const YcsbMix& mix : Mixes()) scans |= mix.scan > 0;
  STRAND_RETURN_IF_ERROR(CheckOnlyWith(naming, kScanLength,
                                       given.contains("scan_length"), scans,
                                       "a scan_heavy workload"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kThreads, threads, 1, 256, "per compute node"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kDuration, duration_s, 1e-3, 3600.0, "seconds"));
  STRAND_RETURN_IF_ERROR(
      CheckChoice(naming, kProtocol, protocol, {"selcc", "sel"}));
  STRAND_RETURN_IF_ERROR(CheckFitsMemory(naming, kCacheMb, cache_mb,
                                         fabric.compute_nodes,
                                         "one per compute node"));
  STRAND_RETURN_IF_ERROR(CheckOnlyWith(
      naming, kCacheMb, given.contains("cache_mb"), protocol == "selcc",
      "--protocol=selcc", "SEL caches nothing"));
  STRAND_RETURN_IF_ERROR(CcOptionsForRun().Validate(
      fabric.chunk_bytes, naming.uses_flags()
                              ? OptionNaming::Flags("CcOptions::")
                              : naming.Member("cc")));
  STRAND_RETURN_IF_ERROR(CheckValueFits(*this, naming));
  return CheckRecordsFit(*this, naming);
}

std::vector<YcsbMix> YcsbOptions::Mixes() const {
  std::vector<YcsbMix> mixes;
  auto names = ParseChoiceList(OptionNaming::Fields(""), kWorkloads, workloads,
                               kMixNames);
  if (!names.ok()) return mixes;
  for (const std::string& name : *names) {
    for (const YcsbMix& m : YcsbMixes()) {
      if (m.name == name) mixes.push_back(m);
    }
  }
  return mixes;
}

cc::CcOptions YcsbOptions::CcOptionsForRun() const {
  cc::CcOptions o;
  o.protocol = protocol == "sel" ? cc::Protocol::kSel : cc::Protocol::kSelcc;
  o.gcl_size = gcl_size;
  o.cache_bytes = cache_mb << 20;
  o.prefetch = cpu_path.prefetch;
  o.identity_frames = cpu_path.identity_frames;
  return o;
}

void YcsbOptions::AddJson(JsonLine& json) const {
  json.Add("protocol", protocol)
      .Add("threads", threads)
      .Add("records", records)
      .Add("value_bytes", static_cast<uint64_t>(value_bytes))
      .Add("distribution", distribution)
      .Add("zipf_theta", zipf() ? zipf_theta : 0.0)
      .Add("scan_length", static_cast<uint64_t>(scan_length))
      .Add("gcl_size", static_cast<uint64_t>(gcl_size))
      .Add("prefetch", cc::PrefetchScopeName(cpu_path.prefetch))
      .Add("index_leaf_hint", cpu_path.tuning.leaf_hint)
      .Add("index_word_search", cpu_path.tuning.word_search)
      .Add("index_leaf_walk", cpu_path.tuning.leaf_walk)
      .Add("optimistic_reads", cpu_path.tuning.optimistic_reads)
      .Add("identity_frames", cpu_path.identity_frames)
      .Add("seed", seed);
}

}  // namespace strand
