#include "rdma/verbs/cluster_config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "rdma/fabric_options.h"

namespace strand::rdma::verbs {

std::string ClusterNode::ToString() const {
  return absl::StrFormat("%s node %d (%s:%d)",
                         role == Role::kMemory ? "memory" : "compute", id,
                         address, port);
}

absl::StatusOr<ClusterConfig> ClusterConfig::Parse(absl::string_view text,
                                                   absl::string_view origin) {
  ClusterConfig config;
  std::vector<ClusterNode> nodes;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: %s (expected \"memory|compute ID ADDRESS "
                          "PORT\")",
                          origin, line_number, why));
    };
    if (fields.size() != 4) return bad("wrong number of fields");
    ClusterNode node;
    if (fields[0] == "memory") {
      node.role = ClusterNode::Role::kMemory;
    } else if (fields[0] == "compute") {
      node.role = ClusterNode::Role::kCompute;
    } else {
      return bad(absl::StrFormat("unknown role \"%s\"", fields[0]));
    }
    int port = 0;
    if (!absl::SimpleAtoi(fields[1], &node.id) || node.id < 0) {
      return bad(absl::StrFormat("bad node id \"%s\"", fields[1]));
    }
    if (!absl::SimpleAtoi(fields[3], &port) || port < 1 || port > 65535) {
      return bad(
          absl::StrFormat("bad port \"%s\" (use 1 to 65535)", fields[3]));
    }
    node.address = std::string(fields[2]);
    node.port = static_cast<uint16_t>(port);
    nodes.push_back(node);
  }
  for (const ClusterNode& node : nodes) {
    auto& list = node.role == ClusterNode::Role::kMemory ? config.memory_nodes
                                                         : config.compute_nodes;
    if (static_cast<size_t>(node.id) >= list.size()) list.resize(node.id + 1);
    if (!list[node.id].address.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s is listed twice", origin, node.ToString()));
    }
    list[node.id] = node;
  }
  for (const auto* list : {&config.memory_nodes, &config.compute_nodes}) {
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].address.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s node %d is missing (ids of each role must run from 0 "
            "without gaps)",
            origin, list == &config.memory_nodes ? "memory" : "compute", i));
      }
    }
  }
  if (config.memory_nodes.empty() || config.compute_nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a cluster needs at least one memory node and one compute node",
        origin));
  }
  if (config.memory_nodes.size() > FabricOptions::kMaxMemoryNodes ||
      config.compute_nodes.size() > FabricOptions::kMaxComputeNodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: too many nodes (at most %d memory and %d compute nodes)", origin,
        FabricOptions::kMaxMemoryNodes, FabricOptions::kMaxComputeNodes));
  }
  return config;
}

absl::StatusOr<ClusterConfig> ClusterConfig::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("--cluster=%s: cannot open the cluster file", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

}  // namespace strand::rdma::verbs
