#!/usr/bin/env python3
"""One optimizer step and the AMP unscale on opgrad against PyTorch (run it with PyTorch 1.13's
/usr/bin/python3 and with a PyTorch 2.x venv: bench/run_optim.sh runs both), on parameter sets
of 1 M (the state fits in L3: 16 MB) and 10 M fp32 parameters (160 MB, DRAM), each split into
tensors like a network's (a quarter in 4 large matrices, the rest in 1,000 small tensors):

    adamw   opgrad.torch.optim.AdamW (aclnnFusedAdamw)  vs torch.optim.AdamW foreach=True, and
            fused=True where the PyTorch has a CPU fused AdamW (2.4+)
    sgd     opgrad.torch.optim.SGD, momentum 0.9 (aclnnFusedSgd)  vs torch.optim.SGD foreach=True
    unscale opgrad.torch.amp.GradScaler.unscale_ (aclnnForeachNonFiniteCheckAndUnscale; scale 1,
            so the gradients keep their values)  vs
            torch._amp_foreach_non_finite_check_and_unscale_ (where it has a CPU kernel)

Best and median of interleaved blocks (bench/_timing.py). "GB/s" counts the bytes a step must
move (AdamW: read p, g, m, v and write p, m, v: 28 bytes per parameter; SGD: read p, g, buf,
write p, buf: 20; unscale: read and write g: 8); "of probe" is that rate over the same-run
bandwidth of torch's fp32 mul on as many bytes (read 1, write 1), "x" the best peer's time over
opgrad's.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \\
        bench/bench_optim.py [--threads 2] [--sizes 1,10] [--quick]"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402

import opgrad  # noqa: E402
from opgrad.torch import amp  # noqa: E402
from opgrad.torch.optim import SGD, AdamW  # noqa: E402
from _timing import blocks, timed  # noqa: E402


def probe(nbytes, min_s, reps):
    a = torch.ones(max(nbytes // 8, 1))
    c = torch.empty_like(a)
    best, _ = timed(lambda: torch.mul(a, 1.0001, out=c), min_s, reps)
    return a.numel() * 8 / best * 1e-9


def make_params(millions, gen):
    n = int(millions * 1e6)
    big = n // 4 // 4
    shapes = [(big,)] * 4
    rest = n - 4 * big
    shapes += [(rest // 1000,)] * 999 + [(rest - 999 * (rest // 1000),)]
    ps = [torch.nn.Parameter(torch.randn(s, generator=gen) * 0.1) for s in shapes]
    for p in ps:
        p.grad = torch.randn(p.shape, generator=gen) * 0.01
    return ps


def clone(ps):
    qs = [torch.nn.Parameter(p.detach().clone()) for p in ps]
    for p, q in zip(ps, qs):
        q.grad = p.grad.clone()
    return qs


def has_fused_adamw():
    try:
        p = torch.nn.Parameter(torch.zeros(4))
        p.grad = torch.zeros(4)
        torch.optim.AdamW([p], fused=True).step()
        return True
    except (RuntimeError, TypeError, ValueError):
        return False


def has_unscale():
    try:
        torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(2)], torch.zeros(1),
                                                         torch.ones(1))
        return True
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


class Stub:
    """What GradScaler.unscale_ reads of an optimizer."""

    def __init__(self, params):
        self.param_groups = [{"params": params}]


def report(name, millions, threads, bpp, times, names, bw):
    n = millions * 1e6
    og = times[0]
    peers = [(nm, t) for nm, t in zip(names[1:], times[1:])]
    best_peer = min(t[0] for _, t in peers) if peers else float("nan")
    gbs = n * bpp / og[0] * 1e-9
    cols = "  ".join("%s %.2f (%.2f) ms" % (nm, t[0] * 1e3, t[1] * 1e3) for nm, t in peers)
    print("%-8s %5.0fM %2d  opgrad %.2f (%.2f) ms  %s  x%.2f  %.1f GB/s %3.0f%% of probe"
          % (name, millions, threads, og[0] * 1e3, og[1] * 1e3, cols, best_peer / og[0], gbs,
             100 * gbs / bw), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="2")
    ap.add_argument("--sizes", default="1,10")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    min_s, reps = (0.2, 3) if a.quick else (1.0, 7)
    print("torch %s, opgrad %s" % (torch.__version__, opgrad.version()))
    fused = has_fused_adamw()
    unscale = has_unscale()
    gen = torch.Generator().manual_seed(0)
    for t in (int(x) for x in a.threads.split(",")):
        torch.set_num_threads(t)
        opgrad.set_num_threads(t)
        for m in (float(x) for x in a.sizes.split(",")):
            ps = make_params(m, gen)
            bw = probe(int(m * 1e6 * 8), min_s, reps)
            # AdamW
            o = AdamW(ps, lr=1e-4)
            fns, names = [o.step], ["opgrad"]
            qs = clone(ps)
            fe = torch.optim.AdamW(qs, lr=1e-4, foreach=True)
            fns.append(fe.step), names.append("foreach")
            if fused:
                rs = clone(ps)
                fu = torch.optim.AdamW(rs, lr=1e-4, fused=True)
                fns.append(fu.step), names.append("fused")
            report("adamw", m, t, 28, blocks(fns, min_s, reps), names, bw)
            del qs, fe
            # SGD with momentum
            o = SGD(ps, lr=1e-4, momentum=0.9)
            qs = clone(ps)
            fe = torch.optim.SGD(qs, lr=1e-4, momentum=0.9, foreach=True)
            report("sgd", m, t, 20, blocks([o.step, fe.step], min_s, reps), ["opgrad", "foreach"],
                   bw)
            del qs, fe
            # unscale (1/1 keeps the gradients' values from step to step)
            grads = [p.grad for p in ps]
            found, inv = torch.zeros(1), torch.ones(1)
            scaler, stub = amp.GradScaler(init_scale=1.0), Stub(ps)
            fns = [lambda: (scaler.unscale_(stub), scaler._states.clear())]
            names = ["opgrad"]
            if unscale:
                g2 = [g.clone() for g in grads]
                fns.append(lambda: torch._amp_foreach_non_finite_check_and_unscale_(g2, found,
                                                                                    inv))
                names.append("torch")
            report("unscale", m, t, 8, blocks(fns, min_s, reps), names, bw)
            del ps


if __name__ == "__main__":
    main()
