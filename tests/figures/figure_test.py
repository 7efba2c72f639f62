#!/usr/bin/python3
"""Runs one figure script of scripts/figures/ at --scale=tiny against a
build and checks what it leaves: every line of runs.jsonl is a JSON object
from a run, and the PNG the script names exists and is a PNG.

  figure_test.py SCRIPT BUILD_DIR [--skip_unless=BINARY:FLAG]
                 [--arg=FLAG ...] [--expect=FIELD=VALUE ...]

--skip_unless: exit 77 (ctest's SKIP_RETURN_CODE) with a message when
BUILD_DIR/BINARY --help does not list --FLAG, for a figure whose binary
support has not landed yet. --arg: a flag passed on to the script;
--expect: every run's record must hold FIELD with that value (a grid
override reached the runs). Standard library only; run it with
/usr/bin/python3, whose matplotlib the script needs.
"""

import argparse
import glob
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("build")
    parser.add_argument("--skip_unless", default=None)
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[])
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
        print(f"ok: {figure}: {len(lines)} runs parsed, {png} drawn")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
