#!/usr/bin/python3
"""Instructions per TPC-C transaction, counted by callgrind: deterministic,
whatever else the machine is doing (the yardstick for CPU-path work).

Runs tpcc under valgrind --tool=callgrind twice, with --txns=FIRST and
--txns=LAST, counting only inside Session::CallAsyncErased (the driver's
calls: the load's procedures go through Session::Call and are not counted),
and prints, per transaction type, the instructions per call over the calls
the longer run made beyond the shorter one (so start-up and the first
transactions cancel out), and their mean over the mix's weights.

  scripts/tpcc_instructions.py [--tpcc=build/tpcc/tpcc] [--first=1000]
      [--last=11000] [--out=DIR] [-- extra tpcc flags]

Defaults: 1 thread, 1 warehouse, 1 compute node, --rtt_ns=0, the 50/50
New-Order/Payment mix of DBx1000's benchmark. Each run loads a warehouse
under valgrind (minutes). Extra flags go to both runs (an ablation switch,
another --mix).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BASE = ['--warehouses=1', '--threads=1', '--compute_nodes=1', '--rtt_ns=0',
        '--warmup_s=0', '--populate_memory=touch', '--mix=50,50,0,0,0']
CALL = re.compile(r'\s*([\d,]+) \([^)]*\)\s+>\s+.*Session::CallAsync<'
                  r'strand::tpcc::(\w+)Output.*\(([\d,]+)x\)')


def run(tpcc, txns, extra, out_dir):
    out = os.path.join(out_dir, 'callgrind.%d.out' % txns)
    subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out,
                    '--toggle-collect=strand::engine::Session::CallAsyncErased*',
                    tpcc] + BASE + ['--txns=%d' % txns] + extra,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    tree = subprocess.run(['callgrind_annotate', '--tree=calling',
                           '--inclusive=yes', '--auto=no', '--threshold=100',
                           out], capture_output=True, text=True,
                          check=True).stdout
    calls = {}
    for line in tree.splitlines():
        m = CALL.match(line)
        if m:
            c = calls.setdefault(m.group(2), [0, 0])
            c[0] += int(m.group(1).replace(',', ''))
            c[1] += int(m.group(3).replace(',', ''))
    return calls


def main():
    argv = sys.argv[1:]
    extra = []
    if '--' in argv:
        extra = argv[argv.index('--') + 1:]
        argv = argv[:argv.index('--')]
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--tpcc', default='build/tpcc/tpcc')
    parser.add_argument('--first', type=int, default=1000)
    parser.add_argument('--last', type=int, default=11000)
    parser.add_argument('--out', default=None,
                        help='keep the callgrind files here')
    a = parser.parse_args(argv)
    out_dir = a.out or tempfile.mkdtemp(prefix='tpcc_instructions.')
    os.makedirs(out_dir, exist_ok=True)
    short = run(a.tpcc, a.first, extra, out_dir)
    long = run(a.tpcc, a.last, extra, out_dir)
    per_call = {}
    for kind, (cost, calls) in sorted(long.items()):
        c0, n0 = short.get(kind, (0, 0))
        if calls > n0:
            per_call[kind] = (cost - c0) / (calls - n0)
            print('%-12s %9.0f instructions per call over %d calls' %
                  (kind, per_call[kind], calls - n0))
    mix = [x for x in extra if x.startswith('--mix=')]
    if not mix and 'NewOrder' in per_call and 'Payment' in per_call:
        print('50/50 mix    %9.0f instructions per transaction' %
              ((per_call['NewOrder'] + per_call['Payment']) / 2))
    print('callgrind files: %s' % out_dir)


if __name__ == '__main__':
    main()
