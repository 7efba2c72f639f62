#!/usr/bin/python3
"""Checkpoints (docs/design/checkpoints.md): TPC-C with the WAL on, 2
compute nodes, with periodic checkpoints and without, one run per run
length. Left: throughput per second of the longest run with checkpoints,
each checkpoint's span shaded, and the log and checkpoint bytes on disk.
Right: recovery time (strand_recover after the run, split into loading
the checkpoint, reading the logs and replaying them) against the run's
length, with and without checkpoints.

  scripts/figures/checkpoints.py --scale=full   # 1, 5, 10 min, every 30 s
                                                # (without: 1 and 5 min)
  scripts/figures/checkpoints.py --scale=tiny   # seconds, for CI

Each run's record (runs.jsonl) holds tpcc's JSON (with its "checkpoints"),
the per-second series (--progress_json), the disk samples, and
strand_recover's JSON under "recovery"; the derived figures the issue
asks for (throughput during checkpoints over steady state, replay rate
over commit rate, the most bytes on disk) are printed and stored too.
"""

import json
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time

import figlib

FIGURE = "checkpoints"
SCALES = {
    "tiny": {"warehouses": 1, "items": 1000, "customers": 30, "warmup": 0,
             "lengths": [2], "interval": 0.5},
    "small": {"warehouses": 2, "items": 100000, "customers": 3000,
              "warmup": 1, "lengths": [20, 60], "interval": 10},
    # Without checkpoints the log is never truncated: about 130 MB/s here
    # (2.5 KiB per transaction), so 10 minutes would need 76 GB of disk;
    # runs without checkpoints stop at `longest_without` seconds.
    "full": {"warehouses": 2, "items": 100000, "customers": 3000,
             "warmup": 1, "lengths": [60, 300, 600], "interval": 30,
             "longest_without": 300},
}


def dir_bytes(path, prefix):
    total = 0
    for entry in os.listdir(path) if os.path.isdir(path) else []:
        if not entry.startswith(prefix):
            continue
        for root, _, files in os.walk(os.path.join(path, entry)):
            for f in files:
                try:
                    total += os.path.getsize(os.path.join(root, f))
                except OSError:
                    pass  # deleted meanwhile (truncation)
    return total


class DiskSampler:
    """Samples the log and checkpoint bytes under `wal_dir` every second."""

    def __init__(self, wal_dir):
        self.wal_dir = wal_dir
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start = time.time()
        self._thread.start()

    def _run(self):
        while not self._stop.wait(1.0):
            self.samples.append({
                "t_s": round(time.time() - self._start, 1),
                "log_bytes": dir_bytes(self.wal_dir, "node-"),
                "checkpoint_bytes": dir_bytes(self.wal_dir, "checkpoint-"),
            })

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.samples


def derive(rec):
    """The issue's ratios from one run's record."""
    series = rec.get("series", [])
    spans = [(c["start_s"], c["start_s"] + c["duration_s"])
             for c in rec.get("checkpoints", []) if c["kind"] != "initial"]
    during, steady = [], []
    for s in series:
        # The second (elapsed_s - 1, elapsed_s] of the measured window.
        lo, hi = s["elapsed_s"] - 1, s["elapsed_s"]
        if any(a < hi and b > lo for a, b in spans):
            during.append(s["txn_per_sec"])
        else:
            steady.append(s["txn_per_sec"])
    out = {}
    if during and steady:
        out["throughput_during_checkpoint_ratio"] = (
            sum(during) / len(during)) / (sum(steady) / len(steady))
    r = rec.get("recovery", {})
    if r.get("replay_s", 0) > 0 and rec.get("txn_per_sec", 0) > 0:
        out["replay_over_commit_rate"] = (
            r["records_replayed"] / r["replay_s"]) / rec["txn_per_sec"]
    # The same in CPU: records replayed per CPU second over transactions
    # committed per CPU second of the run (both process-wide), which a
    # shared machine distorts far less than the wall clock.
    run_cpu_s = (rec.get("process_cpu_percent", 0) / 100
                 * rec.get("commits", 0) / max(rec.get("txn_per_sec", 0), 1e-9))
    if r.get("replay_cpu_s", 0) > 0 and run_cpu_s > 0:
        out["replay_over_commit_cpu_rate"] = (
            r["records_replayed"] / r["replay_cpu_s"]) / (
                rec["commits"] / run_cpu_s)
    cpu = [c["cpu_s"] for c in rec.get("checkpoints", [])
           if c["kind"] != "initial" and "cpu_s" in c]
    if cpu and rec.get("interval_s"):
        # Of the machine's cores over an interval.
        out["checkpoint_cpu_share"] = (sum(cpu) / len(cpu)) / (
            rec["interval_s"] * (os.cpu_count() or 1))
    disk = rec.get("disk", [])
    if disk:
        out["max_log_bytes"] = max(d["log_bytes"] for d in disk)
        out["max_checkpoint_bytes"] = max(d["checkpoint_bytes"] for d in disk)
    return out


