#!/usr/bin/python3
"""Shared SELCC against partitioned SELCC with two-phase commit, as the
share of distributed transactions grows: the SELCC paper's Figure 16b
shape. TPC-C New-Order and the standard mix, 2PL, the WAL on (as the paper
does for this comparison), rtt 2 us. Partitioned runs twice: the strong
protocol, and "naive" with its three switches off (every transaction pays
a prepare round, read-only participants log, prepares go one by one), the
way the paper's authors' engine commits. At the small and full scales
shared and partitioned also run with the WAL off (dashed), so that what
the log costs each mode can be read off (--grid=logs=on for the log-on
runs alone).

  TMPDIR=/path/on/ssd scripts/figures/shared_vs_partitioned.py
  scripts/figures/shared_vs_partitioned.py --scale=tiny
"""

import itertools
import os
import shutil
import tempfile

import figlib

FIGURE = "shared_vs_partitioned"
SCALES = {
    "tiny": {"warehouses": 2, "items": 1000, "customers": 30,
             "duration": 0.3, "warmup": 0.05, "nodes": [2],
             "pcts": [0, 100], "mixes": ["new_order"], "logs": ["on"]},
    "small": {"warehouses": 4, "items": 100000, "customers": 3000,
              "duration": 3, "warmup": 0.5, "nodes": [2],
              "pcts": [0, 10, 50, 100], "mixes": ["new_order", "standard"],
              "logs": ["on", "off"]},
    "full": {"warehouses": 4, "items": 100000, "customers": 3000,
             "duration": 5, "warmup": 1, "nodes": [2, 4],
             "pcts": [0, 10, 50, 100], "mixes": ["new_order", "standard"],
             "logs": ["on", "off"], "runs": 3},
}
VARIANTS = {
    "shared": ["--mode=shared"],
    "partitioned": ["--mode=partitioned"],
    "partitioned (naive 2PC)": ["--mode=partitioned",
                                "--twopc_one_phase_local=false",
                                "--twopc_read_only_vote=false",
                                "--twopc_parallel_prepare=false"],
}

# The modes whose log cost the WAL-off runs show.
WITHOUT_LOG = ("shared", "partitioned")


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc",
                                bounds={"nodes": (2, 58),
                                        "pcts": (0, 100)})
    root = tempfile.mkdtemp(prefix="strand-2pc-fig-")
    runs = []
    n = 0
    for nodes in s["nodes"]:
        for mix in s["mixes"]:
            for pct, log, (variant, flags) in itertools.product(
                    s["pcts"], s["logs"], VARIANTS.items()):
                if log == "off" and variant not in WITHOUT_LOG:
                    continue
                for rep in range(s["runs"]):
                    n += 1  # each run logs to a directory of its own
                    log_flags = (["--wal=on",
                                  f"--wal_dir={os.path.join(root, str(n))}"]
                                 if log == "on" else ["--wal=off"])
                    runs.append((
                        {"figure": FIGURE, "variant": variant,
                         "mix_name": mix, "log": log},
                        flags + log_flags + [
                            f"--distributed_pct={pct}", f"--mix={mix}",
                            "--cc=2pl", f"--compute_nodes={nodes}",
                            "--threads=1", "--rtt_ns=2000"]
                        + figlib.tpcc_flags(s)))
    try:
        out_dir, recs = figlib.run_all(args, FIGURE, "tpcc/tpcc", runs, 1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_log_cost(recs)
    figlib.save(draw(recs), out_dir, FIGURE)


def throughput(recs, nodes, mix, variant, log):
    """{(distributed_pct,): [txn/s]} of one line of the figure (runs saved
    before the WAL-off lines existed have no "log": they logged)."""
    sel = [r for r in recs if r["variant"] == variant and
           r.get("log", "on") == log and
           r["compute_nodes"] == nodes and r["mix_name"] == mix]
    return figlib.group(sel, ["distributed_pct"], "txn_per_sec")


def print_log_cost(recs):
    """Each mode's WAL-on throughput over its WAL-off one (medians)."""
    for nodes, mix, variant in sorted({(r["compute_nodes"], r["mix_name"],
                                        r["variant"]) for r in recs}):
        by_log = {log: throughput(recs, nodes, mix, variant, log)
                  for log in ("on", "off")}
        if not by_log["off"]:
            continue
        ratios = []
        for x in sorted(set(by_log["off"]) & set(by_log["on"])):
            on = figlib.spread(by_log["on"][x])[0]
            off = figlib.spread(by_log["off"][x])[0]
            ratios.append(f"{x[0]}%: {on:.0f} / {off:.0f} = {on / off:.2f}x"
                          if off > 0 else f"{x[0]}%: {on:.0f} / 0")
        print(f"{nodes} nodes, {mix}, {variant}: WAL on / off txn/s: "
              + "; ".join(ratios))


def draw(recs):
    plt = figlib.pyplot()
    panels = sorted({(r["compute_nodes"], r["mix_name"]) for r in recs})
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.6),
                             squeeze=False)
    colors = {v: f"C{i}" for i, v in enumerate(VARIANTS)}
    for col, (nodes, mix) in enumerate(panels):
        ax = axes[0][col]
        for variant, log in itertools.product(VARIANTS, ("on", "off")):
            g = throughput(recs, nodes, mix, variant, log)
            if not g:
                continue
            xs = sorted(g)
            meds = [figlib.spread(g[x]) for x in xs]
            ax.errorbar([x[0] for x in xs], [m[0] for m in meds],
                        yerr=[[m[1] for m in meds], [m[2] for m in meds]],
                        marker="o", color=colors[variant],
                        linestyle="-" if log == "on" else "--",
                        label=variant + ("" if log == "on" else ", WAL off"))
        ax.set_xlabel("distributed transactions (%)")
        ax.set_ylabel("committed txn/s")
        ax.set_title(f"{mix}, {nodes} compute nodes")
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    figlib.figure_legend(fig, [axes[0][0]])
    fig.suptitle("Shared vs partitioned (2PC), TPC-C, 2PL, rtt 2 us: "
                 "WAL on (solid), off (dashed)")
    return fig


if __name__ == "__main__":
    main()
