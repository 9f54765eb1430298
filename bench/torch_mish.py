#!/usr/bin/python3
"""opgrad's aclnnMish / aclnnMishBackward against PyTorch's CPU kernels, in one process.

Run with Debian's /usr/bin/python3 and python3-torch (1.13):
    /usr/bin/python3 bench/torch_mish.py [--lib build-bench/libopgrad.so] [--quick] [--csv FILE]

libopgrad.so is loaded with ctypes. Its operators run on the data of torch tensors (aclCreateTensor
with the tensor's shape, strides and data_ptr), planned once per (dtype, n, threads) with a
repeatable executor; the workspace is a torch uint8 tensor. Both libraries get the same thread
count (torch.set_num_threads and opgrad_set_num_threads; torch defaults to 1 thread here).

Variants (the allocation policy matters: a fresh 64 MiB output costs page faults on every call):
  torch  mish_fwd  [out]     torch.ops.aten.mish.out(x, out=y)          preallocated output
  torch  mish_fwd  [alloc]   F.mish(x)                                  new output per call
  torch  mish_bwd  [alloc]   torch.ops.aten.mish_backward(g, x)        (no out= variant exists)
  torch  *         [upcast]  F.mish(x.float()).to(dt) / mish_backward(g.float(), x.float()).to(dt):
                             the workaround where torch has no bf16/fp16 kernel (it allocates)
  opgrad *         [prealloc] one phase-2 call into a preallocated output
  opgrad *         [alloc]   torch.empty_like(x) + aclSetOutputTensorAddr + one phase-2 call
"speed-up" = torch time / opgrad time under the same policy ([out] vs [prealloc]; [alloc] and
[upcast] vs [alloc]). Timing: warm-up, then blocks of calls lasting >= --min-run-ms, --runs blocks
per variant interleaved in rotating order; medians. CPU time of other processes during a group is
read from /proc/stat ("foreign", CPUs); above --max-foreign the group is repeated (--retries).
Outputs are compared with torch's (fp32: allclose rtol 1e-5, atol 1e-6; bf16/fp16: within one
ulp of the dtype against the upcast result) and both with a float64 evaluation.
"""
import argparse
import ctypes
import gc
import glob
import os
import sys
import time

import torch
import torch.nn.functional as F

A = torch.ops.aten
ACL_FLOAT, ACL_FLOAT16, ACL_BF16 = 0, 1, 27
ACL_FORMAT_ND = 2
DTYPES = {
    "fp32": (torch.float32, ACL_FLOAT),
    "bf16": (torch.bfloat16, ACL_BF16),
    "fp16": (torch.float16, ACL_FLOAT16),
}
# (rtol, atol) of the opgrad-vs-torch check
TOL = {"fp32": (1e-5, 1e-6), "bf16": (2.0 ** -7, 1e-5), "fp16": (2.0 ** -10, 1e-5)}
CLK = os.sysconf("SC_CLK_TCK")

c_void_p, c_uint64, c_int64, c_int, c_size_t = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64,
                                                ctypes.c_int, ctypes.c_size_t)


# ------------------------------------------------------------------------------------------------
# opgrad through ctypes

