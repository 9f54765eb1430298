"""The CPU kernels of opgrad.torch: each one hands torch tensors to libopgrad zero-copy and runs
one aclnn operator (phase 2 on the NULL stream: synchronous).

Every public function here takes and returns plain torch tensors and has the positional
signature of the operator schema it implements (torch.ops.opgrad.<name>), so the autograd
formulas in _ops.py can call either these functions directly (PyTorch 1.13 path) or the
registered operators (PyTorch >= 2.4 path, where backward formulas go through the dispatcher).

Describing a tensor (include/aclnn/acl_meta.h): view dims = t.shape, element strides =
t.stride() as they are (stride-0 expanded, transposed and sliced views included: the
elementwise and reduction engines accept any non-negative strides and broadcasting, so no
operator here needs .contiguous()), and the address of the first element. aclCreateTensor
takes a storage base plus a view offset in elements; t.data_ptr() is already base + offset *
element size (pitfall: data_ptr includes the offset), so the tensor is described as the
storage starting at data_ptr() with view offset 0 (storage dims omitted: opgrad takes the
smallest storage holding the view). The elementwise operators' outputs take their input's
layout, torch.empty_like(x) (PyTorch's preserve_format: a dense x's strides, so channels-last in
is channels-last out, as PyTorch's own kernels give it; the engine walks both in memory order);
other outputs are allocated contiguous (torch.empty(shape, dtype=...)).

Per-call cost. Phase 1 (checking and planning) costs more than running a tiny operator, so each
thread keeps a cache of repeatable executors (aclSetAclOpExecutorRepeatable) keyed by the
operator, its attributes and the shape / strides / dtype of every input; the output layout
follows from those. A hit writes the addresses of this call's inputs and outputs into the plan's
own address array and makes one ctypes call, opgrad_executor_run (include/opgrad/opgrad.h), which
re-points the executor's io slots and runs phase 2; no phase 1. Every argument of that call is a
ctypes object built once per plan (the function has no argtypes: their conversion would cost more
than the call), so a hit allocates nothing but the output. Plans do not depend on addresses
(only on layouts, the thread count and the ISA); the overlap checks of phase 1 stay valid because
outputs are always fresh allocations. The caches are per thread (threading.local): an executor,
its tensors and scalars are never touched by two threads, and a thread runs one call at a time.
Changing the thread count through opgrad.set_num_threads starts new plans. Phase 2 of a plan
whose tensors have at most _SMALL elements is called with the GIL held (it takes well under a
microsecond); larger ones release it (ctypes.CDLL), so threads overlap.
"""
import ctypes
import threading

import torch

from .. import _lib as L
from .._lib import OpgradError

_tracing_state = torch._C._get_tracing_state
try:  # PyTorch >= 2.3
    from torch.compiler import is_compiling as _compiling
except ImportError:  # 1.13
    _compiling = None


import torch.autograd.forward_ad as _fwad  # noqa: E402

_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", None)


def forward_ad():
    """True inside torch.autograd.forward_ad.dual_level() or a functorch transform: the eager fast
    path must then go through the operators' autograd.Function, whose jvp carries the tangents
    (or, without a jvp rule, raises PyTorch's NotImplementedError) instead of calling the kernel
    on the primal values and dropping the tangent. (Called on every eager call: kept cheap.)"""
    return _fwad._current_level >= 0 or (_functorch_active is not None and _functorch_active())


def transforms_active():
    """True under a functorch transform (torch.func.vmap / grad / jvp / jacrev / jacfwd): the
    eager fast path then goes through the operators' autograd.Function, whose setup_context /
    jvp / vmap rules the transforms use (the kernel alone would meet tensors without storage)."""
    return _functorch_active is not None and _functorch_active()


def use_dispatcher():
    """True when an operator must be called as torch.ops.opgrad.<name> rather than through the
    eager fast path (its autograd.Function or the kernel directly): under torch.jit.trace, which
    records only dispatcher calls (the fast path would leave just the output's empty_like in the
    trace), and under torch.compile / export. The result is the same either way."""
    return _tracing_state() is not None or (_compiling is not None and _compiling())

# float64: the operators with float64 kernels take it (docs/torch.md, "float64"); the others refuse
# it in phase 1, raised as a TypeError carrying the C library's message (_plan).
_DT = {torch.float32: L.ACL_FLOAT, torch.float16: L.ACL_FLOAT16, torch.bfloat16: L.ACL_BF16,
       torch.float64: L.ACL_DOUBLE}
_SUPPORTED = "torch.float32, torch.float16, torch.bfloat16 (and torch.float64 where it has " \
             "float64 kernels)"
_PLAN_CAPACITY = 512  # executors kept per thread (FIFO eviction)
_SMALL = 4096         # up to this many elements phase 2 runs with the GIL held (about a microsecond)

_empty = torch.empty
_empty_like = torch.empty_like
_uint8 = torch.uint8
_ND = L.ACL_FORMAT_ND
_i64 = L.i64_array
_i64_cache = L._i64_cache
_create_tensor = L.aclCreateTensor
_destroy_tensor = L.aclDestroyTensor
_destroy_executor = L.aclDestroyAclOpExecutor
_repeatable = L.aclSetAclOpExecutorRepeatable
_p1 = L.phase1
_vp = ctypes.c_void_p
_run_gil = L.executor_run_gil      # opgrad_executor_run, GIL kept (tiny tensors), no argtypes
_run_nogil = L.executor_run_nogil  # the same, GIL released


# The plan generation, part of every key (a module global: the cheapest lookup there is).
_gen = 0


def clear_plans():
    """Drops every cached executor (lazily, thread by thread): the next call of each thread plans
    again. Called by opgrad.set_num_threads."""
    global _gen
    _gen += 1


