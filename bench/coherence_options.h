#ifndef STRAND_BENCH_COHERENCE_OPTIONS_H_
#define STRAND_BENCH_COHERENCE_OPTIONS_H_

// Everything a run of coherence_bench is told: one field per flag
// (coherence_bench.cc defines each flag with the default written here and
// fills the struct), checked together by Validate before anything is
// opened, and written into the --json record by AddJson.

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "base/json_line.h"
#include "base/option_naming.h"
#include "cc/options.h"
#include "rdma/fabric_options.h"

namespace strand {

struct CoherenceOptions {
  int threads = 1;         // per compute node
  uint64_t gcls = 100000;  // the data set, all nodes together
  uint32_t gcl_size = 1024;
  double read_ratio = 0.95;    // shared latch + read; the rest write
  double sharing_ratio = 1.0;  // GCLs every node accesses
  double locality = 0;         // probability of re-accessing the last GCL
  double zipf_theta = 0;       // 0: uniform
  uint64_t cache_mb = 0;       // per compute node; 0: sized automatically
  std::string protocol = "selcc";
  double duration_s = 2;
  double warmup_s = 0.5;
  uint64_t seed = 1;
  // SELCC's switches (the SELCC paper's Figure 15 ablation).
  bool gcl_forwarding = true;
  bool batched_eviction = true;
  bool dirty_bounds = true;
  std::string lease_gamma = "64";  // a count, or "inf"
  bool spin_wait = true;
  bool priority_matching = true;
  int handler_threads = 1;
  int64_t lock_timeout_ms = 10000;
  rdma::FabricOptions fabric;
  // The flags the user set: one without effect in this run is refused.
  std::set<std::string> given;

  // Every setting, alone, against the others and against what the pool and
  // the machine hold, named as `naming` says.
  absl::Status Validate(const OptionNaming& naming =
                            OptionNaming::Fields("CoherenceOptions::")) const;

  cc::CcOptions CcOptionsForRun() const;
  // The data set's split: GCLs every node accesses, and each node's own.
  uint64_t shared_gcls() const;
  uint64_t private_gcls_per_node() const;

  // The configuration into the --json record: every flag under its name
  // but the fabric's (rdma::AddFabricJson), duration_s (the measured
  // window) and cache_mb (the size used).
  void AddJson(JsonLine& json) const;
};

}  // namespace strand

#endif  // STRAND_BENCH_COHERENCE_OPTIONS_H_
