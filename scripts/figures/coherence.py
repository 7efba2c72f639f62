#!/usr/bin/python3
"""Coherence micro-benchmark, the SELCC paper's 7.1 / Figure 9 shape:
throughput and invalidations per operation against read ratio and sharing
ratio, SELCC against SEL, 2 compute nodes x 1 thread at rtt 2 us.

  scripts/figures/coherence.py                 # small: a few minutes
  scripts/figures/coherence.py --scale=tiny    # CI: seconds
  scripts/figures/coherence.py --replot results/coherence/<run>

Measured throughput is drawn solid, the modeled one (docs/method.md)
dashed: on a 2-core machine the modeled figure is the one to quote when
they differ.
"""

import figlib

FIGURE = "coherence"
SCALES = {
    "tiny": {"duration": 0.1, "warmup": 0.05, "gcls": 2000, "cache_mb": 1,
             "read": [1.0, 0.5], "sharing": [0.0, 1.0], "zipf": [0.0]},
    "small": {"duration": 1.0, "warmup": 0.3, "gcls": 20000, "cache_mb": 4,
              "read": [1.0, 0.95, 0.5, 0.0], "sharing": [0.0, 0.5, 1.0],
              "zipf": [0.0, 0.99]},
    "full": {"duration": 3.0, "warmup": 0.5, "gcls": 20000, "cache_mb": 4,
             "read": [1.0, 0.95, 0.5, 0.0], "sharing": [0.0, 0.5, 1.0],
             "zipf": [0.0, 0.99], "runs": 3},
}


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES,
                                "bench/coherence_bench",
                                bounds={"read": (0.0, 1.0),
                                        "sharing": (0.0, 1.0),
                                        "zipf": (0.0, 0.999)})
    runs = []
    for zipf in s["zipf"]:
        for sharing in s["sharing"]:
            for read in s["read"]:
                for protocol in ["selcc", "sel"]:
                    # SEL caches nothing: --cache_mb is SELCC's only.
                    cache = ([f"--cache_mb={s['cache_mb']}"]
                             if protocol == "selcc" else [])
                    runs.append((
                        {"figure": FIGURE},
                        [f"--protocol={protocol}", "--compute_nodes=2",
                         "--threads=1", f"--gcls={s['gcls']}",
                         "--gcl_size=1024"] + cache +
                        [f"--read_ratio={read}",
                         f"--sharing_ratio={sharing}",
                         f"--zipf_theta={zipf}", "--rtt_ns=2000"]
                        + figlib.timing_flags(s)))
    out_dir, recs = figlib.run_all(args, FIGURE, "bench/coherence_bench",
                                   runs, s["runs"])
    figlib.save(draw(recs), out_dir, FIGURE)


def draw(recs):
    plt = figlib.pyplot()
    sharings = sorted({r["sharing_ratio"] for r in recs})
    zipfs = sorted({r["zipf_theta"] for r in recs})
    fig, axes = plt.subplots(2, len(sharings),
                             figsize=(4.2 * len(sharings), 7.5),
                             squeeze=False)
    for col, sharing in enumerate(sharings):
        top, bottom = axes[0][col], axes[1][col]
        throughputs = []
        for zipf in zipfs:
            for protocol, color in [("selcc", "tab:blue"), ("sel", "tab:red")]:
                sel = [r for r in recs if r["sharing_ratio"] == sharing and
                       r["zipf_theta"] == zipf and r["protocol"] == protocol]
                style = "-" if zipf == 0 else ":"
                label = f"{protocol} zipf {zipf:g}"
                for key in ("ops_per_sec", "modeled_ops_per_sec"):
                    g = figlib.group(sel, ["read_ratio"], key)
                    xs = sorted(g)
                    if not xs:
                        continue
                    meds = [figlib.spread(g[x]) for x in xs]
                    measured = key == "ops_per_sec"
                    top.errorbar([x[0] for x in xs], [m[0] / 1e3 for m in meds],
                                 yerr=[[m[1] / 1e3 for m in meds],
                                       [m[2] / 1e3 for m in meds]],
                                 color=color,
                                 linestyle=style if measured else "--",
                                 marker="o",
                                 label=label + ("" if measured
                                                else " (modeled)"),
                                 alpha=1.0 if measured else 0.5)
                    throughputs += [m[0] / 1e3 for m in meds]
                g = figlib.group(sel, ["read_ratio"], "invalidation_ratio")
                xs = sorted(g)
                bottom.plot([x[0] for x in xs],
                            [figlib.spread(g[x])[0] for x in xs],
                            color=color, linestyle=style, marker="s",
                            label=label)
        top.set_title(f"sharing ratio {sharing:g}")
        top.set_xlabel("read ratio")
        figlib.log_axis(top, throughputs)
        top.set_ylabel("throughput (thousand ops/s, 2 nodes, log)")
        bottom.set_title(f"sharing ratio {sharing:g}")
        bottom.set_xlabel("read ratio")
        bottom.set_ylabel("invalidations per op")
        bottom.set_ylim(bottom=0)
        top.grid(alpha=0.3)
        bottom.grid(alpha=0.3)
    figlib.figure_legend(fig, [axes[0][0]])
    fig.suptitle("Coherence micro-benchmark: SELCC vs SEL "
                 "(2 compute nodes x 1 thread, rtt 2 us, 1 KiB GCLs)")
    return fig


if __name__ == "__main__":
    main()
