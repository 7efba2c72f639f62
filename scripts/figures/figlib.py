"""What every figure script shares: arguments, running a binary once per
configuration with --json, the results directory, and plot helpers.

A figure script builds a list of runs (each a dict of flags), and calls
run_all(); every run's JSON object (the binary's --json line, plus the
run's label fields) goes to <out>/<figure>/<date>-<commit>/runs.jsonl, so
a figure can be redrawn from its data (--replot DIR) without running
anything. Only the Python standard library and Debian's python3-matplotlib.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(figure, description, scales):
    """`scales`: {"tiny": {...}, "small": {...}, "full": {...}}, what each
    scale sets (durations, sizes, grids). Returns (args, scale dict)."""
    p = argparse.ArgumentParser(
        prog=f"scripts/figures/{figure}.py", description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scale", choices=sorted(scales), default="small",
                   help="how big and long each run is: tiny (CI, seconds "
                        "in all), small (a laptop, minutes), full (the "
                        "figures in docs/results.md)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="build directory holding the binaries")
    p.add_argument("--out", default=os.path.join(ROOT, "results"),
                   help="results root: runs go to OUT/%s/<date>-<commit>/"
                        % figure)
    p.add_argument("--runs", type=int, default=None,
                   help="repetitions of every configuration (min/median/max "
                        "are plotted); default: the scale's")
    p.add_argument("--replot", metavar="DIR", default=None,
                   help="redraw from DIR/runs.jsonl instead of running")
    p.add_argument("--extra", default="",
                   help="flags appended to every run (e.g. '--rtt_ns=1000')")
    grids = sorted({k for s in scales.values() for k, v in s.items()
                    if isinstance(v, list)})
    p.add_argument("--grid", action="append", default=[],
                   metavar="KEY=V1,V2",
                   help="replace one of the scale's lists (%s), e.g. "
                        "--grid=%s=%s; repeatable" % (
                            ", ".join(grids) or "none",
                            grids[0] if grids else "KEY", "V1,V2"))
    args = p.parse_args()
    scale = dict(scales[args.scale])
    if args.runs is not None:
        scale["runs"] = args.runs
    for item in args.grid:
        key, _, values = item.partition("=")
        if not isinstance(scale.get(key), list) or not values:
            p.error("--grid=%s: expected KEY=V1,V2 with KEY one of: %s"
                    % (item, ", ".join(grids) or "(this figure has none)"))
        numeric = all(isinstance(v, int) for v in scale[key])
        try:
            scale[key] = [int(v) if numeric else v
                          for v in values.split(",")]
        except ValueError:
            p.error("--grid=%s: %s takes integers" % (item, key))
    scale.setdefault("runs", 1)
    return args, scale


def commit():
    try:
        return subprocess.check_output(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
            text=True, stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def results_dir(args, figure):
    if args.replot:
        return args.replot
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    d = os.path.join(args.out, figure, f"{stamp}-{commit()}")
    os.makedirs(d, exist_ok=True)
    return d


def run_all(args, figure, binary, runs, repetitions):
    """Runs `binary` once per entry of `runs` (a list of (labels, flags)
    pairs) and repetition; returns the records (JSON objects with the
    labels merged in) and writes them to runs.jsonl as they come."""
    out_dir = results_dir(args, figure)
    path = os.path.join(out_dir, "runs.jsonl")
    if args.replot:
        with open(path) as f:
            return out_dir, [json.loads(line) for line in f if line.strip()]
    records = []
    exe = os.path.join(args.build, binary)
    with open(path, "w") as f:
        for i, (labels, flags) in enumerate(runs):
            for rep in range(repetitions):
                cmd = [exe] + flags + ["--json"] + args.extra.split()
                print(f"[{i + 1}/{len(runs)} rep {rep + 1}] "
                      + " ".join(cmd), file=sys.stderr, flush=True)
                p = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
                lines = [l for l in p.stdout.splitlines() if l.strip()]
                if p.returncode != 0 or not lines:
                    sys.stderr.write(p.stderr[-2000:])
                    sys.exit(f"{figure}: run failed (exit {p.returncode}): "
                             + " ".join(cmd))
                for line in lines:
                    rec = json.loads(line)
                    rec.update(labels)
                    rec["repetition"] = rep
                    rec["command"] = " ".join(cmd)
                    records.append(rec)
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
    with open(os.path.join(out_dir, "README.txt"), "w") as f:
        f.write(f"figure {figure}, commit {commit()}, "
                f"{datetime.datetime.now().isoformat(timespec='seconds')}\n"
                f"machine: {os.cpu_count()} cores, {machine()}\n"
                f"command: {' '.join(sys.argv)}\n")
    return out_dir, records


def timing_flags(s):
    """A scale's run length, and memory committed before the run starts."""
    return [f"--duration_s={s['duration']}", f"--warmup_s={s['warmup']}",
            "--populate_memory=touch"]


def tpcc_flags(s):
    """A scale's TPC-C database size, then timing_flags."""
    return [f"--warehouses={s['warehouses']}", f"--items={s['items']}",
            f"--customers={s['customers']}"] + timing_flags(s)


def machine():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown cpu"


def group(records, keys, value):
    """{tuple of key values: [values]} for records that have `value`."""
    out = {}
    for r in records:
        if value not in r:
            continue
        k = tuple(r.get(key) for key in keys)
        out.setdefault(k, []).append(r[value])
    return out


def spread(values):
    """(median, median - min, max - median): for error bars."""
    m = statistics.median(values)
    return m, m - min(values), max(values) - m


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out_dir, figure):
    path = os.path.join(out_dir, f"{figure}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(path)
    return path
