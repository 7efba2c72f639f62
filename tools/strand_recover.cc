// strand_recover: rebuilds a memory pool from a base (the newest usable
// checkpoint in --wal_dir, engine/checkpoint_load.h, or else the pool image
// --image) plus every compute node's log, merged in commit-timestamp order
// (engine/recovery.h), and optionally writes the result as an image.
//
//   strand_recover --wal_dir=/ssd/wal [--image=/ssd/db.img]
//       [--out_image=/ssd/db-recovered.img]
//
// The pool's layout is read from the base (manifest or image header); the
// layout flags (--memory_nodes, --pool_mb, --chunk_kb, --gcl_size) are
// needed only for an image too old to record its GCL size, and must match.
// Prints the base (and every newer checkpoint passed over, with why), load
// and replay times and rates, and per node how its log ended (a torn tail
// is cut and its bytes printed). A log damaged before its end is an error
// naming node, segment, offset and LSN; --allow_log_data_loss recovers up
// to the damage instead, and says so. --json: one JSON object on stdout,
// the human report on stderr.
// Exit status: 0 recovered (with --allow_log_data_loss possibly losing
// data, which the report and the JSON say); 1 recovery failed (damaged or
// foreign log, no usable checkpoint or image, replay error); 2 command-line
// misuse, found before any replay (unusable --image / --wal_dir /
// --out_image, a layout flag that contradicts the base).

#include <gflags/gflags.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/option_checks.h"
#include "base/run_output.h"
#include "base/status_macros.h"
#include "engine/engine.h"
#include "engine/engine_internals.h"
#include "engine/image.h"
#include "rdma/fabric_flags.h"
#include "wal/checkpoint.h"

namespace strand {

// The pool layout recovery rebuilds: the newest published checkpoint's
// (its manifest), or the image's header.
struct RecoveryBase {
  std::string name;  // "the checkpoint <dir>" or "the image <file>"
  uint32_t memory_nodes = 0;
  uint64_t region_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint32_t gcl_size = 0;
};

// What strand_recover is told: one field per flag, checked together by
// Validate before any replay (the newest checkpoint's manifest or the
// image's header is read, nothing else).
struct RecoverOptions {
  std::string image;
  std::string wal_dir;
  std::string out_image;
  uint32_t gcl_size = 0;  // 0: the image's own
  bool allow_log_data_loss = false;
  rdma::FabricOptions fabric;
  std::set<std::string> given;

  // The base's layout, with the layout flags checked against it.
  absl::StatusOr<RecoveryBase> Validate() const;
  void AddJson(JsonLine& json) const;
};

}  // namespace strand

namespace {
// Every flag's default is the options struct's.
const strand::RecoverOptions kDefaults;
}  // namespace

DEFINE_string(image, kDefaults.image.c_str(),
              "Pool image (engine/image.h) to start from when --wal_dir holds "
              "no usable checkpoint; required if it holds none");
DEFINE_string(wal_dir, kDefaults.wal_dir.c_str(),
              "Directory of the logs to replay (the run's --wal_dir, holding "
              "one node-<id>/ per compute node), required");
DEFINE_string(out_image, kDefaults.out_image.c_str(),
              "Write the recovered pool here (open it with tpcc "
              "--check_image, or continue from it with a fresh --wal_dir); "
              "checked for writability before the replay");
DEFINE_uint32(gcl_size, kDefaults.gcl_size,
              "GCL size of the run that wrote the image; 0 (default): the "
              "image's own. Needed only for images of format 1, which do not "
              "record it; if given it must match the image");
DEFINE_bool(allow_log_data_loss, kDefaults.allow_log_data_loss,
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
absl::Status CheckLayoutFlag(const RecoverOptions& o, const char* flag,
                             uint64_t given, uint64_t base_value, uint64_t unit,
                             const std::string& base) {
  if (!o.given.contains(flag) || given == base_value) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--%s=%d contradicts %s, which has %d: drop the flag (the layout is "
      "read from it) or give the base of that run",
      flag, given / unit, base, base_value / unit));
}

