#!/usr/bin/python3
"""One strand binary's command line against two tables:

  BAD   inputs a user can get wrong: each must exit 2 within 30 s, before
        any work, with a message that names the flag to change (the
        row's second field: a flag, or other text the message must hold)
  EDGE  the extreme values that are valid: each must run and exit 0

The binary's name picks its tables. Placeholders in the arguments:
{dir} a fresh directory, {file} a regular file, {missing} a path that
does not exist, {cluster1} a cluster file with one compute node,
{bad_cluster} one whose line lacks its port,
{beyond_free_mb} half as much again as the file system of {dir} has free,
measured just before the row runs: the margin keeps a row from passing
(and filling the disk) when tests running beside it free space meanwhile
(a row that needs more than 65536 is skipped).

Usage: flag_table_test.py path/to/binary
Standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile

# Fast runs: a small pool, memory committed page by page.
SMALL = ["--pool_mb=64", "--populate_memory=touch"]
# The smallest TPC-C database and a short run of it.
TPCC = ["--warehouses=1", "--items=100", "--customers=10", "--warmup_s=0",
        "--populate_memory=touch"]
TPCC_RUN = TPCC + ["--txns=100"]
WAL_ON = ["--wal=on", "--wal_dir={dir}/wal"]
VERBS1 = ["--fabric=verbs", "--cluster={cluster1}", "--node_id=0"]

BAD = {
    "tpcc": [
        (["--warehouses=0"], "--warehouses"),
        (["--warehouses=10001"], "--warehouses"),
        # Fits the flag's range, not any machine's memory (1.3 TB).
        (["--warehouses=10000"], "--warehouses"),
        (["--threads=0"], "--threads"),
        (["--threads=257"], "--threads"),
        (["--items=0"], "--items"),
        (["--customers=5"], "--customers"),
        (["--gcl_size=0"], "--gcl_size"),
        (["--gcl_size=640"], "--gcl_size"),  # no CUSTOMER row fits
        (["--gcl_size=1000"], "--gcl_size"),
        (["--gcl_size=1048576"], "--gcl_size"),
        (["--cache_mb=18446744073709551615"], "--cache_mb"),
        (["--cache_mb=4", "--protocol=sel"], "--cache_mb"),
        (["--cc=mvcc"], "--cc"),
        (["--protocol=gam"], "--protocol"),
        (["--mode=sharded"], "--mode"),
        (["--home_warehouse=nearest"], "--home_warehouse"),
        (["--mix=50,40,0,0,0"], "--mix"),
        (["--mix=50,,50,0,0"], "--mix"),
        (["--mix=new_orders"], "--mix"),
        (["--remote_neworder=nan"], "--remote_neworder"),
        (["--remote_neworder=1.5"], "--remote_neworder"),
        (["--remote_neworder=0.5", "--warehouses=1"], "--remote_neworder"),
        (["--distributed_pct=nan"], "--distributed_pct"),
        (["--distributed_pct=101"], "--distributed_pct"),
        (["--distributed_pct=50"], "--distributed_pct"),  # one node
        (["--distributed_pct=10", "--remote_neworder=0.1"],
         "--distributed_pct"),
        (["--distributed_pct=10", "--compute_nodes=2", "--warehouses=1"],
         "--warehouses"),
        (["--mode=partitioned", "--compute_nodes=4", "--warehouses=2"],
         "--warehouses"),
        (["--twopc_read_only_vote=false"], "--twopc_read_only_vote"),
        (["--duration_s=nan"], "--duration_s"),
        (["--duration_s=0"], "--duration_s"),
        (["--duration_s=-1"], "--duration_s"),
        (["--duration_s=86401"], "--duration_s"),
        (["--duration_s=5", "--txns=10"], "--duration_s"),
        (["--txns=18446744073709551615"], "--txns"),
        (["--warmup_s=nan"], "--warmup_s"),
        (["--warmup_s=-1"], "--warmup_s"),
        (["--peer_timeout_s=0"], "--peer_timeout_s"),
        (["--peer_timeout_s=5"], "--peer_timeout_s"),  # loopback: no peers
        (["--wal=maybe"], "--wal"),
        (["--wal=on"], "--wal_dir"),
        (["--wal_dir={dir}/x"], "--wal_dir"),
        (["--wal_early_lock_release"], "--wal_early_lock_release"),
        (["--wal_pipeline=8"], "--wal_pipeline"),
        (["--wal_group_commit_us=5"], "--wal_group_commit_us"),
        (["--wal=on", "--wal_dir={file}"], "--wal_dir"),
        (["--wal=on", "--wal_dir=/proc/strand-no-such-dir"], "--wal_dir"),
        (WAL_ON + ["--wal_pipeline=-2"], "--wal_pipeline"),
        (WAL_ON + ["--wal_pipeline=100001"], "--wal_pipeline"),
        (["--checkpoint_interval_s=30"], "--checkpoint_interval_s"),
        (["--wal_segment_mb=8"], "--wal_segment_mb"),
        (["--checkpoint_read_mb_per_s=10"], "--checkpoint_read_mb_per_s"),
        (WAL_ON + ["--checkpoint_interval_s=0.01"], "--checkpoint_interval_s"),
        (WAL_ON + ["--checkpoint_interval_s=nan"], "--checkpoint_interval_s"),
        (WAL_ON + ["--checkpoint_read_mb_per_s=-1"],
         "--checkpoint_read_mb_per_s"),
        (WAL_ON + ["--wal_segment_mb=0"], "--wal_segment_mb"),
        (WAL_ON + ["--wal_segment_mb=4097"], "--wal_segment_mb"),
        (["--check_image={file}", "--checkpoint_interval_s=1"],
         "--checkpoint_interval_s"),
        (WAL_ON + ["--wal_group_commit_us=-2"], "--wal_group_commit_us"),
        (["--pool_mb=16", "--warehouses=4"], "--pool_mb"),
        (["--pool_mb=18446744073709551615"], "--pool_mb"),
        (["--chunk_kb=18446744073709551615"], "--chunk_kb"),
        (["--compute_nodes=60"], "--compute_nodes"),
        (["--memory_nodes=0"], "--memory_nodes"),
        (["--message_delivery=carrier_pigeon"], "--message_delivery"),
        (["--nic_op_ns=-5"], "--nic_op_ns"),
        (["--bandwidth_gbps=nan"], "--bandwidth_gbps"),
        (["--rtt_ns=nan"], "--rtt_ns"),
        (["--populate_memory=yes"], "--populate_memory"),
        (["--populate_memory"], "--populate_memory"),
        (["--prefetch=some"], "--prefetch"),
        (["--acked_log={missing}/acked"], "--acked_log"),
        (["--delivery_results={missing}/results"], "--delivery_results"),
        (["--check_image={missing}"], "--check_image"),
        (["--check_image={file}", "--duration_s=3"], "--duration_s"),
        (["--check_image={file}", "--wal=on"], "--wal"),
        (["--no_such_flag"], "--no_such_flag"),
        (["stray"], "stray"),
        # Flags the chosen deployment ignores (checked before any device).
        (["--cluster={cluster1}"], "--cluster"),
        (["--node_id=1"], "--node_id"),
        (VERBS1 + ["--rtt_ns=2000"], "--rtt_ns"),
        (VERBS1 + ["--compute_nodes=2"], "--compute_nodes"),
        (VERBS1 + ["--pool_mb=4096"], "--pool_mb"),
        (["--fabric=verbs", "--cluster={missing}", "--node_id=0"],
         "--cluster"),
        (["--fabric=verbs", "--cluster={bad_cluster}", "--node_id=0"],
         "--cluster"),
        (VERBS1 + ["--distributed_pct=50"], "--distributed_pct"),
        # Failover: its flags need --failover, the failure needs what the
        # engine builds (shared mode, loopback, survivors) inside the run.
        (["--node_lease_ms=100"], "--node_lease_ms"),
        (["--redo_ring_mb=4"], "--redo_ring_mb"),
        (["--fail_node=1@1", "--compute_nodes=2"], "--fail_node"),
        (["--rejoin_after_s=1"], "--rejoin_after_s"),
        (["--rejoin"], "--rejoin"),
        (["--failover", "--rejoin"], "--rejoin"),
        (VERBS1 + ["--failover", "--rejoin"], "--rejoin"),
        (["--failover", "--node_lease_ms=7"], "--node_lease_ms"),
        (["--failover", "--node_lease_ms=60001"], "--node_lease_ms"),
        (["--failover", "--redo_ring_mb=0"], "--redo_ring_mb"),
        (["--failover", "--redo_ring_mb=1025"], "--redo_ring_mb"),
        (["--failover", "--protocol=sel"], "--protocol"),
        (WAL_ON + ["--failover", "--wal_pipeline=0"], "--failover"),
        (VERBS1 + ["--failover", "--mode=partitioned"], "--failover"),
        (VERBS1 + ["--failover", "--fail_node=1@1"], "--fail_node"),
        (["--check_image={file}", "--failover"], "--failover"),
        (["--failover", "--compute_nodes=2", "--fail_node=1"], "--fail_node"),
        (["--failover", "--compute_nodes=2", "--fail_node=one@1"],
         "--fail_node"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@nan"],
         "--fail_node"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@0"],
         "--fail_node"),
        (["--failover", "--fail_node=0@1"], "--fail_node"),  # one node
        (["--failover", "--compute_nodes=2", "--fail_node=2@1"],
         "--fail_node"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@1",
          "--txns=100"], "--fail_node"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@20"],
         "--fail_node"),  # after the default 10 s
        (["--failover", "--compute_nodes=2", "--fail_node=1@5",
          "--rejoin_after_s=5"], "--rejoin_after_s"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@5",
          "--rejoin_after_s=-1"], "--rejoin_after_s"),
        (["--failover", "--compute_nodes=2", "--fail_node=1@5",
          "--rejoin_after_s=1", "--epochs_in_pool"], "--rejoin_after_s"),
    ],
    "coherence_bench": [
        (["--threads=0"], "--threads"),
        (["--threads=65"], "--threads"),
        (["--gcls=0"], "--gcls"),
        (["--gcls=100000000000"], "--gcls"),
        # Fits the first check, not the pool once chunks are carved.
        (["--gcls=2000", "--pool_mb=2", "--duration_s=0.1"], "--gcls"),
        (["--gcl_size=100"], "--gcl_size"),
        (["--read_ratio=nan"], "--read_ratio"),
        (["--read_ratio=1.5"], "--read_ratio"),
        (["--sharing_ratio=-0.1", "--compute_nodes=2"], "--sharing_ratio"),
        (["--sharing_ratio=0.5"], "--sharing_ratio"),  # one node
        (["--locality=nan"], "--locality"),
        (["--zipf_theta=nan"], "--zipf_theta"),
        (["--zipf_theta=1"], "--zipf_theta"),
        (["--zipf_theta=5"], "--zipf_theta"),
        (["--cache_mb=18446744073709551615"], "--cache_mb"),
        (["--cache_mb=1", "--gcl_size=131072", "--gcls=100"], "--cache_mb"),
        (["--protocol=sel", "--cache_mb=4"], "--cache_mb"),
        (["--protocol=sel", "--spin_wait=false"], "--spin_wait"),
        (["--protocol=gam"], "--protocol"),
        (["--lease_gamma=-1"], "--lease_gamma"),
        (["--lease_gamma=lots"], "--lease_gamma"),
        (["--handler_threads=0"], "--handler_threads"),
        (["--lock_timeout_ms=0"], "--lock_timeout_ms"),
        (["--duration_s=0"], "--duration_s"),
        (["--duration_s=nan"], "--duration_s"),
        (["--warmup_s=-1"], "--warmup_s"),
        (["--compute_nodes=60"], "--compute_nodes"),
        (["--json", "--csv"], "--json"),
        (["--progress_json={dir}/series"], "--progress_json"),
    ],
    "ycsb_bench": [
        (["--records=0"], "--records"),
        (["--records=1099511627777"], "--records"),
        (["--records=100000000"] + SMALL, "--records"),  # beyond the pool
        (["--value_bytes=7"], "--value_bytes"),
        (["--value_bytes=4097"], "--value_bytes"),
        (["--value_bytes=1024"], "--value_bytes"),  # a 1 KiB GCL's page
        (["--workloads="], "--workloads"),
        (["--workloads=read_only,,read_only"], "--workloads"),
        (["--workloads=read_only,"], "--workloads"),
        (["--workloads=write_only"], "--workloads"),
        (["--distribution=pareto"], "--distribution"),
        (["--zipf_theta=0.5"], "--zipf_theta"),  # uniform
        (["--distribution=zipf", "--zipf_theta=nan"], "--zipf_theta"),
        (["--distribution=zipf", "--zipf_theta=1"], "--zipf_theta"),
        (["--distribution=zipf", "--zipf_theta=0"], "--zipf_theta"),
        (["--scan_length=10"], "--scan_length"),  # no scan_heavy
        (["--workloads=scan_heavy", "--scan_length=0"], "--scan_length"),
        (["--threads=0"], "--threads"),
        (["--duration_s=nan"], "--duration_s"),
        (["--duration_s=0"], "--duration_s"),
        (["--cache_mb=18446744073709551615"], "--cache_mb"),
        (["--protocol=sel", "--cache_mb=4"], "--cache_mb"),
        (["--gcl_size=100"], "--gcl_size"),
        (["--compute_nodes=60", "--records=1000"], "--compute_nodes"),
        (["--json", "--csv"], "--json"),
        (["--progress_json={missing}/series"], "--progress_json"),
    ],
    "fabric_bench": [
        (["--ops="], "--ops"),
        (["--ops=read,,write"], "--ops"),
        (["--ops=read,jump"], "--ops"),
        (["--threads="], "--threads"),
        (["--threads=1,,2"], "--threads"),
        (["--threads=0"], "--threads"),
        (["--threads=1025"], "--threads"),
        (["--batch_sizes=4,,16"], "--batch_sizes"),
        (["--batch_sizes=4", "--ops=read"], "--batch_sizes"),
        (["--payload_bytes=4"], "--payload_bytes"),
        (["--payload_bytes=1048576", "--ops=read_batch",
          "--batch_sizes=16"], "--payload_bytes"),
        (["--duration_s=0"], "--duration_s"),
        (["--duration_s=nan"], "--duration_s"),
        (["--compute_nodes=60"], "--compute_nodes"),
        (["--json", "--csv"], "--json"),
    ],
    "wal_bench": [
        (["--fsync_samples=4294967295"], "--fsync_samples"),
        (["--record_bytes=0"], "--record_bytes"),
        (["--record_bytes=1048577"], "--record_bytes"),
        (["--wal_segment_mb=1", "--record_bytes=1048576"], "--record_bytes"),
        (["--wal_segment_mb=0"], "--wal_segment_mb"),
        (["--wal_max_write_kb=6"], "--wal_max_write_kb"),
        (["--io_modes="], "--io_modes"),
        (["--io_modes=direct,,buffered"], "--io_modes"),
        (["--io_modes=mmap"], "--io_modes"),
        (["--threads=1,,2"], "--threads"),
        (["--threads=0"], "--threads"),
        (["--duration_s=nan"], "--duration_s"),
        (["--wal_dir={file}"], "--wal_dir"),
        (["--wal_dir={missing}"], "--wal_dir"),
        (["--wal_dir=/proc"], "--wal_dir"),
        # A segment larger than the directory's free space (skipped where
        # it has more than the flag's 64 GiB).
        (["--wal_dir={dir}", "--wal_segment_mb={beyond_free_mb}"],
         "--wal_dir"),
        (["--json", "--csv"], "--json"),
    ],
    "bank": [
        (["--accounts=1"], "--accounts"),
        (["--accounts=2147483647"], "--accounts"),
        (["--duration_s=0"], "--duration_s"),
        (["--duration_s=nan"], "--duration_s"),
        (["--threads=0"], "--threads"),
        (["--threads=100000"], "--threads"),
        (["--cc=mvcc"], "--cc"),
        (["--compute_nodes=60"], "--compute_nodes"),
    ],
    "strand_recover": [
        # --image is needed only when --wal_dir holds no checkpoint.
        ([], "--wal_dir"),
        (["--wal_dir={dir}"], "--wal_dir"),
        (["--image={file}"], "--image"),
        (["--image={missing}", "--wal_dir={dir}"], "--image"),
        (["--image={dir}", "--wal_dir={dir}"], "--image"),
        (["--image={file}", "--wal_dir={dir}"], "--image"),
        (["--gcl_size=big"], "--gcl_size"),
        (["--no_such_flag"], "--no_such_flag"),
        (["stray-argument"], "stray-argument"),
    ],
    "strand_memnode": [
        ([], "--cluster"),
        (["--cluster={missing}", "--node_id=0"], "--cluster"),
        (["--cluster={bad_cluster}", "--node_id=0"], "--cluster"),
        (["--cluster={cluster1}"], "--node_id"),
        (["--cluster={cluster1}", "--node_id=1"], "--node_id"),
        (["--cluster={cluster1}", "--node_id=0", "--pool_mb=0"],
         "--pool_mb"),
        (["--cluster={cluster1}", "--node_id=0",
          "--pool_mb=18446744073709551615"], "--pool_mb"),
        (["--cluster={cluster1}", "--node_id=0", "--chunk_kb=3"],
         "--chunk_kb"),
        # Compute processes' and loopback flags: a memory node takes none.
        (["--cluster={cluster1}", "--node_id=0", "--rtt_ns=2000"],
         "--rtt_ns"),
        (["--cluster={cluster1}", "--node_id=0", "--compute_nodes=2"],
         "--compute_nodes"),
        (["--cluster={cluster1}", "--node_id=0", "--fabric=verbs"],
         "--fabric"),
    ],
}

# Valid extremes that must run and exit 0 (seconds each).
EDGE = {
    "tpcc": [
        ["--warehouses=1", "--items=1", "--customers=10", "--txns=50",
         "--warmup_s=0", "--populate_memory=touch"],
        TPCC_RUN + ["--gcl_size=704"],
        TPCC_RUN + ["--gcl_size=65536"],
        TPCC_RUN + ["--cache_mb=1"],
        TPCC_RUN + ["--remote_neworder=0", "--distributed_pct=-1"],
        TPCC_RUN + ["--distributed_pct=0"],
        TPCC + ["--duration_s=0.001"],
        TPCC_RUN + ["--protocol=sel", "--cc=to"],
        # Every CPU-path optimization off (their ablation switches).
        TPCC_RUN + ["--prefetch=full", "--noindex_leaf_hint",
                    "--noindex_word_search", "--noindex_leaf_walk",
                    "--nooptimistic_reads",
                    "--nooptimistic_tuple_reads", "--nounlocked_inserts",
                    "--noidentity_frames"],
        TPCC_RUN + ["--wal=on", "--wal_dir={dir}/new/log",
                    "--wal_pipeline=0", "--wal_group_commit_us=0"],
        # Checkpoints as often as they go, in the smallest segments.
        TPCC_RUN + ["--wal=on", "--wal_dir={dir}/ckpt/log",
                    "--checkpoint_interval_s=0.1", "--wal_segment_mb=1",
                    "--checkpoint_read_mb_per_s=1000000"],
        # Pipelined on two compute nodes, acknowledged by the cluster's
        # durable watermark, partitioned too.
        TPCC_RUN + ["--wal=on", "--wal_dir={dir}/two/log", "--compute_nodes=2",
                    "--wal_pipeline=8"],
        ["--warehouses=2", "--items=100", "--customers=10", "--txns=100",
         "--warmup_s=0", "--populate_memory=touch", "--compute_nodes=2",
         "--mode=partitioned", "--distributed_pct=50", "--wal=on",
         "--wal_dir={dir}/parted/log", "--wal_early_lock_release"],
        ["--warehouses=2", "--items=100", "--customers=10", "--txns=100",
         "--warmup_s=0", "--populate_memory=touch", "--compute_nodes=2",
         "--mode=partitioned", "--distributed_pct=100"],
        # Failover on, its shortest lease and smallest ring (no failure).
        TPCC_RUN + ["--compute_nodes=2", "--failover", "--node_lease_ms=8",
                    "--redo_ring_mb=1"],
    ],
    "coherence_bench": [
        SMALL + ["--gcls=1", "--duration_s=0.05", "--warmup_s=0"],
        SMALL + ["--gcls=1000", "--duration_s=0.05", "--warmup_s=0",
                 "--read_ratio=0", "--locality=1", "--zipf_theta=0.99",
                 "--lease_gamma=inf"],
        SMALL + ["--gcls=1000", "--duration_s=0.05", "--warmup_s=0",
                 "--compute_nodes=2", "--sharing_ratio=0",
                 "--protocol=sel"],
    ],
    "ycsb_bench": [
        SMALL + ["--records=1", "--duration_s=0.05",
                 "--workloads=read_only,scan_heavy", "--scan_length=1"],
        # 8 KiB rows for 0.02 s fit a 256 MiB pool at any insert rate
        # this machine reaches (about 1.6M inserts/s would fill it).
        ["--pool_mb=256", "--populate_memory=touch", "--records=1000",
         "--duration_s=0.02", "--workloads=insert_heavy", "--value_bytes=4096",
         "--gcl_size=8192", "--distribution=zipf", "--zipf_theta=0.5"],
        SMALL + ["--records=1000", "--duration_s=0.05",
                 "--workloads=read_only", "--prefetch=full",
                 "--noindex_leaf_hint", "--noindex_word_search",
                 "--nooptimistic_reads", "--noidentity_frames"],
    ],
    "fabric_bench": [
        SMALL + ["--ops=read", "--threads=1", "--duration_s=0.01"],
        SMALL + ["--ops=read_batch", "--batch_sizes=1,64", "--threads=2",
                 "--payload_bytes=8", "--duration_s=0.01"],
    ],
    "wal_bench": [
        ["--fsync_samples=0", "--threads=1", "--duration_s=0.05",
         "--record_bytes=1", "--io_modes=buffered", "--wal_dir={dir}"],
        ["--fsync_samples=1", "--threads=2", "--duration_s=0.05",
         "--wal_segment_mb=1", "--io_modes=buffered", "--wal_dir={dir}"],
    ],
    "bank": [
        SMALL + ["--accounts=2", "--duration_s=0.1", "--threads=1"],
        SMALL + ["--accounts=100", "--duration_s=0.1", "--cc=occ",
                 "--compute_nodes=1"],
    ],
    "strand_recover": [],
    "strand_memnode": [],
}


def main():
    binary = sys.argv[1]
    name = os.path.basename(binary)
    if name not in BAD:
        sys.exit(f"no tables for {name}")
    work = tempfile.mkdtemp(prefix=f"strand-flags-{name}-")
    failed = []
    try:
        places = {
            "dir": os.path.join(work, "dir"),
            "file": os.path.join(work, "file"),
            "missing": os.path.join(work, "no-such"),
            "cluster1": os.path.join(work, "cluster1.txt"),
            "bad_cluster": os.path.join(work, "bad_cluster.txt"),
        }
        os.mkdir(places["dir"])
        with open(places["file"], "w") as f:
            f.write("not what the flag wants\n")
        with open(places["cluster1"], "w") as f:
            f.write("memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n")
        with open(places["bad_cluster"], "w") as f:
            f.write("memory 0 127.0.0.1\ncompute 0 127.0.0.1 7100\n")

        def run(args, timeout):
            args = [a.format(**places) for a in args]
            # Each case gets a log directory of its own.
            shutil.rmtree(places["dir"], ignore_errors=True)
            os.mkdir(places["dir"])
            try:
                p = subprocess.run([binary] + args, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   timeout=timeout)
                return args, p.returncode, p.stderr
            except subprocess.TimeoutExpired:
                return args, None, f"(no exit within {timeout} s)"

        def beyond_free_mb():
            free_mb = shutil.disk_usage(places["dir"]).free >> 20
            return free_mb + max(free_mb // 2, 4096)

        for args, needle in BAD[name]:
            places["beyond_free_mb"] = str(beyond_free_mb())
            if any("{beyond_free_mb}" in a for a in args) and int(
                    places["beyond_free_mb"]) > 65536:
                print(f"skip: {name} {' '.join(args)}: more than 64 GiB free")
                continue
            shown, rc, err = run(args, timeout=30)
            first = err.strip().splitlines()[0] if err.strip() else ""
            if rc != 2 or needle not in first:
                failed.append(f"{name} {' '.join(shown)}: exit {rc}, want 2 "
                              f"with '{needle}' in the message; got "
                              f"{err.strip()[-300:]!r}")
            else:
                print(f"ok: {name} {' '.join(shown)}: {first}")
        for args in EDGE[name]:
            shown, rc, err = run(args, timeout=120)
            if rc != 0:
                failed.append(f"{name} {' '.join(shown)}: exit {rc}, want 0; "
                              f"{err.strip()[-500:]!r}")
            else:
                print(f"ok: {name} {' '.join(shown)}: runs")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failed:
        print(f"FAIL: {f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
