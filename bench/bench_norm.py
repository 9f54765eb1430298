#!/usr/bin/env python3
"""LayerNorm and RMSNorm, forward and backward, through opgrad.torch against PyTorch, with outputs
allocated per call, as a fraction of a same-run bandwidth probe.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 bench/bench_norm.py \
        [--threads 2] [--dtypes fp32,bf16] [--quick]

What is timed (one call each, every output allocated by the call):
  ln fwd   torch.ops.opgrad.layer_norm_fwd (y, mean, rstd)     vs torch.native_layer_norm
  ln bwd   torch.ops.opgrad.layer_norm_backward (dx, dw, db)   vs aten.native_layer_norm_backward
  rms fwd  torch.ops.opgrad.rms_norm_fwd (y, rstd)             vs F.rms_norm where it exists, else
                                                                  x * rsqrt(mean(x^2) + eps) * w
  rms bwd  torch.ops.opgrad.rms_norm_backward (dx, dgamma)     vs autograd.grad through that
                                                                  forward's graph (dx, dw)
each backward from its own forward's saved statistics. Ideal traffic: forwards read x and write y
(2 n es), backwards read dy and x and write dx (3 n es); the statistics and weights are a row's
worth or less. "frac" = ideal GB/s / probe GB/s, the probe being torch.mul on fp32 views of the
same bytes (rd1wr1 for forwards: mul(a, 1, out=c); rd2wr1 for backwards: mul(a, b, out=c)),
interleaved with the operators. Medians of --reps blocks, rotated."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch  # noqa: E402,F401  (registers torch.ops.opgrad)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
OG = torch.ops.opgrad
ATEN = torch.ops.aten


def timeit(fns, min_s, reps):
    """Median seconds per call of each fn, blocks interleaved in rotating order."""
    calls = []
    for f in fns:
        f()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < min_s / 4:
            f()
            n += 1
        calls.append(max(n, 1))
    times = [[] for _ in fns]
    for r in range(reps):
        for j in range(len(fns)):
            i = (j + r) % len(fns)
            time.sleep(0.02)  # let the other library's idle workers sleep (2 vCPUs)
            fns[i]()
            t0 = time.perf_counter()
            for _ in range(calls[i]):
                fns[i]()
            times[i].append((time.perf_counter() - t0) / calls[i])
    return [sorted(t)[len(t) // 2] for t in times]


def torch_rms(x, w, eps):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="2")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    shapes = [(8192, 1024), (4096, 4096)]
    if a.quick:
        shapes = [(2048, 1024)]
    min_s, reps = (0.05, 3) if a.quick else (0.3, 5)
    print("# torch %s; frac = ideal GB/s / same-run torch.mul probe GB/s" % torch.__version__)
    print("%-10s %-5s %3s %-7s %9s %9s %7s %9s %6s %6s" % ("shape", "dtype", "thr", "op",
                                                          "opgrad_ms", "torch_ms", "speedup",
                                                          "og_GB/s", "frac", "t_frac"))
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for dn in a.dtypes.split(","):
            dt = DTYPES[dn]
            es = torch.tensor([], dtype=dt).element_size()
            for rows, R in shapes:
                gen = torch.Generator().manual_seed(rows + R)
                x = torch.randn(rows, R, generator=gen).to(dt)
                g = torch.randn(rows, R, generator=gen).to(dt)
                w = (torch.rand(R, generator=gen) + 0.5).to(dt)
                b = torch.randn(R, generator=gen).to(dt)
                ns, eps = [R], 1e-5
                n = rows * R
                # the probe: fp32 views of the same number of bytes
                nf = n * es // 4
                pa, pb, pc = torch.randn(nf), torch.randn(nf), torch.empty(nf)
                _, om, orr = OG.layer_norm_fwd(x, ns, w, b, eps)
                _, tm, trr = torch.native_layer_norm(x, ns, w, b, eps)
                _, orms = OG.rms_norm_fwd(x, w, eps)
                xr = x.clone().requires_grad_()
                wr = w.clone().requires_grad_()
                yr = torch_rms(xr, wr, eps)
                cases = [
                    ("ln_fwd", 2, lambda: OG.layer_norm_fwd(x, ns, w, b, eps),
                     lambda: torch.native_layer_norm(x, ns, w, b, eps),
                     lambda: torch.mul(pa, 1.0, out=pc)),
                    ("ln_bwd", 3, lambda: OG.layer_norm_backward(g, x, ns, om, orr, w, b,
                                                                 [True, True, True]),
                     lambda: ATEN.native_layer_norm_backward(g, x, ns, tm, trr, w, b,
                                                             [True, True, True]),
                     lambda: torch.mul(pa, pb, out=pc)),
                    ("rms_fwd", 2, lambda: OG.rms_norm_fwd(x, w, eps),
                     lambda: torch_rms(x, w, eps), lambda: torch.mul(pa, 1.0, out=pc)),
                    ("rms_bwd", 3, lambda: OG.rms_norm_backward(g, x, orms, w),
                     lambda: torch.autograd.grad(yr, (xr, wr), g, retain_graph=True),
                     lambda: torch.mul(pa, pb, out=pc)),
                ]
                for name, streams, og, pt, probe in cases:
                    with torch.no_grad() if name != "rms_bwd" else torch.enable_grad():
                        o, p, pr = timeit([og, pt, probe], min_s, reps)
                    ideal = streams * n * es
                    probe_gbs = (3 if streams == 3 else 2) * nf * 4 / pr * 1e-9
                    print("%-10s %-5s %3d %-7s %9.3f %9.3f %7.2f %9.1f %6.2f %6.2f"
                          % ("%dx%d" % (rows, R), dn, t, name, o * 1e3, p * 1e3, p / o,
                             ideal / o * 1e-9, ideal / o * 1e-9 / probe_gbs,
                             ideal / p * 1e-9 / probe_gbs), flush=True)


if __name__ == "__main__":
    main()
