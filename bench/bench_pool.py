#!/usr/bin/env python3
"""Pooling forward and backward through opgrad.torch against PyTorch (run it with PyTorch 1.13's
/usr/bin/python3 and with /work/torch2venv/bin/python for 2.5.1), on ResNet shapes:

    max  3x3 stride 2 padding 1, N8 C64 112x112 -> 56x56 (the stem)
    avg  2x2 stride 2, N8 C256 56x56 -> 28x28 (a DenseNet transition)
    adaptive avg 7x7 -> 1x1, N8 C512 (ResNet-18) and N8 C2048 (ResNet-50)

Two modes: "alloc", outputs allocated per call (the functional forms; fwd+bwd is an autograd
step), and "reuse", outputs preallocated (opgrad: the _pool.*_into runners; PyTorch: the aten
.out overloads), forward and backward timed apart. Best and median of interleaved blocks
(bench/_timing.py). GB/s counts the bytes each operator must move (the forward reads x and
writes y (and int64 indices), the backward reads dy (and the indices) and writes dx); "probe" is
the same-run bandwidth of torch's fp32 mul on the forward's bytes (read 1, write 1: not
bench/bwprobe.c, the C probe) and "of probe" the fraction of it opgrad reaches.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \\
        bench/bench_pool.py [--threads 1,2] [--dtypes fp32,bf16] [--quick]"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from opgrad.torch import _pool as P  # noqa: E402
from _timing import blocks, timed  # noqa: E402  (bench/, the script's folder, is on sys.path)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
aten = torch.ops.aten


def probe(nbytes, min_s, reps):
    """GB/s of torch's fp32 mul reading and writing nbytes / 2 each."""
    a = torch.ones(max(nbytes // 8, 1))
    c = torch.empty_like(a)
    best, _ = timed(lambda: torch.mul(a, 1.0001, out=c), min_s, reps)
    return a.numel() * 8 / best * 1e-9


def row(name, dn, t, nbytes, og, pt, bw):
    (ob, om), (pb, pm) = og, pt
    print("%-34s %-5s %3d %9.3f (%7.3f) %9.3f (%7.3f) %6.2f %8.1f %8.1f %6.0f%%"
          % (name, dn, t, ob * 1e3, om * 1e3, pb * 1e3, pm * 1e3, pb / ob, nbytes / ob * 1e-9,
             bw, 100 * nbytes / ob * 1e-9 / bw), flush=True)


def max_case(dt, gen):
    x = torch.randn(8, 64, 112, 112, generator=gen).to(dt)
    y, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    yo, io, gi = torch.empty_like(y), torch.empty_like(idx), torch.empty_like(x)
    g = torch.randn(y.shape, generator=gen).to(dt)
    k, s, p, d = [3, 3], [2, 2], [1, 1], [1, 1]
    return ("max 3x3 s2 p1 8x64x112x112", x, g,
            lambda t: ot.max_pool2d(t, 3, 2, 1), lambda t: F.max_pool2d(t, 3, 2, 1),
            lambda: P.max_pool2d_into(x, k, s, p, d, False, yo, io),
            lambda: aten.max_pool2d_with_indices.out(x, k, s, p, d, False, out=yo,
                                                     indices=io),
            lambda: P.max_pool2d_backward_into(g, x, idx, k, s, p, d, False, gi),
            lambda: aten.max_pool2d_with_indices_backward.grad_input(
                g, x, k, s, p, d, False, idx, grad_input=gi),
            y.numel() * 8)


def avg_case(dt, gen):
    x = torch.randn(8, 256, 56, 56, generator=gen).to(dt)
    y = F.avg_pool2d(x, 2)
    yo, gi = torch.empty_like(y), torch.empty_like(x)
    g = torch.randn(y.shape, generator=gen).to(dt)
    return ("avg 2x2 s2 8x256x56x56", x, g,
            lambda t: ot.avg_pool2d(t, 2), lambda t: F.avg_pool2d(t, 2),
            lambda: P.avg_pool2d_into(x, [2, 2], [2, 2], [0, 0], False, True, 0, yo),
            lambda: aten.avg_pool2d.out(x, [2, 2], [2, 2], [0, 0], False, True, None,
                                        out=yo),
            lambda: P.avg_pool2d_backward_into(g, x, [2, 2], [2, 2], [0, 0], False, True, 0,
                                               gi),
            lambda: aten.avg_pool2d_backward.grad_input(g, x, [2, 2], [2, 2], [0, 0], False,
                                                        True, None, grad_input=gi),
            0)


def cases(dt, gen):
    """(name, x, dy, opgrad fwd, torch fwd, reuse: og fwd, pt fwd, og bwd, pt bwd; index bytes)."""
    out = [max_case(dt, gen), avg_case(dt, gen)]
    for c in (512, 2048):
        x = torch.randn(8, c, 7, 7, generator=gen).to(dt)
        y = F.adaptive_avg_pool2d(x, 1)
        yo, gi = torch.empty_like(y), torch.empty_like(x)
        g = torch.randn(y.shape, generator=gen).to(dt)
        out.append(("adaptive 7x7->1 8x%dx7x7" % c, x, g,
                    lambda t: ot.adaptive_avg_pool2d(t, 1), lambda t: F.adaptive_avg_pool2d(t, 1),
                    lambda x=x, yo=yo: P.adaptive_avg_pool2d_into(x, [1, 1], yo),
                    lambda x=x, yo=yo: aten.adaptive_avg_pool2d.out(x, [1, 1], out=yo),
                    lambda g=g, x=x, gi=gi: P.adaptive_avg_pool2d_backward_into(g, x, gi),
                    # aten has no .out overload of the adaptive backward: the functional one
                    lambda g=g, x=x: aten._adaptive_avg_pool2d_backward(g, x),
                    0))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    min_s, reps = (0.05, 3) if a.quick else (0.3, 5)
    print("torch %s; opgrad %s" % (torch.__version__, opgrad.library_path))
    print("case                               dtype thr  opgrad ms (median)    torch ms (median)"
          "  ratio     GB/s    probe  of probe")
    for t in [int(v) for v in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            es = torch.tensor([], dtype=dt).element_size()
            gen = torch.Generator().manual_seed(1)
            for name, x, g, og, pt, og_f, pt_f, og_b, pt_b, ibytes in cases(dt, gen):
                xr = x.clone().requires_grad_()
                yn = og(x).numel()
                fwd_bytes = (x.numel() + yn) * es + ibytes
                bwd_bytes = (x.numel() + yn) * es + ibytes
                bw = probe(fwd_bytes, min_s, reps)

                def og_step(og=og, g=g):
                    xr.grad = None
                    og(xr).backward(g)

                def pt_step(pt=pt, g=g):
                    xr.grad = None
                    pt(xr).backward(g)

                r = blocks([lambda: og(x), lambda: pt(x)], min_s, reps)
                row(name + " fwd", dn, t, fwd_bytes, r[0], r[1], bw)
                r = blocks([og_step, pt_step], min_s, reps)
                row(name + " fwd+bwd", dn, t, fwd_bytes + bwd_bytes, r[0], r[1], bw)
                r = blocks([og_f, pt_f], min_s, reps)
                row(name + " fwd reuse", dn, t, fwd_bytes, r[0], r[1], bw)
                r = blocks([og_b, pt_b], min_s, reps)
                row(name + " bwd reuse", dn, t, bwd_bytes, r[0], r[1], bw)


if __name__ == "__main__":
    main()
