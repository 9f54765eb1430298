#!/usr/bin/env python3
"""The GLU family as a framework runs it: opgrad.torch.swiglu / geglu (aclnnSwiGlu +
aclnnSwiGluGrad, aclnnGeGlu + aclnnGeGluBackward) against PyTorch's composed forms on the same
tensors, silu(a) * b and a * gelu(b) (a, b = x.chunk(2, -1)), outputs and gradients allocated per
call by autograd. Forward alone (no grad), and forward + backward (one training step). Best and
median of interleaved blocks.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_glu.py \
        [--threads 1,2] [--dtypes fp32,bf16] [--rows 8192] [--half 4096] [--quick]

GB/s counts the ideal traffic: forward reads x (2 n) and writes out (n) [geglu: and outGelu,
n more]; the step adds the backward's reads of dy (n) and x (2 n) [geglu: and gelu, n] and its
write of dx (2 n); n = rows * half elements of the dtype. "frac" = that GB/s over a same-process
probe: torch.mul(a, b, out=c) on fp32 views of buffers of the same byte sizes (read 2, write 1),
timed interleaved with the ops (this is not bench/bwprobe.c, the C probe with non-temporal
stores; it is the simplest honest probe from Python)."""
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


def pt_swiglu(x):
    a, b = x.chunk(2, -1)
    return F.silu(a) * b


def pt_geglu(x):
    a, b = x.chunk(2, -1)
    return a * F.gelu(b)


CASES = [("swiglu", lambda x: ot.swiglu(x, -1), pt_swiglu, 3, 5),
         ("geglu", lambda x: ot.geglu(x, -1, "none"), pt_geglu, 4, 6)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--half", type=int, default=4096)
    ap.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    a = ap.parse_args()
    min_s, reps = (0.05, 2) if a.quick else (0.5, 5)
    rows, h = a.rows, a.half
    print("op     dtype thr  pass   opgrad ms (med)   torch ms (med)   speedup  opgrad GB/s  "
          "probe GB/s  frac  max|diff|")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            es = torch.empty(0, dtype=dt).element_size()
            gen = torch.Generator().manual_seed(rows + h)
            x = (torch.rand(rows, 2 * h, generator=gen) * 8 - 4).to(dt).requires_grad_()
            g = torch.randn(rows, h, generator=gen).to(dt)
            for name, og, pt, fwd_units, bwd_units in CASES:
                n = rows * h
                with torch.no_grad():
                    diff = (og(x).double() - pt(x).double()).abs().max().item()
                for pas, units in (("fwd", fwd_units), ("step", fwd_units + bwd_units)):
                    nbytes = units * n * es
                    # probe: c = a * b over fp32 buffers of nbytes / 3 bytes each (read 2, write 1)
                    pe = max(nbytes // 3 // 4, 1)
                    pa, pb, pc = torch.rand(pe), torch.rand(pe), torch.empty(pe)

                    def probe():
                        torch.mul(pa, pb, out=pc)

                    if pas == "fwd":
                        def run_og():
                            with torch.no_grad():
                                og(x)

                        def run_pt():
                            with torch.no_grad():
                                pt(x)
                    else:
                        def run_og():
                            x.grad = None
                            og(x).backward(g)

                        def run_pt():
                            x.grad = None
                            pt(x).backward(g)
                    (ob, om), (pb_, pm), (qb, qm) = blocks([run_og, run_pt, probe], min_s, reps)
                    gbs, probe_gbs = nbytes / om * 1e-9, 3 * pe * 4 / qm * 1e-9
                    print("%-6s %-5s %3d  %-5s %8.2f (%7.2f) %8.2f (%7.2f) %8.2f %11.1f %11.1f "
                          "%5.2f  %.1e" % (name, dn, t, pas, ob * 1e3, om * 1e3, pb_ * 1e3,
                                           pm * 1e3, pm / om, gbs, probe_gbs, gbs / probe_gbs,
                                           diff), flush=True)


if __name__ == "__main__":
    main()