absl::Status CheckLayoutFlags(const RecoverOptions& o,
                              const RecoveryBase& base) {
  STRAND_RETURN_IF_ERROR(CheckLayoutFlag(o, "memory_nodes",
                                         o.fabric.memory_nodes,
                                         base.memory_nodes, 1, base.name));
  STRAND_RETURN_IF_ERROR(CheckLayoutFlag(o, "pool_mb", o.fabric.pool_bytes,
                                         base.region_bytes, uint64_t{1} << 20,
                                         base.name));
  return CheckLayoutFlag(o, "chunk_kb", o.fabric.chunk_bytes, base.chunk_bytes,
                         1024, base.name);
}

// The layout of the newest published checkpoint in --wal_dir (what the
// engine tries first: an older one it may fall back to was taken from the
// same pool), if there is one.
std::optional<RecoveryBase> NewestCheckpoint(const RecoverOptions& o) {
  auto listed = wal::ListCheckpoints(o.wal_dir);
  if (!listed.ok()) return std::nullopt;
  for (const wal::CheckpointEntry& e : *listed) {
    if (!e.published) continue;
    auto manifest = wal::ReadManifest(e.dir);
    if (!manifest.ok()) continue;
    // A checkpoint is logical: any pool that holds it would do, but the
    // run's own layout surely does.
    return RecoveryBase{.name = "the checkpoint " + e.dir,
                        .memory_nodes = manifest->memory_nodes,
                        .region_bytes = manifest->region_bytes,
                        .chunk_bytes = manifest->chunk_bytes,
                        .gcl_size = manifest->gcl_size};
  }
  return std::nullopt;
}

// The image's header, and the layout flags checked against it.
absl::StatusOr<ImageInfo> CheckImage(const RecoverOptions& o) {
  if (o.image.empty()) {
    return absl::InvalidArgumentError(
        "--wal_dir holds no checkpoint: --image=FILE is required (the pool "
        "image to start from, e.g. the load.img of a run that logged "
        "without checkpoints)");
  }
  absl::StatusOr<ImageInfo> image = engine::ReadImageHeader(o.image);
  if (!image.ok()) {
    return absl::InvalidArgumentError("--image: " +
                                      std::string(image.status().message()));
  }
  STRAND_RETURN_IF_ERROR(
      CheckLayoutFlags(o, RecoveryBase{.name = "the image " + o.image,
                                       .memory_nodes = image->memory_nodes,
                                       .region_bytes = image->region_bytes,
                                       .chunk_bytes = image->chunk_bytes}));
  if (image->gcl_size == 0) {
    if (o.gcl_size == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the image %s is of format 1, which does not record its GCL size: "
          "give --gcl_size of the run that wrote it",
          o.image));
    }
    image->gcl_size = o.gcl_size;
  } else if (o.gcl_size != 0 && o.gcl_size != image->gcl_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--gcl_size=%d contradicts the image %s, whose GCLs are %d bytes: "
        "drop --gcl_size (it is read from the image)",
        o.gcl_size, o.image, image->gcl_size));
  }
  return image;
}

// --wal_dir must hold at least one node's log directory: recovering from
// a directory with no log would silently return the image.
absl::Status CheckWalDir(const RecoverOptions& o) {
  if (o.wal_dir.empty()) {
    return absl::InvalidArgumentError(
        "--wal_dir=DIR is required (the directory the run logged to, "
        "holding node-<id>/)");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(o.wal_dir, ec)) {
    return absl::InvalidArgumentError("--wal_dir=" + o.wal_dir +
                                      " is not a directory");
  }
  bool has_node = false, has_segment = false;
  for (const auto& entry : std::filesystem::directory_iterator(o.wal_dir, ec)) {
    const std::string name = entry.path().filename().string();
    has_node |= entry.is_directory() && name.starts_with("node-");
    has_segment |= name.ends_with(".wal");
  }
  if (ec) {
    return absl::InvalidArgumentError("--wal_dir=" + o.wal_dir + ": " +
                                      ec.message());
  }
  if (has_node) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "--wal_dir=" + o.wal_dir + " holds no log (no node-<id>/ " +
      (has_segment ? "directory; it holds segments itself: give its parent)"
                   : "directory): nothing to recover from"));
}

