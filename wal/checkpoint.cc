#include "wal/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "wal/crc32c.h"
#include "wal/durable_file.h"
#include "wal/log_file.h"

namespace strand::wal {
namespace {

constexpr absl::string_view kMagic = "strand-checkpoint";
constexpr std::string_view kPrefix = "checkpoint-";

std::string Body(const CheckpointManifest& m) {
  std::string out = absl::StrFormat(
      "%s %d\nsequence %d\ndatabase_id %d\nstart_ts %d\nend_ts %d\n"
      "compute_nodes %d\nkind %s\nmemory_nodes %d\nregion_bytes %d\n"
      "chunk_bytes %d\ngcl_size %d\n",
      kMagic, m.format_version, m.sequence, m.database_id, m.start_ts, m.end_ts,
      m.compute_nodes, m.kind, m.memory_nodes, m.region_bytes, m.chunk_bytes,
      m.gcl_size);
  for (const CheckpointFile& f : m.files) {
    absl::StrAppendFormat(&out, "file %s %d %d\n", f.name, f.bytes, f.crc);
  }
  return out;
}

template <typename T>
bool ParseNumber(absl::string_view text, T* out) {
  uint64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v > std::numeric_limits<T>::max()) {
    return false;
  }
  *out = static_cast<T>(v);
  return true;
}

}  // namespace

std::string CheckpointDirectory(const std::string& wal_dir, uint64_t sequence) {
  return absl::StrFormat("%s/%s%08d", wal_dir, kPrefix, sequence);
}

std::string ManifestPath(const std::string& checkpoint_dir) {
  return checkpoint_dir + "/MANIFEST";
}

absl::StatusOr<std::vector<CheckpointEntry>> ListCheckpoints(
    const std::string& wal_dir) {
  std::vector<CheckpointEntry> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(wal_dir, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(wal_dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t sequence = 0;
    if (!entry.is_directory() || !name.starts_with(kPrefix) ||
        name.size() != kPrefix.size() + 8 ||
        !absl::SimpleAtoi(name.substr(kPrefix.size()), &sequence) ||
        sequence == 0) {
      continue;
    }
    CheckpointEntry e;
    e.sequence = sequence;
    e.dir = CheckpointDirectory(wal_dir, sequence);
    e.published = std::filesystem::exists(ManifestPath(e.dir), ec);
    out.push_back(std::move(e));
  }
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("list %s: %s", wal_dir, ec.message()));
  }
  std::sort(out.begin(), out.end(),
            [](const CheckpointEntry& a, const CheckpointEntry& b) {
              return a.sequence > b.sequence;
            });
  return out;
}

