#!/usr/bin/python3
"""GEMM: opgrad's aclnnMm / aclnnMatmul against PyTorch, OpenBLAS, BLIS and MKL, in one run.

Run with Debian's /usr/bin/python3 (python3-torch 1.13 imports only there; numpy is required,
torch is optional):
    /usr/bin/python3 bench/bench_gemm.py [--quick | --full] [--threads 1,2] [--dtypes fp32,bf16,fp16]
                                         [--shapes FILTER] [--peers LIST] [--lib PATH] [--install-peers]

Shapes are [B x] M x K x N: self is M x K, mat2 is K x N (B: batch, bmm). Inputs are uniform in
[-1, 1], made from a seed that depends on the shape only, so every peer (also those in the helper
processes) multiplies the same numbers; bf16 / fp16 inputs are the fp32 ones rounded.

Peers (impl, mode):
  opgrad          reuse    aclnnMm (2-D) / aclnnMatmul (batched), planned once (repeatable
                           executor), one phase-2 call per call, outputs reused
  opgrad          percall  what a framework does per call: a fresh output (np.empty), three
                           aclCreateTensor, phase 1, a fresh workspace, phase 2, destroy
  torch           reuse / percall   torch.mm / torch.bmm with out= / allocating (torch's BLAS is
                           whatever libblas.so.3 points to: the header says which)
  torch+openblas  reuse / percall   the same, fp32 only, in a helper process whose
                           LD_LIBRARY_PATH makes libtorch load OpenBLAS as its libblas.so.3
  openblas        reuse    cblas_sgemm of Debian's libopenblas0-pthread, default core detection
  openblas:CORE   reuse    the same with OPENBLAS_CORETYPE=CORE (read when the library loads:
                           a helper process)
  blis            reuse    cblas_sgemm of Debian's libblis4-pthread
  mkl             reuse    cblas_sgemm / cblas_sgemm_batch_strided, cblas_gemm_bf16bf16f32 and
                           cblas_gemm_f16f16f32 (fp32 output) of pip's mkl (build-bench/mkl-venv)
BLAS peers run batched fp32 shapes as one sgemm per batch entry (a Python loop), except MKL's
strided batch. --install-peers installs the missing ones (see install_peers).

Timing, per (shape, dtype, threads): every peer makes one call whose output is checked against a
float64 reference (sampled rows: max |out - ref| / max |ref|; a result above the dtype's tolerance
is flagged WRONG, never timed silently), then one more call calibrates the calls per block (each
block lasts >= --min-ms). Then --reps blocks per peer, interleaved in rotating order, each after a
--gap-ms pause (it lets the previous peer's worker threads stop spinning: see SPIN_ENV) and, for
calls under 50 ms, one untimed call (it wakes this peer's threads). GFLOP/s = 2*B*M*N*K / time
per call, best and median of the blocks. peak_frac = GFLOP/s / the fp32 FMA peak for that thread count, measured by fma_peak (bench/
fma_peak.c) at the start and the end of this run (the larger). ratio_vs_opgrad = GFLOP/s / opgrad's
GFLOP/s in the same mode (percall rows vs opgrad percall, all others vs opgrad reuse). cpu = CPU
time of the process that ran the peer / wall time (catches a library that ignores the thread
count); foreign = CPUs used by other processes during the blocks (/proc/stat).
A call slower than --max-call-s is timed once (note "1 call"), and a peer whose last speed predicts
more than 3x that for a shape is skipped (note "too slow").
"""
import argparse
import ctypes
import ctypes.util
import gc
import glob
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build-bench")
MKL_VENV = os.path.join(BUILD, "mkl-venv")
LIBDIR = "/usr/lib/x86_64-linux-gnu"
OPENBLAS_DIR = os.path.join(LIBDIR, "openblas-pthread")
CLK = os.sysconf("SC_CLK_TCK")

# OpenMP and OpenBLAS worker threads keep spinning after a call (Intel OpenMP: 200 ms by default,
# OpenBLAS: 2^28 cycles, ~0.1 s; libgomp, torch's: ~20 ms), and on a 2-core machine a spinning
# thread takes the core the next peer needs. These bound it to ~10-15 ms, which the --gap-ms
# pause covers; within a block (calls back to back) they change nothing. Read when each library
# loads, so set here, before any loads; the user's own settings win.
SPIN_ENV = {"KMP_BLOCKTIME": "10", "OPENBLAS_THREAD_TIMEOUT": "25"}
for _k, _v in SPIN_ENV.items():
    os.environ.setdefault(_k, _v)

ACL_FLOAT, ACL_FLOAT16, ACL_BF16 = 0, 1, 27
ACL_FORMAT_ND = 2
CBLAS_ROW_MAJOR, CBLAS_NO_TRANS = 101, 111
# dtype -> (numpy storage dtype, aclDataType, torch dtype name, tolerance of max|err| / max|ref|
# when the output has that dtype: a few roundings of the output)
DTYPES = {"fp32": (np.float32, ACL_FLOAT, "float32", 1e-4),
          "bf16": (np.uint16, ACL_BF16, "bfloat16", 1e-2),
          "fp16": (np.float16, ACL_FLOAT16, "float16", 5e-3)}

c_int, c_int64, c_uint64, c_float, c_void_p = (ctypes.c_int, ctypes.c_int64, ctypes.c_uint64,
                                               ctypes.c_float, ctypes.c_void_p)


class Skip(Exception):
    """A peer that cannot run this case: the reason is reported in the row."""


def first_line(e):
    s = str(e).strip()
    return (s.splitlines()[0] if s else type(e).__name__)[:100]


# ------------------------------------------------------------------------------------------------
# shapes and data

class Case:
    def __init__(self, group, b, m, k, n):
        self.group, self.b, self.m, self.k, self.n = group, b, m, k, n
        self.label = ("%dx%dx%dx%d" % (b, m, k, n)) if b > 1 else ("%dx%dx%d" % (m, k, n))
        self.flops = 2.0 * b * m * n * k

    def key(self):
        return [self.group, self.b, self.m, self.k, self.n]