# ---- per-thread state -----------------------------------------------------------------------
class _Plan:
    """A cached repeatable executor with its own aclTensor / aclScalar handles, and the prebuilt
    arguments of opgrad_executor_run: `args` = (executor, addrs, naddrs, workspace, workspaceSize,
    stream), all ctypes objects (or None). A call writes its tensors' addresses into `addrs`
    (inputs then outputs) through `mv`, a memoryview of it (cheaper than ctypes item
    assignment), and calls `call(*args)`. The workspace in `args` is the thread's workspace
    buffer: when that is reallocated (it only grows), _grow_workspace rebuilds the `args` of
    every plan of the thread, so a hit never checks it.
    `like`: the output is allocated by torch.empty_like(x). `meta`: whatever else the kernel
    needs on a hit (an output shape)."""
    __slots__ = ("ex", "ws", "hin", "hout", "scalars", "addrs", "mv", "args", "call", "like",
                 "meta")

    def __init__(self, ex, ws, hin, hout, scalars, ptrs, call, like, meta):
        self.ex, self.ws, self.hin, self.hout, self.scalars = ex, ws, hin, hout, scalars
        n = len(ptrs)
        self.addrs = (_vp * n)(*ptrs)
        self.mv = memoryview(self.addrs).cast("B").cast("P")
        self.args = (_vp(ex), self.addrs, ctypes.c_size_t(n), None, ctypes.c_uint64(ws), None)
        self.call, self.like, self.meta = call, like, meta

    def release(self):
        _destroy_executor(self.ex)
        for h in self.hin + self.hout:
            _destroy_tensor(h)
        for h in self.scalars:
            L.aclDestroyScalar(h)


class _Plans(dict):
    """key -> _Plan, per thread, FIFO eviction past _PLAN_CAPACITY."""

    def evict_one(self):
        self.pop(next(iter(self))).release()

    def release_all(self):
        for p in self.values():
            p.release()
        self.clear()

    def __del__(self):  # the thread ended
        try:
            self.release_all()
        except Exception:  # interpreter shutdown
            pass


class _State(threading.local):
    def __init__(self):
        self.plans = _Plans()
        self.gen = _gen
        self.wsize = ctypes.c_uint64(0)
        self.executor = ctypes.c_void_p(0)
        self.wsize_addr = ctypes.addressof(self.wsize)
        self.executor_addr = ctypes.addressof(self.executor)
        self.workspace = None
        self.workspace_ptr = 0
        self.workspace_cap = 0


_tls = _State()


# ---- errors ---------------------------------------------------------------------------------
def _bad_tensor(op, name, t):
    if not isinstance(t, torch.Tensor):
        return TypeError("opgrad.torch.%s: argument '%s' must be a torch.Tensor, got %s"
                         % (op, name, type(t).__name__))
    if not t.is_cpu:
        return TypeError("opgrad.torch.%s: argument '%s' is on %s; opgrad runs on the CPU only"
                         % (op, name, t.device))
    return TypeError("opgrad.torch.%s: argument '%s' has dtype %s; opgrad supports %s"
                     % (op, name, t.dtype, _SUPPORTED))


def acl_dtype(t, op, name="x"):
    """aclDataType of a CPU float32 / float16 / bfloat16 tensor, else TypeError."""
    try:
        dt = _DT.get(t.dtype)
        if dt is not None and t.is_cpu:
            return dt
    except AttributeError:
        pass
    raise _bad_tensor(op, name, t)


# ---- planning (cache miss) and launching ------------------------------------------------------
def _new_tensor(t, dt, fn):
    shape = t.shape
    d = _i64_cache.get(shape) or _i64(tuple(shape))
    s = _i64(tuple(t.stride()))
    h = _create_tensor(d[0], len(shape), dt, s[0], 0, _ND, None, 0, t.data_ptr())
    if not h:
        raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
    return h


def _plan(tl, key, fn, phase1, ins, in_dts, outs, out_dts, scalars=(), meta=None, like=False,
          slots=None):
    """Cache miss: describes the tensors, runs phase 1 (with the current addresses bound), makes
    the executor repeatable and caches it. `slots`: the executor's io slots in order when some
    are NULL (optional tensors not given; None there), else ins + outs."""
    if tl.gen != _gen:
        tl.plans.release_all()
        tl.gen = _gen
    hin, hout, owned = [], [], []
    try:
        for t, dt in zip(ins, in_dts):
            hin.append(_new_tensor(t, dt, fn))
        for t, dt in zip(outs, out_dts):
            hout.append(_new_tensor(t, dt, fn))
        # a float64 operation's attributes as float64 (the others round them to float32 anyway)
        f64 = L.ACL_DOUBLE in in_dts or L.ACL_DOUBLE in out_dts
        for v in scalars:
            c = ctypes.c_double(float(v)) if f64 else ctypes.c_float(float(v))
            h = L.aclCreateScalar(ctypes.addressof(c), L.ACL_DOUBLE if f64 else L.ACL_FLOAT)
            if not h:
                raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
            owned.append(h)
        st = phase1(hin, hout, owned, tl.wsize_addr, tl.executor_addr)
        if st:
            msg = L.error_message()
            if f64 and "has dtype float64" in msg:  # no float64 kernels, or a dtype mix
                raise TypeError("opgrad.torch: %s (which operators take float64, and with which "
                                "dtypes: docs/torch.md, float64)" % msg)
            raise OpgradError(st, msg, fn + "GetWorkspaceSize")
        tensors = tuple(ins) + tuple(outs)
        small = max(t.numel() for t in tensors) <= _SMALL
        plan = _Plan(tl.executor.value, tl.wsize.value, tuple(hin), tuple(hout), tuple(owned),
                     [None if t is None else t.data_ptr() or None
                      for t in (tensors if slots is None else slots)],
                     _run_gil if small else _run_nogil,
                     like, meta)
        hin = hout = owned = ()
        st = _repeatable(plan.ex)
        if st:
            err = OpgradError(st, L.error_message(), "aclSetAclOpExecutorRepeatable")
            plan.release()
            raise err
    finally:
        for h in hin:
            _destroy_tensor(h)
        for h in hout:
            _destroy_tensor(h)
        for h in owned:
            L.aclDestroyScalar(h)
    if plan.ws > tl.workspace_cap:
        try:
            _grow_workspace(tl, plan.ws)
        except BaseException:
            plan.release()
            raise
    _bind_workspace(plan, tl.workspace_ptr)
    plans = tl.plans
    while plans and len(plans) >= _PLAN_CAPACITY:
        plans.evict_one()
    plans[key] = plan
    return plan


