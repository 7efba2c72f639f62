// strand_recover: rebuilds a memory pool from a base (the newest usable
// checkpoint in --wal_dir, engine/checkpoint_load.h, or else the pool image
// --image) plus the logs of every compute node, merged in commit-timestamp
// order (engine/recovery.h), and optionally writes the result as an image.
//
//   strand_recover --wal_dir=/ssd/wal [--image=/ssd/db.img]
//       [--out_image=/ssd/db-recovered.img]
//
// The pool's layout (memory nodes, their size, the chunk and GCL sizes)
// is read from the base: the checkpoint's manifest or the image's header;
// --memory_nodes, --pool_mb, --chunk_kb and --gcl_size are needed only
// for an image too old to record its GCL size, and if given must match.
//
// Prints the base (and every newer checkpoint passed over, with why: a
// damaged or unfinished copy, logs truncated past it), how long loading it
// and replaying the logs took (records/s, MiB/s), and per node how its log
// ended (a torn tail of a crash is cut: the bytes dropped are printed). A
// log damaged before its end (a corrupt, missing or truncated segment, a
// missing node-<id>/, wal/log_reader.h) is an error naming the node,
// segment, offset and LSN; --allow_log_data_loss recovers up to it
// instead, and says so.
//
// Exit status: 0 recovered (with --allow_log_data_loss possibly losing
// data, which the report and the JSON say); 1 recovery failed (damaged or
// foreign log, no usable checkpoint or image, replay error); 2
// command-line misuse, found before any replay (missing or unusable
// --image / --wal_dir / --out_image, a layout flag that contradicts the
// base). --json: one JSON object on stdout and nothing else (the human
// report goes to stderr).

#include <fcntl.h>
#include <gflags/gflags.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/run_output.h"
#include "engine/engine.h"
#include "engine/image.h"
#include "rdma/fabric_flags.h"
#include "wal/checkpoint.h"

DEFINE_string(image, "",
              "Pool image (engine/image.h) to start from when --wal_dir holds "
              "no usable checkpoint; required if it holds none");
DEFINE_string(wal_dir, "",
              "Directory of the logs to replay (the run's --wal_dir, holding "
              "one node-<id>/ per compute node), required");
DEFINE_string(out_image, "",
              "Write the recovered pool here (open it with tpcc "
              "--check_image, or continue from it with a fresh --wal_dir); "
              "checked for writability before the replay");
DEFINE_uint32(gcl_size, 0,
              "GCL size of the run that wrote the image; 0 (default): the "
              "image's own. Needed only for images of format 1, which do not "
              "record it; if given it must match the image");
DEFINE_bool(allow_log_data_loss, false,
            "If a log is damaged before its end (a corrupt or missing record "
            "that later records prove was durable, e.g. a deleted segment "
            "or a corrupted block), replay it only up to the damage and "
            "every other node's log only up to the same commit timestamp, "
            "instead of failing. The committed transactions after the "
            "damage are LOST, and the result may miss some before it (a "
            "node's log is not in commit order): use it only when the "
            "damaged log cannot be restored. The report says what was lost");