def cases(full, quick):
    if quick:
        return [Case("square", 1, 256, 256, 256), Case("square", 1, 512, 512, 512),
                Case("small", 1, 64, 128, 128), Case("bmm", 32, 128, 128, 64)]
    out = [Case("square", 1, s, s, s) for s in (256, 512, 1024, 2048) + ((4096,) if full else ())]
    if full:
        train = [(m, k, n) for m in (64, 256, 2048) for k in (512, 1024, 4096) for n in (512, 1024, 4096)]
    else:  # a representative subset: small and large M, square and rectangular weights
        train = [(64, 1024, 1024), (64, 4096, 1024), (256, 1024, 4096), (2048, 1024, 1024),
                 (2048, 4096, 1024), (2048, 1024, 4096)]
    out += [Case("train", 1, m, k, n) for m, k, n in train]
    out += [Case("tall", 1, 16384, 64, 64), Case("tall", 1, 64, 16384, 64)]
    out += [Case("small", 1, 64, 128, 128), Case("small", 1, 64, 128, 64)]
    out += [Case("bmm", 32, 128, 128, 64)]
    return out


def aligned_empty(shape, dtype, align=64):
    """An uninitialised array whose data starts on a cache line (all peers get the same start)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def to_bf16(x):
    """fp32 -> bf16 bits, round to nearest even (the inputs here are finite)."""
    u = x.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def to_f64(x, dtype):
    if dtype == "bf16" and x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


class Data:
    """Inputs of one (case, dtype), shaped (B, M, K) and (B, K, N), and the float64 reference of
    sampled rows: up to 4 batch entries x 16 rows (full GEMMs in float64 would take longer than
    the benchmark)."""

    def __init__(self, case, dtype):
        self.case, self.dtype = case, dtype
        rng = np.random.default_rng([case.b, case.m, case.k, case.n])
        a32 = rng.uniform(-1, 1, (case.b, case.m, case.k)).astype(np.float32)
        b32 = rng.uniform(-1, 1, (case.b, case.k, case.n)).astype(np.float32)
        store = DTYPES[dtype][0]
        self.a, self.b = aligned_empty(a32.shape, store), aligned_empty(b32.shape, store)
        for dst, src in ((self.a, a32), (self.b, b32)):
            dst[...] = to_bf16(src) if dtype == "bf16" else src.astype(store)
        self.bidx = np.unique(np.linspace(0, case.b - 1, min(case.b, 4)).astype(int))
        self.rows = np.unique(np.linspace(0, case.m - 1, min(case.m, 16)).astype(int))
        self.ref = np.stack([to_f64(self.a[i][self.rows], dtype) @ to_f64(self.b[i], dtype)
                             for i in self.bidx])

    def relerr(self, out, out_dtype):
        got = np.stack([to_f64(out[i][self.rows], out_dtype) for i in self.bidx])
        if not np.all(np.isfinite(got)):
            return float("inf")
        return float(np.abs(got - self.ref).max() / max(np.abs(self.ref).max(), 1e-30))


_data_cache = {}


def get_data(case, dtype):
    key = (tuple(case.key()), dtype)
    if key not in _data_cache:
        _data_cache.clear()  # one (case, dtype) at a time: 4096^2 inputs are 64 MiB each
        _data_cache[key] = Data(case, dtype)
    return _data_cache[key]


# ------------------------------------------------------------------------------------------------
# runners: one peer prepared for one (case, dtype, threads, mode)

class Runner:
    """call() runs one GEMM; out is the output of the last call, shaped (B, M, N)."""
    out_dtype = None  # the dtype name of out; default: the input dtype

    def block(self, n):
        """n calls back to back: (wall seconds, CPU seconds of this process)."""
        f = self.call
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            f()
        return time.perf_counter() - t0, time.process_time() - c0

    def relerr(self):
        return self.data.relerr(self.out, self.out_dtype or self.data.dtype)

    def close(self):
        pass


class Opgrad:
    """libopgrad.so through ctypes: aclnnMm for 2-D, aclnnMatmul for batched shapes."""
    OPS = ("Mm", "Matmul")

    def __init__(self, path):
        self.path = path
        L = self.lib = ctypes.CDLL(path)
        L.aclCreateTensor.restype = c_void_p  # argtypes unset: called with ctypes objects only
        L.aclDestroyAclOpExecutor.argtypes = [c_void_p]
        L.aclSetAclOpExecutorRepeatable.argtypes = [c_void_p]
        L.aclGetRecentErrMsg.restype = ctypes.c_char_p
        L.opgrad_set_num_threads.argtypes = [c_int]
        L.opgrad_version.restype = ctypes.c_char_p
        L.opgrad_isa_name.restype = ctypes.c_char_p
        L.opgrad_isa_name.argtypes = [c_int]
        self.phase1, self.phase2, self.missing = {}, {}, []
        for op in self.OPS:
            p1, p2 = getattr(L, "aclnn%sGetWorkspaceSize" % op, None), getattr(L, "aclnn%s" % op, None)
            if p1 is None or p2 is None:
                self.missing.append("aclnn" + op)
                continue
            # no argtypes: every call passes prebuilt ctypes objects, so ctypes converts nothing
            # (argtypes conversion costs ~1 us per argument, more than opgrad's own phase 1)
            p1.restype, p2.restype = ctypes.c_int32, ctypes.c_int32
            self.phase1[op], self.phase2[op] = p1, p2
        L.aclInit(None)

    def describe(self):
        L = self.lib
        s = "opgrad %s, kernels %s, %s" % (L.opgrad_version().decode(),
                                           L.opgrad_isa_name(L.opgrad_active_isa()).decode(), self.path)
        # a Debug or sanitizer build would make every number meaningless: say which build this is
        cache = os.path.join(os.path.dirname(os.path.realpath(self.path)), "CMakeCache.txt")
        if os.path.exists(cache):
            for line in open(cache):
                name, _, value = line.strip().partition("=")
                if name.startswith(("CMAKE_BUILD_TYPE:", "OPGRAD_SANITIZE:")) and value:
                    s += ", %s=%s" % (name.split(":")[0], value)
        return s + ("; MISSING " + ", ".join(self.missing) if self.missing else "")

    def check(self, status, what):
        if status != 0:
            msg = self.lib.aclGetRecentErrMsg()
            raise RuntimeError("%s failed (%d): %s" % (what, status, msg.decode() if msg else ""))

    def tensor_args(self, arr, acl_dtype):
        """aclCreateTensor's arguments for a contiguous array of arr's shape, as ctypes objects,
        less the data address (the last argument)."""
        nd = arr.ndim
        dims = (c_int64 * nd)(*arr.shape)
        strides = (c_int64 * nd)(*[s // arr.itemsize for s in arr.strides])
        return (dims, c_uint64(nd), c_int(acl_dtype), strides, c_int64(0), c_int(ACL_FORMAT_ND), dims,
                c_uint64(nd))

    def tensor(self, arr, acl_dtype):
        h = self.lib.aclCreateTensor(*self.tensor_args(arr, acl_dtype), c_void_p(arr.ctypes.data))
        if not h:
            self.check(-1, "aclCreateTensor")
        return h

    def runner(self, data, threads, mode, cube_math):
        case = data.case
        op = "Matmul" if case.b > 1 else "Mm"
        if op not in self.phase1:
            raise Skip("missing: %s does not export aclnn%s" % (os.path.basename(self.path), op))
        self.lib.opgrad_set_num_threads(threads)  # before phase 1: the plan splits the work by it
        return OpgradRunner(self, op, data, mode, cube_math)


class OpgradF32Out(Opgrad):
    """opgrad with a FLOAT out for 16-bit inputs: the unrounded fp32 accumulator, which is what
    MKL's cblas_gemm_bf16bf16f32 / f16f16f32 return (the like-for-like comparison with them)."""
    F32_OUT = True

    def runner(self, data, threads, mode, cube_math):
        if data.dtype == "fp32":
            raise Skip("16-bit inputs only (fp32 is the opgrad row)")
        return Opgrad.runner(self, data, threads, mode, cube_math)