def _grow_workspace(tl, size):
    """A larger workspace for this thread. Every cached plan of the thread is re-bound to it at
    once, before the old buffer can be used again (runs are synchronous: nothing is queued)."""
    size = max(size, 2 * tl.workspace_cap, 1 << 16)
    buf = _empty(size, dtype=_uint8)
    tl.workspace, tl.workspace_ptr, tl.workspace_cap = buf, buf.data_ptr(), size
    for plan in tl.plans.values():
        _bind_workspace(plan, tl.workspace_ptr)


def _bind_workspace(plan, ptr):
    """Puts workspace address `ptr` into plan.args (plans asking for none get it too: harmless)."""
    a = plan.args
    plan.args = (a[0], a[1], a[2], _vp(ptr) if ptr else None, a[4], None)


def _launch(plan, fn, tensors):
    """Re-points the plan at `tensors` (inputs then outputs) and runs it: one ctypes call."""
    mv = plan.mv
    for i, t in enumerate(tensors):
        mv[i] = t.data_ptr()
    st = plan.call(*plan.args)
    if st:
        raise OpgradError(st, L.error_message(), fn)


def _run(opkey, fn, phase1, ins, in_dts, outs, out_dts, attrs=(), scalars=()):
    """Generic path: any number of inputs and outputs."""
    tl = _tls
    key = (opkey, _gen, attrs) + tuple((t.shape, t.stride(), d) for t, d in zip(ins, in_dts))
    plan = tl.plans.get(key)
    if plan is None:
        plan = _plan(tl, key, fn, phase1, ins, in_dts, outs, out_dts, scalars)
    _launch(plan, fn, ins + outs)


# ---- unary forwards: Op(self, out) and backwards Op(gradOutput, self, out) ---------------------
# The hot paths are spelled out (no helper calls on a cache hit): this is where the per-call
# overhead of a tiny tensor goes.
def _unary(aclname, opname):
    p1 = _p1[aclname]
    fn = "aclnn" + aclname

    def phase1(hin, hout, sc, w, e):
        return p1(hin[0], hout[0], w, e)

    def kernel(x):
        if not x.is_cpu:
            raise _bad_tensor(opname, "x", x)
        tl = _tls
        key = (fn, _gen, x.shape, x.stride(), x.dtype)
        plan = tl.plans.get(key)
        if plan is None:
            dt = _DT.get(x.dtype)
            if dt is None:
                raise _bad_tensor(opname, "x", x)
            out = _empty_like(x)  # x's layout (PyTorch's preserve_format)
            plan = _plan(tl, key, fn, phase1, (x,), (dt,), (out,), (dt,))
        else:
            out = _empty_like(x)
        mv = plan.mv
        mv[0] = x.data_ptr()
        mv[1] = out.data_ptr()
        st = plan.call(*plan.args)
        if st:
            raise OpgradError(st, L.error_message(), fn)
        return out

    kernel.__name__ = kernel.__qualname__ = opname
    return kernel


def _grad(aclname, opname, first="grad", second="x"):
    p1 = _p1[aclname]
    fn = "aclnn" + aclname

    def phase1(hin, hout, sc, w, e):
        return p1(hin[0], hin[1], hout[0], w, e)

    def kernel(grad, x):
        if not x.is_cpu:
            raise _bad_tensor(opname, second, x)
        if not grad.is_cpu:
            raise _bad_tensor(opname, first, grad)
        tl = _tls
        key = (fn, _gen, grad.shape, grad.stride(), grad.dtype, x.shape, x.stride(), x.dtype)
        plan = tl.plans.get(key)
        if plan is None:
            dt = _DT.get(x.dtype)
            if dt is None:
                raise _bad_tensor(opname, second, x)
            gdt = _DT.get(grad.dtype)
            if gdt is None:
                raise _bad_tensor(opname, first, grad)
            out = _empty_like(x)  # x's layout (PyTorch's preserve_format)
            plan = _plan(tl, key, fn, phase1, (grad, x), (gdt, dt), (out,), (dt,))
        else:
            out = _empty_like(x)
        mv = plan.mv
        mv[0] = grad.data_ptr()
        mv[1] = x.data_ptr()
        mv[2] = out.data_ptr()
        st = plan.call(*plan.args)
        if st:
            raise OpgradError(st, L.error_message(), fn)
        return out

    kernel.__name__ = kernel.__qualname__ = opname
    return kernel


sigmoid = _unary("Sigmoid", "sigmoid")
tanh = _unary("Tanh", "tanh")
relu = _unary("Relu", "relu")

sigmoid_backward = _grad("SigmoidBackward", "sigmoid_backward", second="output")
tanh_backward = _grad("TanhBackward", "tanh_backward", second="output")


# ---- operators with attributes ------------------------------------------------------------------
def _check(t, op, name):
    dt = _DT.get(t.dtype) if isinstance(t, torch.Tensor) else None
    if dt is None or not t.is_cpu:
        raise _bad_tensor(op, name, t)
    return dt


def memory_format(*ts):
    """PyTorch's suggested memory format for outputs computed from 4-d / 5-d tensors ts
    (convolution, pooling, batch norm): channels-last(-3d) when one of them is laid out so and
    not also plainly contiguous, else contiguous."""
    for t in ts:
        if t is None or t.dim() not in (4, 5) or t.is_contiguous():
            continue
        cl = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        if t.is_contiguous(memory_format=cl):
            return cl
    return torch.contiguous_format


# row operators whose PyTorch kernels return contiguous outputs whatever the input's layout
_CONTIGUOUS_OUT = frozenset(("softmax", "log_softmax", "softmax_backward", "log_softmax_backward"))
_CONTIGUOUS = torch.contiguous_format


def _out_like(opname, x):
    if opname in _CONTIGUOUS_OUT:
        return _empty_like(x, memory_format=_CONTIGUOUS)
    return _empty_like(x)  # x's layout (PyTorch's preserve_format)


