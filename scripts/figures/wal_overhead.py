#!/usr/bin/python3
"""What the write-ahead log costs TPC-C: WAL on / off throughput, in
alternating pairs, at 1 compute node x 2 threads, 2 x 1 and 4 x 1, with
rtt 0 and 2000 ns. With the log on, commits are pipelined and
acknowledged by the cluster's durable watermark (tpcc's default); the
figure draws measured and modeled ratios (docs/method.md: modeled where
the busy threads outnumber the cores), and the device's fdatasync
latency (bench/wal_bench) in the title. Logs go under $TMPDIR.

  TMPDIR=/path/on/ssd scripts/figures/wal_overhead.py --scale=full
  scripts/figures/wal_overhead.py --scale=tiny
"""

import json
import os
import shutil
import subprocess
import tempfile

import figlib

FIGURE = "wal_overhead"
# (compute nodes, threads per node)
SHAPES = {"1x2": (1, 2), "2x1": (2, 1), "4x1": (4, 1)}
SCALES = {
    "tiny": {"warehouses": 1, "items": 1000, "customers": 30,
             "duration": 0.3, "warmup": 0.05, "shapes": ["1x2", "2x1"],
             "rtts": [0], "runs": 1, "fsync_samples": 20},
    "small": {"warehouses": 2, "items": 100000, "customers": 3000,
              "duration": 3, "warmup": 0.5, "shapes": ["1x2", "2x1", "4x1"],
              "rtts": [0, 2000], "runs": 2, "fsync_samples": 200},
    "full": {"warehouses": 2, "items": 100000, "customers": 3000,
             "duration": 8, "warmup": 1, "shapes": ["1x2", "2x1", "4x1"],
             "rtts": [0, 2000], "runs": 6, "fsync_samples": 1000},
}


def fsync_latency(args, s, out_dir, root):
    """wal_bench's 4 KiB write+fdatasync p50/p99 (us) on the log's device,
    saved beside the runs (and read back on --replot)."""
    path = os.path.join(out_dir, "wal_bench.json")
    if not args.replot:
        cmd = [os.path.join(args.build, "bench/wal_bench"),
               f"--wal_dir={root}",
               "--io_modes=direct", "--threads=1",
               f"--fsync_samples={s['fsync_samples']}", "--duration_s=0.1",
               "--json"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{FIGURE}: wal_bench failed: {p.stderr[-500:]}")
        with open(path, "w") as f:
            f.write(p.stdout)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("run") == "fsync":
                return rec["p50_us"], rec["p99_us"]
    return None


def main():
    args, s = figlib.parse_args(
        FIGURE, __doc__, SCALES, "tpcc/tpcc",
        bounds={"shapes": sorted(SHAPES), "rtts": (0, 1000000)})
    root = tempfile.mkdtemp(prefix="strand-wal-overhead-")
    runs = []
    # Alternating pairs: off then on, shape by shape, round by round, so a
    # noisy minute hits both sides of a ratio.
    for rep in range(s["runs"]):
        for rtt in s["rtts"]:
            for shape in s["shapes"]:
                nodes, threads = SHAPES[shape]
                common = [f"--compute_nodes={nodes}", f"--threads={threads}",
                          f"--rtt_ns={rtt}"] + figlib.tpcc_flags(s)
                labels = {"figure": FIGURE, "shape": shape, "rtt": rtt}
                runs.append((dict(labels, log="off"), ["--wal=off"] + common))
                d = os.path.join(root, f"{shape}-{rtt}-{rep}")
                runs.append((dict(labels, log="on"),
                             ["--wal=on", f"--wal_dir={d}"] + common))
    try:
        out_dir, recs = figlib.run_all(args, FIGURE, "tpcc/tpcc", runs, 1)
        fsync = fsync_latency(args, s, out_dir, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for line in table(recs):
        print(line)
    figlib.save(draw(recs, fsync), out_dir, FIGURE)


def ratios(recs, value):
    """{(shape, rtt): [on/off of each round]} for `value`, pairing the
    i-th run with the log off with the i-th with it on."""
    off = figlib.group([r for r in recs if r["log"] == "off"],
                       ["shape", "rtt"], value)
    on = figlib.group([r for r in recs if r["log"] == "on"],
                      ["shape", "rtt"], value)
    return {k: [b / a for a, b in zip(off[k], on.get(k, [])) if a > 0]
            for k in off}


def table(recs):
    measured = ratios(recs, "txn_per_sec")
    modeled = ratios(recs, "modeled_ops_per_sec")
    lines = ["shape  rtt_ns  WAL on/off measured (median, per round)"
             "  modeled"]
    for k in sorted(measured):
        m = measured[k]
        lines.append("%-5s  %6d  %.2fx %s  %.2fx" % (
            k[0], k[1], figlib.spread(m)[0],
            " ".join("%.2f" % x for x in m),
            figlib.spread(modeled.get(k, [0]))[0]))
    return lines


def draw(recs, fsync=None):
    plt = figlib.pyplot()
    measured = ratios(recs, "txn_per_sec")
    modeled = ratios(recs, "modeled_ops_per_sec")
    rtts = sorted({k[1] for k in measured})
    fig, axes = plt.subplots(1, len(rtts), figsize=(5 * len(rtts), 4.2),
                             squeeze=False)
    for ax, rtt in zip(axes[0], rtts):
        shapes = sorted(k[0] for k in measured if k[1] == rtt)
        xs = range(len(shapes))
        for offset, name, data in ((-0.2, "measured", measured),
                                   (0.2, "modeled", modeled)):
            meds = [figlib.spread(data.get((sh, rtt), [0])) for sh in shapes]
            ax.bar([x + offset for x in xs], [m[0] for m in meds], width=0.4,
                   yerr=[[m[1] for m in meds], [m[2] for m in meds]],
                   label=name)
        ax.axhline(0.9, color="gray", linestyle="--", linewidth=1,
                   label="target 0.9x")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{sh} (nodes x threads)" for sh in shapes],
                           fontsize=8)
        ax.set_xlabel("deployment")
        ax.set_ylabel("txn/s with the WAL on / off")
        ax.set_ylim(0, 1.3)
        ax.set_title(f"rtt {rtt} ns")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3)
    note = ("" if fsync is None else
            f"; fdatasync p50 {fsync[0]:.0f} us, p99 {fsync[1]:.0f} us")
    fig.suptitle("TPC-C standard mix, pipelined commits acknowledged by "
                 "durable watermark" + note, fontsize=9)
    return fig


if __name__ == "__main__":
    main()
