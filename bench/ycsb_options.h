#ifndef STRAND_BENCH_YCSB_OPTIONS_H_
#define STRAND_BENCH_YCSB_OPTIONS_H_

// Everything a run of ycsb_bench is told: one field per flag (ycsb_bench.cc
// defines each flag with the default written here and fills the struct),
// checked together by Validate before anything is opened, and written into
// every --json record by AddJson.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/json_line.h"
#include "base/option_naming.h"
#include "cc/options.h"
#include "index/cpu_path_flags.h"
#include "rdma/fabric_options.h"

namespace strand {

// A YCSB mix: the share of each operation, summing to 1.
struct YcsbMix {
  std::string name;
  double read, update, insert, scan;
};

// read_only, read_mostly, update_heavy, insert_heavy, scan_heavy.
const std::vector<YcsbMix>& YcsbMixes();

struct YcsbOptions {
  uint64_t records = 1'000'000;  // loaded before the runs
  uint32_t value_bytes = 8;      // 8: in the index leaf; more: a heap tuple
  std::string workloads = "read_only,read_mostly,update_heavy";
  std::string distribution = "uniform";  // or zipf
  double zipf_theta = 0.99;              // --distribution=zipf only
  uint32_t scan_length = 100;            // scan_heavy only
  int threads = 1;                       // per compute node
  double duration_s = 2;                 // per workload
  std::string protocol = "selcc";
  uint32_t gcl_size = 1024;
  uint64_t cache_mb = 0;  // per compute node; 0: sized automatically
  uint64_t seed = 1;
  rdma::FabricOptions fabric;
  index::CpuPathSwitches cpu_path;
  // The flags the user set: one without effect in this run is refused.
  std::set<std::string> given;

  // Every setting, alone, against the others and against what the pool
  // and the machine hold, named as `naming` says.
  absl::Status Validate(
      const OptionNaming& naming = OptionNaming::Fields("YcsbOptions::")) const;

  // The workloads' mixes, in the order given (Validate said they parse).
  std::vector<YcsbMix> Mixes() const;
  bool zipf() const { return distribution == "zipf"; }
  cc::CcOptions CcOptionsForRun() const;

  // The configuration into a --json record: every flag under its name but
  // the fabric's (rdma::AddFabricJson), workloads (each record names its
  // "workload"), duration_s (the measured window) and cache_mb (the size
  // used); zipf_theta is 0 for a uniform run.
  void AddJson(JsonLine& json) const;
};

}  // namespace strand

#endif  // STRAND_BENCH_YCSB_OPTIONS_H_
