#ifndef STRAND_TPCC_REMOTE_POLICY_H_
#define STRAND_TPCC_REMOTE_POLICY_H_

// Which warehouses a terminal works on, and how often and where it reaches
// beyond its home: remote supply warehouses of New-Order lines, remote
// customers of Payments.
//
// By default the specification's rates: each New-Order line is supplied
// by another warehouse with probability 1%, a Payment is for a customer of
// another warehouse 15% of the time, any other warehouse. With `owners`
// (partitioned mode, and shared mode run for comparison with it with
// --distributed_pct) the warehouses are split among the compute nodes as
// partitioned mode splits them: a terminal's home is a warehouse of its own
// node, and "remote" is a warehouse of another node, so a remote line or
// customer makes the transaction distributed.

#include "partition/partition_map.h"
#include "tpcc/random.h"

namespace strand::tpcc {

struct RemotePolicy {
  // < 0: each New-Order line remote with probability 1%. Otherwise this
  // share (0..1) of New-Orders has exactly one remote line (the
  // distribution ratio of the SELCC paper's Figure 16b).
  double remote_order_ratio = -1;
  // < 0: 15% of Payments have a remote customer. Otherwise this share.
  double remote_payment_ratio = -1;
  // Not null: who owns which warehouse (see the top). Not owned.
  const partition::PartitionMap* owners = nullptr;
};

// A warehouse other than `w` of 1..warehouses for a remote line or
// customer: with `remote.owners`, one of another compute node (any other
// warehouse if a single node owns them all). `w` itself only if it is the
// only warehouse.
int RemoteWarehouse(Random& r, int w, int warehouses,
                    const RemotePolicy& remote);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_REMOTE_POLICY_H_
