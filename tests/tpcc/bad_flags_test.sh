#!/usr/bin/env bash
# Every misuse of the tpcc binary exits with status 2 and says why.
# Usage: bad_flags_test.sh path/to/tpcc
set -u
tpcc="$1"
failed=0
expect_usage_error() {
  local out rc
  out=$("$tpcc" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || -z "$out" ]]; then
    echo "FAIL: tpcc $* exited $rc (want 2) with message '$out'"
    failed=1
  else
    echo "ok: tpcc $*: $out"
  fi
}
expect_usage_error --warehouses=0
# Flags the chosen deployment ignores (no RDMA device needed: checked
# before the fabric opens).
expect_usage_error --cluster=/tmp/cluster.txt
expect_usage_error --node_id=1
expect_usage_error --fabric=verbs --cluster=/tmp/cluster.txt --node_id=0 \
  --rtt_ns=2000
expect_usage_error --fabric=verbs --cluster=/tmp/cluster.txt --node_id=0 \
  --compute_nodes=2
expect_usage_error --fabric=verbs --cluster=/tmp/cluster.txt --node_id=0 \
  --pool_mb=4096
expect_usage_error --fabric=verbs --cluster=/nonexistent/cluster.txt \
  --node_id=0
expect_usage_error --peer_timeout_s=0
expect_usage_error --peer_timeout_s=5
expect_usage_error --cc=mvcc
expect_usage_error --protocol=gam
expect_usage_error --mix=50,40,0,0,0
expect_usage_error --mix=new_orders
expect_usage_error --threads=0
expect_usage_error --pool_mb=16 --warehouses=4
expect_usage_error --no_such_flag
expect_usage_error --gcl_size=1048576
expect_usage_error --home_warehouse=nearest
expect_usage_error --message_delivery=carrier_pigeon
expect_usage_error --nic_op_ns=-5
expect_usage_error --populate_memory=yes
expect_usage_error --populate_memory
expect_usage_error --wal=maybe
expect_usage_error --wal=on
expect_usage_error --wal_dir=/tmp/x
expect_usage_error --wal_early_lock_release
expect_usage_error --wal_pipeline=8
expect_usage_error --wal=on --wal_dir="$(mktemp -d)" --wal_pipeline=-2
expect_usage_error --checkpoint_interval_s=30
expect_usage_error --wal_segment_mb=8
expect_usage_error --wal=on --wal_dir="$(mktemp -d)" --checkpoint_interval_s=0.01
expect_usage_error --wal=on --wal_dir="$(mktemp -d)" --checkpoint_read_mb_per_s=-1
expect_usage_error --wal=on --wal_dir="$(mktemp -d)" --wal_segment_mb=0
exit $failed
