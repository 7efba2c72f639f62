#!/usr/bin/python3
"""The machine-readable output of every strand binary given
(base/run_output.h), each run briefly:

  --json   stdout is JSON objects only, one per line, no key twice; every
           record holds program, version and commit (those --version
           prints), when (timestamp, UTC ISO 8601) and where (host) the
           program ran, the whole configuration (every flag of the program's
           own group and of the fabric group in --help, under its name or
           the alias below), p50/p95/p99/p99_9 of a latency, and where the
           binary runs transactions or cached operations, aborts_by_reason
           and invalidations and evictions per txn or op; tpcc's, each
           consistency condition checked and violated
  --csv    a header line and one line per run with as many fields, the
           header naming the JSON's fields (nested ones flattened); the
           configuration's values are the JSON's, and for strand_recover
           (deterministic) every value but its timings (fields ending _s)
  --progress_json=FILE  (tpcc, ycsb_bench) one JSON object per line, at
           least N for a run of N+1 seconds, elapsed_s counting up

Usage: machine_output_test.py path/to/binary...  (the names say which)
Standard library only.
"""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILED = []


def fail(message):
    print(f"FAIL: {message}")
    FAILED.append(message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


# A tiny run of each binary: seconds, and loopback memory kept small.
SMALL_POOL = ["--pool_mb=64", "--populate_memory=touch"]
TPCC_TINY = ["--warehouses=1", "--items=1000", "--customers=30",
             "--warmup_s=0", "--populate_memory=touch"]
RUNS = {
    "tpcc": TPCC_TINY + ["--duration_s=1"],
    "ycsb_bench": SMALL_POOL + ["--records=5000", "--duration_s=0.5",
                                "--workloads=read_mostly,update_heavy"],
    "coherence_bench": SMALL_POOL + ["--gcls=500", "--duration_s=0.3",
                                     "--warmup_s=0.1", "--compute_nodes=2"],
    "wal_bench": ["--threads=1,2", "--duration_s=0.2", "--fsync_samples=5",
                  "--io_modes=buffered"],
    "fabric_bench": SMALL_POOL + ["--threads=1", "--ops=read,message",
                                  "--duration_s=0.1"],
    "bank": SMALL_POOL + ["--duration_s=0.5", "--accounts=100"],
    # strand_recover: flags added once tpcc made an image and a log.
    "strand_recover": [],
}

# Flags whose record field has another name (or is per run: one of a list).
ALIASES = {
    "tpcc": {"customers": "customers_per_district"},
    "ycsb_bench": {"workloads": "workload"},
    "wal_bench": {"io_modes": "io_mode", "wal_segment_mb": "segment_mb",
                  "wal_zero_fill": "zero_fill",
                  "wal_max_write_kb": "max_write_kb"},
    "fabric_bench": {"ops": "op", "batch_sizes": "batch"},
}

# Flags that turn a binary into another program, whose record is not a
# run's (tpcc --check_image checks a pool image instead of running).
OTHER_MODE = {"tpcc": {"check_image"}}

# Which latency each binary reports: the keys' prefix and unit.
LATENCY = {
    "tpcc": "commit_{}_us", "bank": "commit_{}_us", "ycsb_bench": "{}_us",
    "coherence_bench": "{}_ns", "wal_bench": "{}_us", "fabric_bench": "{}_ns",
}
# Binaries that run transactions (aborts by reason) or cached operations.
ABORTS = {"tpcc", "bank"}
PER_UNIT = {"tpcc": "txn", "bank": "txn", "ycsb_bench": "op",
            "coherence_bench": "op"}
# Binaries with a per-second series, and the count each line carries.
SERIES = {"tpcc": "commits", "ycsb_bench": "ops"}


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dups = {k for k in keys if keys.count(k) > 1}
    if dups:
        raise ValueError(f"keys twice: {sorted(dups)}")
    return dict(pairs)


def run(binary, args, timeout=240):
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def records_of(name, stdout):
    """Every stdout line as a JSON object (a failure per line that is not)."""
    records = []
    for n, line in enumerate(stdout.splitlines(), 1):
        try:
            record = json.loads(line, object_pairs_hook=no_duplicates)
        except ValueError as e:
            fail(f"{name} --json: stdout line {n} is not a JSON object "
                 f"({e}): {line[:200]!r}")
            continue
        check(isinstance(record, dict),
              f"{name} --json: line {n} is not an object")
        records.append(record)
    return records


def flatten(record, prefix=""):
    """The CSV columns of a record: scalars, nested objects as a.b."""
    out = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            out[f"{prefix}{key}"] = value
    return out


def config_flags(help_text):
    """The flags of the program's own group and of the fabric group."""
    flags, group = [], None
    for line in help_text.splitlines():
        if re.match(r"^[A-Z][^:]*:$", line):
            group = line
            continue
        m = re.match(r"^  --([a-z_0-9]+)=", line)
        if m and group and (group.startswith("Flags of ") or
                            group.startswith("Fabric and cost-model flags")):
            flags.append(m.group(1))
    return flags


def check_json(name, binary, records):
    if not check(records, f"{name} --json printed no record"):
        return
    version = subprocess.run([binary, "--version"], stdout=subprocess.PIPE,
                             text=True).stdout.strip()
    keys = set()
    for r in records:
        keys |= set(r)
        for field in ("program", "version", "commit", "host"):
            check(field in r, f"{name} --json: no '{field}'")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                           str(r.get("timestamp"))),
              f"{name} --json: timestamp {r.get('timestamp')!r} is not "
              f"UTC ISO 8601")
        check(r.get("program") == name,
              f"{name} --json: program is {r.get('program')!r}")
        check(f"{r.get('version')}, commit {r.get('commit')}" in version,
              f"{name} --json: version/commit {r.get('version')} "
              f"{r.get('commit')} are not --version's '{version}'")
        pattern = LATENCY.get(name)
        if pattern:
            for p in ("p50", "p95", "p99", "p99_9"):
                key = pattern.format(p)
                check(isinstance(r.get(key), (int, float)),
                      f"{name} --json: no latency '{key}'")
            low, high = r.get(pattern.format("p50")), r.get(
                pattern.format("p99_9"))
            if isinstance(low, (int, float)) and isinstance(high,
                                                            (int, float)):
                check(low <= high, f"{name} --json: p50 above p99.9")
        if name in ABORTS:
            reasons = r.get("aborts_by_reason")
            check(isinstance(reasons, dict) and
                  set(reasons) == {"conflict", "validation", "user", "error"}
                  and all(isinstance(v, int) for v in reasons.values()),
                  f"{name} --json: aborts_by_reason is {reasons!r}")
        if name == "tpcc":
            # What the run added to the pool: at least nothing (it only
            # inserts more than it frees), and its rate per transaction.
            before, after = r.get("pool_bytes_used"), r.get(
                "pool_bytes_after_run")
            check(isinstance(after, int) and isinstance(before, int) and
                  after >= before > 0,
                  f"{name} --json: pool_bytes_after_run {after!r} is not >= "
                  f"pool_bytes_used {before!r}")
            check(isinstance(r.get("pool_growth_mb_per_million_txns"),
                             (int, float)),
                  f"{name} --json: no pool_growth_mb_per_million_txns")
            conditions = {f"condition_{i}" for i in range(1, 13)}
            for key in ("consistency_checked", "consistency_violations"):
                value = r.get(key)
                check(isinstance(value, dict) and set(value) == conditions
                      and all(isinstance(v, int) for v in value.values()),
                      f"{name} --json: {key} is {value!r}, want a count "
                      f"per condition 1-12")
            check(r.get("consistency_ok") ==
                  (sum(r.get("consistency_violations", {}).values()) == 0),
                  f"{name} --json: consistency_ok disagrees with the "
                  f"violations")
        unit = PER_UNIT.get(name)
        if unit:
            for what in ("invalidations", "evictions"):
                key = f"{what}_per_{unit}"
                check(isinstance(r.get(key), (int, float)),
                      f"{name} --json: no '{key}'")
    help_text = subprocess.run([binary, "--help"], stdout=subprocess.PIPE,
                               text=True).stdout
    aliases = ALIASES.get(name, {})
    missing = [f for f in config_flags(help_text)
               if aliases.get(f, f) not in keys and
               f not in OTHER_MODE.get(name, set())]
    check(not missing,
          f"{name} --json: the configuration lacks flags {missing}")
    print(f"ok: {name} --json: {len(records)} record(s), {len(keys)} fields")


