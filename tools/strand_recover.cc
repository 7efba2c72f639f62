// strand_recover: rebuilds a memory pool from an initial image plus the
// logs of every compute node, merged in commit-timestamp order
// (engine/recovery.h), and optionally writes the result as a new image.
//
//   strand_recover --image=/ssd/db.img --wal_dir=/ssd/wal
//       --out_image=/ssd/db-recovered.img [--pool_mb=... --memory_nodes=...
//       --gcl_size=...: as the run that wrote the log]
//
// Prints what was replayed and, per node, how its log ended (a torn or
// corrupt tail is cut: the number of bytes dropped is printed). Fails with
// a clear message for a log of another database or of a newer format
// version. Exit status 0 on success, 1 on any error.

#include <gflags/gflags.h>

#include <iostream>

#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "engine/engine.h"
#include "rdma/fabric_flags.h"

DEFINE_string(image, "", "Initial pool image (engine/image.h), required");
DEFINE_string(wal_dir, "", "Directory of the logs to replay, required");
DEFINE_string(out_image, "",
              "Write the recovered pool here (continue from it with a fresh "
              "--wal_dir)");
DEFINE_uint32(gcl_size, 1024, "GCL size of the run that wrote the image");
DEFINE_bool(json, false, "Also print one JSON object");

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "strand_recover --image=FILE --wal_dir=DIR [--out_image=FILE]");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_image.empty() || FLAGS_wal_dir.empty()) {
    std::cerr << "strand_recover: --image and --wal_dir are required\n";
    return 1;
  }
  auto fabric = strand::rdma::FabricOptionsFromFlags();
  if (!fabric.ok()) {
    std::cerr << "strand_recover: " << fabric.status() << "\n";
    return 1;
  }
  strand::engine::EngineOptions options;
  options.fabric = *fabric;
  options.cc.gcl_size = FLAGS_gcl_size;
  options.image_path = FLAGS_image;
  options.recover_wal_dir = FLAGS_wal_dir;
  if (absl::Status s =
          options.Validate(strand::OptionNaming::Flags("EngineOptions::"));
      !s.ok()) {
    strand::ExitWithUsageError(std::string(s.message()));
  }
  auto engine = strand::engine::Engine::Open(options);
  if (!engine.ok()) {
    std::cerr << "strand_recover: " << engine.status() << "\n";
    return 1;
  }
  const strand::engine::RecoveryReport& report = *(*engine)->recovery_report();
  std::cout << report.Summary() << "\n";
  if (!FLAGS_out_image.empty()) {
    auto image = (*engine)->SaveImage(FLAGS_out_image);
    if (!image.ok()) {
      std::cerr << "strand_recover: " << image.status() << "\n";
      return 1;
    }
    std::cout << absl::StrFormat(
        "wrote %s: %d bytes of %d memory nodes, timestamp %d\n",
        FLAGS_out_image, image->bytes, image->memory_nodes, image->timestamp);
  }
  if (FLAGS_json) {
    std::cout << absl::StrFormat(
        "{\"records_replayed\": %d, \"ops_replayed\": %d, "
        "\"records_skipped\": %d, \"dropped_bytes\": %d, "
        "\"max_commit_ts\": %d}\n",
        report.records_replayed, report.ops_replayed, report.records_skipped,
        report.dropped_bytes, report.max_commit_ts);
  }
  return 0;
}