def main():
    args, s = figlib.parse_args(FIGURE, __doc__, SCALES, "tpcc/tpcc",
                                bounds={"lengths": (0.1, 3600)})
    out_dir = figlib.results_dir(args, FIGURE)
    path = os.path.join(out_dir, "runs.jsonl")
    records = []
    if args.replot:
        records = figlib.read_runs(path)
    else:
        root = tempfile.mkdtemp(prefix="strand-checkpoint-fig-",
                                dir=os.environ.get("TMPDIR"))
        tpcc = os.path.join(args.build, "tpcc/tpcc")
        recover = os.path.join(args.build, "tools/strand_recover")
        try:
            with open(path, "w") as f:
                for length in s["lengths"]:
                    for interval in (s["interval"], 0):
                        if (interval == 0 and
                                length > s.get("longest_without", length)):
                            print(f"length {length} s without checkpoints: "
                                  "skipped (disk, see SCALES)",
                                  file=sys.stderr)
                            continue
                        for rep in range(s["runs"]):
                            wal = os.path.join(root, f"wal-{length}-{interval}")
                            series = os.path.join(root, "series.jsonl")
                            cmd = ([tpcc, "--compute_nodes=2", "--wal=on",
                                    f"--wal_dir={wal}",
                                    f"--checkpoint_interval_s={interval}",
                                    f"--progress_json={series}",
                                    f"--warehouses={s['warehouses']}",
                                    f"--items={s['items']}",
                                    f"--customers={s['customers']}",
                                    f"--duration_s={length}",
                                    f"--warmup_s={s['warmup']}", "--json"]
                                   + shlex.split(args.extra))
                            sampler = DiskSampler(wal)
                            rec = figlib.run_json(FIGURE, cmd)
                            rec["disk"] = sampler.stop()
                            with open(series) as sf:
                                rec["series"] = [json.loads(l) for l in sf
                                                 if l.strip()]
                            rec["recovery"] = figlib.run_json(
                                FIGURE, [recover, f"--wal_dir={wal}", "--json"])
                            rec.update({"figure": FIGURE, "length_s": length,
                                        "interval_s": interval,
                                        "repetition": rep,
                                        "command": " ".join(cmd)})
                            rec.update(derive(rec))
                            records.append(rec)
                            f.write(json.dumps(rec) + "\n")
                            f.flush()
                            shutil.rmtree(wal, ignore_errors=True)
            figlib.write_readme(out_dir, FIGURE)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    for r in records:
        rr = r.get("recovery", {})
        print(f"length {r['length_s']} s, checkpoints every "
              f"{r['interval_s'] or 'never'}: {r.get('txn_per_sec', 0):.0f} "
              f"txn/s; recovery load {rr.get('load_s', 0):.2f} s + logs "
              f"{rr.get('read_logs_s', 0):.2f} s + replay "
              f"{rr.get('replay_s', 0):.2f} s; "
              + ", ".join(f"{k} {v:.3g}" for k, v in sorted(derive(r).items())),
              file=sys.stderr)

    figlib.save(draw(records), out_dir, FIGURE)

def draw(records):
    plt = figlib.pyplot()
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4))
    with_ckpt = [r for r in records if r["interval_s"]]
    longest = max(with_ckpt, key=lambda r: r["length_s"], default=None)
    if longest is not None:
        xs = [p["elapsed_s"] for p in longest["series"]]
        a.plot(xs, [p["txn_per_sec"] for p in longest["series"]],
               label="committed txn/s")
        for ck in longest.get("checkpoints", []):
            if ck["kind"] == "initial":
                continue
            a.axvspan(ck["start_s"], ck["start_s"] + ck["duration_s"],
                      color="orange", alpha=0.3)
        a.set_title("every %g s (checkpoints shaded)" % longest["interval_s"])
        a.set_xlabel("seconds into the measured run")
        a.set_ylabel("committed txn/s")
        a.set_ylim(bottom=0)
        a.legend(loc="lower right")
        a.grid(alpha=0.3)
        disk = longest.get("disk", [])
        b.plot([d["t_s"] for d in disk],
               [d["log_bytes"] / 2**20 for d in disk], label="logs")
        b.plot([d["t_s"] for d in disk],
               [d["checkpoint_bytes"] / 2**20 for d in disk],
               label="checkpoints")
        b.set_xlabel("seconds since tpcc started (load included)")
        b.set_ylabel("MiB on disk")
        b.set_title("bytes on disk")
        b.set_ylim(bottom=0)
        b.legend()
        b.grid(alpha=0.3)
    intervals = sorted({r["interval_s"] for r in records}, reverse=True)
    for interval, marker in zip(intervals, "os^v"):
        runs = sorted((r for r in records if r["interval_s"] == interval),
                      key=lambda r: r["length_s"])
        if not runs:
            continue
        label = f"every {interval:g} s" if interval else "no checkpoints"
        xs = [r["length_s"] for r in runs]
        total = [r["recovery"]["load_s"] + r["recovery"]["read_logs_s"]
                 + r["recovery"]["replay_s"] for r in runs]
        c.plot(xs, total, marker=marker, label=f"{label}: total")
        c.plot(xs, [r["recovery"]["replay_s"] for r in runs], marker=marker,
               linestyle=":", label=f"{label}: replay")
        c.plot(xs, [r["recovery"]["load_s"] for r in runs], marker=marker,
               linestyle="--", label=f"{label}: load")
    c.set_xlabel("run length (s)")
    c.set_ylabel("recovery wall time (s)")
    c.set_title("strand_recover after the run")
    c.set_ylim(bottom=0)
    c.set_xlim(left=0)
    c.legend(fontsize=7)
    c.grid(alpha=0.3)
    from matplotlib.ticker import MaxNLocator
    for ax in (a, b, c):
        # Seconds of whole-second samples and run lengths: whole ticks.
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle("TPC-C, 2 compute nodes, WAL on: checkpoints")
    return fig


if __name__ == "__main__":
    main()
