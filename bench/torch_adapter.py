#!/usr/bin/python3
"""Timing of the PyTorch adapter (opgrad.torch) against PyTorch's own operators, in one process.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/torch_adapter.py \
        [--quick] [--ops mish,gelu,...] [--dtypes float32,bfloat16,float16] [--tiny 1,64]
        [--large 20,24] [--reps 5] [--min-ms 20] [--csv FILE]

Two measurements, both through the public API exactly as a user calls it (allocating outputs):

* overhead (tiny tensors, 1 and 64 elements): the time of one call, forward `f(x)` and
  forward + backward `x.grad = None; f(x).backward(g)` with x.requires_grad (the grads are reset
  as zero_grad(set_to_none=True) does, so the leaf accumulation is not timed), for
  opgrad.torch.<op> and for PyTorch's operator. Target: opgrad within 3x of PyTorch.
* throughput (2^20 and 2^24 elements): the same two calls; GB/s counts the bytes an ideal
  kernel moves (forward: read x + write y; forward+backward adds read g, x (or y) + write dx).
  Target: opgrad faster than PyTorch.

Method: opgrad and PyTorch are measured alternately (A B A B ...) in --reps rounds; each round
times a loop of calls lasting at least --min-ms; the minimum over rounds is kept (the least
disturbed run on a shared machine), and the ratio opgrad / PyTorch is taken from the two minima
of the same run. Both libraries get the same thread count (--threads, default opgrad's: the
CPUs this process may use; Debian's torch 1.13 otherwise starts with 1 OpenMP thread here). For 16-bit dtypes PyTorch 1.13 has no CPU kernel for most activations: the
PyTorch column is then f(x.float()).to(dtype) ("upcast"), the way a user would write it. Only
timing lives here; correctness is tests/python/.
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# name: (opgrad fn, torch fn, number of tensor inputs)
OPS = {
    "mish": (ot.mish, F.mish, 1),
    "gelu": (ot.gelu, lambda x: F.gelu(x, approximate="tanh"), 1),
    "gelu_v2": (lambda x: ot.gelu_v2(x, "none"), F.gelu, 1),
    "silu": (ot.silu, F.silu, 1),
    "sigmoid": (ot.sigmoid, torch.sigmoid, 1),
    "tanh": (ot.tanh, torch.tanh, 1),
    "softplus": (ot.softplus, F.softplus, 1),
    "relu": (ot.relu, F.relu, 1),
    "leaky_relu": (ot.leaky_relu, F.leaky_relu, 1),
    "hardswish": (ot.hardswish, F.hardswish, 1),
    "elu": (ot.elu, F.elu, 1),
    "add": (ot.add, torch.add, 2),
    "mul": (ot.mul, torch.mul, 2),
    "muls": (lambda x: ot.muls(x, 2.5), lambda x: x * 2.5, 1),
    "reduce_sum": (lambda x: ot.reduce_sum(x, [-1]), lambda x: x.sum(-1), 1),
    "fused_add_scale": (ot.fused_add_scale, lambda x, b, s: (x + b) * s, 3),
}


def native(fn, args):
    try:
        fn(*args)
        return True
    except RuntimeError:
        return False


def inputs(name, n, dtype, grad):
    g = torch.Generator().manual_seed(0)
    if name == "fused_add_scale":
        c = min(n, 1024)
        shapes = [(n // c, c), (c,), (1,)]
    elif name == "reduce_sum":
        c = min(n, 1024)
        shapes = [(n // c, c)]
    else:
        shapes = [(n,)] * OPS[name][2]
    xs = [(torch.rand(s, generator=g) * 8 - 4).to(dtype) for s in shapes]
    if grad:
        xs = [x.requires_grad_() for x in xs]
    return xs


def loop(f, min_s):
    """Seconds per call of f(), from a loop lasting >= min_s (count calibrated once). A first,
    untimed stretch of calls (about min_s / 4) lets the other library's thread pool go idle: both
    pools spin for a while after their last job, and on a 2-core machine that would be charged to
    whichever library runs next."""
    t = time.perf_counter()
    while time.perf_counter() - t < min_s / 4:
        f()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f()
        dt = time.perf_counter() - t
        if dt >= min_s:
            return dt / n
        n = max(n * 2, int(n * min_s / max(dt, 1e-9) * 1.2))


def measure(fa, fb, reps, min_s):
    fa(), fb()  # warm-up (plans, allocator)
    ta, tb = [], []
    for _ in range(reps):
        ta.append(loop(fa, min_s))
        tb.append(loop(fb, min_s))
    return min(ta), min(tb)


def bytes_moved(name, n, es, mode):
    nin = OPS[name][2]
    fwd = (nin + 1) * n * es if name != "reduce_sum" else (n + n // min(n, 1024)) * es
    if mode == "fwd":
        return fwd
    return fwd + (2 + nin) * n * es   # read g, saved tensors, write each dx (upper bound)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds of >= 5 ms (noisy machine)")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--tiny", default="1,64", help="element counts for the overhead table")
    ap.add_argument("--large", default="20,24", help="log2 element counts for throughput")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=20.0)
    ap.add_argument("--threads", type=int, default=0,
                    help="threads for both libraries (default: opgrad's default, the CPU count)")
    ap.add_argument("--csv")
    args = ap.parse_args()
    threads = args.threads or opgrad.get_num_threads()
    torch.set_num_threads(threads)
    opgrad.set_num_threads(threads)
    if args.quick:
        args.reps, args.min_ms = 3, 5.0
    min_s = args.min_ms / 1000.0
    ops = args.ops.split(",")
    print("torch %s (%d threads), libopgrad %s (%d threads, %s), %s; %d rounds of >= %.0f ms, "
          "min kept" % (torch.__version__, torch.get_num_threads(), opgrad.version(),
                        opgrad.get_num_threads(), opgrad.library_path,
                        "custom_op" if ot.USING_CUSTOM_OP else "torch.library.Library",
                        args.reps, args.min_ms))
    rows = []
    for dname in args.dtypes.split(","):
        dtype = DTYPES[dname]
        es = torch.empty(0, dtype=dtype).element_size()
        sizes = [("tiny", int(s)) for s in args.tiny.split(",") if s] + \
                [("large", 1 << int(s)) for s in args.large.split(",") if s]
        for kind, n in sizes:
            for name in ops:
                fo, fp, _ = OPS[name]
                for mode in ("fwd", "fwd+bwd"):
                    grad = mode != "fwd"
                    xo = inputs(name, n, dtype, grad)
                    xp = inputs(name, n, dtype, grad)
                    path, fpt = "native", fp
                    if not (native(fp, xp) and (not grad or _bwd_ok(fp, xp))):
                        path = "upcast"
                        fpt = lambda *a, _f=fp, _d=dtype: _f(*[t.float() for t in a]).to(_d)
                    y = fo(*xo)
                    g = torch.ones_like(y)
                    if grad:  # grads set to None first (zero_grad(set_to_none=True)), both sides
                        def a():
                            for t in xo:
                                t.grad = None
                            fo(*xo).backward(g)

                        def b():
                            for t in xp:
                                t.grad = None
                            fpt(*xp).backward(g)
                    else:
                        a = lambda: fo(*xo)
                        b = lambda: fpt(*xp)
                    to, tp = measure(a, b, args.reps, min_s)
                    row = {"dtype": dname, "kind": kind, "n": n, "op": name, "mode": mode,
                           "torch_path": path, "opgrad_us": to * 1e6, "torch_us": tp * 1e6,
                           "ratio": to / tp}
                    if kind == "large":
                        b_ = bytes_moved(name, n, es, mode)
                        row["opgrad_GBs"] = b_ / to / 1e9
                        row["torch_GBs"] = b_ / tp / 1e9
                    rows.append(row)
                    print("%-8s %-5s n=%-9d %-16s %-8s %-6s opgrad %10.2f us  torch %10.2f us  "
                          "opgrad/torch %5.2f%s" % (
                              dname, kind, n, name, mode, path, row["opgrad_us"], row["torch_us"],
                              row["ratio"], "" if kind == "tiny" else
                              "   (%.1f vs %.1f GB/s)" % (row["opgrad_GBs"], row["torch_GBs"])))
                    sys.stdout.flush()
    print()
    for kind, target, what in (("tiny", 3.0, "<= 3 (overhead)"), ("large", 1.0, "< 1 (faster)")):
        for mode in ("fwd", "fwd+bwd"):
            rs = [r["ratio"] for r in rows if r["kind"] == kind and r["mode"] == mode]
            if not rs:
                continue
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            bad = [r for r in rows if r["kind"] == kind and r["mode"] == mode
                   and not r["ratio"] <= target]
            print("%-5s %-8s opgrad/torch: geomean %.2f, min %.2f, max %.2f; target %s: %d of %d "
                  "miss%s" % (kind, mode, gm, min(rs), max(rs), what, len(bad), len(rs),
                              "" if not bad else " (" + ", ".join(
                                  "%s %s n=%d %.2f" % (r["op"], r["dtype"], r["n"], r["ratio"])
                                  for r in bad) + ")"))
    if args.csv:
        keys = ["dtype", "kind", "n", "op", "mode", "torch_path", "opgrad_us", "torch_us", "ratio",
                "opgrad_GBs", "torch_GBs"]
        with open(args.csv, "w") as f:
            f.write(",".join(keys) + "\n")
            for r in rows:
                f.write(",".join(str(r.get(k, "")) for k in keys) + "\n")


def _bwd_ok(fp, xs):
    try:
        y = fp(*xs)
        y.backward(torch.ones_like(y))
        for x in xs:
            x.grad = None
        return True
    except RuntimeError:
        return False


if __name__ == "__main__":
    main()
