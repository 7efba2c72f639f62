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
import math
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's examples on their lines, and adds
    "(default: X)" where there is a default to show (never "None")."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("%(default)" in text or not action.option_strings or
                action.default in (None, [], "", False, argparse.SUPPRESS)):
            return text
        return text + " (default: %(default)s)"


def _grid_values(p, item, key, values, scale_values, bound):
    """The values of --grid=KEY=V1,V2, typed as the scale's list is and
    within `bound` ((low, high) for numbers, a list of choices for
    strings): any other is a usage error (exit 2) naming --grid."""
    if not values or any(v == "" for v in values.split(",")):
        p.error(f"--grid={item}: an empty value; give KEY=V1,V2")
    kind = type(scale_values[0])
    out = []
    for v in values.split(","):
        try:
            x = kind(v)
        except ValueError:
            p.error(f"--grid={item}: {key} takes {kind.__name__} values, "
                    f"not {v!r}")
        if isinstance(x, float) and math.isnan(x):
            p.error(f"--grid={item}: {v!r} is not a number")
        if isinstance(x, str):
            if x not in bound:
                p.error(f"--grid={item}: {v!r} is not one of "
                        f"{', '.join(bound)}")
        elif not bound[0] <= x <= bound[1]:
            p.error(f"--grid={item}: {key} takes {bound[0]} to {bound[1]}, "
                    f"not {v}")
        out.append(x)
    return out


def parse_args(figure, description, scales, binary, bounds=None):
    """`scales`: {"tiny": {...}, "small": {...}, "full": {...}}, what each
    scale sets (durations, sizes, grids). `binary`: the binary the runs
    use, under --build. `bounds`: per list of the scales that --grid may
    replace, (low, high) for numbers, the choices for strings (default:
    numbers from 0 up, strings as the scales have them). Every argument is
    checked before anything runs: a usage error exits 2 naming it.
    Returns (args, scale dict)."""
    p = argparse.ArgumentParser(
        prog=f"scripts/figures/{figure}.py", description=description,
        formatter_class=HelpFormatter)
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
                   help="repetitions of every configuration, 1 to 100 "
                        "(min/median/max are plotted); default: the "
                        "scale's")
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
    given = {a.split("=", 1)[0] for a in sys.argv[1:]}
    if args.replot:
        # A redraw runs nothing: what shapes runs has no effect.
        for flag in ("--scale", "--runs", "--grid", "--extra", "--build",
                     "--out"):
            if flag in given:
                p.error(f"{flag} has no effect with --replot, which redraws "
                        f"saved runs: drop it")
        if not os.path.isfile(os.path.join(args.replot, "runs.jsonl")):
            p.error(f"--replot={args.replot}: no runs.jsonl there")
    scale = dict(scales[args.scale])
    if args.runs is not None:
        if not 1 <= args.runs <= 100:
            p.error(f"--runs={args.runs}: use 1 to 100")
        scale["runs"] = args.runs
    bounds = bounds or {}
    for item in args.grid:
        key, _, values = item.partition("=")
        if not isinstance(scale.get(key), list):
            p.error("--grid=%s: expected KEY=V1,V2 with KEY one of: %s"
                    % (item, ", ".join(grids) or "(this figure has none)"))
        default_bound = ((0, float("inf"))
                         if not isinstance(scale[key][0], str) else
                         sorted({v for s in scales.values()
                                 for v in s.get(key, [])}))
        scale[key] = _grid_values(p, item, key, values, scale[key],
                                  bounds.get(key, default_bound))
    for flag in shlex.split(args.extra):
        if not flag.startswith("--"):
            p.error(f"--extra={args.extra!r}: {flag!r} is not a flag")
        if flag.split("=", 1)[0] in ("--json", "--csv", "--progress_json"):
            p.error(f"--extra: {flag} is the script's to set")
    if not args.replot:
        exe = os.path.join(args.build, binary)
        if not os.access(exe, os.X_OK):
            p.error(f"--build={args.build}: {exe} is not built "
                    f"(scripts/build.sh)")
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            p.error(f"--out={args.out}: {e.strerror}")
        if not os.access(args.out, os.W_OK):
            p.error(f"--out={args.out}: not writable")
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


def read_runs(path):
    """The records of a runs.jsonl (for --replot)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_all(args, figure, binary, runs, repetitions):
    """Runs `binary` once per entry of `runs` (a list of (labels, flags)
    pairs) and repetition; returns the records (JSON objects with the
    labels merged in) and writes them to runs.jsonl as they come."""
    out_dir = results_dir(args, figure)
    path = os.path.join(out_dir, "runs.jsonl")
    if args.replot:
        return out_dir, read_runs(path)
    records = []
    exe = os.path.join(args.build, binary)
    with open(path, "w") as f:
        for i, (labels, flags) in enumerate(runs):
            for rep in range(repetitions):
                cmd = [exe] + flags + ["--json"] + shlex.split(args.extra)
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
    write_readme(out_dir, figure)
    return out_dir, records


def write_readme(out_dir, figure):
    """README.txt beside a figure's runs: commit, date, machine, command."""
    with open(os.path.join(out_dir, "README.txt"), "w") as f:
        f.write(f"figure {figure}, commit {commit()}, "
                f"{datetime.datetime.now().isoformat(timespec='seconds')}\n"
                f"machine: {os.cpu_count()} cores, {machine()}\n"
                f"command: {' '.join(sys.argv)}\n")


def run_json(figure, cmd):
    """Runs `cmd` (printing it) and returns its last JSON line; exits
    naming `figure` and the command if it fails or prints none."""
    print(" ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stderr[-3000:])
        sys.exit(f"{figure}: exit {p.returncode}: " + " ".join(cmd))
    return json.loads(lines[-1])


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


def log_axis(ax, values, axis="y"):
    """A log scale over `values` whose ticks read as plain numbers (1, 2,
    5 times a power of ten: "20000", not "2x10^4"), with at least two of
    them in view: the range spans a factor of 4 or more around the data."""
    from matplotlib import ticker
    values = [v for v in values if v > 0]
    set_scale = ax.set_yscale if axis == "y" else ax.set_xscale
    set_lim = ax.set_ylim if axis == "y" else ax.set_xlim
    target = ax.yaxis if axis == "y" else ax.xaxis
    set_scale("log")
    if values:
        low, high = min(values), max(values)
        middle = math.sqrt(low * high)
        span = max(high / low, 4.0)
        set_lim(middle / math.sqrt(span) / 1.25,
                middle * math.sqrt(span) * 1.25)
    target.set_major_locator(ticker.LogLocator(base=10, subs=(1, 2, 5)))
    target.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(ticker.NullFormatter())


def figure_legend(fig, axes, columns=4):
    """One legend for every panel, below them: the labels of all `axes`,
    each once. (A legend inside a panel covers data, and one on the
    first panel only leaves the others unexplained.)"""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    fig.legend(list(seen.values()), list(seen), loc="lower center",
               ncol=min(columns, len(seen)), fontsize=8, frameon=False)


def save(fig, out_dir, figure):
    path = os.path.join(out_dir, f"{figure}.png")
    layout(fig)
    fig.savefig(path, dpi=110)
    print(path)
    return path


def layout(fig):
    """tight_layout, leaving room at the bottom for a figure legend."""
    bottom = 0
    if fig.legends:
        fig.canvas.draw()
        box = fig.legends[0].get_window_extent()
        bottom = (box.height + 8) / fig.bbox.height
    fig.tight_layout(rect=(0, bottom, 1, 1))
