#!/usr/bin/python3
"""TPC-C standard mix against compute nodes and threads per node (SELCC,
2PL). On a small machine the measured line flattens where busy threads
outnumber the cores; the modeled line (docs/method.md) says what the
protocol would do with a core per thread.

  scripts/figures/scalability.py               # small
  scripts/figures/scalability.py --scale=tiny  # CI
"""

import figlib

FIGURE = "scalability"
SCALES = {
    "tiny": {"warehouses": 4, "items": 1000, "customers": 30,
             "duration": 0.2, "warmup": 0.05, "nodes": [1, 2],
             "threads": [1], "rtt": 0},
    "small": {"warehouses": 4, "items": 100000, "customers": 3000,
              "duration": 2, "warmup": 0.5, "nodes": [1, 2, 4],
              "threads": [1, 2], "rtt": 2000},
    "full": {"warehouses": 8, "items": 100000, "customers": 3000,
             "duration": 5, "warmup": 1, "nodes": [1, 2, 4, 8],
             "threads": [1, 2], "rtt": 2000, "runs": 3},
}


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc",
                                bounds={"nodes": (1, 58),
                                        "threads": (1, 256)})
    runs = []
    for threads in s["threads"]:
        for nodes in s["nodes"]:
            runs.append(({"figure": FIGURE},
                         [f"--compute_nodes={nodes}", f"--threads={threads}",
                          f"--rtt_ns={s['rtt']}"] + figlib.tpcc_flags(s)))
    out_dir, recs = figlib.run_all(args, FIGURE, "tpcc/tpcc", runs, s["runs"])
    figlib.save(draw(recs), out_dir, FIGURE)


def draw(recs):
    plt = figlib.pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    nodes = sorted({r["compute_nodes"] for r in recs})
    for threads in sorted({r["threads"] for r in recs}):
        sel = [r for r in recs if r["threads"] == threads]
        for key, ls in [("txn_per_sec", "-"), ("modeled_ops_per_sec", "--")]:
            g = figlib.group(sel, ["compute_nodes"], key)
            xs = sorted(g)
            meds = [figlib.spread(g[x]) for x in xs]
            ax.errorbar([x[0] for x in xs], [m[0] for m in meds],
                        yerr=[[m[1] for m in meds], [m[2] for m in meds]],
                        linestyle=ls, marker="o",
                        label=f"{threads} thread(s)/node"
                        + (" measured" if key == "txn_per_sec"
                           else " modeled"))
    # Whole nodes only, each one run.
    ax.set_xticks(nodes)
    ax.set_xlabel("compute nodes")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("committed txn/s")
    rtts = sorted({r.get("rtt_ns", 0) for r in recs})
    ax.set_title("TPC-C standard mix, SELCC, 2PL, rtt "
                 + ", ".join(f"{t / 1000:g} us" for t in rtts))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


if __name__ == "__main__":
    main()
