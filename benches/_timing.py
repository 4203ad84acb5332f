"""The timing loop every benchmark and experiment here shares.

`timeit(fn, sync)` runs `fn` `warmup` times, then `rounds` rounds of `reps` calls each followed by
`sync()` (the work is asynchronous on GPUs), and returns the median seconds per call.
"""

from __future__ import annotations

import statistics
import time


def timeit(fn, sync, reps=20, rounds=5, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def sync_all(*syncs):
    """One sync function that waits for every library given (None entries are skipped)."""
    live = [s for s in syncs if s is not None]

    def sync():
        for s in live:
            s()

    return sync
