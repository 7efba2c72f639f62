#!/usr/bin/python3
"""TPC-C with the write-ahead log: the group-commit window against
throughput and commit latency (1 compute node x 2 threads, pipelined
acknowledgement, log under $TMPDIR).

  TMPDIR=/path/on/ssd scripts/figures/wal_group_commit.py
  scripts/figures/wal_group_commit.py --scale=tiny
"""

import os
import shutil
import tempfile

import figlib

FIGURE = "wal_group_commit"
SCALES = {
    "tiny": {"warehouses": 1, "items": 1000, "customers": 30,
             "duration": 0.3, "warmup": 0.05, "windows": [0, 1000]},
    "small": {"warehouses": 2, "items": 100000, "customers": 3000,
              "duration": 3, "warmup": 0.5, "windows": [0, 100, 300, 1000,
                                                         3000]},
    "full": {"warehouses": 2, "items": 100000, "customers": 3000,
             "duration": 10, "warmup": 1, "windows": [0, 100, 300, 1000,
                                                       3000], "runs": 3},
}


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc",
                                bounds={"windows": (0, 1000000)})
    root = tempfile.mkdtemp(prefix="strand-wal-fig-")
    runs = []
    for window in s["windows"]:
        for rep in range(s["runs"]):
            d = os.path.join(root, f"w{window}-{rep}")
            runs.append(({"figure": FIGURE, "window_us": window},
                         ["--wal=on", f"--wal_dir={d}",
                          f"--wal_group_commit_us={window}",
                          "--compute_nodes=1", "--threads=2"]
                         + figlib.tpcc_flags(s)))
    try:
        out_dir, recs = figlib.run_all(args, FIGURE, "tpcc/tpcc", runs, 1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figlib.save(draw(recs), out_dir, FIGURE)


def draw(recs):
    plt = figlib.pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.2))
    g = figlib.group(recs, ["window_us"], "txn_per_sec")
    xs = sorted(g)
    meds = [figlib.spread(g[x]) for x in xs]
    a.errorbar([x[0] for x in xs], [m[0] for m in meds],
               yerr=[[m[1] for m in meds], [m[2] for m in meds]], marker="o")
    a.set_xlabel("group-commit window (us)")
    a.set_ylabel("committed txn/s")
    a.set_ylim(bottom=0)
    a.set_title("throughput")
    a.grid(alpha=0.3)
    latencies = []
    for key, label in [("commit_p50_us", "p50"), ("commit_p99_us", "p99")]:
        g = figlib.group(recs, ["window_us"], key)
        xs = sorted(g)
        ys = [figlib.spread(g[x])[0] for x in xs]
        b.plot([x[0] for x in xs], ys, marker="o", label=label)
        latencies += ys
    b.set_xlabel("group-commit window (us)")
    figlib.log_axis(b, latencies)
    b.set_ylabel("commit latency (us, log scale)")
    b.set_title("commit latency, call to acknowledgement")
    b.grid(alpha=0.3)
    b.legend()
    # What the runs did: pipelined acknowledgement (a thread goes on while
    # up to N of its commits wait for the log), or each commit waiting.
    pipelines = sorted({r.get("wal_pipeline", 0) for r in recs})
    how = ("commits pipelined (up to %s unacknowledged per thread)"
           % "/".join(str(p) for p in pipelines)
           if any(pipelines) else "every commit waits for its flush")
    nodes = sorted({r.get("compute_nodes", 1) for r in recs})
    threads = sorted({r.get("threads", 1) for r in recs})
    fig.suptitle(f"TPC-C with the WAL: group commit, {nodes[0]} node x "
                 f"{threads[0]} threads\n{how}")
    return fig


if __name__ == "__main__":
    main()
