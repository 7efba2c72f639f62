#!/usr/bin/python3
"""TPC-C, SELCC against SEL, per transaction type and for the standard mix,
under 2PL, TO and OCC: the SELCC paper's Figure 16a shape. Warehouses are
shared by every node's thread (--home_warehouse=random) and each node's
cache holds about an eighth of the database, as in the paper.

  scripts/figures/tpcc_protocols.py                # small: ~5 minutes
  scripts/figures/tpcc_protocols.py --scale=tiny   # CI: seconds
"""

import figlib

FIGURE = "tpcc_protocols"
MIXES = ["standard", "new_order", "payment", "order_status", "delivery",
         "stock_level"]
SCALES = {
    "tiny": {"warehouses": 1, "items": 1000, "customers": 30, "duration": 0.2,
             "warmup": 0.05, "cache_mb": 1, "ccs": ["2pl"],
             "mixes": ["standard", "new_order"], "nodes": 2},
    "small": {"warehouses": 2, "items": 100000, "customers": 3000,
              "duration": 2, "warmup": 0.5, "cache_mb": 22,
              "ccs": ["2pl", "to", "occ"], "mixes": MIXES, "nodes": 2},
    "full": {"warehouses": 4, "items": 100000, "customers": 3000,
             "duration": 5, "warmup": 1, "cache_mb": 44,
             "ccs": ["2pl", "to", "occ"], "mixes": MIXES, "nodes": 4,
             "runs": 3},
}


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc")
    runs = []
    for cc in s["ccs"]:
        for mix in s["mixes"]:
            for protocol in ["selcc", "sel"]:
                # SEL caches nothing: --cache_mb is SELCC's only.
                cache = ([f"--cache_mb={s['cache_mb']}"]
                         if protocol == "selcc" else [])
                runs.append(({"figure": FIGURE, "mix_name": mix},
                             [f"--cc={cc}", f"--protocol={protocol}",
                              f"--mix={mix}",
                              f"--compute_nodes={s['nodes']}", "--threads=1",
                              "--home_warehouse=random", "--rtt_ns=2000"]
                             + cache + figlib.tpcc_flags(s)))
    out_dir, recs = figlib.run_all(args, FIGURE, "tpcc/tpcc", runs, s["runs"])
    figlib.save(draw(recs), out_dir, FIGURE)


def median_of(recs, cc, protocol, key):
    """{mix: median of `key`} over the runs of one cc and protocol."""
    g = figlib.group([r for r in recs if r["cc"] == cc and
                      r["protocol"] == protocol], ["mix_name"], key)
    return {k[0]: figlib.spread(v) for k, v in g.items()}


def draw(recs):
    plt = figlib.pyplot()
    ccs = [c for c in ["2pl", "to", "occ"] if any(r["cc"] == c for r in recs)]
    mixes = [m for m in MIXES if any(r["mix_name"] == m for r in recs)]
    fig, axes = plt.subplots(1, len(ccs),
                             figsize=(max(7, 5 * len(ccs)), 5.2),
                             squeeze=False)
    width = 0.38
    for col, cc in enumerate(ccs):
        ax = axes[0][col]
        shown = []
        for i, (protocol, color) in enumerate([("selcc", "tab:blue"),
                                                ("sel", "tab:red")]):
            measured = median_of(recs, cc, protocol, "txn_per_sec")
            xs = [k for k, m in enumerate(mixes) if m in measured]
            meds = [measured[mixes[k]] for k in xs]
            ax.bar([k + (i - 0.5) * width for k in xs], [m[0] for m in meds],
                   width * 0.9,
                   yerr=[[m[1] for m in meds], [m[2] for m in meds]],
                   color=color, label=protocol + " measured")
            shown += [m[0] for m in meds]
            # The modeled throughput (docs/method.md) as a tick on the bar.
            modeled = median_of(recs, cc, protocol, "modeled_ops_per_sec")
            xs = [k for k, m in enumerate(mixes) if m in modeled]
            ax.plot([k + (i - 0.5) * width for k in xs],
                    [modeled[mixes[k]][0] for k in xs],
                    linestyle="none", marker="_", markersize=22,
                    markeredgewidth=2, color="black" if i == 0 else "gray",
                    label=protocol + " modeled")
            shown += [modeled[mixes[k]][0] for k in xs]
        selcc = median_of(recs, cc, "selcc", "txn_per_sec")
        sel = median_of(recs, cc, "sel", "txn_per_sec")
        for k, m in enumerate(mixes):
            if m in selcc and m in sel and sel[m][0] > 0:
                ax.annotate(f"{selcc[m][0] / sel[m][0]:.1f}x",
                            (k, max(selcc[m][0], sel[m][0])),
                            textcoords="offset points", xytext=(0, 4),
                            ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(mixes)))
        ax.set_xticklabels([m.replace("_", "\n") for m in mixes], fontsize=8)
        ax.set_xlabel("transaction mix (--mix)")
        # Room above the tallest bar for its ratio label.
        figlib.log_axis(ax, shown + [max(shown) * 2] if shown else shown)
        ax.set_ylabel("committed txn/s (log scale)")
        ax.set_title(f"{cc}: SELCC vs SEL")
        ax.grid(axis="y", alpha=0.3)
    figlib.figure_legend(fig, [axes[0][0]], columns=2 if len(ccs) < 2 else 4)
    fig.suptitle("TPC-C per transaction type, shared warehouses, rtt 2 us\n"
                 "Nx over a mix: SELCC's measured throughput / SEL's")
    return fig


if __name__ == "__main__":
    main()
