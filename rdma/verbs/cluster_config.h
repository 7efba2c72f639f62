#ifndef STRAND_RDMA_VERBS_CLUSTER_CONFIG_H_
#define STRAND_RDMA_VERBS_CLUSTER_CONFIG_H_

// The cluster file (--cluster=FILE): every memory node and compute node of a
// verbs deployment, one per line, so each process knows whom to connect to
// without a directory service. Format (config/cluster.example):
//
//   # role    id  address      port
//   memory    0   192.0.2.1    7000
//   compute   0   192.0.2.1    7100
//   compute   1   192.0.2.2    7100
//
// Ids of each role run from 0 without gaps; they are the MemoryNodeId and
// ComputeNodeId the fabric uses. `address` is a numeric IP or host name on
// the RDMA network (rdma_cm resolves the device, port and GID from it).
// Blank lines and text after '#' are ignored.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace strand::rdma::verbs {

struct ClusterNode {
  enum class Role { kMemory, kCompute };

  Role role = Role::kCompute;
  int id = 0;
  std::string address;
  // 0 only for nodes hosted in this process (tests): the listener picks a
  // free port and the fabric fills it in.
  uint16_t port = 0;

  // "memory node 0 (192.0.2.1:7000)", for error messages.
  std::string ToString() const;
};

struct ClusterConfig {
  std::vector<ClusterNode> memory_nodes;   // index == id
  std::vector<ClusterNode> compute_nodes;  // index == id

  // `origin` names the text in error messages (the file name).
  static absl::StatusOr<ClusterConfig> Parse(absl::string_view text,
                                             absl::string_view origin);
  static absl::StatusOr<ClusterConfig> Load(const std::string& path);
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_CLUSTER_CONFIG_H_
