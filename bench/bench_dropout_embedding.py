#!/usr/bin/env python3
"""Dropout and Embedding forward + backward through opgrad.torch against PyTorch, outputs and
gradients allocated per call by autograd (as a training step runs them). Best and median of
interleaved blocks; GB/s counts the bytes each operator must move; "probe" is the same-run
bandwidth of torch's fp32 mul on the same bytes (read 1, write 1: the simplest honest probe in
Python, not bench/bwprobe.c), and "of probe" the fraction of it opgrad reaches.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \
        bench/bench_dropout_embedding.py [--threads 1,2] [--dtypes fp32,bf16] [--quick]

dropout: 2^24 elements, p = 0.1; forward reads x, writes y and the mask (PyTorch: a bool mask,
one byte per element; opgrad: aclnn's bit mask), backward reads dy and the mask, writes dx.
embedding: weight 32000 x 1024, 8192 indices: forward gathers 8192 rows, the dense backward
writes the whole [32000, 1024] gradient (zeros where no index points) and sums 8192 rows."""
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


def probe(nbytes, min_s, reps):
    """GB/s of torch's fp32 mul reading and writing nbytes / 2 each."""
    a = torch.ones(max(nbytes // 8, 1))
    c = torch.empty_like(a)
    best, _ = timed(lambda: torch.mul(a, 1.0001, out=c), min_s, reps)
    return a.numel() * 8 / best * 1e-9


def row(name, dn, t, nbytes, og, pt, bw):
    (ob, om), (pb, pm) = og, pt
    print("%-22s %-5s %3d %9.2f (%6.2f) %9.2f (%6.2f) %7.2f %8.1f %8.1f %6.0f%%"
          % (name, dn, t, ob * 1e3, om * 1e3, pb * 1e3, pm * 1e3, pb / ob, nbytes / ob * 1e-9,
             bw, 100 * nbytes / ob * 1e-9 / bw), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    min_s, reps = (0.05, 3) if a.quick else (0.3, 5)
    n = 1 << 24
    V, D, N = 32000, 1024, 8192
    print("case                   dtype thr  opgrad ms (median)   torch ms (median)   ratio  "
          "GB/s    probe  of probe")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            es = torch.tensor([], dtype=dt).element_size()
            gen = torch.Generator().manual_seed(1)
            # ---- dropout
            x = torch.randn(n, generator=gen).to(dt).requires_grad_()
            g = torch.randn(n, generator=gen).to(dt)

            def og_fwd():
                return ot.dropout(x.detach(), 0.1, seed=5)

            def pt_fwd():
                return F.dropout(x.detach(), 0.1)

            def og_step():
                x.grad = None
                ot.dropout(x, 0.1, seed=5).backward(g)

            def pt_step():
                x.grad = None
                F.dropout(x, 0.1).backward(g)

            fwd_bytes = 2 * n * es + n // 8
            bw = probe(fwd_bytes, min_s, reps)
            row("dropout 2^24 fwd", dn, t, fwd_bytes, timed(og_fwd, min_s, reps),
                timed(pt_fwd, min_s, reps), bw)
            step_bytes = fwd_bytes + 2 * n * es + n // 8
            row("dropout 2^24 fwd+bwd", dn, t, step_bytes, timed(og_step, min_s, reps),
                timed(pt_step, min_s, reps), bw)
            # ---- embedding
            w = torch.randn(V, D, generator=gen).to(dt).requires_grad_()
            idx = torch.randint(0, V, (N,), generator=gen)
            ge = torch.randn(N, D, generator=gen).to(dt)

            def og_efwd():
                return ot.embedding(idx, w.detach())

            def pt_efwd():
                return F.embedding(idx, w.detach())

            def og_estep():
                w.grad = None
                ot.embedding(idx, w).backward(ge)

            def pt_estep():
                w.grad = None
                F.embedding(idx, w).backward(ge)

            efwd_bytes = 2 * N * D * es + N * 8
            row("embedding fwd", dn, t, efwd_bytes, timed(og_efwd, min_s, reps),
                timed(pt_efwd, min_s, reps), bw)
            estep_bytes = efwd_bytes + N * D * es + V * D * es + N * 8
            row("embedding fwd+dense bwd", dn, t, estep_bytes, timed(og_estep, min_s, reps),
                timed(pt_estep, min_s, reps), bw)


if __name__ == "__main__":
    main()
