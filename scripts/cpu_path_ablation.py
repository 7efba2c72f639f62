#!/usr/bin/python3
"""The CPU path's ablation: TPC-C 50/50 New-Order/Payment, one compute node,
--rtt_ns=0, at 1 thread/1 warehouse and 2 threads/2 warehouses, with the
CPU-path switches all on, identity frames off, byte compares for short
keys, each index change finding its leaf, every insert under its table's
mutex, tuple reads latched, and everything latched; the variants alternate
within each round.

CPU per committed transaction = process user+sys CPU of a 10 s run minus a
2 s run, over the difference in commits (the load and warm-up cancel out).

  scripts/cpu_path_ablation.py [--rounds=N] [--tpcc=build/tpcc/tpcc]

Prints one JSON line per run, then the medians per configuration.
"""
import argparse
import json
import statistics
import subprocess

VARIANTS = [('all_on', []),
            ('no_identity_frames', ['--noidentity_frames']),
            ('no_word_search', ['--noindex_word_search']),
            ('no_leaf_walk', ['--noindex_leaf_walk']),
            ('inserts_locked', ['--nounlocked_inserts']),
            ('tuples_latched', ['--nooptimistic_tuple_reads']),
            ('all_latched', ['--nooptimistic_tuple_reads',
                             '--nooptimistic_reads'])]
CONFIGS = [('1t1w', ['--threads=1', '--warehouses=1']),
           ('2t2w', ['--threads=2', '--warehouses=2'])]
COMMON = ['--mix=50,50,0,0,0', '--rtt_ns=0', '--compute_nodes=1', '--json']


def run(tpcc, args, seconds):
    p = subprocess.run(['/usr/bin/time', '-f', '%U %S %P', tpcc] + COMMON +
                       args + ['--duration_s=%d' % seconds],
                       capture_output=True, text=True, check=True)
    user, system, percent = p.stderr.strip().splitlines()[-1].split()
    return json.loads(p.stdout), float(user) + float(system), percent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--tpcc', default='build/tpcc/tpcc')
    a = parser.parse_args()
    results = {}
    for r in range(a.rounds):
        for config, config_args in CONFIGS:
            k = r % len(VARIANTS)
            order = VARIANTS[k:] + VARIANTS[:k]
            for variant, variant_args in order:
                short, short_cpu, _ = run(a.tpcc, config_args + variant_args, 2)
                long, long_cpu, percent = run(a.tpcc,
                                              config_args + variant_args, 10)
                cpu_us = ((long_cpu - short_cpu) /
                          (long['commits'] - short['commits']) * 1e6)
                line = dict(round=r, config=config, variant=variant,
                            txn_s=long['txn_per_sec'], cpu_us=round(cpu_us, 2),
                            cpu_percent=percent,
                            latches=long['latches_per_txn'],
                            unlatched=long['unlatched_reads_per_txn'],
                            abort_rate=long['abort_rate'],
                            errors=long['errors'],
                            consistent=long['consistency_ok'])
                print(json.dumps(line), flush=True)
                results.setdefault((config, variant), []).append(line)
    for (config, variant), lines in sorted(results.items()):
        print('%s %-15s txn/s %.0f  CPU us/txn %.2f  latches/txn %.1f  '
              'unlatched/txn %.1f  (medians; txn/s by round: %s)' % (
                  config, variant,
                  statistics.median(x['txn_s'] for x in lines),
                  statistics.median(x['cpu_us'] for x in lines),
                  statistics.median(x['latches'] for x in lines),
                  statistics.median(x['unlatched'] for x in lines),
                  ', '.join('%.1fk' % (x['txn_s'] / 1e3) for x in lines)))


if __name__ == '__main__':
    main()