def _attr1(opname, fn, phase1, x, attrs, scalars):
    """One input of any layout, attributes, one output like x. phase1(hin, hout, sc, attrs, w, e)
    runs on a cache miss only; `scalars` (floats) become aclScalars (sc) for it."""
    if not x.is_cpu:
        raise _bad_tensor(opname, "x", x)
    tl = _tls
    key = (fn, _gen, attrs, x.shape, x.stride(), x.dtype)
    plan = tl.plans.get(key)
    if plan is None:
        dt = _DT.get(x.dtype)
        if dt is None:
            raise _bad_tensor(opname, "x", x)
        out = _out_like(opname, x)
        plan = _plan(tl, key, fn, lambda hi, ho, sc, w, e: phase1(hi, ho, sc, attrs, w, e),
                     (x,), (dt,), (out,), (dt,), scalars)
    else:
        out = _out_like(opname, x)
    mv = plan.mv
    mv[0] = x.data_ptr()
    mv[1] = out.data_ptr()
    st = plan.call(*plan.args)
    if st:
        raise OpgradError(st, L.error_message(), fn)
    return out


def _attr2(opname, fn, phase1, a, b, attrs, scalars, names=("grad", "x")):
    """Two inputs (any layouts), attributes, one output like b (a gradient: b's shape and
    dtype, contiguous)."""
    if not isinstance(a, torch.Tensor) or not a.is_cpu:
        raise _bad_tensor(opname, names[0], a)
    if not isinstance(b, torch.Tensor) or not b.is_cpu:
        raise _bad_tensor(opname, names[1], b)
    tl = _tls
    key = (fn, _gen, attrs, a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype)
    plan = tl.plans.get(key)
    if plan is None:
        adt = _DT.get(a.dtype)
        if adt is None:
            raise _bad_tensor(opname, names[0], a)
        bdt = _DT.get(b.dtype)
        if bdt is None:
            raise _bad_tensor(opname, names[1], b)
        out = _out_like(opname, b)
        plan = _plan(tl, key, fn, lambda hi, ho, sc, w, e: phase1(hi, ho, sc, attrs, w, e),
                     (a, b), (adt, bdt), (out,), (bdt,), scalars)
    else:
        out = _out_like(opname, b)
    mv = plan.mv
    mv[0] = a.data_ptr()
    mv[1] = b.data_ptr()
    mv[2] = out.data_ptr()
    st = plan.call(*plan.args)
    if st:
        raise OpgradError(st, L.error_message(), fn)
    return out


_APPROX = {"none": 0, "tanh": 1}


def _approx(op, approximate):
    a = _APPROX.get(approximate)
    if a is None:
        raise ValueError("opgrad.torch.%s: approximate must be 'none' or 'tanh', got %r"
                         % (op, approximate))
    return a


def _gelu_v2_p1(hi, ho, sc, attrs, w, e):
    return _p1["GeluV2"](hi[0], attrs, ho[0], w, e)


def gelu_v2(x, approximate="none"):
    a = _APPROX.get(approximate)
    if a is None:
        _approx("gelu_v2", approximate)
    return _attr1("gelu_v2", "aclnnGeluV2", _gelu_v2_p1, x, a, ())


_APPROX_C = (b"none", b"tanh")


def _gelu_v2_bwd_p1(hi, ho, sc, attrs, w, e):
    return _p1["GeluBackwardV2"](hi[0], hi[1], _APPROX_C[attrs], ho[0], w, e)


def gelu_v2_backward(grad, x, approximate="none"):
    a = _approx("gelu_v2_backward", approximate)
    return _attr2("gelu_v2_backward", "aclnnGeluBackwardV2", _gelu_v2_bwd_p1, grad, x, a, ())


def _threshold_p1(hi, ho, sc, attrs, w, e):
    return _p1["ThresholdBackward"](hi[0], hi[1], sc[0], ho[0], w, e)


_ZERO = (0.0,)


def relu_backward(grad, output):
    """threshold_backward(grad, relu's output, 0): grad where output > 0, else 0."""
    return _attr2("relu_backward", "aclnnThresholdBackward", _threshold_p1,
                  grad, output, None, _ZERO, ("grad", "output"))


# ---- arithmetic ---------------------------------------------------------------------------------
def broadcast_shape(a, b):
    """NumPy broadcast of two shapes, or None when they do not broadcast."""
    if a == b:
        return a
    na, nb = len(a), len(b)
    n = max(na, nb)
    out = []
    for i in range(n):
        da = a[i - n + na] if i - n + na >= 0 else 1
        db = b[i - n + nb] if i - n + nb >= 0 else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            return None
    return torch.Size(out)


def _binary_out(x, other):
    """The output of x (op) other and where its layout comes from: the broadcast shape, the
    promoted dtype, and the layout of the first input of that shape (0: x, 1: other; None:
    contiguous), as PyTorch's preserve_format gives it (channels-last in, channels-last out)."""
    if x.dtype not in _DT or other.dtype not in _DT:
        return _empty_like(x), 0  # refused below with a TypeError
    shape = broadcast_shape(x.shape, other.shape)
    if shape is None:
        shape = x.shape  # opgrad refuses the pair, with a message naming both shapes
    dtype = x.dtype if x.dtype == other.dtype else torch.result_type(x, other)
    for i, t in enumerate((x, other)):
        if t.shape == shape:
            return _empty_like(t, dtype=dtype), i
    return _empty(shape, dtype=dtype), None


