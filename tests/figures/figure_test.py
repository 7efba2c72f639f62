#!/usr/bin/python3
"""Runs one figure script of scripts/figures/ at --scale=tiny against a
build and checks what it leaves: every line of runs.jsonl is a JSON object
from a run, the PNG the script names exists and is a PNG, and the figure
the script's draw() makes of those runs reads well, checked on
matplotlib's objects (not pixels):

  - every panel with data has an x label, a y label and a title (its own
    or the figure's);
  - a linear y axis starts at 0 (every figure plots counts and rates);
  - a log axis shows at least two tick labels, written as plain numbers
    (20000, not 2x10^4);
  - an axis whose data are whole numbers (compute nodes) has whole ticks;
  - a legend explains the series: the figure's, or one in every panel;
    no legend covers a bar or a data point;
  - each --expect_text is in some text of the figure.

  figure_test.py SCRIPT BUILD_DIR [--skip_unless=BINARY:FLAG]
                 [--arg=FLAG ...] [--expect=FIELD=VALUE ...]
                 [--expect_text=TEXT ...]

--skip_unless: exit 77 (ctest's SKIP_RETURN_CODE) with a message when
BUILD_DIR/BINARY --help does not list --FLAG, for a figure whose binary
support has not landed yet. --arg: a flag passed on to the script;
--expect: every run's record must hold FIELD with that value (a grid
override reached the runs). Standard library only; run it with
/usr/bin/python3, whose matplotlib the script needs.
"""

import argparse
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fail(message):
    sys.exit(f"FAIL: {message}")