class OpgradRunner(Runner):
    def __init__(self, og, op, data, mode, cube_math):
        self.og, self.data, self.mode = og, data, mode
        self.p1, self.p2 = og.phase1[op], og.phase2[op]
        self.acl = DTYPES[data.dtype][1]
        self.cube = ctypes.c_int8(cube_math)
        f32_out = getattr(og, "F32_OUT", False)
        self.oacl = ACL_FLOAT if f32_out else self.acl
        if f32_out:
            self.out_dtype = "fp32"
        case = data.case
        # 2-D operands for Mm (B == 1), 3-D for Matmul
        self.a = data.a if case.b > 1 else data.a[0]
        self.b = data.b if case.b > 1 else data.b[0]
        self.oshape = (case.b, case.m, case.n) if case.b > 1 else (case.m, case.n)
        self.npdt = np.float32 if f32_out else DTYPES[data.dtype][0]
        self.exec = None
        if mode == "reuse":
            self.out_buf = aligned_empty(self.oshape, self.npdt)
            self.out_buf[...] = 0  # touch every page before timing
            self.handles = [og.tensor(x, a) for x, a in
                            ((self.a, self.acl), (self.b, self.acl), (self.out_buf, self.oacl))]
            ws, ex = c_uint64(0), c_void_p()
            og.check(self.p1(*[c_void_p(h) for h in self.handles], self.cube, ctypes.byref(ws),
                             ctypes.byref(ex)), "phase 1")
            og.check(og.lib.aclSetAclOpExecutorRepeatable(ex), "aclSetAclOpExecutorRepeatable")
            self.exec = ex
            self.ws = aligned_empty((max(ws.value, 1),), np.uint8)
            self.args = (c_void_p(self.ws.ctypes.data if ws.value else 0), c_uint64(ws.value), ex, None)
            self.call = self.call_reuse
        else:
            # The work a framework does per call from C costs ~1 us; from Python, building the
            # ctypes arguments would cost more than that, so all but the output's address are built
            # here once (the inputs' handles are still created and destroyed on every call).
            self.targs = [og.tensor_args(x, self.acl) for x in (self.a, self.b)]
            self.taddr = [c_void_p(x.ctypes.data) for x in (self.a, self.b)]
            self.oargs = og.tensor_args(aligned_empty(self.oshape, self.npdt), self.oacl)
            self.call = self.call_percall

    @property
    def out(self):
        o = self.out_buf
        return o if o.ndim == 3 else o[None]

    def call_reuse(self):
        st = self.p2(*self.args)
        if st:
            self.og.check(st, "phase 2")

    def call_percall(self):
        L = self.og.lib
        out = np.empty(self.oshape, self.npdt)
        hs = (c_void_p(L.aclCreateTensor(*self.targs[0], self.taddr[0])),
              c_void_p(L.aclCreateTensor(*self.targs[1], self.taddr[1])),
              c_void_p(L.aclCreateTensor(*self.oargs, c_void_p(out.ctypes.data))))
        ws, ex = c_uint64(0), c_void_p()
        st = self.p1(*hs, self.cube, ctypes.byref(ws), ctypes.byref(ex))
        if st == 0:
            buf = np.empty(ws.value, np.uint8) if ws.value else None
            st = self.p2(c_void_p(buf.ctypes.data) if ws.value else None, ws, ex, None)
        for h in hs:
            L.aclDestroyTensor(h)
        if st:
            self.og.check(st, "percall")
        self.out_buf = out

    def close(self):
        if self.exec is not None:
            self.og.lib.aclDestroyAclOpExecutor(self.exec)
            for h in self.handles:
                self.og.lib.aclDestroyTensor(c_void_p(h))
            self.exec = None