def csv_rows(name, stdout):
    """The lines of --csv; each row has its header's number of fields (a
    line starting "program," is a header: the first, or where the runs'
    fields change)."""
    rows = list(csv.reader(io.StringIO(stdout)))
    check(len(rows) >= 2, f"{name} --csv: {len(rows)} lines, want a header "
          f"and a row")
    header = rows[0] if rows else []
    for n, row in enumerate(rows[1:], 2):
        if row and row[0] == "program":
            header = row
            continue
        check(len(row) == len(header),
              f"{name} --csv: line {n} has {len(row)} fields, its header "
              f"{len(header)}")
    return rows


def same_value(text, value):
    """Whether a CSV field holds the JSON value it was written from."""
    if isinstance(value, str):
        return text == value
    if value is None:
        return text == ""
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def check_csv(name, binary, args, records, exact=False):
    """--csv against a --json run: the same columns; the configuration's
    values (every value if `exact`) the same."""
    rc, out, err = run(binary, args + ["--csv"])
    if not check(rc == 0, f"{name} --csv exited {rc}: {err[-500:]}"):
        return
    rows = csv_rows(name, out)
    if len(rows) < 2 or not records:
        return
    if name == "wal_bench":
        # fsync and group-commit runs: a header per kind (run_output.h).
        check(sum(1 for r in rows if r and r[0] == "program") == 2,
              f"{name} --csv: want one header per kind of run")
        print(f"ok: {name} --csv: {len(rows)} lines")
        return
    header = rows[0]
    flat = flatten(records[0])
    check(header == list(flat),
          f"{name} --csv: the header is not the JSON's fields: "
          f"{sorted(set(header) ^ set(flat))}")
    check(len(rows) - 1 == len(records),
          f"{name} --csv: {len(rows) - 1} rows, --json {len(records)}")
    help_text = subprocess.run([binary, "--help"], stdout=subprocess.PIPE,
                               text=True).stdout
    aliases = ALIASES.get(name, {})
    config = {aliases.get(f, f) for f in config_flags(help_text)}
    config |= {"program", "version", "commit"}
    # The measured window's length, not the flag's value.
    config.discard("duration_s")
    for key, text in zip(header, rows[1]):
        if key == "timestamp":
            continue  # when each of the two runs started
        if exact and key.endswith("_s") and key not in config:
            continue  # how long a step took (s, or a rate per s)
        if key in flat and (exact or key in config):
            check(same_value(text, flat[key]),
                  f"{name} --csv: {key} is {text!r}, --json {flat[key]!r}")
    print(f"ok: {name} --csv: {len(header)} fields, {len(rows) - 1} row(s)")


