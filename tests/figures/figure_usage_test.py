#!/usr/bin/python3
"""The figure scripts refuse misuse before running anything: each bad
argument exits 2 with a message naming it. Their --help keeps the
description's example commands one per line and shows no
"(default: None)".

  figure_usage_test.py FIGURES_DIR BUILD_DIR

Standard library only; run with /usr/bin/python3.
"""

import glob
import os
import subprocess
import sys
import tempfile


def main():
    figures, build = sys.argv[1], sys.argv[2]
    failed = []
    with tempfile.TemporaryDirectory() as work:
        saved = os.path.join(work, "saved")
        os.mkdir(saved)
        open(os.path.join(saved, "runs.jsonl"), "w").close()
        bad = [
            ("scalability", ["--runs=0"], "--runs"),
            ("scalability", ["--runs=101"], "--runs"),
            ("scalability", ["--scale=huge"], "--scale"),
            ("scalability", ["--grid=nodes="], "--grid"),
            ("scalability", ["--grid=nodes=1,,2"], "--grid"),
            ("scalability", ["--grid=nodes=0"], "--grid"),
            ("scalability", ["--grid=nodes=100"], "--grid"),
            ("scalability", ["--grid=threads=x"], "--grid"),
            ("scalability", ["--grid=bogus=1"], "--grid"),
            ("coherence", ["--grid=read=nan"], "--grid"),
            ("coherence", ["--grid=read=1.5"], "--grid"),
            ("coherence", ["--grid=zipf=1"], "--grid"),
            ("tpcc_protocols", ["--grid=ccs=mvcc"], "--grid"),
            ("tpcc_protocols", ["--grid=mixes=new_orders"], "--grid"),
            ("wal_group_commit", ["--grid=windows=-5"], "--grid"),
            ("shared_vs_partitioned", ["--grid=pcts=101"], "--grid"),
            ("scalability", [f"--build={work}/no-build"], "--build"),
            ("scalability", [f"--replot={work}/nothing"], "--replot"),
            ("scalability", [f"--replot={saved}", "--runs=2"], "--runs"),
            ("scalability", [f"--replot={saved}", "--grid=nodes=1"],
             "--grid"),
            ("scalability", ["--extra=--json"], "--extra"),
            ("scalability", ["--extra=rtt_ns=5"], "--extra"),
            ("scalability", ["--out=/proc/strand-figures"], "--out"),
        ]
        for figure, args, needle in bad:
            script = os.path.join(figures, f"{figure}.py")
            if not any(a.startswith("--build") for a in args):
                args = [f"--build={build}"] + args
            if not any(a.startswith(("--out", "--replot")) for a in args):
                args = [f"--out={work}/out"] + args
            if any(a.startswith("--replot") for a in args):
                args = [a for a in args if not a.startswith(("--build",
                                                             "--out"))]
            p = subprocess.run([sys.executable, script] + args,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            last = p.stderr.strip().splitlines()[-1:] or [""]
            if p.returncode != 2 or needle not in last[0]:
                failed.append(f"{figure}.py {' '.join(args)}: exit "
                              f"{p.returncode} (want 2, {needle!r} in the "
                              f"message): {p.stderr.strip()[-300:]!r}")
            else:
                print(f"ok: {figure}.py {' '.join(args)}: {last[0]}")
        if os.path.exists(os.path.join(work, "out")) and os.listdir(
                os.path.join(work, "out")):
            failed.append("a refused run left results behind")
    for script in sorted(glob.glob(os.path.join(figures, "*.py"))):
        name = os.path.basename(script)
        if name == "figlib.py":
            continue
        text = subprocess.run([sys.executable, script, "--help"],
                              stdout=subprocess.PIPE, text=True).stdout
        if "(default: None)" in text:
            failed.append(f"{name} --help shows (default: None)")
        examples = [line for line in text.splitlines()
                    if "scripts/figures/" + name in line and
                    not line.startswith("usage:")]
        if len(examples) < 2:
            failed.append(f"{name} --help: the examples are not one per "
                          f"line ({len(examples)} found)")
        else:
            print(f"ok: {name} --help: {len(examples)} examples")
    for f in failed:
        print(f"FAIL: {f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
