#!/usr/bin/env python3
"""The pointwise losses, forward and backward, through opgrad.torch against PyTorch on the same
tensors (mean reduction by default; outputs and gradients allocated per call, as autograd does):
mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy, binary_cross_entropy_with_logits (with
weight and pos_weight).

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_loss.py \
        [--n 16777216] [--dtypes fp32,bf16] [--reduction mean] [--threads 2] [--quick]

forward: loss(x, t); backward: torch.autograd.grad of that loss (retain_graph) with respect to x,
both through autograd for both libraries. GB/s = ideal traffic / time: the forward reads x and t
(mean / sum: no write of size n), the backward reads x and t and writes dx (the 0-D gradOutput
is nothing), the weights of BCE with logits count as [N] vectors (negligible). "frac" = that
GB/s over a same-run probe: torch.mul(a, b, out=c) on fp32 buffers of the same byte size
(rd2wr1), the simplest honest probe in Python (bench/torch_ops.py uses the same; bench/bwprobe.c
is the C one). Best of --reps timed blocks, interleaved."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from _timing import timed  # noqa: E402  (bench/, the script's folder, is on sys.path)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def cases(n, dt, red):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, generator=g).to(dt)
    t = torch.randn(n, generator=g).to(dt)
    p = torch.rand(n, generator=g).clamp(0.01, 0.99).to(dt)
    tp = torch.rand(n, generator=g).to(dt)
    cols = 1024
    w = torch.rand(cols, generator=g).to(dt)
    pw = (torch.rand(cols, generator=g) * 2).to(dt)
    xm, tm = x.view(-1, cols), tp.view(-1, cols)
    return [
        ("mse_loss", lambda a: ot.mse_loss(a, t, red), lambda a: F.mse_loss(a, t, reduction=red),
         x),
        ("l1_loss", lambda a: ot.l1_loss(a, t, red), lambda a: F.l1_loss(a, t, reduction=red), x),
        ("smooth_l1_loss", lambda a: ot.smooth_l1_loss(a, t, red, 0.5),
         lambda a: F.smooth_l1_loss(a, t, reduction=red, beta=0.5), x),
        ("bce", lambda a: ot.binary_cross_entropy(a, tp, None, red),
         lambda a: F.binary_cross_entropy(a, tp, reduction=red), p),
        ("bce_with_logits", lambda a: ot.binary_cross_entropy_with_logits(a, tm, w, red, pw),
         lambda a: F.binary_cross_entropy_with_logits(a, tm, w, reduction=red, pos_weight=pw),
         xm),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--reduction", default="mean")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.n, a.reps = 1 << 20, 3
    min_s = 0.05 if a.quick else 0.3
    torch.set_num_threads(a.threads)
    opgrad.set_num_threads(a.threads)
    print("# n=%d reduction=%s threads=%d torch %s" % (a.n, a.reduction, a.threads,
                                                       torch.__version__))
    print("%-16s %-5s %-4s %10s %10s %7s %8s %6s" % ("loss", "dtype", "dir", "opgrad ms",
                                                     "torch ms", "speedup", "GB/s", "frac"))
    for dn in a.dtypes.split(","):
        dt = DTYPES[dn]
        es = torch.empty((), dtype=dt).element_size()
        pa = torch.empty(a.n * es // 4)
        pb, pc = torch.empty_like(pa), torch.empty_like(pa)
        for name, ours, theirs, x0 in cases(a.n, dt, a.reduction):
            xg = x0.detach().requires_grad_()
            yo = ours(xg)
            try:
                yt = theirs(xg)
            except RuntimeError:  # e.g. PyTorch 1.13 has no bf16 mse_loss
                yt = None
            gy = torch.ones_like(yo)
            for direction in ("fwd", "bwd"):
                if direction == "fwd":
                    fo, ft = (lambda: ours(x0)), (lambda: theirs(x0))
                    traffic = 2 * a.n * es + (a.n * es if a.reduction == "none" else 0)
                else:
                    fo = lambda: torch.autograd.grad(yo, xg, gy, retain_graph=True)  # noqa: E731
                    ft = lambda: torch.autograd.grad(yt, xg, gy, retain_graph=True)  # noqa: E731
                    traffic = 3 * a.n * es + (a.n * es if a.reduction == "none" else 0)
                to = timed(fo, min_s, a.reps)[0]
                tt = timed(ft, min_s, a.reps)[0] if yt is not None else float("nan")
                tp = timed(lambda: torch.mul(pa, pb, out=pc), min_s, a.reps)[0]
                gbs = traffic / to / 1e9
                probe = 3 * pa.numel() * 4 / tp / 1e9
                print("%-16s %-5s %-4s %10.3f %10.3f %7.2f %8.1f %6.2f" % (
                    name, dn, direction, to * 1e3, tt * 1e3, tt / to, gbs, gbs / probe))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
