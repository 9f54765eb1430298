#!/usr/bin/env python3
"""Convolution through opgrad.torch against PyTorch: forward, data gradient (dX) and weight
gradient (dW) timed separately, on ResNet-18/50 layer shapes and a small CNN's, fp32 and bf16,
1 and 2 threads, as GFLOP/s, the ratio to PyTorch and the fraction of the fp32 FMA peak measured
in the same run (bench/fma_peak.c, as bench_gemm.py does).

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_conv.py \
        [--threads 1,2] [--dtypes fp32,bf16] [--shapes r18_3x3,cnn1] [--quick] [--reps 5]

What is timed (no autograd graph: the operators themselves):
  fwd   opgrad.torch.conv2d (aclnnConvolution)        vs torch.nn.functional.conv2d
  dX    aclnnConvolutionBackward, outputMask [1,0,0]  vs aten.convolution_backward [1,0,0]
  dW    aclnnConvolutionBackward, outputMask [0,1,0]  vs aten.convolution_backward [0,1,0]
each twice for opgrad: outputs allocated per call ("new", what autograd does) and written into
preallocated tensors ("reuse": the kernels' out= / outs=, a training loop that keeps its buffers);
PyTorch allocates per call. Each product counts 2 N Cout Ho Wo (Cin/groups) kh kw flops.
Columns: GFLOP/s best (median) of --reps interleaved blocks; ratio = torch time / opgrad time
(> 1: opgrad faster), on the best times; peak = GFLOP/s / FMA peak for the thread count.
OPGRAD_NUM_THREADS is not used: opgrad.set_num_threads and torch.set_num_threads set both."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from opgrad.torch import _conv  # noqa: E402

from _timing import blocks  # noqa: E402
from bench_gemm import fma_peak, fma_peak_binary  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# name: (N, Cin, H, W, Cout, k, stride, pad, groups)
SHAPES = {
    "r18_3x3": (8, 64, 56, 56, 64, 3, 1, 1, 1),
    "r50_1x1_up": (8, 64, 56, 56, 256, 1, 1, 0, 1),
    "r50_1x1_dn": (8, 256, 56, 56, 64, 1, 1, 0, 1),
    "r18_c128": (8, 128, 28, 28, 128, 3, 1, 1, 1),
    "r18_s2": (8, 128, 56, 56, 128, 3, 2, 1, 1),
    "r18_c512": (8, 512, 7, 7, 512, 3, 1, 1, 1),
    "dw_c64": (8, 64, 56, 56, 64, 3, 1, 1, 64),
    "cnn1": (32, 3, 32, 32, 32, 3, 1, 1, 1),
    "cnn2": (32, 32, 16, 16, 64, 3, 1, 1, 1),
}
QUICK = ("cnn1", "cnn2", "r18_c512")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--shapes", default=None, help="comma-separated names: " + ",".join(SHAPES))
    ap.add_argument("--quick", action="store_true", help="3 small shapes, short blocks")
    ap.add_argument("--reps", type=int, default=None)
    a = ap.parse_args()
    names = a.shapes.split(",") if a.shapes else (QUICK if a.quick else tuple(SHAPES))
    min_s, reps = (0.05, 3) if a.quick else (0.4, 5)
    if a.reps:
        reps = a.reps
    threads = [int(s) for s in a.threads.split(",")]
    peak, isa = fma_peak(fma_peak_binary(opgrad.library_path), threads, 100 if a.quick else 300,
                         3)
    print("# torch %s, opgrad %s; fp32 FMA peak (%s): %s" % (
        torch.__version__, opgrad.library_path, isa,
        ", ".join("%d thr %.1f GFLOP/s" % kv for kv in sorted(peak.items())) or "n/a"))
    print("%-11s %-4s %3s %-3s %17s %17s %17s %6s %6s %5s %5s" % (
        "shape", "dt", "thr", "op", "opgrad new", "opgrad reuse", "torch", "ratio", "r_reuse",
        "peak", "t_pk"))
    for t in threads:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        pk = peak.get(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            for name in names:
                n, c, h, w_, k, ks, s, p, g = SHAPES[name]
                gen = torch.Generator().manual_seed(n + c + h + k)
                x = torch.randn(n, c, h, w_, generator=gen).to(dt)
                w = (torch.randn(k, c // g, ks, ks, generator=gen) / (c // g * ks * ks) ** 0.5
                     ).to(dt)
                st, pd, dl, op = (s, s), (p, p), (1, 1), (0, 0)
                y = F.conv2d(x, w, None, st, pd, dl, g)
                dy = torch.randn(y.shape, generator=gen).to(dt)
                flops = 2.0 * y.numel() * (c // g) * ks * ks
                yo = torch.empty_like(y)
                gx, gw = torch.empty_like(x), torch.empty_like(w)
                aten_bwd = torch.ops.aten.convolution_backward

                cases = [
                    ("fwd",
                     lambda: ot.conv2d(x, w, None, st, pd, dl, g),
                     lambda: _conv.convolution(x, w, None, st, pd, dl, False, op, g, out=yo),
                     lambda: F.conv2d(x, w, None, st, pd, dl, g)),
                    ("dX",
                     lambda: _conv.convolution_backward(dy, x, w, False, st, pd, dl, False, op, g,
                                                        (True, False, False)),
                     lambda: _conv.convolution_backward(dy, x, w, False, st, pd, dl, False, op, g,
                                                        (True, False, False),
                                                        outs=(gx, None, None)),
                     lambda: aten_bwd(dy, x, w, None, list(st), list(pd), list(dl), False,
                                      list(op), g, [True, False, False])),
                    ("dW",
                     lambda: _conv.convolution_backward(dy, x, w, False, st, pd, dl, False, op, g,
                                                        (False, True, False)),
                     lambda: _conv.convolution_backward(dy, x, w, False, st, pd, dl, False, op, g,
                                                        (False, True, False),
                                                        outs=(None, gw, None)),
                     lambda: aten_bwd(dy, x, w, None, list(st), list(pd), list(dl), False,
                                      list(op), g, [False, True, False])),
                ]
                for opn, og_new, og_reuse, pt in cases:
                    with torch.no_grad():
                        (nb, nm), (rb, rm), (tb, tm) = blocks([og_new, og_reuse, pt], min_s, reps)

                    def gf(sec):
                        return flops / sec * 1e-9

                    print("%-11s %-4s %3d %-3s %7.1f (%7.1f) %7.1f (%7.1f) %7.1f (%7.1f) "
                          "%6.2f %6.2f %5s %5s" % (
                              name, dn, t, opn, gf(nb), gf(nm), gf(rb), gf(rm), gf(tb), gf(tm),
                              tb / nb, tb / rb,
                              "%.2f" % (gf(nb) / pk) if pk else "-",
                              "%.2f" % (gf(tb) / pk) if pk else "-"), flush=True)


if __name__ == "__main__":
    main()
