#!/usr/bin/env python3
"""Who makes whom wait: a scheduler-latency profile of a Go execution trace (go tool trace -pprof=sched), grouped by
the code that woke each goroutine (its first two frames outside the runtime and sync), with the wake-ups and the
time they waited in run queues, in total and on average. A profile attributes a wait to the stack of the event that
made the goroutine runnable: for a wake-up by another goroutine, the waker's stack. Goroutines made runnable by the
runtime itself (the network poller, timers, the collector's workers, a preemption) fall under "(runtime)", and one
that yields (runtime.Gosched) under its own stack. Usage: wakeups.py PROFILE [TOP]."""
import collections
import re
import subprocess
import sys

SEP = "-----------+-------------------------------------------------------"
UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "": 1.0}


def samples(profile, index):
    out = subprocess.run(["go", "tool", "pprof", f"-sample_index={index}", "-traces", profile],
                         capture_output=True, text=True, check=True).stdout
    for block in out.split(SEP)[1:]:
        lines = [l for l in block.strip().split("\n") if l.strip()]
        m = lines and re.match(r"\s*([\d.]+)([a-z]*)\s+(\S+)", lines[0])
        if not m:
            continue
        frames = [m.group(3)] + [l.strip() for l in lines[1:]]
        yield float(m.group(1)) * UNITS.get(m.group(2), 1.0), [f.removesuffix(" (inline)") for f in frames]


def waker(frames):
    own = [f for f in frames if not f.startswith(("runtime.", "sync.", "internal/"))]
    return " < ".join(f.rsplit("/", 1)[-1] for f in own[:2]) or "(runtime)"


def main():
    profile, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
    agg = collections.defaultdict(lambda: [0, 0.0])
    counts, delays = list(samples(profile, 0)), list(samples(profile, 1))
    if [f for _, f in counts] != [f for _, f in delays]:
        sys.exit(f"{profile}: the wake-ups and the delays list different stacks")
    for (n, frames), (us, _) in zip(counts, delays):
        agg[waker(frames)][0] += n
        agg[waker(frames)][1] += us
    print(f"{'waited µs':>12} {'wake-ups':>9} {'mean µs':>8}  woken by")
    for key, (n, us) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{us:12.0f} {n:9.0f} {us / max(n, 1):8.1f}  {key}")


if __name__ == "__main__":
    main()