def _binary(aclname, opname, alpha):
    """add(x, other, alpha) / mul(x, other): broadcasting, PyTorch promotion, spelled out."""
    p1 = _p1[aclname]
    fn = "aclnn" + aclname

    def kernel(x, other, a=1.0):
        if not x.is_cpu:
            raise _bad_tensor(opname, "x", x)
        if not other.is_cpu:
            raise _bad_tensor(opname, "other", other)
        tl = _tls
        key = (fn, _gen, a, x.shape, x.stride(), x.dtype, other.shape, other.stride(),
               other.dtype)
        plan = tl.plans.get(key)
        if plan is None:
            if x.dtype is other.dtype and x.shape == other.shape:
                out = _empty_like(x)
                meta, like = None, True
            else:
                out, src = _binary_out(x, other)
                meta, like = (out.shape, out.dtype, src), False
            xdt, odt_ = _DT.get(x.dtype), _DT.get(other.dtype)
            if xdt is None:
                raise _bad_tensor(opname, "x", x)
            if odt_ is None:
                raise _bad_tensor(opname, "other", other)
            dt = _DT.get(out.dtype)
            if alpha:
                phase1 = lambda hi, ho, sc, w, e: p1(hi[0], hi[1], sc[0], ho[0], w, e)  # noqa
                scalars = (a,)
            else:
                phase1 = lambda hi, ho, sc, w, e: p1(hi[0], hi[1], ho[0], w, e)  # noqa
                scalars = ()
            plan = _plan(tl, key, fn, phase1, (x, other), (xdt, odt_), (out,), (dt,), scalars,
                         meta, like)
        elif plan.like:
            out = _empty_like(x)
        else:
            shape, dtype, src = plan.meta
            out = (_empty(shape, dtype=dtype) if src is None
                   else _empty_like(other if src else x, dtype=dtype))
        mv = plan.mv
        mv[0] = x.data_ptr()
        mv[1] = other.data_ptr()
        mv[2] = out.data_ptr()
        st = plan.call(*plan.args)
        if st:
            raise OpgradError(st, L.error_message(), fn)
        return out

    if not alpha:
        kernel.__defaults__ = (None,)  # mul(x, other): no alpha (a stays None in the key)
    kernel.__name__ = kernel.__qualname__ = opname
    return kernel


add = _binary("Add", "add", True)
mul = _binary("Mul", "mul", False)


def _muls_p1(hi, ho, sc, attrs, w, e):
    return _p1["Muls"](hi[0], sc[0], ho[0], w, e)


def muls(x, other):
    """x * other for a Python number (aclnnMuls: other is rounded to x's dtype first)."""
    return _attr1("muls", "aclnnMuls", _muls_p1, x, other, (other,))


def _reduced_shape(x, dims, keepdim):
    nd = x.dim()
    rank = max(nd, 1)
    norm = [d + rank if d < 0 else d for d in dims]
    if any(d < 0 or d >= rank for d in norm) or len(set(norm)) != len(norm):
        return x.shape  # opgrad names the bad dim; the out shape does not matter then
    red = set(norm) if dims else set(range(nd))
    if keepdim:
        return [1 if i in red else x.shape[i] for i in range(nd)]
    return [x.shape[i] for i in range(nd) if i not in red]


def _reduce_sum_p1(hi, ho, sc, attrs, w, e):
    dims, keepdim, dt = attrs
    arr = L.aclCreateIntArray(_i64(dims)[0] if dims else None, len(dims))
    if not arr:
        raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), "aclCreateIntArray")
    try:
        return _p1["ReduceSum"](hi[0], arr, keepdim, dt, ho[0], w, e)
    finally:
        L.aclDestroyIntArray(arr)


def reduce_sum(x, dims=(), keepdim=False):
    """Sum over dims (all when empty), in x's dtype with fp32 accumulation in a fixed order
    (aclnnReduceSum: deterministic, independent of the thread count). The output shape is kept
    in the cached plan."""
    fn = "aclnnReduceSum"
    dt = _check(x, "reduce_sum", "x")
    dims = tuple(dims) if type(dims) is not tuple else dims
    keepdim = bool(keepdim)
    tl = _tls
    key = (fn, _gen, dims, keepdim, x.shape, x.stride(), dt)
    plan = tl.plans.get(key)
    if plan is None:
        dims = tuple(int(d) for d in dims)
        shape = _reduced_shape(x, dims, keepdim)
        out = _empty(shape, dtype=x.dtype)
        attrs = (dims, keepdim, dt)
        plan = _plan(tl, key, fn,
                     lambda hi, ho, sc, w, e: _reduce_sum_p1(hi, ho, sc, attrs, w, e),
                     (x,), (dt,), (out,), (dt,), (), shape)
    else:
        out = _empty(plan.meta, dtype=x.dtype)
    _launch(plan, fn, (x, out))
    return out


def _fas_p1(hi, ho, sc, w, e):
    return _p1["FusedAddScale"](hi[0], hi[1], hi[2], ho[0], w, e)


def fused_add_scale(x, bias, scale):
    fn = "aclnnFusedAddScale"
    if not (x.is_cpu and bias.is_cpu and scale.is_cpu):
        for t, n in ((x, "x"), (bias, "bias"), (scale, "scale")):
            _check(t, "fused_add_scale", n)
    xd, bd, sd = x.dtype, bias.dtype, scale.dtype
    if xd is bd and xd is sd:
        out = _empty_like(x)
    else:
        out = _empty_like(x, dtype=torch.promote_types(torch.promote_types(xd, bd), sd))
    tl = _tls
    key = (fn, _gen, x.shape, x.stride(), xd, bias.shape, bias.stride(), bd, scale.shape,
           scale.stride(), sd)
    plan = tl.plans.get(key)
    if plan is None:
        dts = (_check(x, "fused_add_scale", "x"), _check(bias, "fused_add_scale", "bias"),
               _check(scale, "fused_add_scale", "scale"))
        plan = _plan(tl, key, fn, _fas_p1, (x, bias, scale), dts, (out,), (_DT[out.dtype],))
    _launch(plan, fn, (x, bias, scale, out))
    return out


def _fas_bwd_p1(hi, ho, sc, w, e):
    return _p1["FusedAddScaleBackward"](hi[0], hi[1], hi[2], hi[3], ho[0], ho[1], ho[2], w, e)


def fused_add_scale_backward(grad, x, bias, scale):
    op = "fused_add_scale_backward"
    dts = (_check(grad, op, "grad"), _check(x, op, "x"), _check(bias, op, "bias"),
           _check(scale, op, "scale"))
    outs = (_empty(x.shape, dtype=x.dtype), _empty(bias.shape, dtype=bias.dtype),
            _empty(scale.shape, dtype=scale.dtype))
    _run("FusedAddScaleBackward", "aclnnFusedAddScaleBackward", _fas_bwd_p1,
         (grad, x, bias, scale), dts, outs, dts[1:])
    return outs


