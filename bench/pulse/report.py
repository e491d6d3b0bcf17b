#!/usr/bin/env python3
"""One line per pair of samples of bench/pulse/sample.sh's DIR (about a second apart): flushes and their mean
latency, proposals (a flush's, and the shard leaders' own) and linearizable side reads with theirs (summed over
the nodes), each node's CPU, which nodes ran a collection, Pebble compactions and flushes, full-text batches
waiting, vector checkpoints written (how many, and their seconds). With --by-gc, instead: the flush latency of
the seconds grouped by how many nodes collected in them (or the second before) and whether Pebble compacted, of
the seconds with at most --max-flushes flushes a second (default 100: memctl bench session's open loop at 55 a
second, not its closed one); with --by-checkpoint, those seconds grouped by whether a node finished a vector
checkpoint in them or the second after (a checkpoint is counted when it ends).
Usage: bench/pulse/report.py DIR [--by-gc | --by-checkpoint] [--max-flushes N]"""
import collections
import datetime
import os
import re
import statistics
import sys


def load(d):
    snaps = []
    for f in os.listdir(d):
        if not f.endswith('.txt'):
            continue
        m = {}
        for line in open(os.path.join(d, f)):
            parts = line.split()
            if len(parts) == 3:
                m[(parts[0], parts[1])] = float(parts[2])
        snaps.append((float(f[:-4]), m))
    return sorted(snaps, key=lambda s: s[0])


def total(m, pat, node=None):
    return sum(v for (n, k), v in m.items() if (node is None or n == node) and re.search(pat, k))


# Histograms, as (name, labels) patterns: their _count and _sum lines are read.
FLUSH = ('memcluster_api_request_seconds', r'.*op="session_flush"')
PROPOSE = ('memcluster_shard_op_seconds', r'.*op="propose"')
SIDE = ('memcluster_shard_op_seconds', r'.*op="side",stale="false"')


def rows(snaps):
    """Pairs of consecutive samples, each cut to the nodes both hold (a node missing from one sample would
    otherwise count its whole history in the next pair)."""
    nodes = sorted({n for _, m in snaps for n, _ in m})
    for (pt, pm), (t, m) in zip(snaps, snaps[1:]):
        both = {n for n, _ in pm} & {n for n, _ in m}
        pm = {k: v for k, v in pm.items() if k[0] in both}
        m = {k: v for k, v in m.items() if k[0] in both}
        if total(m, 'process_cpu_seconds_total') < total(pm, 'process_cpu_seconds_total'):
            continue  # a node restarted, or another cluster on the same ports
        yield t, t - pt, m, pm, [n for n in nodes if n in both]


def main():
    snaps = load(sys.argv[1])
    by_gc, by_ckpt = '--by-gc' in sys.argv, '--by-checkpoint' in sys.argv
    if by_gc and by_ckpt:
        sys.exit('report.py: give --by-gc or --by-checkpoint, not both')
    most = float(sys.argv[sys.argv.index('--max-flushes') + 1]) if '--max-flushes' in sys.argv else 100
    groups = collections.defaultdict(list)
    prev_gc = None
    pending = None  # by_ckpt: the previous second's flush latency, waiting for whether the next one checkpointed
    for t, dt, m, pm, nodes in rows(snaps):
        def d(pat, node=None):
            return total(m, pat, node) - total(pm, pat, node)

        def mean(hist):
            """How many of hist's events the pair saw, and their mean in milliseconds."""
            name, labels = hist
            c, s = d(name + '_count' + labels), d(name + '_sum' + labels)
            return c, (s / c * 1000 if c > 0 else 0)
        fc, fms = mean(FLUSH)
        pc, pms = mean(PROPOSE)
        _, sms = mean(SIDE)
        gc = [int(d('go_gc_duration_seconds_count', n) > 0) for n in nodes]
        comp, fl = int(d('memcluster_storage_compactions_total')), int(d('memcluster_storage_flushes_total'))
        ck, cks = int(d('memcluster_index_checkpoints_total')), d('memcluster_index_checkpoint_seconds_total')
        if by_ckpt:
            # The pending second pairs with this one only if this one follows it (no sample lost between them).
            if pending is not None:
                follows = dt < 3 and abs((t - dt) - pending[2]) < 0.01
                groups[(pending[1] or (follows and ck > 0),)].append(pending[0])
            pending = (fms, ck > 0, t) if 0 < fc <= most * dt and dt < 3 else None
            continue
        if by_gc:
            if 0 < fc <= most * dt and dt < 3:
                both = [max(a, b) for a, b in zip(gc, prev_gc or gc)]
                groups[(sum(both), comp > 0)].append(fms)
            prev_gc = gc
            continue
        cpu = ' '.join(f'{d("process_cpu_seconds_total", n) / dt:.2f}' for n in nodes)
        print(f'{datetime.datetime.fromtimestamp(t, datetime.timezone.utc):%H:%M:%S} '
              f'flush {int(fc):4d}/{fms:6.1f}ms propose {int(pc):5d}/{pms:6.1f}ms side {sms:5.1f}ms '
              f'cpu {cpu} gc {gc} compactions {comp} flushes {fl} '
              f'batches_waiting {int(total(m, "memcluster_index_batches_waiting"))} checkpoints {ck}/{cks:.2f}s')
    if pending is not None:
        groups[(pending[1],)].append(pending[0])
    for key, v in sorted(groups.items()):
        what = (f'checkpoints {"yes" if key[0] else "no "}' if by_ckpt else
                f'nodes collecting {key[0]}, compactions {"yes" if key[1] else "no "}')
        print(f'{what}: {len(v):4d} s, flush mean median '
              f'{statistics.median(v):6.1f} ms, max {max(v):6.1f} ms, over 30 ms in {sum(x > 30 for x in v)}')


if __name__ == '__main__':
    main()
