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
smallest storage holding the view). Outputs are allocated contiguous: torch.empty_like(x,
memory_format=torch.contiguous_format) (plain empty_like would keep a transposed x's strides) or
torch.empty(shape, dtype=...).

Per-call cost. Phase 1 (checking and planning) costs more than running a tiny operator, so each
thread keeps a cache of repeatable executors (aclSetAclOpExecutorRepeatable) keyed by the
operator, its attributes and the shape / strides / dtype of every input; the output layout
follows from those. A hit re-points the executor's inputs and outputs at the new tensors
(aclSetInputTensorAddr / aclSetOutputTensorAddr, with the executor's own aclTensor handles; skipped
for a slot whose address did not change since the last call) and runs phase 2: at most three
ctypes calls for a unary operator, no phase 1. Plans do not depend on
addresses (only on layouts, the thread count and the ISA); the overlap checks of phase 1 stay
valid because outputs are always fresh allocations. The caches are per thread (threading.local):
an executor, its tensors and scalars are never touched by two threads, and a thread runs one
call at a time. Changing the thread count through opgrad.set_num_threads starts new plans.
Phase 2 of a plan whose tensors have at most _SMALL elements is called with the GIL held (it
takes well under a microsecond); larger ones release it (ctypes.CDLL), so threads overlap.
"""
import ctypes
import threading

import torch

from .. import _lib as L
from .._lib import OpgradError

_DT = {torch.float32: L.ACL_FLOAT, torch.float16: L.ACL_FLOAT16, torch.bfloat16: L.ACL_BF16}
_SUPPORTED = "torch.float32, torch.float16, torch.bfloat16"
_PLAN_CAPACITY = 512  # executors kept per thread (FIFO eviction)
_SMALL = 4096         # up to this many elements phase 2 runs with the GIL held (about a microsecond)

_empty = torch.empty
_empty_like = torch.empty_like
_CONTIGUOUS = torch.contiguous_format
_uint8 = torch.uint8
_ND = L.ACL_FORMAT_ND
_i64 = L.i64_array
_i64_cache = L._i64_cache
_create_tensor = L.aclCreateTensor
_destroy_tensor = L.aclDestroyTensor
_destroy_executor = L.aclDestroyAclOpExecutor
_set_in = L.aclSetInputTensorAddr
_set_out = L.aclSetOutputTensorAddr
_repeatable = L.aclSetAclOpExecutorRepeatable
_p1 = L.phase1


class _Generation:
    value = 0


GEN = _Generation()


def clear_plans():
    """Drops every cached executor (lazily, thread by thread): the next call of each thread plans
    again. Called by opgrad.set_num_threads."""
    GEN.value += 1


# ---- per-thread state -----------------------------------------------------------------------
class _Plan:
    """A cached repeatable executor with its own aclTensor / aclScalar handles. `addr` holds the
    addresses now bound to its inputs then outputs: re-pointing is skipped when a call brings the
    same address again (a freed output is often reallocated at the same place)."""
    __slots__ = ("ex", "ws", "hin", "hout", "scalars", "addr", "meta", "run")

    def __init__(self, ex, ws, hin, hout, scalars, addr, meta, run):
        self.ex, self.ws, self.hin, self.hout = ex, ws, hin, hout
        self.scalars, self.addr, self.meta, self.run = scalars, addr, meta, run

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
        self.gen = GEN.value
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


def _plan(tl, key, fn, phase1, ins, in_dts, outs, out_dts, scalars=(), meta=None):
    """Cache miss: describes the tensors, runs phase 1 (with the current addresses bound), makes
    the executor repeatable and caches it."""
    if tl.gen != GEN.value:
        tl.plans.release_all()
        tl.gen = GEN.value
    hin, hout, owned = [], [], []
    try:
        for t, dt in zip(ins, in_dts):
            hin.append(_new_tensor(t, dt, fn))
        for t, dt in zip(outs, out_dts):
            hout.append(_new_tensor(t, dt, fn))
        for v in scalars:
            c = ctypes.c_float(float(v))
            h = L.aclCreateScalar(ctypes.addressof(c), L.ACL_FLOAT)
            if not h:
                raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
            owned.append(h)
        st = phase1(hin, hout, owned, tl.wsize_addr, tl.executor_addr)
        if st:
            raise OpgradError(st, L.error_message(), fn + "GetWorkspaceSize")
        small = max(t.numel() for t in ins + outs) <= _SMALL
        plan = _Plan(tl.executor.value, tl.wsize.value, tuple(hin), tuple(hout), tuple(owned),
                     [t.data_ptr() for t in ins] + [t.data_ptr() for t in outs], meta,
                     (L.phase2_gil if small else L.phase2)[fn[len("aclnn"):]])
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
    plans = tl.plans
    while plans and len(plans) >= _PLAN_CAPACITY:
        plans.evict_one()
    plans[key] = plan
    return plan


def _grow_workspace(tl, size):
    size = max(size, 2 * tl.workspace_cap, 1 << 16)
    buf = _empty(size, dtype=_uint8)
    tl.workspace, tl.workspace_ptr, tl.workspace_cap = buf, buf.data_ptr(), size


def _launch(tl, plan, fn):
    ws = plan.ws
    if ws:
        if ws > tl.workspace_cap:
            _grow_workspace(tl, ws)
        st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
    else:
        st = plan.run(None, 0, plan.ex, None)
    if st:
        raise OpgradError(st, L.error_message(), fn)


def _repoint(plan, i, ptr, fn):
    """Binds address `ptr` to io slot i (inputs first, then outputs) of a cached plan."""
    nin = len(plan.hin)
    if i < nin:
        st = _set_in(plan.ex, i, plan.hin[i], ptr)
    else:
        st = _set_out(plan.ex, i - nin, plan.hout[i - nin], ptr)
    if st:
        raise OpgradError(st, L.error_message(), fn)
    plan.addr[i] = ptr


def _run(opkey, fn, phase1, ins, in_dts, outs, out_dts, attrs=(), scalars=()):
    """Generic path: any number of inputs and outputs."""
    tl = _tls
    key = (opkey, GEN.value, attrs) + tuple((t.shape, t.stride(), d) for t, d in zip(ins, in_dts))
    plan = tl.plans.get(key)
    if plan is None:
        plan = _plan(tl, key, fn, phase1, ins, in_dts, outs, out_dts, scalars)
    else:
        addr = plan.addr
        for i, t in enumerate(ins + outs):
            ptr = t.data_ptr()
            if addr[i] != ptr:
                _repoint(plan, i, ptr, fn)
    _launch(tl, plan, fn)


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
        out = _empty_like(x, memory_format=_CONTIGUOUS)
        tl = _tls
        key = (fn, GEN.value, x.shape, x.stride(), x.dtype)
        plan = tl.plans.get(key)
        if plan is None:
            dt = _DT.get(x.dtype)
            if dt is None:
                raise _bad_tensor(opname, "x", x)
            plan = _plan(tl, key, fn, phase1, (x,), (dt,), (out,), (dt,))
        else:
            addr = plan.addr
            ptr = x.data_ptr()
            if addr[0] != ptr:
                if _set_in(plan.ex, 0, plan.hin[0], ptr):
                    _repoint_failed(fn)
                addr[0] = ptr
            ptr = out.data_ptr()
            if addr[1] != ptr:
                if _set_out(plan.ex, 0, plan.hout[0], ptr):
                    _repoint_failed(fn)
                addr[1] = ptr
        ws = plan.ws
        if ws:
            if ws > tl.workspace_cap:
                _grow_workspace(tl, ws)
            st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
        else:
            st = plan.run(None, 0, plan.ex, None)
        if st:
            raise OpgradError(st, L.error_message(), fn)
        return out

    kernel.__name__ = kernel.__qualname__ = opname
    return kernel


def _repoint_failed(fn):
    raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)


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
        out = _empty_like(x, memory_format=_CONTIGUOUS)
        tl = _tls
        key = (fn, GEN.value, grad.shape, grad.stride(), grad.dtype, x.shape, x.stride(), x.dtype)
        plan = tl.plans.get(key)
        if plan is None:
            dt = _DT.get(x.dtype)
            if dt is None:
                raise _bad_tensor(opname, second, x)
            gdt = _DT.get(grad.dtype)
            if gdt is None:
                raise _bad_tensor(opname, first, grad)
            plan = _plan(tl, key, fn, phase1, (grad, x), (gdt, dt), (out,), (dt,))
        else:
            addr = plan.addr
            ptr = grad.data_ptr()
            if addr[0] != ptr:
                if _set_in(plan.ex, 0, plan.hin[0], ptr):
                    _repoint_failed(fn)
                addr[0] = ptr
            ptr = x.data_ptr()
            if addr[1] != ptr:
                if _set_in(plan.ex, 1, plan.hin[1], ptr):
                    _repoint_failed(fn)
                addr[1] = ptr
            ptr = out.data_ptr()
            if addr[2] != ptr:
                if _set_out(plan.ex, 0, plan.hout[0], ptr):
                    _repoint_failed(fn)
                addr[2] = ptr
        ws = plan.ws
        if ws:
            if ws > tl.workspace_cap:
                _grow_workspace(tl, ws)
            st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
        else:
            st = plan.run(None, 0, plan.ex, None)
        if st:
            raise OpgradError(st, L.error_message(), fn)
        return out

    kernel.__name__ = kernel.__qualname__ = opname
    return kernel


mish = _unary("Mish", "mish")
gelu = _unary("Gelu", "gelu")
silu = _unary("Silu", "silu")
sigmoid = _unary("Sigmoid", "sigmoid")
tanh = _unary("Tanh", "tanh")
relu = _unary("Relu", "relu")
hardswish = _unary("Hardswish", "hardswish")

mish_backward = _grad("MishBackward", "mish_backward")
gelu_backward = _grad("GeluBackward", "gelu_backward")
silu_backward = _grad("SiluBackward", "silu_backward")
sigmoid_backward = _grad("SigmoidBackward", "sigmoid_backward", second="output")
tanh_backward = _grad("TanhBackward", "tanh_backward", second="output")
hardswish_backward = _grad("HardswishBackward", "hardswish_backward")


# ---- operators with attributes ------------------------------------------------------------------
def _check(t, op, name):
    dt = _DT.get(t.dtype) if isinstance(t, torch.Tensor) else None
    if dt is None or not t.is_cpu:
        raise _bad_tensor(op, name, t)
    return dt


def _attr1(opname, fn, phase1, x, attrs, scalars):
    """One input of any layout, attributes, one output like x. phase1(hin, hout, sc, attrs, w, e)
    runs on a cache miss only; `scalars` (floats) become aclScalars (sc) for it."""
    dt = _DT.get(x.dtype)
    if dt is None or not x.is_cpu:
        raise _bad_tensor(opname, "x", x)
    out = _empty_like(x, memory_format=_CONTIGUOUS)
    tl = _tls
    key = (fn, GEN.value, attrs, x.shape, x.stride(), dt)
    plan = tl.plans.get(key)
    if plan is None:
        plan = _plan(tl, key, fn, lambda hi, ho, sc, w, e: phase1(hi, ho, sc, attrs, w, e),
                     (x,), (dt,), (out,), (dt,), scalars)
    else:
        addr = plan.addr
        ptr = x.data_ptr()
        if addr[0] != ptr:
            _repoint(plan, 0, ptr, fn)
        ptr = out.data_ptr()
        if addr[1] != ptr:
            _repoint(plan, 1, ptr, fn)
    ws = plan.ws
    if ws:
        if ws > tl.workspace_cap:
            _grow_workspace(tl, ws)
        st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
    else:
        st = plan.run(None, 0, plan.ex, None)
    if st:
        raise OpgradError(st, L.error_message(), fn)
    return out


def _attr2(opname, fn, phase1, a, b, out, attrs, scalars, names=("grad", "x")):
    """Two inputs (any layouts), attributes, one preallocated output."""
    adt = _DT.get(a.dtype)
    if adt is None or not a.is_cpu:
        raise _bad_tensor(opname, names[0], a)
    bdt = _DT.get(b.dtype)
    if bdt is None or not b.is_cpu:
        raise _bad_tensor(opname, names[1], b)
    odt = _DT[out.dtype]
    tl = _tls
    key = (fn, GEN.value, attrs, a.shape, a.stride(), adt, b.shape, b.stride(), bdt, odt)
    plan = tl.plans.get(key)
    if plan is None:
        plan = _plan(tl, key, fn, lambda hi, ho, sc, w, e: phase1(hi, ho, sc, attrs, w, e),
                     (a, b), (adt, bdt), (out,), (odt,), scalars)
    else:
        addr = plan.addr
        ptr = a.data_ptr()
        if addr[0] != ptr:
            _repoint(plan, 0, ptr, fn)
        ptr = b.data_ptr()
        if addr[1] != ptr:
            _repoint(plan, 1, ptr, fn)
        ptr = out.data_ptr()
        if addr[2] != ptr:
            _repoint(plan, 2, ptr, fn)
    ws = plan.ws
    if ws:
        if ws > tl.workspace_cap:
            _grow_workspace(tl, ws)
        st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
    else:
        st = plan.run(None, 0, plan.ex, None)
    if st:
        raise OpgradError(st, L.error_message(), fn)
    return out


def _grad_out(grad, x):
    """The gradient buffer of a backward operator: x's shape and dtype, contiguous."""
    if not isinstance(x, torch.Tensor):
        return None
    return _empty_like(x, memory_format=_CONTIGUOUS)


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
    return _attr2("gelu_v2_backward", "aclnnGeluBackwardV2", _gelu_v2_bwd_p1,
                  grad, x, _grad_out(grad, x), a, ())


def _softplus_p1(hi, ho, sc, attrs, w, e):
    return _p1["Softplus"](hi[0], sc[0], sc[1], ho[0], w, e)


def softplus(x, beta=1.0, threshold=20.0):
    attrs = (beta, threshold)
    return _attr1("softplus", "aclnnSoftplus", _softplus_p1, x, attrs, attrs)


def _softplus_bwd_p1(hi, ho, sc, attrs, w, e):
    return _p1["SoftplusBackward"](hi[0], hi[1], sc[0], sc[1], ho[0], w, e)


def softplus_backward(grad, x, beta=1.0, threshold=20.0):
    attrs = (beta, threshold)
    return _attr2("softplus_backward", "aclnnSoftplusBackward", _softplus_bwd_p1,
                  grad, x, _grad_out(grad, x), attrs, attrs)


def _threshold_p1(hi, ho, sc, attrs, w, e):
    return _p1["ThresholdBackward"](hi[0], hi[1], sc[0], ho[0], w, e)


_ZERO = (0.0,)


def relu_backward(grad, output):
    """threshold_backward(grad, relu's output, 0): grad where output > 0, else 0."""
    return _attr2("relu_backward", "aclnnThresholdBackward", _threshold_p1,
                  grad, output, _grad_out(grad, output), None, _ZERO,
                  ("grad", "output"))


def _leaky_p1(hi, ho, sc, attrs, w, e):
    return _p1["LeakyRelu"](hi[0], sc[0], ho[0], w, e)


def leaky_relu(x, negative_slope=0.01):
    attrs = (negative_slope,)
    return _attr1("leaky_relu", "aclnnLeakyRelu", _leaky_p1, x, attrs, attrs)


def _leaky_bwd_p1(hi, ho, sc, attrs, w, e):
    return _p1["LeakyReluBackward"](hi[0], hi[1], sc[0], False, ho[0], w, e)


def leaky_relu_backward(grad, x, negative_slope=0.01):
    attrs = (negative_slope,)
    return _attr2("leaky_relu_backward", "aclnnLeakyReluBackward", _leaky_bwd_p1,
                  grad, x, _grad_out(grad, x), attrs, attrs)


def _elu_p1(hi, ho, sc, attrs, w, e):
    # Elu(self, alpha, scale = 1, inputScale = 1, out)
    return _p1["Elu"](hi[0], sc[0], sc[1], sc[1], ho[0], w, e)


def elu(x, alpha=1.0):
    return _attr1("elu", "aclnnElu", _elu_p1, x, alpha, (alpha, 1.0))


def _elu_bwd_p1(hi, ho, sc, attrs, w, e):
    # EluBackward(gradOutput, alpha, scale, inputScale, isResult = false, self, gradInput)
    return _p1["EluBackward"](hi[0], sc[0], sc[1], sc[1], False, hi[1], ho[0], w, e)


def elu_backward(grad, x, alpha=1.0):
    return _attr2("elu_backward", "aclnnEluBackward", _elu_bwd_p1, grad, x,
                  _grad_out(grad, x), alpha, (alpha, 1.0))


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
    if x.dtype == other.dtype and x.shape == other.shape:
        return _empty_like(x, memory_format=_CONTIGUOUS)
    if x.dtype not in _DT or other.dtype not in _DT:
        return _empty_like(x)  # refused below with a TypeError
    shape = broadcast_shape(x.shape, other.shape)
    if shape is None:
        shape = x.shape  # opgrad refuses the pair, with a message naming both shapes
    dtype = x.dtype if x.dtype == other.dtype else torch.result_type(x, other)
    return _empty(shape, dtype=dtype)


def _binary(aclname, opname, alpha):
    """add(x, other, alpha) / mul(x, other): broadcasting, PyTorch promotion, spelled out."""
    p1 = _p1[aclname]
    fn = "aclnn" + aclname

    def kernel(x, other, a=1.0):
        if not x.is_cpu:
            raise _bad_tensor(opname, "x", x)
        if not other.is_cpu:
            raise _bad_tensor(opname, "other", other)
        xdt, odt_ = x.dtype, other.dtype
        if xdt is odt_ and x.shape == other.shape:
            out = _empty_like(x, memory_format=_CONTIGUOUS)
        else:
            out = _binary_out(x, other)
        tl = _tls
        key = (fn, GEN.value, a, x.shape, x.stride(), xdt, other.shape, other.stride(), odt_)
        plan = tl.plans.get(key)
        if plan is None:
            xdt, odt_ = _DT.get(xdt), _DT.get(odt_)
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
            plan = _plan(tl, key, fn, phase1, (x, other), (xdt, odt_), (out,), (dt,), scalars)
        else:
            addr = plan.addr
            ptr = x.data_ptr()
            if addr[0] != ptr:
                _repoint(plan, 0, ptr, fn)
            ptr = other.data_ptr()
            if addr[1] != ptr:
                _repoint(plan, 1, ptr, fn)
            ptr = out.data_ptr()
            if addr[2] != ptr:
                if _set_out(plan.ex, 0, plan.hout[0], ptr):
                    _repoint_failed(fn)
                addr[2] = ptr
        ws = plan.ws
        if ws:
            if ws > tl.workspace_cap:
                _grow_workspace(tl, ws)
            st = plan.run(tl.workspace_ptr, ws, plan.ex, None)
        else:
            st = plan.run(None, 0, plan.ex, None)
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
    key = (fn, GEN.value, dims, keepdim, x.shape, x.stride(), dt)
    plan = tl.plans.get(key)
    if plan is None:
        dims = tuple(int(d) for d in dims)
        shape = _reduced_shape(x, dims, keepdim)
        out = _empty(shape, dtype=x.dtype)
        attrs = (dims, keepdim, dt)
        _plan(tl, key, fn, lambda hi, ho, sc, w, e: _reduce_sum_p1(hi, ho, sc, attrs, w, e),
              (x,), (dt,), (out,), (dt,), (), shape)
        plan = tl.plans[key]
    else:
        out = _empty(plan.meta, dtype=x.dtype)
        addr = plan.addr
        ptr = x.data_ptr()
        if addr[0] != ptr:
            _repoint(plan, 0, ptr, fn)
        ptr = out.data_ptr()
        if addr[1] != ptr:
            _repoint(plan, 1, ptr, fn)
    _launch(tl, plan, fn)
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
        out = _empty_like(x, memory_format=_CONTIGUOUS)
    else:
        out = _empty(x.shape, dtype=torch.promote_types(torch.promote_types(xd, bd), sd))
    tl = _tls
    key = (fn, GEN.value, x.shape, x.stride(), xd, bias.shape, bias.stride(), bd, scale.shape,
           scale.stride(), sd)
    plan = tl.plans.get(key)
    if plan is None:
        dts = (_check(x, "fused_add_scale", "x"), _check(bias, "fused_add_scale", "bias"),
               _check(scale, "fused_add_scale", "scale"))
        plan = _plan(tl, key, fn, _fas_p1, (x, bias, scale), dts, (out,), (_DT[out.dtype],))
    else:
        addr = plan.addr
        for i, t in ((0, x), (1, bias), (2, scale), (3, out)):
            ptr = t.data_ptr()
            if addr[i] != ptr:
                _repoint(plan, i, ptr, fn)
    _launch(tl, plan, fn)
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