class Torch:
    """torch.mm / torch.bmm. blas: the BLAS library libtorch loaded (from /proc/self/maps)."""

    def __init__(self):
        import torch
        self.torch = torch
        maps = set(l.split()[-1] for l in open("/proc/self/maps") if "blas" in l and "/" in l)
        self.blas = sorted(maps)
        # With a plain libblas.so.3, torch.set_num_threads does not reach OpenBLAS's own pool
        self.openblas = None
        for p in self.blas:
            if "openblas" in os.path.basename(p):
                self.openblas = ctypes.CDLL(p)
                break

    def describe(self):
        return "torch %s, BLAS %s" % (self.torch.__version__, ", ".join(self.blas) or "none mapped")

    def runner(self, data, threads, mode):
        self.torch.set_num_threads(threads)
        if self.openblas is not None:
            self.openblas.openblas_set_num_threads(threads)
        return TorchRunner(self.torch, data, mode)


class TorchRunner(Runner):
    def __init__(self, torch, data, mode):
        self.torch, self.data = torch, data
        dt = getattr(torch, DTYPES[data.dtype][2])

        def tt(x):  # a torch view of the numpy buffer: the same bytes as the other peers use
            x = x if data.dtype != "bf16" else x.view(np.int16)
            t = torch.from_numpy(x)
            return t.view(dt) if data.dtype == "bf16" else t

        a, b = tt(data.a), tt(data.b)
        batched = data.case.b > 1
        a, b = (a, b) if batched else (a[0], b[0])
        f = torch.bmm if batched else torch.mm
        try:  # torch 1.13 has no fp16 GEMM on the CPU: say so instead of failing in the timing
            f(a[..., :1, :], b[..., :, :1])
        except RuntimeError as e:
            raise Skip("n/a: " + first_line(e))
        if mode == "reuse":
            self.res = torch.zeros((data.case.b, data.case.m, data.case.n) if batched
                                   else (data.case.m, data.case.n), dtype=dt)
            res = self.res
            self.call = lambda: f(a, b, out=res)
        else:
            def call():
                self.res = f(a, b)
            self.call = call

    @property
    def out(self):
        r = self.res if self.res.dim() == 3 else self.res[None]
        if self.data.dtype == "bf16":
            return r.view(self.torch.int16).numpy().view(np.uint16)
        return r.numpy()


class Cblas:
    """A CBLAS library through ctypes: openblas, blis or mkl. fns: dtype -> (symbol, output numpy
    dtype, output dtype name)."""

    def __init__(self, name, path, fns, set_threads, describe, batch_strided=None):
        self.name, self.path = name, path
        self.lib = ctypes.CDLL(path)
        self.fns = {}
        for dt, (sym, onp, oname) in fns.items():
            f = getattr(self.lib, sym, None)
            if f is not None:
                f.restype = None  # argtypes unset: the runner passes prebuilt ctypes objects
                self.fns[dt] = (f, onp, oname, sym)
        self.batch_strided = getattr(self.lib, batch_strided, None) if batch_strided else None
        if self.batch_strided is not None:
            self.batch_strided.restype = None
        self.set_threads, self.desc = set_threads, describe

    def describe(self):
        return "%s: %s (%s)" % (self.name, self.desc(self.lib), self.path)

    def runner(self, data, threads, mode):
        if data.dtype not in self.fns:
            raise Skip("n/a: no %s GEMM" % data.dtype)
        self.set_threads(self.lib, threads)
        return CblasRunner(self, data)


class CblasRunner(Runner):
    def __init__(self, lib, data):
        self.data = data
        f, onp, self.out_dtype, _ = lib.fns[data.dtype]
        c = data.case
        self.res = aligned_empty((c.b, c.m, c.n), onp)
        self.res[...] = 0
        i = ctypes.c_int
        head = (i(CBLAS_ROW_MAJOR), i(CBLAS_NO_TRANS), i(CBLAS_NO_TRANS), i(c.m), i(c.n), i(c.k),
                c_float(1.0))
        addr = lambda x, j: c_void_p(x[j].ctypes.data)  # noqa: E731
        if c.b > 1 and data.dtype == "fp32" and lib.batch_strided is not None:
            f = lib.batch_strided
            calls = [head + (addr(data.a, 0), i(c.k), i(c.m * c.k), addr(data.b, 0), i(c.n),
                             i(c.k * c.n), c_float(0.0), addr(self.res, 0), i(c.n), i(c.m * c.n),
                             i(c.b))]
        else:  # one GEMM per batch entry
            calls = [head + (addr(data.a, j), i(c.k), addr(data.b, j), i(c.n), c_float(0.0),
                             addr(self.res, j), i(c.n)) for j in range(c.b)]
        if len(calls) == 1:
            args = calls[0]
            self.call = lambda: f(*args)
        else:
            def call():
                for args in calls:
                    f(*args)
            self.call = call

    @property
    def out(self):
        return self.res


def openblas_peer(path):
    def describe(L):
        L.openblas_get_config.restype = ctypes.c_char_p
        L.openblas_get_corename.restype = ctypes.c_char_p
        return "%s, core %s" % (L.openblas_get_config().decode(), L.openblas_get_corename().decode())
    return Cblas("openblas", path, {"fp32": ("cblas_sgemm", np.float32, "fp32")},
                 lambda L, t: L.openblas_set_num_threads(t), describe)


def blis_peer(path):
    def describe(L):
        L.bli_info_get_version_str.restype = ctypes.c_char_p
        L.bli_arch_string.restype = ctypes.c_char_p
        return "BLIS %s, arch %s" % (L.bli_info_get_version_str().decode(),
                                     L.bli_arch_string(L.bli_arch_query_id()).decode())

    def set_threads(L, t):
        L.bli_thread_set_num_threads(c_int64(t))  # dim_t
    return Cblas("blis", path, {"fp32": ("cblas_sgemm", np.float32, "fp32")}, set_threads, describe)