def find_lib(explicit):
    if explicit:
        return explicit
    if os.environ.get("OPGRAD_LIB"):
        return os.environ["OPGRAD_LIB"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cands = [os.path.join(root, "build-bench", "libopgrad.so")]
    cands += sorted(glob.glob(os.path.join(root, "build*", "libopgrad.so")), key=os.path.getmtime, reverse=True)
    for c in cands:
        if os.path.exists(c):
            return c
    sys.exit("torch_mish.py: libopgrad.so not found; build it (bench/run.sh) or pass --lib PATH")


class Opgrad:
    def __init__(self, path):
        self.path = path
        L = self.lib = ctypes.CDLL(path)
        I64P = ctypes.POINTER(c_int64)
        L.aclCreateTensor.restype = c_void_p
        L.aclCreateTensor.argtypes = [I64P, c_uint64, c_int, I64P, c_int64, c_int, I64P, c_uint64, c_void_p]
        L.aclDestroyTensor.argtypes = [c_void_p]
        for name in ("aclnnMishGetWorkspaceSize",):
            getattr(L, name).argtypes = [c_void_p, c_void_p, ctypes.POINTER(c_uint64), ctypes.POINTER(c_void_p)]
        L.aclnnMishBackwardGetWorkspaceSize.argtypes = [c_void_p, c_void_p, c_void_p, ctypes.POINTER(c_uint64),
                                                        ctypes.POINTER(c_void_p)]
        for name in ("aclnnMish", "aclnnMishBackward"):
            getattr(L, name).argtypes = [c_void_p, c_uint64, c_void_p, c_void_p]
            getattr(L, name).restype = ctypes.c_int32
        L.aclSetAclOpExecutorRepeatable.argtypes = [c_void_p]
        L.aclDestroyAclOpExecutor.argtypes = [c_void_p]
        L.aclSetOutputTensorAddr.argtypes = [c_void_p, c_size_t, c_void_p, c_void_p]
        L.aclGetRecentErrMsg.restype = ctypes.c_char_p
        L.opgrad_set_num_threads.argtypes = [c_int]
        L.opgrad_active_isa.restype = c_int
        L.opgrad_isa_name.restype = ctypes.c_char_p
        L.opgrad_isa_name.argtypes = [c_int]
        L.opgrad_version.restype = ctypes.c_char_p
        L.aclInit(None)

    def isa(self):
        return self.lib.opgrad_isa_name(self.lib.opgrad_active_isa()).decode()

    def version(self):
        return self.lib.opgrad_version().decode()

    def check(self, status, what):
        if status != 0:
            raise RuntimeError("%s failed (%d): %s" % (what, status, self.lib.aclGetRecentErrMsg().decode()))

    def tensor(self, t, acl_dtype):
        nd = t.dim()
        arr = c_int64 * max(nd, 1)
        dims, strides = arr(*t.shape), arr(*t.stride())
        # storage: the view's own extent (contiguous tensors here), data = the view's first element
        h = self.lib.aclCreateTensor(dims, nd, acl_dtype, strides, 0, ACL_FORMAT_ND, dims, nd, t.data_ptr())
        if not h:
            raise RuntimeError("aclCreateTensor: " + self.lib.aclGetRecentErrMsg().decode())
        return h


class OgCall:
    """A planned, repeatable opgrad executor over torch tensors: call() runs phase 2 once."""

    def __init__(self, og, op, acl_dtype, ins, out):
        self.og, self.L = og, og.lib
        self.ins, self.out = ins, out  # keep the tensors alive
        self.handles = [og.tensor(t, acl_dtype) for t in ins + [out]]
        ws, ex = c_uint64(0), c_void_p()
        if op == "fwd":
            st = self.L.aclnnMishGetWorkspaceSize(self.handles[0], self.handles[1], ctypes.byref(ws), ctypes.byref(ex))
            self.fn = self.L.aclnnMish
        else:
            st = self.L.aclnnMishBackwardGetWorkspaceSize(self.handles[0], self.handles[1], self.handles[2],
                                                          ctypes.byref(ws), ctypes.byref(ex))
            self.fn = self.L.aclnnMishBackward
        og.check(st, "GetWorkspaceSize")
        og.check(self.L.aclSetAclOpExecutorRepeatable(ex), "aclSetAclOpExecutorRepeatable")
        self.exec = ex
        self.ws = torch.empty(max(int(ws.value), 1), dtype=torch.uint8)
        self.args = (c_void_p(self.ws.data_ptr() if ws.value else 0), c_uint64(ws.value), ex, None)

    def __call__(self):
        st = self.fn(*self.args)
        if st != 0:
            self.og.check(st, "phase 2")

    def alloc_call(self):
        """torch.empty_like + re-point the executor's output + one call (the [alloc] policy)."""
        out = torch.empty_like(self.out)
        self.L.aclSetOutputTensorAddr(self.exec, 0, self.handles[-1], out.data_ptr())
        self()
        return out

    def close(self):
        self.L.aclDestroyAclOpExecutor(self.exec)
        for h in self.handles:
            self.L.aclDestroyTensor(h)


# ------------------------------------------------------------------------------------------------
# timing

def procstat():
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / CLK


class Load:
    """CPUs used by other processes between enter and exit (own CPU time subtracted)."""

    def __enter__(self):
        self.w, self.p, self.b = time.perf_counter(), time.process_time(), procstat()
        return self

    def __exit__(self, *exc):
        w, p, b = time.perf_counter() - self.w, time.process_time() - self.p, procstat()
        self.foreign = -1.0 if b is None or self.b is None else max(0.0, ((b - self.b) - p) / w)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ops import calibrate, timed  # noqa: E402  (the same block timing as every op)


def time_interleaved(cases, runs, min_s):
    """cases: {key: fn}. Returns {key: sorted seconds per call}, foreign CPUs."""
    keys = list(cases)
    reps = {k: calibrate(cases[k], min_s) for k in keys}
    ts = {k: [] for k in keys}
    gc.disable()
    try:
        with Load() as load:
            for r in range(runs):
                for i in range(len(keys)):
                    k = keys[(i + r) % len(keys)]
                    ts[k].append(timed(cases[k], reps[k]) / reps[k])
    finally:
        gc.enable()
    return {k: sorted(v) for k, v in ts.items()}, load.foreign


def med(v):
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


# ------------------------------------------------------------------------------------------------

def size_label(n):
    k = n.bit_length() - 1
    return "2^%d" % k if n == 1 << k else str(n)


def first_line(e):
    return str(e).strip().splitlines()[0][:80]


def rel_err(got, ref):
    """max |got - ref| / max(|ref|, 1e-3) over the elements, in float64."""
    d = (got.double() - ref).abs() / ref.abs().clamp_min(1e-3)
    return float(d.max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", help="path of libopgrad.so (default: $OPGRAD_LIB or ../build*/libopgrad.so)")
    ap.add_argument("--sizes", help="log2 of element counts (default 16,20,24,26)")
    ap.add_argument("--dtypes", default="fp32,bf16,fp16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, help="timed blocks per variant (default 5)")
    ap.add_argument("--min-run-ms", type=float, help="minimum duration of a block (default 50)")
    ap.add_argument("--retries", type=int, help="repeats of a noisy group (default 1)")
    ap.add_argument("--max-foreign", type=float, default=0.15)
    ap.add_argument("--check-elems", type=int, default=1 << 20, help="elements compared against float64")
    ap.add_argument("--quick", action="store_true",
                    help="CI smoke: sizes 16,20, 3 runs of >= 10 ms, no retries (explicit options win)")
    ap.add_argument("--csv", help="also write the results as CSV")
    a = ap.parse_args()
    defaults = dict(sizes="16,20,24,26", runs=5, min_run_ms=50.0, retries=1)
    if a.quick:
        defaults = dict(sizes="16,20", runs=3, min_run_ms=10.0, retries=0)
    for k, v in defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    sizes = [1 << int(s) if int(s) <= 40 else int(s) for s in a.sizes.split(",")]
    dtypes = a.dtypes.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    og = Opgrad(find_lib(a.lib))
    cap = [l.strip() for l in torch.__config__.show().splitlines() if "capability" in l]
    print("# torch_mish: torch %s (%s, ATEN_CPU_CAPABILITY=%s), opgrad %s kernels %s (%s)" % (
        torch.__version__, cap[0] if cap else "?", os.environ.get("ATEN_CPU_CAPABILITY", "unset"), og.version(),
        og.isa(), og.path))
    print("# %d blocks per variant, each >= %.0f ms, interleaved; medians; speed-up = torch ms / opgrad ms "
          "(same allocation policy)" % (a.runs, a.min_run_ms))
    hdr = "%-9s %-5s %5s %3s  %-9s %10s  %-10s %10s %8s %12s %7s  %s" % (
        "op", "dtype", "n", "thr", "torch", "torch ms", "opgrad", "opgrad ms", "speedup", "og prealloc", "foreign",
        "check (opgrad vs torch; max rel err vs fp64: opgrad / torch)")
    print(hdr)
    csv = open(a.csv, "w") if a.csv else None
    if csv:
        csv.write("op,dtype,n,threads,torch_variant,torch_ms,torch_ms_min,torch_ms_max,opgrad_variant,opgrad_ms,"
                  "opgrad_ms_min,opgrad_ms_max,speedup,opgrad_prealloc_ms,foreign_cpu,match,"
                  "opgrad_relerr_fp64,torch_relerr_fp64,note\n")
    rows = []
    for dname in dtypes:
        dt, acl = DTYPES[dname]
        for n in sizes:
            gen = torch.Generator().manual_seed(n)
            x = (torch.rand(n, generator=gen) * 12 - 6).to(dt)  # uniform in [-6, 6]
            g = (torch.rand(n, generator=gen) * 12 - 6).to(dt)
            y_og, y_t, dx_og = torch.zeros_like(x), torch.zeros_like(x), torch.zeros_like(x)
            for t in threads:
                torch.set_num_threads(t)
                og.lib.opgrad_set_num_threads(t)  # before planning: the plan splits the work by it
                fwd = OgCall(og, "fwd", acl, [x], y_og)
                bwd = OgCall(og, "bwd", acl, [g, x], dx_og)
                # [alloc] variants get executors of their own: their output is re-pointed per call
                fwd_a = OgCall(og, "fwd", acl, [x], y_og)
                bwd_a = OgCall(og, "bwd", acl, [g, x], dx_og)
                # torch variants; a missing low-precision kernel is reported and its workaround timed
                torch_cases, notes = {}, {}
                for op, variant, fn in (
                        ("fwd", "out", lambda: A.mish.out(x, out=y_t)),
                        ("fwd", "alloc", lambda: F.mish(x)),
                        ("bwd", "alloc", lambda: A.mish_backward(g, x))):
                    try:
                        timed(fn, 1)
                        torch_cases[(op, variant)] = fn
                    except RuntimeError as e:
                        notes[op] = "torch native: " + first_line(e)
                if t == threads[0]:
                    for op, note in sorted(notes.items()):
                        print("%-9s %-5s %5s %3s  %s" % ("mish_" + op, dname, size_label(n), "", note), flush=True)
                if dt != torch.float32:
                    if ("fwd", "out") not in torch_cases and ("fwd", "alloc") not in torch_cases:
                        torch_cases[("fwd", "upcast")] = lambda: F.mish(x.float()).to(dt)
                    if ("bwd", "alloc") not in torch_cases:
                        torch_cases[("bwd", "upcast")] = lambda: A.mish_backward(g.float(), x.float()).to(dt)
                cases = {("og", "fwd", "prealloc"): fwd, ("og", "fwd", "alloc"): fwd_a.alloc_call,
                         ("og", "bwd", "prealloc"): bwd, ("og", "bwd", "alloc"): bwd_a.alloc_call}
                for (op, variant), fn in torch_cases.items():
                    cases[("torch", op, variant)] = fn

                best = None
                for attempt in range(a.retries + 1):
                    ts, foreign = time_interleaved(cases, a.runs, a.min_run_ms / 1e3)
                    if best is None or foreign < best[1]:
                        best = (ts, foreign)
                    if 0 <= foreign <= a.max_foreign:
                        break
                    if attempt < a.retries:
                        print("# %s n=%s t=%d: foreign load %.2f CPU, repeating" % (dname, size_label(n), t, foreign),
                              file=sys.stderr)
                ts, foreign = best

                # correctness: opgrad vs torch, and both vs float64 on the first check_elems elements
                timed(fwd, 1)
                timed(bwd, 1)
                m = min(n, a.check_elems)
                x64, g64 = x[:m].double(), g[:m].double()
                ref = {"fwd": F.mish(x64), "bwd": A.mish_backward(g64, x64)}
                ogout = {"fwd": y_og, "bwd": dx_og}
                rtol, atol = TOL[dname]
                for (who, op, variant) in cases:
                    if who != "torch":
                        continue
                    tout = torch_cases[(op, variant)]()
                    match = torch.allclose(ogout[op].float(), tout.float(), rtol=rtol, atol=atol)
                    maxdiff = float((ogout[op].float() - tout.float()).abs().max())
                    e_og, e_t = rel_err(ogout[op][:m], ref[op]), rel_err(tout[:m], ref[op])
                    ogv = "prealloc" if variant == "out" else "alloc"
                    t_ms, o_ms = med(ts[("torch", op, variant)]) * 1e3, med(ts[("og", op, ogv)]) * 1e3
                    pre_ms = med(ts[("og", op, "prealloc")]) * 1e3
                    chk = "%s (max|diff| %.2g); %.1e / %.1e" % ("match" if match else "MISMATCH", maxdiff, e_og, e_t)
                    row = dict(op="mish_" + op, dtype=dname, n=n, t=t, tv=variant, t_ms=t_ms, ov=ogv, o_ms=o_ms,
                               speedup=t_ms / o_ms, pre_ms=pre_ms, foreign=foreign, match=match)
                    rows.append(row)
                    print("%-9s %-5s %5s %3d  %-9s %10.4g  %-10s %10.4g %7.2fx %12.4g %7.2f  %s" % (
                        row["op"], dname, size_label(n), t, "[%s]" % variant, t_ms, "[%s]" % ogv, o_ms,
                        row["speedup"], pre_ms, foreign, chk), flush=True)
                    if csv:
                        tv, ov = ts[("torch", op, variant)], ts[("og", op, ogv)]
                        csv.write("%s,%s,%d,%d,%s,%.5g,%.5g,%.5g,%s,%.5g,%.5g,%.5g,%.4f,%.5g,%.3f,%d,%.3g,%.3g,%s\n" % (
                            row["op"], dname, n, t, variant, t_ms, tv[0] * 1e3, tv[-1] * 1e3, ogv, o_ms,
                            ov[0] * 1e3, ov[-1] * 1e3, row["speedup"], pre_ms, foreign, int(match), e_og, e_t,
                            notes.get(op, "").replace(",", ";")))
                        csv.flush()
                for c in (fwd, bwd, fwd_a, bwd_a):
                    c.close()
                del cases, torch_cases, fwd, bwd, fwd_a, bwd_a
            del x, g, y_og, y_t, dx_og
            gc.collect()

    if rows:
        slow = [r for r in rows if r["speedup"] < 1.0]
        bad = [r for r in rows if not r["match"]]
        worst = min(rows, key=lambda r: r["speedup"])
        print("\n# summary: opgrad faster than torch in %d of %d comparisons (same allocation policy); "
              "lowest speed-up %.2fx (%s %s n=%s t=%d torch [%s])" % (
                  len(rows) - len(slow), len(rows), worst["speedup"], worst["op"], worst["dtype"],
                  size_label(worst["n"]), worst["t"], worst["tv"]))
        if bad:
            print("# %d comparison(s) where opgrad's output does NOT match torch's" % len(bad))
        else:
            print("# every opgrad output matches torch's within the stated tolerance")
    if csv:
        csv.close()
    return 1 if rows and any(not r["match"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