namespace strand {
namespace {

using engine::ImageInfo;

// A flag the user set whose value contradicts the base's: misuse.
void CheckLayoutFlag(const char* flag, uint64_t base_value, uint64_t unit,
                     const std::string& base) {
  const gflags::CommandLineFlagInfo info =
      gflags::GetCommandLineFlagInfoOrDie(flag);
  if (info.is_default) return;
  const uint64_t given = std::stoull(info.current_value);
  if (given * unit != base_value) {
    ExitWithUsageError(absl::StrFormat(
        "--%s=%d contradicts %s, which has %d: drop the flag (the layout is "
        "read from it) or give the base of that run",
        flag, given, base, base_value / unit));
  }
}

// The image's header, and the layout flags checked against it.
ImageInfo CheckImage() {
  if (FLAGS_image.empty()) {
    ExitWithUsageError(
        "--wal_dir holds no checkpoint: --image=FILE is required (the pool "
        "image to start from, e.g. the load.img of a run that logged "
        "without checkpoints)");
  }
  absl::StatusOr<ImageInfo> image = engine::ReadImageHeader(FLAGS_image);
  if (!image.ok()) {
    ExitWithUsageError("--image: " + std::string(image.status().message()));
  }
  const std::string name = "the image " + FLAGS_image;
  CheckLayoutFlag("memory_nodes", image->memory_nodes, 1, name);
  CheckLayoutFlag("pool_mb", image->region_bytes, uint64_t{1} << 20, name);
  CheckLayoutFlag("chunk_kb", image->chunk_bytes, 1024, name);
  if (image->gcl_size == 0) {
    if (FLAGS_gcl_size == 0) {
      ExitWithUsageError(absl::StrFormat(
          "the image %s is of format 1, which does not record its GCL size: "
          "give --gcl_size of the run that wrote it",
          FLAGS_image));
    }
    image->gcl_size = FLAGS_gcl_size;
  } else if (FLAGS_gcl_size != 0 && FLAGS_gcl_size != image->gcl_size) {
    ExitWithUsageError(absl::StrFormat(
        "--gcl_size=%d contradicts the image %s, whose GCLs are %d bytes: "
        "drop --gcl_size (it is read from the image)",
        FLAGS_gcl_size, FLAGS_image, image->gcl_size));
  }
  return *image;
}

// --wal_dir must hold at least one node's log directory: recovering from
// a directory with no log would silently return the image.
void CheckWalDir() {
  if (FLAGS_wal_dir.empty()) {
    ExitWithUsageError(
        "--wal_dir=DIR is required (the directory the run "
        "logged to, holding node-<id>/)");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(FLAGS_wal_dir, ec)) {
    ExitWithUsageError("--wal_dir=" + FLAGS_wal_dir + " is not a directory");
  }
  bool has_node = false, has_segment = false;
  for (const auto& entry :
       std::filesystem::directory_iterator(FLAGS_wal_dir, ec)) {
    const std::string name = entry.path().filename().string();
    has_node |= entry.is_directory() && name.starts_with("node-");
    has_segment |= name.ends_with(".wal");
  }
  if (ec) {
    ExitWithUsageError("--wal_dir=" + FLAGS_wal_dir + ": " + ec.message());
  }
  if (!has_node) {
    ExitWithUsageError(
        "--wal_dir=" + FLAGS_wal_dir + " holds no log (no node-<id>/ " +
        (has_segment ? "directory; it holds segments itself: give its parent)"
                     : "directory): nothing to recover from"));
  }
}

// Fails now, not after the replay, if the recovered image cannot be
// written: WriteImage creates <out_image>.tmp next to it, then renames.
void CheckOutImage() {
  if (FLAGS_out_image.empty()) return;
  namespace fs = std::filesystem;
  std::error_code out_ec, image_ec, ec;
  const fs::path out = fs::weakly_canonical(FLAGS_out_image, out_ec);
  const fs::path image = fs::weakly_canonical(FLAGS_image, image_ec);
  if (!out_ec && !image_ec && out == image) {
    ExitWithUsageError(
        "--out_image must not be the --image it starts from "
        "(keep that until the recovered one is checked)");
  }
  if (fs::is_directory(FLAGS_out_image, ec)) {
    ExitWithUsageError("--out_image=" + FLAGS_out_image + " is a directory");
  }
  const fs::path parent = fs::absolute(FLAGS_out_image, ec).parent_path();
  const std::string probe =
      (parent / absl::StrFormat(".strand_recover-probe-%d", ::getpid()))
          .string();
  const int fd =
      ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    ExitWithUsageError(absl::StrFormat(
        "--out_image=%s cannot be written: creating a file in %s: %s",
        FLAGS_out_image, parent.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string NodesJson(const engine::RecoveryReport& report) {
  std::vector<std::string> nodes;
  for (const wal::LogReaderStats& n : report.nodes) {
    JsonLine j;
    j.Add("node", n.node)
        .Add("records", n.records)
        .Add("last_lsn", n.last_lsn)
        .Add("dropped_bytes", n.dropped_bytes)
        .Add("end", n.end)
        .Add("damage", n.damage);
    nodes.push_back(j.str());
  }
  return "[" + absl::StrJoin(nodes, ",") + "]";
}

// Whether --wal_dir holds a published checkpoint; if so, the layout of
// the newest one (what the engine will try first: an older one it may
// fall back to was taken from the same pool).
std::optional<wal::CheckpointManifest> NewestCheckpoint() {
  auto listed = wal::ListCheckpoints(FLAGS_wal_dir);
  if (!listed.ok()) return std::nullopt;
  for (const wal::CheckpointEntry& e : *listed) {
    if (!e.published) continue;
    auto manifest = wal::ReadManifest(e.dir);
    if (manifest.ok()) return *manifest;
  }
  return std::nullopt;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  CheckWalDir();
  const std::optional<wal::CheckpointManifest> checkpoint = NewestCheckpoint();
  ImageInfo image;
  if (!checkpoint.has_value() || !FLAGS_image.empty()) image = CheckImage();
  CheckOutImage();
  absl::StatusOr<rdma::FabricOptions> fabric = rdma::FabricOptionsFromFlags();
  if (!fabric.ok()) ExitWithUsageError(std::string(fabric.status().message()));
  if (fabric->kind != rdma::FabricKind::kLoopback) {
    ExitWithUsageError("recovery runs on --fabric=loopback only");
  }
  if (gflags::GetCommandLineFlagInfoOrDie("populate_memory").is_default) {
    // Recovery fills the pool it uses: committing the rest of the regions
    // in the background (the binaries' default, for measured runs) only
    // competes with it for the CPU.
    fabric->populate_memory = rdma::PopulateMode::kOnFirstTouch;
  }
  uint32_t gcl_size = image.gcl_size;
  if (checkpoint.has_value()) {
    // A checkpoint is logical: any pool that holds it would do, but the
    // run's own layout surely does.
    const std::string name = "the checkpoint's pool";
    CheckLayoutFlag("memory_nodes", checkpoint->memory_nodes, 1, name);
    CheckLayoutFlag("pool_mb", checkpoint->region_bytes, uint64_t{1} << 20,
                    name);
    CheckLayoutFlag("chunk_kb", checkpoint->chunk_bytes, 1024, name);
    fabric->memory_nodes = static_cast<int>(checkpoint->memory_nodes);
    fabric->pool_bytes = checkpoint->region_bytes;
    fabric->chunk_bytes = checkpoint->chunk_bytes;
    gcl_size = checkpoint->gcl_size;
  } else {
    fabric->memory_nodes = static_cast<int>(image.memory_nodes);
    fabric->pool_bytes = image.region_bytes;
    fabric->chunk_bytes = image.chunk_bytes;
  }

  engine::EngineOptions options;
  options.fabric = *fabric;
  options.cc.gcl_size = gcl_size;
  options.image_path = FLAGS_image;
  options.recover_wal_dir = FLAGS_wal_dir;
  options.recover_allow_log_data_loss = FLAGS_allow_log_data_loss;
  if (absl::Status s =
          options.Validate(strand::OptionNaming::Flags("EngineOptions::"));
      !s.ok()) {
    std::cerr << "strand_recover: the image's layout is not usable: " << s
              << "\n";
    return 1;
  }
  auto engine = engine::Engine::Open(options);
  if (!engine.ok()) {
    std::cerr << "strand_recover: " << engine.status() << "\n";
    return 1;
  }
  std::ostream& human = output.human();
  const engine::RecoveryReport& report = *(*engine)->recovery_report();
  human << report.Summary() << "\n";
  uint64_t log_records = 0;
  for (const wal::LogReaderStats& n : report.nodes) log_records += n.records;
  if (log_records == 0) {
    std::cerr << "strand_recover: warning: the logs in " << FLAGS_wal_dir
              << " hold no record: the recovered pool is the image as it "
                 "was\n";
  }
  if (report.data_lost) {
    std::cerr << "strand_recover: WARNING: committed transactions were lost "
                 "(--allow_log_data_loss): see DATA LOST above\n";
  }
  JsonLine json = output.Record();
  // The layout as restored from the image (the fabric flags' names).
  rdma::AddFabricJson(*fabric, (*engine)->fabric(), json);
  const double replay_s = absl::ToDoubleSeconds(report.replay_time);
  json.Add("image", FLAGS_image)
      .Add("wal_dir", FLAGS_wal_dir)
      .Add("base_kind", report.base_kind)
      .Add("base", report.base_path)
      .Add("bases_passed_over", report.bases_passed_over.size())
      .Add("load_s", absl::ToDoubleSeconds(report.load_time))
      .Add("load_cpu_s", report.load_cpu_s)
      .Add("read_logs_cpu_s", report.read_cpu_s)
      .Add("replay_cpu_s", report.replay_cpu_s)
      .Add("read_logs_s", absl::ToDoubleSeconds(report.read_time))
      .Add("replay_s", replay_s)
      .Add("checkpoint_tuples", report.checkpoint_tuples)
      .Add("checkpoint_entries", report.checkpoint_entries)
      .Add("checkpoint_bytes", report.checkpoint_bytes)
      .Add("replayed_bytes", report.replayed_bytes)
      .Add("replay_records_per_s",
           replay_s > 0 ? report.records_replayed / replay_s : 0.0)
      .Add("replay_mb_per_s",
           replay_s > 0 ? report.replayed_bytes / 1048576.0 / replay_s : 0.0)
      .Add("ops_already_applied", report.ops_already_applied)
      .Add("out_image", FLAGS_out_image)
      .Add("allow_log_data_loss", FLAGS_allow_log_data_loss)
      .Add("gcl_size", static_cast<uint64_t>(gcl_size))
      .Add("image_timestamp", report.image_timestamp)
      .Add("records_replayed", report.records_replayed)
      .Add("ops_replayed", report.ops_replayed)
      .Add("records_skipped", report.records_skipped)
      .Add("dropped_bytes", report.dropped_bytes)
      .Add("max_commit_ts", report.max_commit_ts)
      .Add("data_lost", report.data_lost)
      .Add("damage_cut_ts", report.damage_cut_ts)
      .Add("records_dropped_at_cut", report.records_dropped_at_cut)
      .Add("acked_by_watermark", report.acked_by_watermark)
      .Add("watermark_cut_ts", report.watermark_cut_ts)
      .Add("records_above_watermark", report.records_above_watermark)
      .Add("distributed_commits", report.two_phase.distributed_commits)
      .Add("prepared_branches_committed", report.two_phase.prepared_committed)
      .Add("prepared_branches_in_doubt", report.two_phase.prepared_in_doubt)
      .AddRaw("nodes", NodesJson(report));
  if (!FLAGS_out_image.empty()) {
    auto saved = (*engine)->SaveImage(FLAGS_out_image);
    if (!saved.ok()) {
      std::cerr << "strand_recover: " << saved.status() << "\n";
      return 1;
    }
    human << absl::StrFormat(
        "wrote %s: %d bytes of %d memory nodes, timestamp %d\n",
        FLAGS_out_image, saved->bytes, saved->memory_nodes, saved->timestamp);
    json.Add("out_image_bytes", saved->bytes);
  }
  output.Print(json);
  return 0;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Rebuilds a strand pool from a checkpoint (or an image) and the logs of "
      "every compute node.\n"
      "Usage: strand_recover --wal_dir=DIR [--image=FILE] [--out_image=FILE] "
      "[--allow_log_data_loss] [--json|--csv]\n"
      "Exit status: 0 recovered, 1 recovery failed, 2 command-line misuse.");
  return strand::Main();
}