def binary_lacks_flag(build, spec):
    binary, flag = spec.split(":", 1)
    p = subprocess.run([os.path.join(build, binary), "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=30)
    return not re.search(rf"^\s*-?-{re.escape(flag)}[= ]", p.stdout,
                         re.MULTILINE)


def figure_texts(fig):
    """Every text the figure shows: titles, labels, legends, notes."""
    texts = [t.get_text() for t in fig.texts]
    if fig._suptitle is not None:
        texts.append(fig._suptitle.get_text())
    for legend in fig.legends:
        texts += [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.texts]
        texts += [t.get_text() for t in ax.get_xticklabels()]
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return texts


def visible_ticks(axis, view):
    low, high = sorted(view)
    return [(tick, label.get_text())
            for tick, label in zip(axis.get_majorticklocs(),
                                   axis.get_majorticklabels())
            if low <= tick <= high]


def check_axes(ax, has_suptitle):
    """The problems of one panel with data."""
    name = ax.get_title() or "a panel"
    problems = []
    if not ax.get_xlabel():
        problems.append(f"{name}: no x label")
    if not ax.get_ylabel():
        problems.append(f"{name}: no y label")
    if not ax.get_title() and not has_suptitle:
        problems.append(f"{name}: no title")
    for axis, view, scale, which in (
            (ax.yaxis, ax.get_ylim(), ax.get_yscale(), "y"),
            (ax.xaxis, ax.get_xlim(), ax.get_xscale(), "x")):
        ticks = visible_ticks(axis, view)
        if scale == "log":
            labels = [text for _, text in ticks if text]
            if len(labels) < 2:
                problems.append(f"{name}: log {which} axis shows "
                                f"{len(labels)} tick label(s) {labels}")
            if any("^" in text or "times" in text for text in labels):
                problems.append(f"{name}: {which} tick labels in exponent "
                                f"form {labels}")
        elif which == "y" and min(view) != 0:
            problems.append(f"{name}: y axis starts at {min(view):g}, not 0")
    xs = [x for line in ax.lines for x in line.get_xdata()]
    if xs and ax.get_xscale() == "linear" and all(
            float(x).is_integer() for x in xs):
        fractional = [tick for tick, _ in visible_ticks(ax.xaxis,
                                                        ax.get_xlim())
                      if not float(tick).is_integer()]
        if fractional:
            problems.append(f"{name}: whole-number x data, fractional x "
                            f"ticks {fractional}")
    return problems


def check_legends(fig, data_axes):
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox
    problems = []
    legends = list(fig.legends)
    if not legends:
        for ax in data_axes:
            series = [label for label in ax.get_legend_handles_labels()[1]
                      if not label.startswith("_")]
            if len(series) > 1 and ax.get_legend() is None:
                problems.append(f"{ax.get_title() or 'a panel'}: "
                                f"{len(series)} series, no legend, and the "
                                f"figure has none")
        legends = [ax.get_legend() for ax in data_axes if ax.get_legend()]
    renderer = fig.canvas.get_renderer()
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in data_axes:
            for patch in ax.patches:
                # The part of the bar in view (a log axis's bars start
                # below it).
                shown = (Bbox.intersection(patch.get_window_extent(renderer),
                                           ax.bbox)
                         if isinstance(patch, Rectangle) else None)
                if (shown is not None and shown.width > 0 and
                        shown.height > 0 and box.overlaps(shown)):
                    problems.append(f"{ax.get_title()}: the legend covers a "
                                    f"bar")
                    break
            for line in ax.lines:
                if len(line.get_xydata()) == 0:
                    continue
                points = [p for p in
                          ax.transData.transform(line.get_xydata())
                          if ax.bbox.contains(*p)]
                if any(box.contains(x, y) for x, y in points):
                    problems.append(f"{ax.get_title()}: the legend covers a "
                                    f"point of {line.get_label()!r}")
                    break
    return problems


def check_figure(script, records, expect_text):
    """The figure the script's draw() makes of `records`, laid out as the
    script saves it; returns its problems."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    spec = importlib.util.spec_from_file_location("figure", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fig = module.draw(records)
    import figlib
    figlib.layout(fig)
    fig.canvas.draw()
    has_suptitle = fig._suptitle is not None and fig._suptitle.get_text()
    data_axes = [ax for ax in fig.axes if ax.has_data()]
    problems = []
    if not data_axes:
        problems.append("no panel shows data")
    for ax in data_axes:
        problems += check_axes(ax, has_suptitle)
    problems += check_legends(fig, data_axes)
    texts = figure_texts(fig)
    for text in expect_text:
        if not any(text in t for t in texts):
            problems.append(f"no text of the figure says {text!r}")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("build")
    parser.add_argument("--skip_unless", default=None)
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--expect_text", action="append", default=[])
    args = parser.parse_args()
    figure = os.path.splitext(os.path.basename(args.script))[0]

    if args.skip_unless and binary_lacks_flag(args.build, args.skip_unless):
        binary, flag = args.skip_unless.split(":", 1)
        print(f"SKIP: {figure}: {binary} --help does not list --{flag}, "
              f"which this figure needs (not built yet)")
        sys.exit(SKIP)

    out = tempfile.mkdtemp(prefix=f"strand-figure-test-{figure}-")
    try:
        cmd = [sys.executable, args.script, "--scale=tiny",
               f"--build={args.build}", f"--out={out}"] + args.arg
        print(" ".join(cmd), flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=300)
        if p.returncode != 0:
            sys.stderr.write(p.stderr[-4000:])
            fail(f"{figure}.py exited {p.returncode}")

        runs_files = glob.glob(os.path.join(out, figure, "*", "runs.jsonl"))
        if len(runs_files) != 1:
            fail(f"expected one {figure}/<run>/runs.jsonl under {out}, "
                 f"found {runs_files}")
        with open(runs_files[0]) as f:
            lines = [l for l in f if l.strip()]
        if not lines:
            fail(f"{runs_files[0]} holds no run")
        for n, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"{runs_files[0]} line {n} is not JSON: {e}")
            if not isinstance(record, dict) or "command" not in record:
                fail(f"{runs_files[0]} line {n} is not a run's record")
            for expected in args.expect:
                field, _, value = expected.partition("=")
                if str(record.get(field)) != value:
                    fail(f"{runs_files[0]} line {n}: {field} is "
                         f"{record.get(field)!r}, expected {value}")

        png = os.path.join(os.path.dirname(runs_files[0]), f"{figure}.png")
        printed = p.stdout.strip().splitlines()
        if not printed or os.path.abspath(printed[-1]) != png:
            fail(f"the script did not print the PNG's path {png} last "
                 f"(stdout: {p.stdout[-500:]!r})")
        with open(png, "rb") as f:
            if f.read(len(PNG_MAGIC)) != PNG_MAGIC:
                fail(f"{png} is not a PNG")
        problems = check_figure(args.script,
                                [json.loads(line) for line in lines],
                                args.expect_text)
        if problems:
            fail(f"{figure}'s figure: " + "; ".join(problems))
        print(f"ok: {figure}: {len(lines)} runs parsed, {png} drawn, its "
              f"axes, labels and legend read well")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
