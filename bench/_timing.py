"""Timing shared by the bench_*.py scripts of the training operators: each callable is run in
blocks of enough calls to last about min_s / 4 seconds, and a result is the best and the median
seconds per call over reps blocks (the best is the least disturbed by the other processes of a
shared machine, the median says how noisy it was)."""
import time


def _calls(fn, min_s):
    """Calls of fn in a block of about min_s / 4 seconds (at least one); fn has been run once."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_s / 4 or n == 0:
        fn()
        n += 1
    return n


def _block(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def timed(fn, min_s, reps):
    """(best, median) seconds per call of fn over reps blocks."""
    fn()
    n = _calls(fn, min_s)
    times = sorted(_block(fn, n) for _ in range(reps))
    return times[0], times[len(times) // 2]


def blocks(fns, min_s, reps):
    """(best, median) seconds per call of each callable, their blocks interleaved in an order
    that rotates from one repetition to the next (no callable always runs after the same one)."""
    for f in fns:
        f()
    counts = [_calls(f, min_s) for f in fns]
    times = [[] for _ in fns]
    for r in range(reps):
        for i in range(len(fns)):
            j = (i + r) % len(fns)
            times[j].append(_block(fns[j], counts[j]))
    return [(min(t), sorted(t)[len(t) // 2]) for t in times]
