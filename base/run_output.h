#ifndef STRAND_BASE_RUN_OUTPUT_H_
#define STRAND_BASE_RUN_OUTPUT_H_

// Where a strand binary's results go, from the output flags every binary
// shares (defined in run_output.cc, listed in --help as "Output flags"):
//
//   (none)                 the human report on stdout
//   --json                 one JSON object per run on stdout and nothing
//                          else; the human report goes to stderr
//   --csv                  the same records as CSV on stdout: a header
//                          line, then one line per run (nested objects
//                          flattened, arrays left out); human text on
//                          stderr. A binary whose runs differ in fields
//                          (wal_bench's fsync and group-commit runs)
//                          repeats the header where they change
//   --progress_json=PATH   one JSON line per second of each measured run
//                          into PATH (base/run_progress.h); only binaries
//                          with timed runs take it
//
// Every record starts with the program, the version and the commit it was
// built from (base/build_info.h), when the program started ("timestamp",
// UTC, ISO 8601) and on which host, so a result always says what made it,
// when and where.

#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "base/json_line.h"

namespace strand {

class RunOutput {
 public:
  struct Options {
    // Whether the binary writes --progress_json's series; if not, the flag
    // is a usage error.
    bool per_second_series = false;
  };

  // Reads the output flags; exits with status 2 (base/command_line.h) on
  // --json with --csv, --progress_json where the binary has no series, or
  // a --progress_json file that cannot be created.
  static RunOutput FromFlags(Options options);
  static RunOutput FromFlags() { return FromFlags(Options{}); }

  // --json or --csv: stdout carries the records only.
  bool machine_readable() const { return json_ || csv_; }
  // Where human text goes: stdout, or stderr when stdout carries records.
  std::ostream& human() const;

  // A new record: "program", "version", "commit", "timestamp", "host", then
  // what the caller adds.
  JsonLine Record() const;
  // Prints a run's record as --json or --csv say (nothing without either).
  void Print(const JsonLine& record);

  // --progress_json's file, or null.
  std::ostream* progress_series() const { return series_.get(); }

 private:
  RunOutput() = default;

  bool json_ = false;
  bool csv_ = false;
  std::string started_;  // when FromFlags ran: "2024-05-01T12:00:00Z"
  std::string host_;
  std::string csv_header_;  // the last header printed
  std::unique_ptr<std::ofstream> series_;
};

}  // namespace strand

#endif  // STRAND_BASE_RUN_OUTPUT_H_