absl::StatusOr<CheckpointManifest> ReadManifest(
    const std::string& checkpoint_dir) {
  const std::string path = ManifestPath(checkpoint_dir);
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrFormat("checkpoint %s has no manifest: it was never finished",
                        checkpoint_dir));
  }
  if (!text.ok()) return text.status();
  auto damaged = [&path](std::string_view why) {
    return absl::DataLossError(
        absl::StrFormat("checkpoint manifest %s is damaged: %s", path, why));
  };
  const size_t crc_at = text->rfind("crc ");
  uint32_t crc = 0;
  if (crc_at == std::string::npos ||
      (crc_at > 0 && (*text)[crc_at - 1] != '\n')) {
    return damaged("no crc line (truncated?)");
  }
  absl::string_view crc_text = absl::string_view(*text).substr(crc_at + 4);
  if (absl::EndsWith(crc_text, "\n")) crc_text.remove_suffix(1);
  if (!ParseNumber(crc_text, &crc)) return damaged("bad crc line");
  const absl::string_view body = absl::string_view(*text).substr(0, crc_at);
  if (Crc32c(std::string_view(body.data(), body.size())) != crc) {
    return damaged("crc mismatch");
  }
  CheckpointManifest m;
  m.format_version = 0;
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    bool ok = f.size() >= 2;
    if (ok && f[0] == kMagic) {
      ok = ParseNumber(f[1], &m.format_version);
      if (ok && m.format_version > kCheckpointFormatVersion) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "checkpoint %s has format version %d, newer than this build's "
            "%d",
            checkpoint_dir, m.format_version, kCheckpointFormatVersion));
      }
    } else if (ok && f[0] == "sequence") {
      ok = ParseNumber(f[1], &m.sequence);
    } else if (ok && f[0] == "database_id") {
      ok = ParseNumber(f[1], &m.database_id);
    } else if (ok && f[0] == "start_ts") {
      ok = ParseNumber(f[1], &m.start_ts);
    } else if (ok && f[0] == "end_ts") {
      ok = ParseNumber(f[1], &m.end_ts);
    } else if (ok && f[0] == "compute_nodes") {
      ok = ParseNumber(f[1], &m.compute_nodes);
    } else if (ok && f[0] == "kind") {
      m.kind = std::string(f[1]);
    } else if (ok && f[0] == "memory_nodes") {
      ok = ParseNumber(f[1], &m.memory_nodes);
    } else if (ok && f[0] == "region_bytes") {
      ok = ParseNumber(f[1], &m.region_bytes);
    } else if (ok && f[0] == "chunk_bytes") {
      ok = ParseNumber(f[1], &m.chunk_bytes);
    } else if (ok && f[0] == "gcl_size") {
      ok = ParseNumber(f[1], &m.gcl_size);
    } else if (ok && f[0] == "file" && f.size() == 4) {
      CheckpointFile file;
      file.name = std::string(f[1]);
      ok = ParseNumber(f[2], &file.bytes) && ParseNumber(f[3], &file.crc) &&
           !file.name.empty() && file.name.find('/') == std::string::npos;
      m.files.push_back(std::move(file));
    } else {
      ok = false;
    }
    if (!ok) return damaged(absl::StrCat("bad line: ", line));
  }
  if (m.format_version == 0 || m.sequence == 0 || m.database_id == 0 ||
      m.end_ts < m.start_ts) {
    return damaged("missing or contradictory fields");
  }
  return m;
}

absl::Status VerifyCheckpoint(const std::string& checkpoint_dir,
                              const CheckpointManifest& manifest) {
  std::string buffer(1 << 20, '\0');
  for (const CheckpointFile& f : manifest.files) {
    const std::string path = checkpoint_dir + "/" + f.name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return absl::DataLossError(
          absl::StrFormat("checkpoint file %s: %s (the manifest names it)",
                          path, std::strerror(errno)));
    }
    uint64_t bytes = 0;
    uint32_t crc = 0;
    absl::Status status;
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = absl::InternalError(
            absl::StrFormat("read %s: %s", path, std::strerror(errno)));
        break;
      }
      if (n == 0) break;
      crc = Crc32cExtend(crc, buffer.data(), static_cast<size_t>(n));
      bytes += static_cast<uint64_t>(n);
    }
    ::close(fd);
    if (!status.ok()) return status;
    if (bytes != f.bytes) {
      return absl::DataLossError(absl::StrFormat(
          "checkpoint file %s has %d bytes, its manifest says %d: truncated "
          "or damaged",
          path, bytes, f.bytes));
    }
    if (crc != f.crc) {
      return absl::DataLossError(absl::StrFormat(
          "checkpoint file %s does not match its CRC in the manifest: "
          "damaged",
          path));
    }
  }
  return absl::OkStatus();
}

absl::Status PublishCheckpoint(const std::string& checkpoint_dir,
                               const CheckpointManifest& manifest) {
  const std::string body = Body(manifest);
  if (absl::Status s = SyncDirectory(checkpoint_dir); !s.ok()) return s;
  return WriteFileAtomically(ManifestPath(checkpoint_dir),
                             absl::StrCat(body, "crc ", Crc32c(body), "\n"));
}

absl::Status DeleteCheckpoint(const std::string& checkpoint_dir) {
  const std::string manifest = ManifestPath(checkpoint_dir);
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(
        absl::StrFormat("delete %s: %s", manifest, std::strerror(errno)));
  }
  if (absl::Status s = SyncDirectory(checkpoint_dir); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::remove_all(checkpoint_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("delete %s: %s", checkpoint_dir, ec.message()));
  }
  const size_t slash = checkpoint_dir.rfind('/');
  return SyncDirectory(
      slash == std::string::npos
          ? "."
          : checkpoint_dir.substr(0, std::max<size_t>(slash, 1)));
}

}  // namespace strand::wal