def mkl_peer(path):
    def describe(L):
        buf = ctypes.create_string_buffer(256)
        L.mkl_get_version_string(buf, 256)
        return " ".join(buf.value.decode().split()[:8])

    def set_threads(L, t):
        L.MKL_Set_Num_Threads(t)
        # cblas_gemm_bf16bf16f32 ignores MKL's own thread count and takes OpenMP's (seen with MKL
        # 2026.2: 2 threads after MKL_Set_Num_Threads(1)); so set OpenMP's too
        omp = getattr(L, "omp_set_num_threads", None)
        if omp is None:
            iomp = os.path.join(os.path.dirname(path), "libiomp5.so")
            omp = ctypes.CDLL(iomp).omp_set_num_threads if os.path.exists(iomp) else None
        if omp is not None:
            omp(t)
    return Cblas("mkl", path, {"fp32": ("cblas_sgemm", np.float32, "fp32"),
                               "bf16": ("cblas_gemm_bf16bf16f32", np.float32, "fp32"),
                               "fp16": ("cblas_gemm_f16f16f32", np.float32, "fp32")},
                 set_threads, describe, batch_strided="cblas_sgemm_batch_strided")


def find_openblas():
    for p in (os.path.join(OPENBLAS_DIR, "libopenblas.so.0"), os.path.join(LIBDIR, "libopenblas.so.0"),
              ctypes.util.find_library("openblas")):
        if p and (os.path.exists(p) or "/" not in p):
            return p
    return None


def find_blis():
    for p in (os.path.join(LIBDIR, "blis-pthread", "libblis.so.4"), os.path.join(LIBDIR, "libblis.so.4"),
              ctypes.util.find_library("blis")):
        if p and (os.path.exists(p) or "/" not in p):
            return p
    return None


def find_mkl():
    pats = [os.path.join(MKL_VENV, "lib", "libmkl_rt.so.*")]
    pats += [os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(p))), "libmkl_rt.so.*")
             for p in sys.path if p.endswith("-packages")]
    for pat in pats:
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[-1]
    return None


# ------------------------------------------------------------------------------------------------
# helper processes: peers that need their own environment when their library loads. A helper
# runs the same file with --worker, rebuilds the same data from the same seeds, and runs blocks
# on request (one JSON line each way), so its peers are interleaved with the others.

def make_local_peer(kind, arg):
    if kind == "openblas":
        return openblas_peer(arg)
    if kind == "torch":
        return Torch()
    raise ValueError(kind)


def worker_main(spec):
    proto = os.fdopen(os.dup(1), "w")  # the protocol's own fd: libraries may print to stdout
    os.dup2(2, 1)
    peer = make_local_peer(spec["kind"], spec.get("arg"))
    runners = {}
    proto.write(json.dumps({"describe": peer.describe()}) + "\n")
    proto.flush()
    for line in sys.stdin:
        m = json.loads(line)
        try:
            op = m["op"]
            if op == "prepare":
                data = get_data(Case(*m["case"]), m["dtype"])
                runners[m["id"]] = peer.runner(data, m["threads"], m["mode"])
                r = {"ok": True}
            elif op == "block":
                wall, cpu = runners[m["id"]].block(m["n"])
                r = {"wall": wall, "cpu": cpu}
            elif op == "relerr":
                r = {"relerr": runners[m["id"]].relerr()}
            elif op == "close":
                runners.pop(m["id"]).close()
                r = {"ok": True}
            else:
                return
        except Skip as e:
            r = {"skip": str(e)}
        except Exception as e:  # reported in the row, the helper goes on
            r = {"error": first_line(e)}
        proto.write(json.dumps(r) + "\n")
        proto.flush()


class Remote:
    """A peer in a helper process (same interface as the local peers)."""

    def __init__(self, kind, arg, env):
        e = dict(os.environ)
        e.update(env)
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                   json.dumps({"kind": kind, "arg": arg})],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=e, text=True)
        self.ids = 0
        self.desc = self.recv().get("describe", "?")

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("helper process died (rc %s)" % self.p.poll())
        return json.loads(line)

    def ask(self, **m):
        self.p.stdin.write(json.dumps(m) + "\n")
        self.p.stdin.flush()
        r = self.recv()
        if "skip" in r:
            raise Skip(r["skip"])
        if "error" in r:
            raise RuntimeError(r["error"])
        return r

    def describe(self):
        return self.desc

    def runner(self, data, threads, mode):
        self.ids += 1
        self.ask(op="prepare", id=self.ids, case=data.case.key(), dtype=data.dtype, threads=threads,
                 mode=mode)
        return RemoteRunner(self, self.ids)

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


class RemoteRunner(Runner):
    def __init__(self, remote, rid):
        self.remote, self.id = remote, rid

    def block(self, n):
        r = self.remote.ask(op="block", id=self.id, n=n)
        return r["wall"], r["cpu"]

    def relerr(self):
        return self.remote.ask(op="relerr", id=self.id)["relerr"]

    def close(self):
        self.remote.ask(op="close", id=self.id)


# ------------------------------------------------------------------------------------------------
# FMA peak

def fma_peak_binary(lib_path):
    """bench/fma_peak as built by CMake next to the library, else compiled here with cc."""
    for p in (os.path.join(os.path.dirname(lib_path or ""), "bench", "fma_peak"),
              os.path.join(BUILD, "bench", "fma_peak")):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    src, exe = os.path.join(HERE, "fma_peak.c"), os.path.join(BUILD, "fma_peak")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(BUILD, exist_ok=True)
        # generic flags: the kernels carry their own target attributes, the ISA is picked at run time
        r = subprocess.run(["cc", "-O2", "-pthread", "-o", exe, src], capture_output=True, text=True)
        if r.returncode != 0:
            return None
    return exe


