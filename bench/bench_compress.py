#!/usr/bin/env python3
"""Gradient compression (issue 15): the compressor kernels through opgrad.torch against the same
computation written with PyTorch's own operators, and the DistributedDataParallel table.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_compress.py \\
        [--sizes 1000000,10000000] [--dtypes float32,bfloat16] [--threads 2] [--ddp 2,4]

Kernels: each compressor on x (the dtype) + an fp32 residual (error feedback), k = 1 % for top-k;
"new" allocates the outputs per call, "reused" passes preallocated ones (out=). The PyTorch
twin: y = x + r, then y.to(bf16) / y.abs().topk(k) / (y >= 0) packed with a weighted sum, and the
residual update. Bandwidth: bytes the kernel must move (x, r read, r written, the message
written) per second, and that as a fraction of a same-run probe (torch.mul over fp32 buffers of
the same total bytes: read 2, write 1). --ddp: trains the digits model with every hook on W
gloo workers (tests/python/test_ddp.py) and prints the compression table (bytes/step, step
time, final accuracy against uncompressed) as Markdown."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import torch  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from _timing import blocks  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
W8 = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8)


def pt_cast(x, r):
    y = x.float() + r
    o = y.to(torch.bfloat16)
    r.copy_(y - o.float())
    return o


def pt_topk(x, r, k):
    y = x.float() + r
    idx = y.abs().topk(k, sorted=False).indices.sort().values
    v = y[idx]
    y[idx] = 0
    r.copy_(y)
    return v, idx


def pt_sign(x, r):
    y = x.float() + r
    s = y.abs().mean()
    pos = y >= 0
    n = y.numel()
    pad = torch.zeros((n + 7) // 8 * 8, dtype=torch.uint8)
    pad[:n] = pos
    bits = (pad.view(-1, 8) * W8).sum(1, dtype=torch.uint8)
    r.copy_(y - torch.where(pos, s, -s))
    return bits, s


def kernels(a):
    print("op        dtype     n          threads  opgrad new ms  reused ms  torch ms  "
          "torch/og  GB/s   probe GB/s  frac")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for n in [int(s) for s in a.sizes.split(",")]:
            for dn in a.dtypes.split(","):
                dt = DTYPES[dn]
                es = torch.empty(0, dtype=dt).element_size()
                g = torch.Generator().manual_seed(n)
                x = torch.randn(n, generator=g).to(dt)
                r1, r2 = torch.zeros(n), torch.zeros(n)
                k = max(1, n // 100)
                ob, vb, ib = torch.empty(n, dtype=torch.bfloat16), torch.empty(k), \
                    torch.empty(k, dtype=torch.int64)
                bb, sb = torch.empty((n + 7) // 8, dtype=torch.uint8), torch.empty(1)
                cases = [
                    ("cast", lambda: ot.compress_cast(x, r1, torch.bfloat16),
                     lambda: ot.compress_cast(x, r1, torch.bfloat16, out=ob),
                     lambda: pt_cast(x, r2), n * (es + 8 + 2)),
                    ("topk1%", lambda: ot.compress_topk(x, k, r1),
                     lambda: ot.compress_topk(x, k, r1, values=vb, indices=ib),
                     lambda: pt_topk(x, r2, k), n * (es + 8) + k * 12),
                    ("sign", lambda: ot.compress_sign(x, r1),
                     lambda: ot.compress_sign(x, r1, bits=bb, scale=sb),
                     lambda: pt_sign(x, r2), n * (es + 8) + n // 8),
                ]
                for name, og_new, og_reuse, pt, nbytes in cases:
                    pe = max(nbytes // 3 // 4, 1)
                    pa, pb, pc = torch.rand(pe), torch.rand(pe), torch.empty(pe)

                    def probe():
                        torch.mul(pa, pb, out=pc)

                    (nb_, nm), (rb_, rm), (tb_, tm), (qb, qm) = blocks(
                        [og_new, og_reuse, pt, probe], a.min_s, a.reps)
                    gbs, pgbs = nbytes / rb_ * 1e-9, 3 * pe * 4 / qb * 1e-9
                    print("%-9s %-9s %-10d %-7d  %13.3f  %9.3f  %8.3f  %8.2f  %5.1f  %10.1f  %4.2f"
                          % (name, dn, n, t, nb_ * 1e3, rb_ * 1e3, tb_ * 1e3, tb_ / rb_, gbs,
                             pgbs, gbs / pgbs))


def ddp_table(worlds, epochs):
    import test_ddp as T
    print("| workers | compressor | bytes/step (per worker) | vs fp32 | step ms | test acc % "
          "| vs uncompressed |")
    print("|---|---|---|---|---|---|---|")
    for w in worlds:
        res = T.run(world=w, epochs=epochs)
        runs = {x["name"]: x for x in res[0]["runs"]}
        base = runs["none"]["acc"]
        for name in T.NAMES:
            x = runs[name]
            print("| %d | %s | %.0f | %.1fx | %.2f | %.2f | %+.2f |"
                  % (w, name, x["bytes_per_step"], x["compression"], x["step_ms"], x["acc"],
                     x["acc"] - base))
        fails = [f for o in res for f in o["codec_fails"]]
        print("\n(%d workers: codec checks %s)\n" % (w, "ok" if not fails else fails))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000000,10000000")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--threads", default="2")
    p.add_argument("--min-s", type=float, default=0.2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--ddp", default="", help="worker counts for the DDP table, e.g. 2,4")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--no-kernels", action="store_true")
    a = p.parse_args()
    if not a.no_kernels:
        kernels(a)
    if a.ddp:
        ddp_table([int(s) for s in a.ddp.split(",")], a.epochs)


if __name__ == "__main__":
    main()