// Fails now, not after the replay, if the recovered image cannot be
// written: WriteImage creates <out_image>.tmp next to it, then renames.
absl::Status CheckOutImage(const RecoverOptions& o) {
  if (o.out_image.empty()) return absl::OkStatus();
  namespace fs = std::filesystem;
  std::error_code out_ec, image_ec, ec;
  const fs::path out = fs::weakly_canonical(o.out_image, out_ec);
  const fs::path image = fs::weakly_canonical(o.image, image_ec);
  if (!out_ec && !image_ec && out == image) {
    return absl::InvalidArgumentError(
        "--out_image must not be the --image it starts from (keep that "
        "until the recovered one is checked)");
  }
  if (fs::is_directory(o.out_image, ec)) {
    return absl::InvalidArgumentError("--out_image=" + o.out_image +
                                      " is a directory");
  }
  const fs::path parent = fs::absolute(o.out_image, ec).parent_path();
  return CheckWritableDirectory(OptionNaming::Flags("RecoverOptions::"),
                                {"out_image", "out_image"}, parent.string(),
                                /*may_create=*/false);
}

}  // namespace

absl::StatusOr<RecoveryBase> RecoverOptions::Validate() const {
  if (fabric.kind != rdma::FabricKind::kLoopback) {
    return absl::InvalidArgumentError(
        "recovery runs on --fabric=loopback only");
  }
  // An image given is checked first (the fallback the engine takes if no
  // checkpoint is usable), then the logs, then the newest checkpoint.
  std::optional<ImageInfo> info;
  if (!image.empty()) {
    STRAND_ASSIGN_OR_RETURN(info, CheckImage(*this));
  }
  STRAND_RETURN_IF_ERROR(CheckWalDir(*this));
  std::optional<RecoveryBase> base = NewestCheckpoint(*this);
  if (base.has_value()) {
    STRAND_RETURN_IF_ERROR(CheckLayoutFlags(*this, *base));
    if (gcl_size != 0 && gcl_size != base->gcl_size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--gcl_size=%d contradicts %s, whose GCLs are %d bytes: drop "
          "--gcl_size (it is read from it)",
          gcl_size, base->name, base->gcl_size));
    }
  } else {
    if (!info.has_value()) {
      STRAND_ASSIGN_OR_RETURN(info, CheckImage(*this));  // says it is needed
    }
    base = RecoveryBase{.name = "the image " + image,
                        .memory_nodes = info->memory_nodes,
                        .region_bytes = info->region_bytes,
                        .chunk_bytes = info->chunk_bytes,
                        .gcl_size = info->gcl_size};
  }
  STRAND_RETURN_IF_ERROR(CheckOutImage(*this));
  return *base;
}

void RecoverOptions::AddJson(JsonLine& json) const {
  json.Add("image", image)
      .Add("wal_dir", wal_dir)
      .Add("out_image", out_image)
      .Add("allow_log_data_loss", allow_log_data_loss);
}

