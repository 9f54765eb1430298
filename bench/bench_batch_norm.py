#!/usr/bin/env python3
"""BatchNorm and GroupNorm, forward and backward, as a framework runs them: opgrad.torch's
batch_norm / group_norm (aclnnBatchNorm + aclnnBatchNormBackward, aclnnGroupNorm +
aclnnGroupNormBackward) against PyTorch's F.batch_norm / F.group_norm on the same tensors, in
training mode (batch statistics, running statistics updated), outputs and gradients allocated per
call. Best and median of interleaved blocks.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_batch_norm.py \
        [--threads 1,2] [--dtypes fp32,bf16] [--quick]

Shapes: N=64 C=256 56x56 (a ResNet stage; 205 MB per fp32 tensor) and a small CNN's
N=32 C=64 32x32 (--quick: N=16 C=256 56x56 and the small one). Bandwidth: "GB/s" counts the
bytes an ideal kernel must move (forward: read x, write y; backward: read dy and x, write dx),
"frac" divides that by the same run's probe: torch.add(a, b, out=c) on fp32 tensors of x's byte
size (bytes read and written per second; the simplest honest streaming probe in Python, not
bench/bwprobe.c)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from _timing import blocks  # noqa: E402  (bench/, the script's folder, is on sys.path)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def probe(nbytes, min_s, reps):
    n = max(nbytes // 4, 1)
    a, b, c = torch.ones(n), torch.ones(n), torch.empty(n)
    ((best, _),) = blocks([lambda: torch.add(a, b, out=c)], min_s, reps)
    return 3 * 4 * n / best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    shapes = [(16, 256, 56, 56), (32, 64, 32, 32)] if a.quick else \
        [(64, 256, 56, 56), (32, 64, 32, 32)]
    min_s, reps = (0.1, 3) if a.quick else (0.5, 5)
    print("op          shape            dtype thr pass   opgrad ms (med)    torch ms (med)  "
          "speedup  og GB/s  frac  max|diff|")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            for shape in shapes:
                n, c = shape[0], shape[1]
                gen = torch.Generator().manual_seed(sum(shape))
                x = (torch.randn(shape, generator=gen) * 2 + 1).to(dt)
                g = torch.randn(shape, generator=gen).to(dt)
                w = torch.randn(c, generator=gen).to(dt)
                b = torch.randn(c, generator=gen).to(dt)
                size = x.numel() * x.element_size()
                bw = probe(x.numel() * 4, min_s, reps)
                for op in ("batch_norm", "group_norm"):
                    rm, rv = torch.zeros(c, dtype=dt), torch.ones(c, dtype=dt)

                    def run(impl, backward, _op=op):
                        xl = x.detach().requires_grad_(backward)
                        wl = w.detach().requires_grad_(backward)
                        bl = b.detach().requires_grad_(backward)
                        if _op == "batch_norm":
                            y = impl.batch_norm(xl, rm, rv, wl, bl, True, 0.1, 1e-5)
                        else:
                            y = impl.group_norm(xl, 32, wl, bl, 1e-5)
                        if backward:
                            return y, torch.autograd.grad(y, (xl, wl, bl), g)
                        return y, None

                    yo, go = run(ot, True)
                    yt, gt = run(F, True)
                    diff = max((yo.double() - yt.double()).abs().max().item(),
                               (go[0].double() - gt[0].double()).abs().max().item())
                    del yo, go, yt, gt
                    with torch.no_grad():
                        (of, _), (tf, _) = (r for r in blocks(
                            [lambda: run(ot, False), lambda: run(F, False)], min_s, reps))
                    ofm = blocks([lambda: run(ot, False)], min_s, 1)[0][1]
                    tfm = blocks([lambda: run(F, False)], min_s, 1)[0][1]
                    (ob, obm), (tb, tbm) = blocks(
                        [lambda: run(ot, True), lambda: run(F, True)], min_s, reps)
                    # the backward alone: fwd+bwd minus fwd
                    obw, tbw = max(ob - of, 1e-9), max(tb - tf, 1e-9)
                    # (timings of a noisy machine can make a difference negative: clamped)
                    bwd = ("bwd", obw, max(obm - ofm, 1e-9), tbw, max(tbm - tfm, 1e-9), 3 * size)
                    for pss, o, om, tt, tm, nb in (("fwd", of, ofm, tf, tfm, 2 * size), bwd):
                        print("%-11s %-16s %-5s %3d %-5s %8.2f (%7.2f) %8.2f (%7.2f) %7.2f "
                              "%8.1f %5.2f %9.2e"
                              % (op, "x".join(map(str, shape)), dn, t, pss, o * 1e3, om * 1e3,
                                 tt * 1e3, tm * 1e3, tt / o, nb / o * 1e-9, nb / o / bw, diff),
                              flush=True)
                print("# probe (torch.add fp32, %d MB per tensor): %.1f GB/s"
                      % (x.numel() * 4 >> 20, bw * 1e-9), flush=True)


if __name__ == "__main__":
    main()