def fma_peak(exe, threads, ms, reps):
    """{threads: GFLOP/s}, isa name."""
    if not exe:
        return {}, "?"
    r = subprocess.run([exe, "--threads", ",".join(map(str, threads)), "--ms", str(ms), "--reps", str(reps)],
                       capture_output=True, text=True)
    out, isa = {}, "?"
    for line in r.stdout.splitlines():
        f = dict(kv.split("=") for kv in line.split()[1:])
        out[int(f["threads"])] = float(f["gflops"])
        isa = f["isa"]
    return out, isa


# ------------------------------------------------------------------------------------------------
# measuring

def procstat():
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / CLK


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def measure_group(entries, case, a, speed):
    """entries: [{impl, mode, runner or note}]. Fills each with best / median seconds per call,
    relerr, cpu, foreign, note."""
    live = []
    for e in entries:
        r = e.get("runner")
        if r is None:
            continue
        key = (e["impl"], e["mode"], e["dtype"], e["threads"])
        if key in speed and case.flops / speed[key] > 3 * a.max_call_s:
            e["note"] = "too slow: ~%.1f s/call at %.1f GFLOP/s" % (case.flops / speed[key], speed[key] / 1e9)
            continue
        try:
            time.sleep(a.gap_ms / 1e3)
            w1, c1 = r.block(1)  # warm-up; its output is checked before anything is timed
            e["relerr"] = r.relerr()
            if not e["relerr"] <= DTYPES[e.get("out_dtype") or e["dtype"]][3]:
                e["wrong"] = True
            if w1 > a.max_call_s:
                e.update(times=[w1], cpu=c1 / w1, calls=1, note="1 call")
                continue
            w2, _ = r.block(1)
            t1 = min(w1, w2)
        except Exception as ex:
            e["note"] = "error: " + first_line(ex)
            continue
        e.update(n=max(1, int(math.ceil(a.min_ms / 1e3 / max(t1, 1e-9)))), pre=1 if t1 < 0.05 else 0,
                 times=[], cpu_s=0.0, wall_s=0.0, foreign_s=0.0)
        live.append(e)
    gc.disable()  # no collection inside a block
    try:
        for rep in range(a.reps):
            for i in range(len(live)):
                e = live[(i + rep) % len(live)]
                time.sleep(a.gap_ms / 1e3)
                try:
                    if e["pre"]:
                        e["runner"].block(e["pre"])
                    s0 = procstat()
                    wall, cpu = e["runner"].block(e["n"])
                    s1 = procstat()
                except Exception as ex:
                    e["note"] = "error: " + first_line(ex)
                    e["n"] = 0
                    continue
                e["times"].append(wall / e["n"])
                e["wall_s"] += wall
                e["cpu_s"] += cpu
                if s0 is not None and s1 is not None:
                    e["foreign_s"] += max(0.0, (s1 - s0) - cpu)
            live = [e for e in live if e["n"]]
    finally:
        gc.enable()
    for e in live:
        e.update(calls=e["n"], cpu=e["cpu_s"] / e["wall_s"])
        if e["wall_s"] >= 0.5:  # /proc/stat counts in 10 ms ticks: meaningless over shorter times
            e["foreign"] = e["foreign_s"] / e["wall_s"]
    for e in entries:
        if e.get("times"):
            speed[(e["impl"], e["mode"], e["dtype"], e["threads"])] = case.flops / min(e["times"])


def fmt(v, f):
    return "" if v is None else f % v


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="CI smoke: 4 shapes, 3 short reps (< 60 s)")
    ap.add_argument("--full", action="store_true", help="also 4096^2 and all 27 training shapes, longer blocks")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="fp32,bf16,fp16")
    ap.add_argument("--shapes", help="comma list of groups (square, train, tall, small, bmm), shape "
                    "labels (exact, else substrings) or new shapes MxKxN / BxMxKxN")
    ap.add_argument("--peers", help="comma list of impls to run (default: all found), e.g. opgrad,mkl")
    ap.add_argument("--lib", help="libopgrad.so (default: $OPGRAD_LIB, build-bench/, /tmp/b1/)")
    ap.add_argument("--mkl", help="libmkl_rt.so.N (default: build-bench/mkl-venv/lib/)")
    ap.add_argument("--openblas-coretype", default="Haswell",
                    help="OPENBLAS_CORETYPE of the second OpenBLAS run ('' to skip it)")
    ap.add_argument("--no-torch-openblas", action="store_true", help="skip the torch+openblas helper")
    ap.add_argument("--cube-math-type", type=int, default=0, help="opgrad's cubeMathType (0 KEEP_DTYPE)")
    ap.add_argument("--reps", type=int, help="timed blocks per peer (default 5; --quick 3, --full 7)")
    ap.add_argument("--min-ms", type=float, help="minimum block length (default 50; --quick 10, --full 100)")
    ap.add_argument("--gap-ms", type=float, default=30.0, help="pause before each block")
    ap.add_argument("--max-call-s", type=float, help="time a slower call once (default 1; --quick 0.2, --full 2)")
    ap.add_argument("--out", help="output prefix (default bench/results/<stamp>-bench_gemm)")
    ap.add_argument("--install-peers", action="store_true", help="first install OpenBLAS and BLIS "
                    "(apt, as root) and MKL (pip, into build-bench/mkl-venv) where missing")
    a = ap.parse_args()
    d = (dict(reps=3, min_ms=10.0, max_call_s=0.2) if a.quick else
         dict(reps=7, min_ms=100.0, max_call_s=2.0) if a.full else dict(reps=5, min_ms=50.0, max_call_s=1.0))
    for k, v in d.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    return a


