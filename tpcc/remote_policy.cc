#include "tpcc/remote_policy.h"

namespace strand::tpcc {

int RemoteWarehouse(Random& r, int w, int warehouses,
                    const RemotePolicy& remote) {
  if (warehouses < 2) return w;
  if (remote.owners != nullptr && remote.owners->nodes() > 1) {
    // Uniform over the warehouses outside w's owner's range.
    const rdma::ComputeNodeId owner = remote.owners->Owner(w);
    const int first = static_cast<int>(remote.owners->First(owner));
    const int last = static_cast<int>(remote.owners->Last(owner));
    const int others = warehouses - (last - first + 1);
    const int k = r.Uniform(1, others);
    return k < first ? k : k + (last - first + 1);
  }
  const int other = r.Uniform(1, warehouses - 1);
  return other >= w ? other + 1 : other;
}

}  // namespace strand::tpcc