# ---- operators derived from the library's operator list ------------------------------------------
# A forward operator of the list (src/ops/ops.inc, read at import: opgrad._lib.OPS) whose
# parameters are one input tensor, attributes with defaults and one output, and whose backward
# operator takes the incoming gradient, the forward's input or output, attributes and one output,
# needs no Python of its own: its kernels, schema and autograd formula are made from the list.
_ATTR_TYPES = {"S": float, "D": float, "I": int, "B": bool, "C": str}


snake = L.snake


def _default(p):
    t = _ATTR_TYPES[p.kind]
    if t is bool:
        return p.default == "true"
    return t(p.default)


class ListPair:
    """A forward / backward pair of the list in the standard shape (see above)."""

    def __init__(self, fwd, bwd, attrs, battrs, from_output):
        self.fwd, self.bwd = fwd, bwd
        self.name, self.bname = snake(fwd.name), snake(fwd.name) + "_backward"
        self.attrs = attrs            # forward attributes: (param, python name, default)
        self.battrs = battrs          # backward attributes: (param, index into attrs or None)
        self.from_output = from_output  # the backward reads the forward's output


def list_pair(fwd):
    """The ListPair of forward operator `fwd` (an opgrad._lib.Op), or None when its shape is not
    the standard one."""
    if fwd.kind != "forward" or not fwd.grad or fwd.grad == "composite":
        return None
    bwd = L.OPS.get(fwd.grad)
    kinds = [p.kind for p in fwd.params]
    if bwd is None or kinds.count("T") != 1 or kinds.count("O") != 1 or \
            any(k not in ("T", "O") and k not in _ATTR_TYPES for k in kinds):
        return None
    if any(p.default == "" for p in fwd.params if p.kind in _ATTR_TYPES):
        return None  # an attribute without a default (checked before _default converts it)
    attrs = [(p, snake(p.name), _default(p)) for p in fwd.params if p.kind in _ATTR_TYPES]
    bk = [p.kind for p in bwd.params]
    if bk.count("G") != 1 or bk.count("O") != 1 or bk.count("T") + bk.count("Y") != 1 or \
            any(k not in ("G", "T", "Y", "O") and k not in _ATTR_TYPES for k in bk):
        return None
    battrs = []
    for p in bwd.params:
        if p.kind not in _ATTR_TYPES:
            continue
        j = next((i for i, (q, _, _) in enumerate(attrs) if q.name == p.name), None)
        if (j is None and p.default == "") or (j is not None and attrs[j][0].kind != p.kind):
            return None
        battrs.append((p, j))
    return ListPair(fwd, bwd, attrs, battrs, "Y" in bk)


def _phase1_of(op, tensors_in, tensors_out):
    """phase1(hin, hout, sc, attrs, w, e) of list operator `op`: T/G/Y parameters take hin in
    the order given by tensors_in (parameter kinds), O the outputs, S the aclScalars sc in order,
    the other attributes their values from attrs (in the operator's attribute order)."""
    p1 = _p1[op.name]
    plan = []
    nin = ns = na = 0
    for p in op.params:
        if p.kind in ("T", "G", "Y"):
            plan.append(("in", tensors_in.index(p.kind)))
            nin += 1
        elif p.kind == "O":
            plan.append(("out", 0))
        elif p.kind == "S":
            plan.append(("sc", ns))
            ns += 1
            na += 1
        else:
            plan.append(("C" if p.kind == "C" else "attr", na))
            na += 1

    def phase1(hi, ho, sc, attrs, w, e):
        args = []
        for what, i in plan:
            if what == "in":
                args.append(hi[i])
            elif what == "out":
                args.append(ho[0])
            elif what == "sc":
                args.append(sc[i])
            elif what == "C":
                args.append(attrs[i].encode())
            else:
                args.append(attrs[i])
        return p1(*args, w, e)

    return phase1


def list_kernels(pair):
    """(forward kernel, backward kernel) of a ListPair, with the positional signatures of their
    schemas: f(x, *attrs) and b(grad, x_or_output, *attrs) (the forward's attributes)."""
    fwd, bwd = pair.fwd, pair.bwd
    ffn, bfn = "aclnn" + fwd.name, "aclnn" + bwd.name
    if not pair.attrs and not pair.battrs:
        second = "Y" if pair.from_output else "T"
        return (_unary(fwd.name, pair.name),
                _grad(bwd.name, pair.bname, second="output" if second == "Y" else "x"))
    fp1 = _phase1_of(fwd, ["T"], ["O"])
    bp1 = _phase1_of(bwd, ["G", "Y" if pair.from_output else "T"], ["O"])
    defaults = tuple(d for _, _, d in pair.attrs)
    fscalar = [i for i, (p, _, _) in enumerate(pair.attrs) if p.kind == "S"]
    names = ("grad", "output" if pair.from_output else "x")

    def battr_values(values):
        return tuple(values[j] if j is not None else _default(p) for p, j in pair.battrs)

    bscalar = [i for i, (p, _) in enumerate(pair.battrs) if p.kind == "S"]

    def forward(x, *attrs):
        attrs = attrs + defaults[len(attrs):]
        return _attr1(pair.name, ffn, fp1, x, attrs, [attrs[i] for i in fscalar])

    def backward(grad, x, *attrs):
        attrs = attrs + defaults[len(attrs):]
        battrs = battr_values(attrs)
        return _attr2(pair.bname, bfn, bp1, grad, x, battrs, [battrs[i] for i in bscalar], names)

    forward.__name__ = forward.__qualname__ = pair.name
    backward.__name__ = backward.__qualname__ = pair.bname
    return forward, backward


#: every standard pair of the list, by Python name
LIST_PAIRS = {}
for _op in L.OPS.values():
    _pair = list_pair(_op)
    if _pair is not None:
        LIST_PAIRS[_pair.name] = _pair


