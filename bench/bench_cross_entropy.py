#!/usr/bin/env python3
"""Cross-entropy forward and backward, as a training step runs them: opgrad.torch.cross_entropy
(aclnnCrossEntropyLoss, aclnnCrossEntropyLossGrad) against PyTorch's F.cross_entropy on the same
tensors, outputs and gradients allocated per call. Shapes from language-model heads (8192 x 32000,
a vocabulary) and classifiers (65536 x 1000); reduction mean, int64 targets.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \
        bench/bench_cross_entropy.py [--threads 1,2] [--dtypes fp32,bf16] [--quick]

fwd = the loss with x.requires_grad (opgrad also writes the log-probabilities the backward
reads; PyTorch saves its log_softmax output the same way); bwd = (fwd + backward) - fwd.
GB/s counts the ideal traffic: fwd reads x and writes logProb (2 N C es), bwd reads logProb and
writes dx (2 N C es). "frac" = that GB/s / the same-run probe, torch.mul(a, 1.0, out=c) on fp32
buffers of N C elements (read 1, write 1; the probe of bench/torch_ops.py, not bench/bwprobe.c).
Best and median of interleaved blocks. --quick: smaller shapes, a smoke test."""
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

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    shapes = [(512, 32000), (4096, 1000)] if a.quick else [(8192, 32000), (65536, 1000)]
    min_s, reps = (0.05, 3) if a.quick else (0.3, 5)
    print("torch %s; best (median) ms; ratio = torch / opgrad (> 1: opgrad faster)" %
          torch.__version__)
    print("%-12s %-5s %3s %-4s %16s %16s %7s %8s %6s %9s" % (
        "N x C", "dtype", "thr", "pass", "opgrad ms", "torch ms", "ratio", "GB/s", "frac",
        "max|diff|"))
    for thr in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(thr)
        opgrad.set_num_threads(thr)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            for n, c in shapes:
                gen = torch.Generator().manual_seed(n + c)
                x = (torch.randn(n, c, generator=gen) * 3).to(dt).requires_grad_()
                t = torch.randint(0, c, (n,), generator=gen)
                es = x.element_size()
                pa, pc = torch.empty(n * c), torch.empty(n * c)

                def probe():
                    torch.mul(pa, 1.0, out=pc)

                fns = {}
                for name, f in (("opgrad", ot.cross_entropy), ("torch", F.cross_entropy)):
                    def fwd(_f=f):
                        return _f(x, t)

                    def step(_f=f):
                        x.grad = None
                        _f(x, t).backward()

                    fns[name] = (fwd, step)
                x.grad = None
                ot.cross_entropy(x, t).backward()
                g_o = x.grad.float()
                x.grad = None
                F.cross_entropy(x, t).backward()
                diff = float((g_o - x.grad.float()).abs().max())
                res = {}
                pb, pm = timed(probe, min_s, reps)
                probe_gbs = 2 * n * c * 4 / pb * 1e-9
                for name in ("opgrad", "torch"):
                    res[name] = [timed(fns[name][0], min_s, reps), timed(fns[name][1], min_s, reps)]
                for p, pname in ((0, "fwd"), (1, "bwd")):
                    def tt(name, k):
                        fb, fm = res[name][0]
                        if p == 0:
                            return fb, fm
                        sb, sm = res[name][1]
                        return max(sb - fb, 1e-9), max(sm - fm, 1e-9)
                    ob, om = tt("opgrad", 0)
                    tb, tm = tt("torch", 0)
                    if ob <= 1e-9 or tb <= 1e-9:  # the step timed no slower than the forward
                        print("%-12s %-5s %3d %-4s   n/a (noise: fwd+bwd <= fwd)"
                              % ("%dx%d" % (n, c), dn, thr, pname))
                        continue
                    gbs = 2 * n * c * es / ob * 1e-9
                    print("%-12s %-5s %3d %-4s %7.2f (%6.2f) %7.2f (%6.2f) %7.2f %8.1f %6.2f %9.1e"
                          % ("%dx%d" % (n, c), dn, thr, pname, ob * 1e3, om * 1e3, tb * 1e3,
                             tm * 1e3, tb / ob, gbs, gbs / probe_gbs, diff), flush=True)
                x.grad = None


if __name__ == "__main__":
    main()
