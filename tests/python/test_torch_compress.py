#!/usr/bin/env python3
"""opgrad.torch's gradient compressors (compress_cast / compress_topk / decompress_topk /
compress_sign / decompress_sign, issue 15) against the same computation written with PyTorch's own
operators, in fp32 / fp16 / bf16 inputs; outputs passed in (out=) equal fresh ones; bad input
raises OpgradError naming the argument.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \\
        tests/python/test_torch_compress.py
"""
import sys

import torch

import opgrad.torch as ot
from opgrad import OpgradError

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL", what)


def main():
    g = torch.Generator().manual_seed(0)
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        n = 30011
        x = torch.randn(n, generator=g).to(dt)
        r0 = 0.05 * torch.randn(n, generator=g)
        y = x.float() + r0  # the compressors' y = x + residual (fp32)
        for to in (torch.float16, torch.bfloat16):
            r = r0.clone()
            c = ot.compress_cast(x, r, to)
            check(torch.equal(c, y.to(to)), "cast %s -> %s: torch's rounding" % (dt, to))
            check(torch.equal(c.float() + r, y), "cast %s -> %s: residual identity" % (dt, to))
            out = torch.empty(n, dtype=to)
            ot.compress_cast(x, None, to, out=out)
            check(torch.equal(out, x.float().to(to)), "cast %s -> %s out=" % (dt, to))
        k = 300
        r = r0.clone()
        v, i = ot.compress_topk(x, k, r)
        want = y.abs().topk(k).indices.sort().values  # distinct magnitudes here: no ties
        check(torch.equal(i, want), "topk %s: indices" % dt)
        check(torch.equal(v, y[want]), "topk %s: values" % dt)
        dense = ot.decompress_topk(v, i, n)
        check(torch.equal(dense + r, y), "topk %s: residual identity" % dt)
        bits, s = ot.compress_sign(x, None)
        check(abs(s.item() - x.double().abs().mean().item()) <= 1e-6 * s.item(),
              "sign %s: scale" % dt)
        signs = ot.decompress_sign(bits, s, n)
        check(torch.equal(signs, torch.where(x.float() >= 0, s, -s)), "sign %s: values" % dt)
    # orthonormalize: the columns of QR's Q up to their signs
    p = torch.randn(500, 3, generator=g)
    q = torch.linalg.qr(p.double()).Q
    o = ot.orthonormalize(p.clone())
    sgn = torch.sign((o.double() * q).sum(0))
    check((o.double() - q * sgn).abs().max().item() < 1e-6, "orthonormalize vs QR")
    # bad input
    try:
        ot.compress_cast(torch.zeros(4), torch.zeros(3), torch.float16)
        check(False, "a residual of another shape is refused")
    except OpgradError as e:
        check(e.status == 161002 and "residualRef" in e.message, "residual shape message")
    try:
        ot.compress_topk(torch.zeros(4), 5)
        check(False, "k > n is refused")
    except OpgradError as e:
        check(e.status == 161002 and "k = 5" in e.message, "k > n message")
    print("test_torch_compress: %s" % ("FAILED" if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
