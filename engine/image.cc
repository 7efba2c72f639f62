#include "engine/image.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/coding.h"
#include "cc/root_words.h"
#include "rdma/loopback/loopback_fabric.h"
#include "rdma/memory_node_layout.h"
#include "wal/crc32c.h"
#include "wal/log_file.h"

namespace strand::engine {
namespace {

constexpr uint64_t kImageMagic = 0x4d49444e41525453;  // "STRANDIM"
// 2: the GCL size at byte 48; 3: the compute node count at byte 52.
constexpr uint32_t kImageVersion = 3;
constexpr size_t kImageHeaderBytes = 64;

absl::StatusOr<rdma::loopback::LoopbackFabric*> Loopback(rdma::Fabric& fabric) {
  auto* loopback = dynamic_cast<rdma::loopback::LoopbackFabric*>(&fabric);
  if (loopback == nullptr) {
    return absl::UnimplementedError(
        "restoring a pool image needs the loopback fabric "
        "(--fabric=loopback): other fabrics' memory nodes are not in this "
        "process");
  }
  return loopback;
}

absl::StatusOr<uint8_t*> Region(rdma::loopback::LoopbackFabric& fabric,
                                int node) {
  return fabric.Translate(rdma::GlobalAddress(node, 0),
                          fabric.memory_node_bytes());
}

// Where WriteImage reads the memory nodes' regions: the loopback's memory
// in place, or (any other fabric) one-sided READs through an endpoint of a
// compute node this process hosts.
class RegionReader {
 public:
  // The largest piece View() hands out.
  static constexpr uint64_t kPieceBytes = 256 * 1024;

  static absl::StatusOr<RegionReader> For(rdma::Fabric& fabric) {
    RegionReader reader;
    reader.loopback_ = dynamic_cast<rdma::loopback::LoopbackFabric*>(&fabric);
    if (reader.loopback_ != nullptr) return reader;
    const std::vector<rdma::ComputeNodeId> local = fabric.local_compute_nodes();
    if (local.empty()) {
      return absl::FailedPreconditionError(
          "a pool image is read through a compute node, and this process "
          "hosts none");
    }
    auto node = fabric.compute_node(local.front());
    if (!node.ok()) return node.status();
    auto endpoint = (*node)->NewEndpoint();
    if (!endpoint.ok()) return endpoint.status();
    reader.endpoint_ = *std::move(endpoint);
    reader.buffer_.resize(kPieceBytes);
    return reader;
  }

  // `bytes` (<= kPieceBytes) of memory node `node` from `offset`: valid
  // until the next call.
  absl::StatusOr<const uint8_t*> View(int node, uint64_t offset,
                                      uint64_t bytes) {
    if (loopback_ != nullptr) {
      auto region = Region(*loopback_, node);
      if (!region.ok()) return region.status();
      return *region + offset;
    }
    if (absl::Status s =
            endpoint_->Read(rdma::GlobalAddress(node, offset), buffer_.data(),
                            static_cast<uint32_t>(bytes));
        !s.ok()) {
      return s;
    }
    return buffer_.data();
  }

  absl::StatusOr<uint64_t> Word(int node, uint64_t offset) {
    auto view = View(node, offset, sizeof(uint64_t));
    if (!view.ok()) return view.status();
    return DecodeFixed<uint64_t>(*view);
  }

 private:
  RegionReader() = default;

