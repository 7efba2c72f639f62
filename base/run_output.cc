#include "base/run_output.h"

#include <gflags/gflags.h>
#include <unistd.h>

#include <iostream>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/build_info.h"
#include "base/command_line.h"

DEFINE_bool(json, false,
            "Print one JSON object per run on stdout and nothing else: the "
            "configuration used, version and commit, and every figure (the "
            "human report goes to stderr)");
DEFINE_bool(csv, false,
            "Print the runs as CSV on stdout: a header line, then one line "
            "per run with the fields of --json (nested objects flattened, "
            "arrays left out); the human report goes to stderr");
DEFINE_string(progress_json, "",
              "Write one JSON line per second of each measured run to this "
              "file: elapsed_s, the count so far, the last second's rate "
              "and aborts (conflict and validation aborts, which the "
              "report's abort rate counts; tpcc, ycsb_bench)");

namespace strand {

RunOutput RunOutput::FromFlags(Options options) {
  RunOutput out;
  out.json_ = FLAGS_json;
  out.csv_ = FLAGS_csv;
  out.started_ =
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  char host[256] = {};
  out.host_ = gethostname(host, sizeof(host) - 1) == 0 ? host : "unknown";
  if (out.json_ && out.csv_) {
    ExitWithUsageError("--json and --csv both claim stdout: give one");
  }
  if (!FLAGS_progress_json.empty()) {
    if (!options.per_second_series) {
      ExitWithUsageError(
          "--progress_json: this program has no timed run to sample (tpcc "
          "and ycsb_bench have)");
    }
    out.series_ =
        std::make_unique<std::ofstream>(FLAGS_progress_json, std::ios::trunc);
    if (!*out.series_) {
      ExitWithUsageError("--progress_json=" + FLAGS_progress_json +
                         ": cannot create the file");
    }
  }
  return out;
}

std::ostream& RunOutput::human() const {
  return machine_readable() ? std::cerr : std::cout;
}

JsonLine RunOutput::Record() const {
  JsonLine j;
  j.Add("program", gflags::ProgramInvocationShortName())
      .Add("version", StrandVersion())
      .Add("commit", StrandCommit())
      .Add("timestamp", started_)
      .Add("host", host_);
  return j;
}

void RunOutput::Print(const JsonLine& record) {
  if (json_) {
    std::cout << record.str() << std::endl;
  } else if (csv_) {
    std::string header = record.CsvHeader();
    if (header != csv_header_) {
      std::cout << header << "\n";
      csv_header_ = std::move(header);
    }
    std::cout << record.CsvRow() << std::endl;
  }
}

}  // namespace strand