# ---- the matmul family (src/ops/ops.inc, family matmul; docs/ops/matmul.md) ----------------------
# Every operand is described with its own strides (a transposed weight, the .mT of a batch, a
# stride-0 broadcast are read in place); outputs are fresh contiguous tensors, except the
# gradients of FusedMatmulBackward, which take their input's layout (torch.empty_like: a gradient
# of the transposed view weight.t() is then the transposed view of a contiguous [out, in] buffer).
# cubeMathType 0 (KEEP_DTYPE) unless a caller says otherwise: on the CPU every mode but 2 is exact
# fp32 products with fp32 accumulation, rounded once to the output's dtype.
def promote(*ts):
    """PyTorch's promotion of the floating dtypes of the tensors given (None skipped)."""
    dt = None
    for t in ts:
        if t is None:
            continue
        dt = t.dtype if dt is None or dt is t.dtype else torch.promote_types(dt, t.dtype)
    return dt


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def matmul_shape(a, b):
    """The shape of torch.matmul(a, b) (shapes a, b), or None when they do not multiply."""
    da, db = len(a), len(b)
    if da == 0 or db == 0:
        return None
    if da == 1 and db == 1:
        return torch.Size(()) if a[0] == b[0] else None
    a2 = (1, a[0]) if da == 1 else tuple(a)
    b2 = (b[0], 1) if db == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        return None
    batch = broadcast_shape(torch.Size(a2[:-2]), torch.Size(b2[:-2]))
    if batch is None:
        return None
    out = list(batch)
    if da > 1:
        out.append(a2[-2])
    if db > 1:
        out.append(b2[-1])
    return torch.Size(out)


def _mm_run(fn, p1, ins, outs, attrs=(), scalars=()):
    """One call of a matmul-family operator. ins / outs may hold None (an optional tensor not
    given, a gradient not wanted): p1(hin, hout, sc, w, e) gets None in those places, and the
    executor's io slot of a None stays NULL (slots count every parameter, given or not). The key
    holds every tensor's layout (outputs included: the gradients follow their inputs' layouts)."""
    tl = _tls
    slots = ins + outs
    key = (fn, _gen, attrs) + tuple(
        None if t is None else (t.shape, t.stride(), t.dtype) for t in slots)
    plan = tl.plans.get(key)
    if plan is None:
        pin = [t for t in ins if t is not None]
        pout = [t for t in outs if t is not None]
        in_map, out_map = _count(ins), _count(outs)

        def phase1(hi, ho, sc, w, e):
            return p1([None if j is None else hi[j] for j in in_map],
                      [None if j is None else ho[j] for j in out_map], sc, w, e)

        plan = _plan(tl, key, fn, phase1, pin, [_DT[t.dtype] for t in pin], pout,
                     [_DT[t.dtype] for t in pout], scalars, slots=slots)
    mv = plan.mv
    for i, t in enumerate(slots):
        if t is not None:
            mv[i] = t.data_ptr()
    st = plan.call(*plan.args)
    if st:
        raise OpgradError(st, L.error_message(), fn)


def _count(ts):
    """[index among the non-None, or None] per entry."""
    out, n = [], 0
    for t in ts:
        if t is None:
            out.append(None)
        else:
            out.append(n)
            n += 1
    return out


def _checked(op, pairs):
    for t, name in pairs:
        if t is not None:
            _check(t, op, name)


def _out_dtype(op, out_dtype, promoted):
    if out_dtype is None:
        return promoted
    if out_dtype not in _DT:
        raise TypeError("opgrad.torch.%s: out_dtype %s is not supported; opgrad supports %s"
                        % (op, out_dtype, _SUPPORTED))
    return out_dtype


def _two_p1(name):
    p1 = _p1[name]
    return lambda hi, ho, sc, w, e: p1(hi[0], hi[1], ho[0], 0, w, e)


_MATMUL_P1 = _two_p1("Matmul")
_MM_P1 = _two_p1("Mm")
_BMM_P1 = _two_p1("BatchMatMul")


def matmul(x, other, out_dtype=None):
    """x @ other with torch.matmul's rules (1-D operands, broadcast batch dims), aclnnMatmul;
    out_dtype (default: the promotion of the inputs) receives the fp32 accumulator rounded once."""
    _checked("matmul", ((x, "x"), (other, "other")))
    shape = matmul_shape(x.shape, other.shape)
    dt = _out_dtype("matmul", out_dtype, promote(x, other))
    # shapes that do not multiply: an output of any shape, refused by opgrad with its message
    out = _empty(shape if shape is not None else (0,), dtype=dt)
    _mm_run("aclnnMatmul", _MATMUL_P1, [x, other], [out], (dt,))
    return out


def mm(x, mat2):
    """x [M, K] @ mat2 [K, N] (aclnnMm)."""
    _checked("mm", ((x, "x"), (mat2, "mat2")))
    ok = x.dim() == 2 and mat2.dim() == 2
    out = _empty((x.shape[0], mat2.shape[1]) if ok else (0,), dtype=promote(x, mat2))
    _mm_run("aclnnMm", _MM_P1, [x, mat2], [out])
    return out


def _bmm_shape(a, b):
    if len(a) != 3 or len(b) != 3:
        return None
    batch = broadcast_shape(a[:1], b[:1])
    return None if batch is None else torch.Size((batch[0], a[1], b[2]))


def bmm(x, mat2):
    """x [B, M, K] @ mat2 [B, K, N] (aclnnBatchMatMul; a batch of 1 broadcasts)."""
    _checked("bmm", ((x, "x"), (mat2, "mat2")))
    shape = _bmm_shape(x.shape, mat2.shape)
    out = _empty(shape if shape is not None else (0,), dtype=promote(x, mat2))
    _mm_run("aclnnBatchMatMul", _BMM_P1, [x, mat2], [out])
    return out


def _addmm_p1(name):
    p1 = _p1[name]
    return lambda hi, ho, sc, w, e: p1(hi[0], hi[1], hi[2], sc[0], sc[1], ho[0], 0, w, e)