  rdma::loopback::LoopbackFabric* loopback_ = nullptr;
  std::unique_ptr<rdma::Endpoint> endpoint_;
  std::vector<uint8_t> buffer_;
};

absl::Status Errno(std::string_view what, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(errno),
                      absl::StrFormat("%s %s: %s", std::string(what), path,
                                      std::strerror(errno)));
}

absl::Status WriteAll(int fd, const void* data, size_t bytes,
                      const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("writing", path);
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, void* data, size_t bytes,
                     const std::string& path) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = ::read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("reading", path);
    if (n == 0) {
      return absl::DataLossError(
          absl::StrFormat("image %s ends early: truncated?", path));
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

template <typename T>
void Put(char* dst, size_t offset, T value) {
  EncodeFixed<T>(dst + offset, value);
}
template <typename T>
T Get(const char* src, size_t offset) {
  return DecodeFixed<T>(src + offset);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

absl::StatusOr<ImageInfo> WriteImage(rdma::Fabric& fabric,
                                     const std::string& path,
                                     uint32_t gcl_size) {
  auto reader = RegionReader::For(fabric);
  if (!reader.ok()) return reader.status();
  ImageInfo info;
  info.memory_nodes = static_cast<uint32_t>(fabric.memory_node_count());
  info.region_bytes = fabric.memory_node_bytes();
  info.chunk_bytes = fabric.chunk_bytes();
  info.gcl_size = gcl_size;
  info.compute_nodes = static_cast<uint32_t>(fabric.compute_node_count());
  auto database_id =
      reader->Word(0, cc::RootWordAddress(cc::RootWord::kDatabaseId).offset());
  if (!database_id.ok()) return database_id.status();
  info.database_id = *database_id;
  auto timestamp = reader->Word(
      0, cc::RootWordAddress(cc::RootWord::kTimestampOracle).offset());
  if (!timestamp.ok()) return timestamp.status();
  info.timestamp = *timestamp;

  const std::string tmp = path + ".tmp";
  Fd file;
  file.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file.fd < 0) return Errno("creating", tmp);
  char header[kImageHeaderBytes] = {};
  Put<uint64_t>(header, 0, kImageMagic);
  Put<uint32_t>(header, 8, kImageVersion);
  Put<uint32_t>(header, 12, info.memory_nodes);
  Put<uint64_t>(header, 16, info.database_id);
  Put<uint64_t>(header, 24, info.timestamp);
  Put<uint64_t>(header, 32, info.region_bytes);
  Put<uint64_t>(header, 40, info.chunk_bytes);
  Put<uint32_t>(header, 48, gcl_size);
  Put<uint32_t>(header, 52, info.compute_nodes);
  if (absl::Status s = WriteAll(file.fd, header, sizeof(header), tmp); !s.ok())
    return s;
  off_t node_header_at = sizeof(header);
  for (uint32_t n = 0; n < info.memory_nodes; ++n) {
    const int node = static_cast<int>(n);
    // Bytes in use: header, root area and allocated chunks.
    auto next_chunk = reader->Word(node, rdma::kNextChunkWordOffset);
    if (!next_chunk.ok()) return next_chunk.status();
    const uint64_t used = std::min(info.region_bytes, *next_chunk);
    // The node's header goes before its data; its CRC is known after.
    char node_header[16] = {};
    if (absl::Status s = WriteAll(file.fd, node_header, 16, tmp); !s.ok())
      return s;
    uint32_t crc = 0;
    for (uint64_t offset = 0; offset < used;) {
      const uint64_t piece =
          std::min<uint64_t>(RegionReader::kPieceBytes, used - offset);
      auto view = reader->View(node, offset, piece);
      if (!view.ok()) return view.status();
      crc = wal::Crc32cExtend(crc, *view, piece);
      if (absl::Status s = WriteAll(file.fd, *view, piece, tmp); !s.ok())
        return s;
      offset += piece;
    }
    Put<uint64_t>(node_header, 0, used);
    Put<uint32_t>(node_header, 8, crc);
    if (::pwrite(file.fd, node_header, 16, node_header_at) != 16) {
      return Errno("writing", tmp);
    }
    node_header_at += 16 + static_cast<off_t>(used);
    info.bytes += used;
  }
  if (::fsync(file.fd) != 0) return Errno("fsync of", tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("renaming", tmp);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (absl::Status s = wal::SyncDirectory(dir); !s.ok()) return s;
  return info;
}

namespace {

// Reads and checks the header at the start of the open `fd`.
absl::StatusOr<ImageInfo> ReadHeader(int fd, const std::string& path) {
  char header[kImageHeaderBytes];
  if (absl::Status s = ReadAll(fd, header, sizeof(header), path); !s.ok()) {
    return absl::IsDataLoss(s)
               ? absl::InvalidArgumentError(absl::StrFormat(
                     "%s is not a strand pool image (shorter than a header)",
                     path))
               : s;
  }
  if (Get<uint64_t>(header, 0) != kImageMagic) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not a strand pool image (bad magic)", path));
  }
  const uint32_t version = Get<uint32_t>(header, 8);
  if (version > kImageVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("image %s has version %d, newer than this build's %d",
                        path, version, kImageVersion));
  }
  ImageInfo info;
  info.memory_nodes = Get<uint32_t>(header, 12);
  info.database_id = Get<uint64_t>(header, 16);
  info.timestamp = Get<uint64_t>(header, 24);
  info.region_bytes = Get<uint64_t>(header, 32);
  info.chunk_bytes = Get<uint64_t>(header, 40);
  info.gcl_size = version >= 2 ? Get<uint32_t>(header, 48) : 0;
  info.compute_nodes = version >= 3 ? Get<uint32_t>(header, 52) : 0;
  return info;
}

}  // namespace

absl::StatusOr<ImageInfo> ReadImageHeader(const std::string& path) {
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return Errno("opening image", path);
  return ReadHeader(file.fd, path);
}

absl::StatusOr<ImageInfo> RestoreImage(rdma::Fabric& fabric,
                                       const std::string& path,
                                       uint32_t gcl_size) {
  auto loopback = Loopback(fabric);
  if (!loopback.ok()) return loopback.status();
  rdma::loopback::LoopbackFabric& f = **loopback;
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return Errno("opening image", path);
  absl::StatusOr<ImageInfo> read = ReadHeader(file.fd, path);
  if (!read.ok()) return read.status();
  ImageInfo info = *read;
  const uint64_t region_bytes = info.region_bytes;
  if (info.memory_nodes != static_cast<uint32_t>(f.memory_node_count()) ||
      region_bytes != f.memory_node_bytes() ||
      info.chunk_bytes != f.chunk_bytes()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "image %s was taken with %d memory nodes of %d MiB, chunks of %d "
        "bytes; this engine has %d of %d MiB, chunks of %d: use the same "
        "EngineOptions::fabric.memory_nodes, pool_bytes and chunk_bytes "
        "(--memory_nodes, --pool_mb, --chunk_kb)",
        path, info.memory_nodes, region_bytes >> 20, info.chunk_bytes,
        f.memory_node_count(), f.memory_node_bytes() >> 20, f.chunk_bytes()));
  }
  // Version 1 images do not say; their GCL size cannot be checked.
  if (info.gcl_size != 0 && info.gcl_size != gcl_size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "image %s was taken by an engine with GCLs of %d bytes, this engine "
        "has %d: every page and index node of the image is one GCL, so open "
        "it with EngineOptions::cc.gcl_size=%d (--gcl_size=%d)",
        path, info.gcl_size, gcl_size, info.gcl_size, info.gcl_size));
  }
  for (uint32_t n = 0; n < info.memory_nodes; ++n) {
    char node_header[16];
    if (absl::Status s = ReadAll(file.fd, node_header, 16, path); !s.ok())
      return s;
    const uint64_t used = Get<uint64_t>(node_header, 0);
    if (used > region_bytes) {
      return absl::DataLossError(absl::StrFormat(
          "image %s: memory node %d claims %d bytes, more than its region",
          path, n, used));
    }
    auto region = Region(f, static_cast<int>(n));
    if (!region.ok()) return region.status();
    if (absl::Status s = ReadAll(file.fd, *region, used, path); !s.ok())
      return s;
    if (wal::Crc32c(std::string_view(reinterpret_cast<const char*>(*region),
                                     used)) != Get<uint32_t>(node_header, 8)) {
      return absl::DataLossError(absl::StrFormat(
          "image %s: memory node %d's bytes do not match their CRC", path, n));
    }
    info.bytes += used;
  }
  return info;
}

}  // namespace strand::engine
