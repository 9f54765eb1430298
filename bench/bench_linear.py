#!/usr/bin/env python3
"""A Linear layer's training step, forward and backward, as a framework runs it: opgrad.torch's
linear (one aclnnFusedMatmul, one aclnnFusedMatmulBackward; bias and activation fused) against
PyTorch's F.linear + activation on the same tensors, outputs and gradients allocated per call by
autograd. Best and median of interleaved blocks; GFLOP/s counts the three products (6 M K N).

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_linear.py \
        [--threads 1,2] [--dtypes fp32,bf16] [--quick]

Debian's PyTorch 1.13 multiplies fp32 through whatever libblas.so.3 is (the reference BLAS by
default); bench_gemm.py compares the products alone against MKL, OpenBLAS and BLIS."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402

ACTS = {None: lambda z: z, "relu": F.relu, "gelu": F.gelu}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def step(fn, x, w, b, g):
    for t in (x, w, b):
        t.grad = None
    fn(x, w, b).backward(g)


def measure(fn, args, min_s, reps):
    step(fn, *args)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_s / 4:
        step(fn, *args)
        n += 1
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            step(fn, *args)
        times.append((time.perf_counter() - t0) / n)
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    shapes = [(64, 128, 128), (256, 512, 512), (1024, 1024, 1024)]  # rows x in x out
    if not a.quick:
        shapes += [(2048, 1024, 4096), (64, 4096, 1024)]
    min_s, reps = (0.05, 3) if a.quick else (0.2, 5)
    print("shape(MxKxN) dtype thr act     opgrad GFLOP/s (median)  torch GFLOP/s (median)  "
          "ratio  max|dW| rel diff")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            for m, k, n in shapes:
                gen = torch.Generator().manual_seed(m + k + n)
                x = torch.randn(m, k, generator=gen).to(dt).requires_grad_()
                w = (torch.randn(n, k, generator=gen) / k ** 0.5).to(dt).requires_grad_()
                b = torch.randn(n, generator=gen).to(dt).requires_grad_()
                g = torch.randn(m, n, generator=gen).to(dt)
                for act in (None, "relu", "gelu"):
                    def og(x, w, b, _a=act):
                        return ot.linear(x, w, b, activation=_a)

                    def pt(x, w, b, _f=ACTS[act]):
                        return _f(F.linear(x, w, b))

                    step(og, x, w, b, g)
                    dw = w.grad.double()
                    step(pt, x, w, b, g)
                    diff = ((dw - w.grad.double()).abs().max() / w.grad.double().abs().max()).item()
                    flops = 6.0 * m * k * n
                    ob, om = measure(og, (x, w, b, g), min_s, reps)
                    pb, pm = measure(pt, (x, w, b, g), min_s, reps)
                    print("%-12s %-5s %3d %-5s %10.1f (%6.1f) %14.1f (%6.1f) %14.2f %10.1e"
                          % ("%dx%dx%d" % (m, k, n), dn, t, act or "-", flops / ob * 1e-9,
                             flops / om * 1e-9, flops / pb * 1e-9, flops / pm * 1e-9, pb / ob,
                             diff), flush=True)


if __name__ == "__main__":
    main()