def select_shapes(a):
    if not a.shapes:
        return cases(a.full, a.quick)
    every, picked = cases(True, False), []
    for k in a.shapes.split(","):
        # a group, an exact label, else a substring of labels, else a new "MxKxN" / "BxMxKxN"
        hit = [c for c in every if k in (c.group, c.label)] or [c for c in every if k in c.label]
        if not hit:
            v = [int(x) for x in k.split("x")]
            hit = [Case("custom", *(v if len(v) == 4 else [1] + v))]
        picked += [c for c in hit if c.label not in [p.label for p in picked]]
    return picked


def make_peers(a, lib, head):
    """[(impl, modes, peer)]; a line of the header for each, found or skipped."""
    want = set(a.peers.split(",")) if a.peers else None
    peers = []

    def add(impl, modes, make):
        if want and impl not in want and impl.split(":")[0].split("+")[0] not in want:
            return
        try:
            p = make()
            head.append("#   %-16s %s" % (impl, p.describe()))
            peers.append((impl, modes, p))
        except Exception as e:
            head.append("#   %-16s skipped: %s" % (impl, e if isinstance(e, Skip) else first_line(e)))

    def need(path, what):
        if not path:
            raise Skip("%s not found (bench_gemm.py --install-peers, as root)" % what)
        return path

    ob = find_openblas()
    add("opgrad", ("reuse", "percall"), lambda: Opgrad(need(lib, "libopgrad.so")))
    add("opgrad:f32out", ("reuse",), lambda: OpgradF32Out(need(lib, "libopgrad.so")))
    add("torch", ("reuse", "percall"), Torch)
    if not a.no_torch_openblas:
        add("torch+openblas", ("reuse", "percall"),
            lambda: Remote("torch", None, {"LD_LIBRARY_PATH": os.path.dirname(need(ob, "OpenBLAS"))}))
    add("openblas", ("reuse",), lambda: openblas_peer(need(ob, "OpenBLAS")))
    if a.openblas_coretype:
        add("openblas:" + a.openblas_coretype, ("reuse",),
            lambda: Remote("openblas", need(ob, "OpenBLAS"), {"OPENBLAS_CORETYPE": a.openblas_coretype}))
    add("blis", ("reuse",), lambda: blis_peer(need(find_blis(), "BLIS")))
    add("mkl", ("reuse",), lambda: mkl_peer(need(a.mkl or find_mkl(), "MKL")))
    return peers


def run_group(peers, case, dt, t, a, speed):
    """Every peer and mode on one (shape, dtype, threads): the measured entries."""
    data = get_data(case, dt)
    entries = []
    for impl, modes, p in peers:
        for mode in modes:
            e = {"impl": impl, "mode": mode, "dtype": dt, "threads": t}
            entries.append(e)
            if impl == "torch+openblas" and dt != "fp32":
                e["note"] = "fp32 only (torch's bf16/fp16 GEMM is not BLAS)"
                continue
            try:
                r = p.runner(data, t, mode, a.cube_math_type) if impl.startswith("opgrad") else p.runner(data, t, mode)
                e.update(runner=r, out_dtype=r.out_dtype)
            except Skip as ex:
                e["note"] = str(ex)
            except Exception as ex:
                e["note"] = "n/a: " + first_line(ex)
    try:
        measure_group(entries, case, a, speed)
    finally:
        for e in entries:
            r = e.pop("runner", None)
            if r is not None:
                try:
                    r.close()
                except Exception:
                    pass
    return entries


def peak_line(peak):
    return ", ".join("%d thr %.1f GFLOP/s" % kv for kv in sorted(peak.items())) or "n/a (no fma_peak)"


