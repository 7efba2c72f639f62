#!/usr/bin/python3
"""A compute node fails and the others go on (docs/design/node_failure.md):
TPC-C on 4 compute nodes x 1 thread, one warehouse each, failover on, the
WAL on (failover needs early lock release, which pipelined commits have;
the log goes under $TMPDIR), compute node 1 failed (as a kill -9 of it
alone) 10 s into a 30 s run and rejoined 10 s later with an empty cache,
once in shared mode and once in partitioned mode (a warehouse per node,
2PC for remote ones). Left: committed txn/s per second of each node, the
failure and the rejoin marked (solid: shared, dashed: partitioned). Right:
the survivors together, a line per mode, against 90% of their rate before
the failure, the time the design targets (back to 90% within 2 s). Every
run logs its acknowledged New-Orders (--acked_log) and checks after it
that each is in the database ("acked_lost" must be 0).

  scripts/figures/failover.py --scale=full    # 30 s: fail at 10, rejoin at 20
  scripts/figures/failover.py --scale=tiny    # seconds, for CI

In partitioned mode the failed node's warehouses are unavailable until it
rejoins: the survivors' transactions that need them fail (counted under
"survivor_calls_unavailable"), the others go on; the survivors' 2PC
branches of its transactions are decided by the reclaim. Each run's record
(runs.jsonl) holds tpcc's JSON and its "mode", with the failure's figures
under "failover" (detection, the reclaim's stages, time to recover, calls
failed, the rejoin), and the per-second series (--progress_json, each
node's rate under "txn_per_sec_by_node").
"""

import json
import os
import shlex
import shutil
import sys
import tempfile

import figlib

FIGURE = "failover"
NODES = 4
FAILED = 1
MODES = ("shared", "partitioned")
STYLES = {"shared": "-", "partitioned": "--"}
SCALES = {
    "tiny": {"warehouses": NODES, "items": 1000, "customers": 30,
             "warmup": 0, "duration": 3, "fail_at": 1, "rejoin_after": 1,
             "lease_ms": 100},
    "small": {"warehouses": NODES, "items": 10000, "customers": 300,
              "warmup": 1, "duration": 15, "fail_at": 5, "rejoin_after": 5,
              "lease_ms": 500},
    "full": {"warehouses": NODES, "items": 100000, "customers": 3000,
             "warmup": 1, "duration": 30, "fail_at": 10, "rejoin_after": 10,
             "lease_ms": 500},
}


def summary(rec):
    f = rec.get("failover", {})

    def s(key):
        v = f.get(key)
        return "-" if v is None else f"{v:.3f} s"
    return (f"node {f.get('node')} failed at {s('failed_at_s')}, declared "
            f"{s('detection_s')} later, reclaimed in "
            f"{f.get('reclaim_ms', 0):.1f} ms ({f.get('records_reapplied', 0)}"
            f" records redone, {f.get('records_relogged', 0)} logged again, "
            f"{f.get('latches_cleared_exclusive', 0)} + "
            f"{f.get('latches_cleared_shared', 0)} latches cleared); "
            f"survivors back to 90% of {f.get('survivors_txn_per_sec_before', 0):.0f}"
            f" txn/s after {s('recovered_after_s')}; "
            f"{f.get('calls_failed_by_node_failure', 0)} calls failed, "
            f"{f.get('survivor_calls_unavailable', 0)} of the survivors' "
            f"needed its partitions, {f.get('branches_committed', 0)} + "
            f"{f.get('branches_aborted', 0)} 2PC branches committed + "
            f"aborted; "
            f"rejoined at {s('rejoined_at_s')} (took {s('rejoin_s')}), "
            f"{f.get('node_commits_after_rejoin', 0)} commits after; "
            f"acknowledged New-Orders checked {rec.get('acked_checked', '-')}"
            f", lost {rec.get('acked_lost', '-')}")


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc")
    out_dir = figlib.results_dir(args, FIGURE)
    path = os.path.join(out_dir, "runs.jsonl")
    records = []
    if args.replot:
        records = figlib.read_runs(path)
    else:
        root = tempfile.mkdtemp(prefix="strand-failover-fig-",
                                dir=os.environ.get("TMPDIR"))
        tpcc = os.path.join(args.build, "tpcc/tpcc")
        try:
            with open(path, "w") as f:
                for rep, mode in [(r, m) for r in range(s["runs"])
                                  for m in MODES]:
                    wal = os.path.join(root, f"wal-{mode}-{rep}")
                    acked = os.path.join(root, f"acked-{mode}-{rep}")
                    series = os.path.join(root, f"series-{mode}-{rep}.jsonl")
                    cmd = ([tpcc, f"--compute_nodes={NODES}", "--threads=1",
                            f"--mode={mode}",
                            "--failover", f"--node_lease_ms={s['lease_ms']}",
                            f"--fail_node={FAILED}@{s['fail_at']}",
                            f"--rejoin_after_s={s['rejoin_after']}",
                            "--wal=on", f"--wal_dir={wal}",
                            f"--acked_log={acked}",
                            f"--progress_json={series}"]
                           + figlib.tpcc_flags(s) + ["--json"]
                           + shlex.split(args.extra))
                    rec = figlib.run_json(FIGURE, cmd)
                    with open(series) as sf:
                        rec["series"] = [json.loads(l) for l in sf
                                         if l.strip()]
                    rec.update({"figure": FIGURE, "repetition": rep,
                                "mode": mode, "command": " ".join(cmd)})
                    records.append(rec)
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    shutil.rmtree(wal, ignore_errors=True)
            figlib.write_readme(out_dir, FIGURE)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    for r in records:
        print(f"rep {r.get('repetition', 0)} {r.get('mode', 'shared')}: "
              f"{summary(r)}", file=sys.stderr)
    figlib.save(draw(records), out_dir, FIGURE)


