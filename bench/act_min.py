#!/usr/bin/python3
"""Best-of-many timing of opgrad operators against PyTorch's CPU kernels (one process).

    /usr/bin/python3 bench/act_min.py [--lib build-perf/libopgrad.so] [--ops silu,elu,...]
                                      [--sizes 12,16,20] [--threads 1] [--calls 400] [--dtypes fp32,bf16]

bench/torch_ops.py times blocks and reports medians, which on a shared 2-core VM mostly measure
the other tenants. This script times single calls, alternating opgrad and torch call by call, and
reports the MINIMUM and the median per element: the minimum is the cost of the code when nothing
interferes. Same operators, inputs (x, g uniform in [-6, 6], shape [n/1024, 1024]) and planning
(repeatable executor, phase 2 only, preallocated outputs) as torch_ops.py, whose tables it reuses.
ratio = torch / opgrad (> 1: opgrad faster).
"""
import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch_ops as T  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib")
    ap.add_argument("--ops", default="silu,silu_bwd,sigmoid,softplus,softplus_bwd,hardswish,hardswish_bwd,elu,elu_bwd")
    ap.add_argument("--sizes", default="12,16,20")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--calls", type=int, default=400, help="timed calls per variant at 2^16 (scaled by size)")
    ap.add_argument("--dtypes", default="fp32", help="fp32,bf16,fp16 (torch must have the 16-bit kernel)")
    a = ap.parse_args()
    og = T.Opgrad(T.find_lib(a.lib))
    ops = {o[0]: o for o in T.OPS}
    want = a.ops.split(",")
    print("# act_min: %s, kernels %s; best (median) ns per element of single calls; ratio = torch / opgrad"
          % (og.path, og.lib.opgrad_isa_name(og.lib.opgrad_active_isa()).decode()))
    print("%-14s %5s %5s %3s %17s %17s %15s" % ("op", "dtype", "n", "thr", "opgrad ns/el", "torch ns/el",
                                                 "ratio best(med)"))
    for dname, lg in [(d, int(s)) for d in a.dtypes.split(",") for s in a.sizes.split(",")]:
        dt, acl = T.DTYPES[dname]
        n = 1 << lg
        R, W = max(n // T.W, 1), T.W  # n >= 2^10
        gen = torch.Generator().manual_seed(n)
        tens = T.make_inputs(R, dt, gen)
        calls = max(20, min(20000, a.calls * (1 << 16) // n))
        for t in [int(s) for s in a.threads.split(",")]:
            torch.set_num_threads(t)
            og.lib.opgrad_set_num_threads(t)
            for name in want:
                op = ops[name]
                ins = T.op_inputs(op, tens)
                shape = (R,) if op[1] == "r" else (R, W)
                out_og, out_t = torch.zeros(shape, dtype=dt), torch.zeros(shape, dtype=dt)
                call = T.OgCall(og, op, acl, ins, out_og, T.extra_outputs(op, dt))
                tfn = (lambda: op[4](ins, out_t)) if op[4] else (lambda: op[5](ins))  # noqa: E731
                for _ in range(5):
                    call(), tfn()
                to, tt = [], []
                gc.disable()
                pc = time.perf_counter
                for _ in range(calls):
                    t0 = pc(); call(); t1 = pc(); tfn(); t2 = pc()  # noqa: E702
                    to.append(t1 - t0), tt.append(t2 - t1)
                gc.enable()
                call.close()
                bo, bt, mo, mt = min(to), min(tt), T.med(to), T.med(tt)
                print("%-14s %5s %5s %3d %8.3f (%6.3f) %8.3f (%6.3f) %6.2fx (%5.2fx)" % (
                    name, dname, T.size_label(n), t, bo / n * 1e9, mo / n * 1e9, bt / n * 1e9, mt / n * 1e9,
                    bt / bo, mt / mo), flush=True)


if __name__ == "__main__":
    main()