def main():
    a = parse_args()
    if a.worker:
        return worker_main(json.loads(a.worker))
    if a.install_peers:
        install_peers()
    threads = [int(t) for t in a.threads.split(",")]
    shapes = select_shapes(a)
    t_start = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S") + ("-quick" if a.quick else "")
    prefix = a.out or os.path.join(HERE, "results", stamp + "-bench_gemm")
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)

    head = ["# bench_gemm: %s, %d CPUs, %s" % (cpu_model(), os.cpu_count(), time.strftime("%Y-%m-%d %H:%M")),
            "# peers:"]
    lib = a.lib or find_opgrad()
    peers = make_peers(a, lib, head)
    exe = fma_peak_binary(lib)
    peak_args = (100, 3) if a.quick else (200, 5)
    peak0, isa = fma_peak(exe, threads, *peak_args)
    head += ["# fp32 FMA peak (fma_peak, %s), start of run: %s" % (isa, peak_line(peak0)),
             "# %d blocks per peer of >= %.0f ms, interleaved, %.0f ms pause before each; best and median; "
             "relerr = max|out-ref|/max|ref| (sampled rows, float64 reference)"
             % (a.reps, a.min_ms, a.gap_ms),
             "# shapes are [B x] M x K x N; ratio = GFLOP/s / opgrad's in the same mode (percall vs percall, "
             "else vs reuse); env %s" % " ".join("%s=%s" % (k, os.environ[k]) for k in SPIN_ENV)]
    cols = ["shape", "dtype", "threads", "impl", "mode", "gflops", "peak_frac", "ratio_vs_opgrad",
            "maxrelerr", "gflops_median", "ms_best", "ms_median", "calls_per_block", "cpu", "foreign", "check",
            "note"]
    hdr = "%-16s %-5s %3s  %-18s %-8s %8s %8s %6s %6s %9s %5s %5s  %s" % (
        "shape", "dtype", "thr", "impl", "mode", "GFLOP/s", "median", "peak%", "ratio", "relerr", "cpu",
        "forgn", "note")
    print("\n".join(head + [hdr]), flush=True)

    rows, speed = [], {}
    for case in shapes:
        for dt in a.dtypes.split(","):
            for t in threads:
                group = finish_group(run_group(peers, case, dt, t, a, speed), case, t, peak0)
                rows += group
                print("\n".join(text_row(r) for r in group), flush=True)  # live: peak% from the start
    for p in peers:
        if isinstance(p[2], Remote):
            p[2].close()

    peak1, _ = fma_peak(exe, threads, *peak_args)
    peak = {t: max(peak0.get(t, 0), peak1.get(t, 0)) for t in threads}
    for r in rows:  # the files: peak_frac against the larger peak
        r["peak_frac"] = r["gflops"] / peak[r["threads"]] if r["gflops"] and peak.get(r["threads"]) else None
    tail = ["# fp32 FMA peak, end of run: %s; peak%% in the files uses the larger of start and end"
            % peak_line(peak1)]
    wrong = {}
    for r in rows:
        if r["check"] == "WRONG":
            wrong.setdefault("%s %s %s" % (r["impl"], r["mode"], r["dtype"]), []).append(r["shape"])
    if wrong:
        tail.append("# WRONG RESULTS (relerr above the dtype's tolerance): " + "; ".join(
            "%s: %s" % (k, " ".join(sorted(set(v), key=v.index))) for k, v in wrong.items()))
    tail.append("# %.0f s" % (time.time() - t_start))
    print("\n".join(tail), flush=True)
    with open(prefix + ".txt", "w") as f:
        f.write("\n".join(head + [hdr] + [text_row(r) for r in rows] + tail) + "\n")
    with open(prefix + ".csv", "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(csv_cell(r[c]) for c in cols) + "\n")
    print("# wrote %s.txt and .csv" % prefix)
    # a peer's wrong result is reported; opgrad's fails the run
    return 1 if any(k.startswith("opgrad ") for k in wrong) else 0


def finish_group(entries, case, t, peak):
    """Rows of one (shape, dtype, threads), with ratio_vs_opgrad."""
    rows = []
    for e in entries:
        ts = e.get("times") or []
        best, med = (min(ts), median(ts)) if ts else (None, None)
        rows.append({"shape": case.label, "dtype": e["dtype"], "threads": t, "impl": e["impl"],
                     "mode": e["mode"],
                     "gflops": case.flops / best / 1e9 if best else None,
                     "gflops_median": case.flops / med / 1e9 if med else None,
                     "ms_best": best * 1e3 if best else None, "ms_median": med * 1e3 if med else None,
                     "peak_frac": case.flops / best / 1e9 / peak[t] if best and peak.get(t) else None,
                     "maxrelerr": e.get("relerr"), "calls_per_block": e.get("calls"), "cpu": e.get("cpu"),
                     "foreign": e.get("foreign"),
                     "check": "WRONG" if e.get("wrong") else ("ok" if "relerr" in e else ""),
                     "note": e.get("note", "") + ("; out %s" % e["out_dtype"]
                                                  if e.get("out_dtype") not in (None, e["dtype"]) else ""),
                     "ratio_vs_opgrad": None})
    og = {r["mode"]: r["gflops"] for r in rows if r["impl"] == "opgrad"}
    for r in rows:
        base = og.get("percall" if r["mode"] == "percall" else "reuse")
        if r["gflops"] and base:
            r["ratio_vs_opgrad"] = r["gflops"] / base
    return rows


def text_row(r):
    note = ("WRONG " if r["check"] == "WRONG" else "") + r["note"].lstrip("; ")
    return "%-16s %-5s %3d  %-18s %-8s %8s %8s %6s %6s %9s %5s %5s  %s" % (
        r["shape"], r["dtype"], r["threads"], r["impl"], r["mode"], fmt(r["gflops"], "%.1f"),
        fmt(r["gflops_median"], "%.1f"), fmt(r["peak_frac"] and 100 * r["peak_frac"], "%.0f%%"),
        fmt(r["ratio_vs_opgrad"], "%.2f"), fmt(r["maxrelerr"], "%.1e"), fmt(r["cpu"], "%.2f"),
        fmt(r["foreign"], "%.2f"), note)


def csv_cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.6g" % v
    s = str(v)
    return '"%s"' % s.replace('"', "'") if ("," in s or '"' in s) else s


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def find_opgrad():
    if os.environ.get("OPGRAD_LIB"):
        return os.environ["OPGRAD_LIB"]
    for p in [os.path.join(BUILD, "libopgrad.so"), "/tmp/b1/libopgrad.so"] + sorted(
            glob.glob(os.path.join(ROOT, "build*", "libopgrad.so")), key=os.path.getmtime, reverse=True):
        if os.path.exists(p):
            return p
    return None


def install_peers():
    """OpenBLAS and BLIS from Debian (root only), MKL from PyPI into a venv under build-bench/.
    Installing a BLAS package makes it the system's libblas.so.3, which would change what torch
    (and numpy) run: the libblas / liblapack alternatives are put back as they were."""
    if os.geteuid() == 0 and (not find_openblas() or not find_blis()):
        alts = ["libblas.so.3-x86_64-linux-gnu", "liblapack.so.3-x86_64-linux-gnu"]
        before = {n: alt_value(n) for n in alts}
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], env=env)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                        "libopenblas0-pthread", "libblis4-pthread"], env=env)
        for n, v in before.items():
            if v and alt_value(n) != v:
                subprocess.run(["update-alternatives", "--set", n, v])
    elif os.geteuid() != 0:
        print("# --install-peers: not root, OpenBLAS / BLIS not installed with apt", file=sys.stderr)
    if not find_mkl():
        subprocess.run([sys.executable, "-m", "venv", MKL_VENV])
        r = subprocess.run([os.path.join(MKL_VENV, "bin", "pip"), "install", "-q", "mkl"])
        if r.returncode != 0:
            print("# --install-peers: pip install mkl failed", file=sys.stderr)


def alt_value(name):
    r = subprocess.run(["update-alternatives", "--query", name], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("Value:"):
            return line.split(":", 1)[1].strip()
    return None


if __name__ == "__main__":
    sys.exit(main())