namespace {

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

// The options from the flags, validated, and the base's layout: exits
// with status 2 naming the flag on any misuse, before any replay.
std::pair<RecoverOptions, RecoveryBase> OptionsFromFlags() {
  RecoverOptions o;
  o.image = FLAGS_image;
  o.wal_dir = FLAGS_wal_dir;
  o.out_image = FLAGS_out_image;
  o.gcl_size = FLAGS_gcl_size;
  o.allow_log_data_loss = FLAGS_allow_log_data_loss;
  o.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  o.given = FlagsGiven();
  absl::StatusOr<RecoveryBase> base = o.Validate();
  ExitIfUsageError(base.status());
  return {o, *base};
}

void PrintReport(const RecoverOptions& o, const engine::RecoveryReport& report,
                 std::ostream& human) {
  human << report.Summary() << "\n";
  uint64_t log_records = 0;
  for (const wal::LogReaderStats& n : report.nodes) log_records += n.records;
  if (log_records == 0) {
    std::cerr << "strand_recover: warning: the logs in " << o.wal_dir
              << " hold no record: the recovered pool is the base as it "
                 "was\n";
  }
  if (report.data_lost) {
    std::cerr << "strand_recover: WARNING: committed transactions were lost "
                 "(--allow_log_data_loss): see DATA LOST above\n";
  }
}

// The engine that recovers: the base's layout, the fabric flags.
engine::EngineOptions RecoveryEngineOptions(const RecoverOptions& options,
                                            const RecoveryBase& base) {
  engine::EngineOptions engine_options;
  engine_options.fabric = options.fabric;
  engine_options.fabric.memory_nodes = static_cast<int>(base.memory_nodes);
  engine_options.fabric.pool_bytes = base.region_bytes;
  engine_options.fabric.chunk_bytes = base.chunk_bytes;
  if (!options.given.contains("populate_memory")) {
    // Recovery fills the pool it uses: committing the rest of the regions
    // in the background (the binaries' default, for measured runs) only
    // competes with it for the CPU.
    engine_options.fabric.populate_memory = rdma::PopulateMode::kOnFirstTouch;
  }
  engine_options.cc.gcl_size = base.gcl_size;
  engine_options.image_path = options.image;
  engine_options.recover_wal_dir = options.wal_dir;
  engine_options.recover_allow_log_data_loss = options.allow_log_data_loss;
  return engine_options;
}

// The recovery report's JSON fields.
void AddReportJson(const engine::RecoveryReport& report,
                   const RecoveryBase& base, JsonLine& json) {
  const double replay_s = absl::ToDoubleSeconds(report.replay_time);
  json.Add("base_kind", report.base_kind)
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
      .Add("gcl_size", static_cast<uint64_t>(base.gcl_size))
      .Add("image_timestamp", report.image_timestamp)
      .Add("records_replayed", report.records_replayed)
      .Add("ops_replayed", report.ops_replayed)
      .Add("replay_batches", report.batches)
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
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const auto [options, base] = OptionsFromFlags();
  const engine::EngineOptions engine_options =
      RecoveryEngineOptions(options, base);
  if (absl::Status s = engine_options.Validate(
          strand::OptionNaming::Flags("EngineOptions::"));
      !s.ok()) {
    std::cerr << "strand_recover: the layout of " << base.name
              << " is not usable: " << s << "\n";
    return 1;
  }
  auto engine = engine::Engine::Open(engine_options);
  if (!engine.ok()) {
    std::cerr << "strand_recover: " << engine.status() << "\n";
    return 1;
  }
  const engine::RecoveryReport& report = *(*engine)->recovery_report();
  PrintReport(options, report, output.human());
  JsonLine json = output.Record();
  // The layout as restored from the base (the fabric flags' names).
  rdma::AddFabricJson(engine_options.fabric,
                      engine::EngineInternals::fabric(**engine), json);
  options.AddJson(json);
  AddReportJson(report, base, json);
  if (!options.out_image.empty()) {
    auto saved = (*engine)->SaveImage(options.out_image);
    if (!saved.ok()) {
      std::cerr << "strand_recover: " << saved.status() << "\n";
      return 1;
    }
    output.human() << absl::StrFormat(
        "wrote %s: %d bytes of %d memory nodes, timestamp %d\n",
        options.out_image, saved->bytes, saved->memory_nodes, saved->timestamp);
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