def draw(records):
    plt = figlib.pyplot()
    from matplotlib.ticker import MaxNLocator
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.4))
    # The first repetition of each mode (runs.jsonl of old runs: shared).
    by_mode = {}
    for r in records:
        by_mode.setdefault(r.get("mode", "shared"), r)
    f = {}
    nodes = 0
    for mode, rec in by_mode.items():
        series = rec.get("series", [])
        f = rec.get("failover", {}) if not f else f
        mf = rec.get("failover", {})
        failed = mf.get("node", FAILED)
        xs = [p["elapsed_s"] for p in series]
        n_nodes = max((len(p.get("txn_per_sec_by_node", [])) for p in series),
                      default=0)
        nodes = max(nodes, n_nodes)
        style = STYLES.get(mode, "-")
        for n in range(n_nodes):
            a.plot(xs, [p["txn_per_sec_by_node"][n] for p in series],
                   marker=".", linestyle=style, color=f"C{n}",
                   label=f"{mode}: node {n}" + (" (failed)" if n == failed
                                                 else ""))
        survivors = [sum(v for n, v in enumerate(p["txn_per_sec_by_node"])
                         if n != failed) for p in series]
        line, = b.plot(xs, survivors, marker=".", linestyle=style,
                       label=f"{mode}: survivors together")
        if mf.get("survivors_txn_per_sec_before"):
            b.axhline(0.9 * mf["survivors_txn_per_sec_before"],
                      color=line.get_color(), linestyle=":",
                      label=f"{mode}: 90% of their rate before")
    failed = f.get("node", FAILED)
    for ax in (a, b):
        if f.get("failed_at_s") is not None:
            ax.axvline(f["failed_at_s"], color="red", linestyle="--",
                       label=f"node {failed} failed")
        if f.get("rejoined_at_s") is not None:
            ax.axvline(f["rejoined_at_s"], color="green", linestyle="--",
                       label=f"node {failed} rejoined")
        ax.set_xlabel("seconds into the measured run (each point: the "
                      "second ending there)")
        ax.set_ylabel("committed txn/s")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    a.set_title("per compute node")

    def back(mode):
        v = by_mode.get(mode, {}).get("failover", {}).get("recovered_after_s")
        return "never" if v is None else f"{v:.0f} s"
    b.set_title("survivors back to 90%: " + ", ".join(
        f"{m} {back(m)}" for m in by_mode))
    figlib.figure_legend(fig, [a, b], columns=4)
    fig.suptitle(f"TPC-C, {nodes} compute nodes x 1 thread, failover and "
                 f"WAL on, shared vs partitioned: node {failed} failed, then "
                 f"rejoined")
    return fig


if __name__ == "__main__":
    main()