def check_series(name, binary, args, work):
    path = os.path.join(work, f"{name}-series.jsonl")
    seconds = 3
    run_args = [a for a in args if not a.startswith(("--duration_s",
                                                     "--workloads"))]
    run_args += [f"--duration_s={seconds}", f"--progress_json={path}"]
    if name == "ycsb_bench":
        run_args.append("--workloads=read_mostly")
    rc, out, err = run(binary, run_args + ["--json"])
    if not check(rc == 0, f"{name} --progress_json exited {rc}: "
                 f"{err[-500:]}"):
        return
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    check(len(lines) >= seconds - 1,
          f"{name} --progress_json: {len(lines)} lines for a {seconds} s "
          f"run, want at least {seconds - 1}")
    count_key = SERIES[name]
    last_elapsed, last_count = 0, 0
    for n, line in enumerate(lines, 1):
        try:
            d = json.loads(line, object_pairs_hook=no_duplicates)
        except ValueError as e:
            fail(f"{name} --progress_json: line {n} is not JSON ({e})")
            continue
        rate_key = "txn_per_sec" if name == "tpcc" else "ops_per_sec"
        for key in ("elapsed_s", count_key, rate_key):
            check(key in d, f"{name} --progress_json: line {n} lacks {key}")
        if name == "tpcc":
            check("aborts" in d, f"{name} --progress_json: no aborts")
        check(d.get("elapsed_s", 0) > last_elapsed,
              f"{name} --progress_json: elapsed_s does not count up")
        check(d.get(count_key, 0) >= last_count,
              f"{name} --progress_json: {count_key} went down")
        last_elapsed = d.get("elapsed_s", 0)
        last_count = d.get(count_key, 0)
    print(f"ok: {name} --progress_json: {len(lines)} lines")


def main():
    binaries = {os.path.basename(b): b for b in sys.argv[1:]}
    work = tempfile.mkdtemp(prefix="strand-machine-output-")
    try:
        if "tpcc" in binaries and "strand_recover" in binaries:
            wal = os.path.join(work, "wal")
            rc, _, err = run(binaries["tpcc"],
                             RUNS["tpcc"] + ["--wal=on", f"--wal_dir={wal}"])
            check(rc == 0, f"tpcc --wal=on exited {rc}: {err[-500:]}")
            RUNS["strand_recover"] = [f"--wal_dir={wal}"]
        for name, binary in binaries.items():
            if name not in RUNS or (name == "strand_recover" and
                                    not RUNS[name]):
                continue
            args = RUNS[name]
            rc, out, err = run(binary, args + ["--json"])
            if not check(rc == 0, f"{name} --json exited {rc}: "
                         f"{err[-500:]}"):
                continue
            records = records_of(name, out)
            check_json(name, binary, records)
            check_csv(name, binary, args, records,
                      exact=name == "strand_recover")
            if name in SERIES:
                check_series(name, binary, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILED:
        sys.exit(f"{len(FAILED)} failure(s)")


if __name__ == "__main__":
    main()