_ADDMM_P1 = _addmm_p1("Addmm")
_BADDBMM_P1 = _addmm_p1("Baddbmm")


def addmm(input, mat1, mat2, beta=1.0, alpha=1.0):  # noqa: A002  (torch.addmm's name)
    """beta * input + alpha * (mat1 @ mat2), input broadcast to [M, N] (aclnnAddmm; formed in fp32
    and rounded once; beta = 0 does not read input). A 0-d input is passed as its [1] view."""
    _checked("addmm", ((input, "input"), (mat1, "mat1"), (mat2, "mat2")))
    ok = mat1.dim() == 2 and mat2.dim() == 2
    out = _empty((mat1.shape[0], mat2.shape[1]) if ok else (0,), dtype=promote(input, mat1, mat2))
    beta, alpha = float(beta), float(alpha)
    _mm_run("aclnnAddmm", _ADDMM_P1, [input.reshape(1) if input.dim() == 0 else input, mat1, mat2],
            [out], (beta, alpha), (beta, alpha))
    return out


def baddbmm(input, batch1, batch2, beta=1.0, alpha=1.0):  # noqa: A002
    """beta * input + alpha * (batch1 @ batch2), [B, M, N] (aclnnBaddbmm; batches of 1 broadcast,
    input broadcasts to the result; formed in fp32 and rounded once)."""
    _checked("baddbmm", ((input, "input"), (batch1, "batch1"), (batch2, "batch2")))
    shape = _bmm_shape(batch1.shape, batch2.shape)
    out = _empty(shape if shape is not None else (0,), dtype=promote(input, batch1, batch2))
    beta, alpha = float(beta), float(alpha)
    _mm_run("aclnnBaddbmm", _BADDBMM_P1,
            [input.reshape(1) if input.dim() == 0 else input, batch1, batch2], [out],
            (beta, alpha), (beta, alpha))
    return out


FUSED_TYPES = ("", "relu", "gelu_erf", "gelu_tanh", "add", "mul", "16cast32")


def _fused_type(op, t):
    if t not in FUSED_TYPES:
        raise ValueError("opgrad.torch.%s: fused_op_type must be one of %s, got %r"
                         % (op, ", ".join(repr(x) for x in FUSED_TYPES), t))
    return t.encode()


def fused_matmul_shape(x1, x2):
    """y's shape: x1 [..., M, K] @ x2 [..., K, N] with broadcast batch dims, or None."""
    if len(x1) < 2 or len(x2) < 2 or x1[-1] != x2[-2]:
        return None
    batch = broadcast_shape(torch.Size(x1[:-2]), torch.Size(x2[:-2]))
    return None if batch is None else torch.Size(tuple(batch) + (x1[-2], x2[-1]))


def fused_matmul_dtype(x1, x2, bias, x3, fused_op_type):
    """y's dtype: float32 for 16cast32, else the promotion of every tensor given."""
    if fused_op_type == "16cast32":
        return torch.float32
    return promote(x1, x2, bias, x3 if fused_op_type in ("add", "mul") else None)


def fused_matmul(x1, x2, bias=None, x3=None, fused_op_type="", cube_math_type=0):
    """aclnnFusedMatmul: OP(x1 @ x2 + bias, x3) (docs/ops/matmul.md, FusedMatmul)."""
    op = "fused_matmul"
    _checked(op, ((x1, "x1"), (x2, "x2"), (bias, "bias"), (x3, "x3")))
    t = _fused_type(op, fused_op_type)
    shape = fused_matmul_shape(x1.shape, x2.shape)
    out = _empty(shape if shape is not None else (0,),
                 dtype=fused_matmul_dtype(x1, x2, bias, x3, fused_op_type))
    cube = int(cube_math_type)
    p1 = _p1["FusedMatmul"]
    _mm_run("aclnnFusedMatmul",
            lambda hi, ho, sc, w, e: p1(hi[0], hi[1], hi[2], hi[3], t, cube, ho[0], w, e),
            [x1, x2, bias, x3], [out], (t, cube))
    return out


def fused_grad_mask(fused_op_type, bias, x3, output_mask):
    """The gradients fused_matmul_backward computes: those asked for whose input is given (x3's
    only for add / mul, the types that read it)."""
    m = [bool(v) for v in output_mask][:4] + [False] * (4 - len(output_mask))
    return [m[0], m[1], m[2] and bias is not None,
            m[3] and x3 is not None and fused_op_type in ("add", "mul")]


def fused_matmul_grads_like(x1, x2, bias, x3, mask):
    """The outputs of fused_matmul_backward: each computed gradient with its input's shape, dtype
    and layout (torch.empty_like), the others empty [0] tensors of x1's dtype."""
    return tuple(_empty_like(t) if want else x1.new_empty((0,))
                 for t, want in zip((x1, x2, bias, x3), mask))


def fused_matmul_backward(grad, x1, x2, bias, x3, fused_op_type, cube_math_type, output_mask):
    """aclnnFusedMatmulBackward in one call: (gradX1, gradX2, gradBias, gradX3), each wanted one
    (output_mask) in its input's layout, formed in fp32 and rounded once; unwanted ones are not
    computed (NULL outputs) and returned as empty [0] tensors."""
    op = "fused_matmul_backward"
    _checked(op, ((grad, "grad"), (x1, "x1"), (x2, "x2"), (bias, "bias"), (x3, "x3")))
    t = _fused_type(op, fused_op_type)
    mask = fused_grad_mask(fused_op_type, bias, x3, output_mask)
    outs = fused_matmul_grads_like(x1, x2, bias, x3, mask)
    cube = int(cube_math_type)
    p1 = _p1["FusedMatmulBackward"]
    pouts = [o if m else None for o, m in zip(outs, mask)]
    if any(o is not None for o in pouts):
        _mm_run("aclnnFusedMatmulBackward",
                lambda hi, ho, sc, w, e: p1(hi[0], hi[1], hi[2], hi[3], hi[4], t, cube, ho[0],
                                            ho[1], ho[2], ho[3], w, e),
                [grad, x1, x2, bias, x3], pouts, (t, cube))
    return outs
