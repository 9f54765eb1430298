"""Calling the operators that take tensor lists (the aclnnForeach* family, the fused optimizers,
aclnnAmpUpdateScale) from torch: one generic runner over an operator's line in the list.

`run(name, *args)` takes the arguments of aclnn<name>GetWorkspaceSize in order: a torch tensor
(or None for an optional one) for T/G/Y/O/R, a sequence of tensors for L/LR/LO, a number for
S/D/F/I/I8/B. The first call with a given layout (every tensor's shape, strides and dtype, the
non-tensor arguments) runs phase 1 and keeps the executor (repeatable); later calls write the
tensors' addresses into its io slots and run phase 2 in one ctypes call (opgrad_executor_run).
The io slots are the operator's tensors flattened, a list's tensors in list order: the inputs
(T G Y R L LR, in parameter order), then the outputs (O R LO LR) - the rule of src/ops/ops.inc;
an optional tensor not given keeps its slot (NULL), an optional list not given has none.
Plans are per thread (threading.local), each with its own workspace; they are keyed by layout
only, so the memory rules of phase 1 (no two outputs in one place) hold for callers that pass
distinct tensors, as optimizers do.
"""
import ctypes
import math
import threading

import torch

from .. import _lib as L
from .._lib import OpgradError
from . import _kernels as K

_create_list = L._decl("aclCreateTensorList", L.P, [L.P, L.U64])
_destroy_list = L._decl("aclDestroyTensorList", L.I32, [L.P])
_IN_KINDS = ("T", "G", "Y", "R", "L", "LR")
_OUT_KINDS = ("O", "R", "LO", "LR")
_LISTS = ("L", "LR", "LO")
_CAPACITY = 256


class _ListPlan:
    __slots__ = ("ex", "ws", "workspace", "addrs", "n", "args")

    def __init__(self, ex, ws, n):
        self.ex, self.ws, self.n = ex, ws, n
        self.workspace = torch.empty(max(ws, 1), dtype=torch.uint8)
        self.addrs = (ctypes.c_void_p * max(n, 1))()
        self.args = (ctypes.c_void_p(ex), self.addrs, ctypes.c_size_t(n),
                     ctypes.c_void_p(self.workspace.data_ptr()), ctypes.c_uint64(ws), None)

    def release(self):
        K._destroy_executor(self.ex)


class _State(threading.local):
    def __init__(self):
        self.plans = {}
        self.gen = K._gen


_tls = _State()


def _layout(t):
    return None if t is None else (t.shape, t.stride(), t.dtype)


def _slots(op, args):
    """The tensors of the io slots: inputs, then outputs."""
    ins, outs = [], []
    for p, a in zip(op.params, args):
        # an optional tensor not given keeps its slot (NULL); a list not given has no tensors
        seq = list(a or ()) if p.kind in _LISTS else [a]
        if p.kind in _IN_KINDS:
            ins += seq
        if p.kind in _OUT_KINDS:
            outs += seq
    return ins + outs


def _plan(name, op, args, fn):
    handles, lists, scalars, cargs = [], [], [], []
    try:
        for p, a in zip(op.params, args):
            if p.kind in _LISTS and a is None:  # an optional list not given
                cargs.append(None)
            elif p.kind in _LISTS:
                hs = []
                for i, t in enumerate(a):
                    hs.append(K._new_tensor(t, K.acl_dtype(t, L.snake(name), "%s[%d]" % (p.name, i)),
                                            fn))
                    handles.append(hs[-1])
                arr = (ctypes.c_void_p * max(len(hs), 1))(*hs)
                h = _create_list(ctypes.addressof(arr), len(hs))
                if not h:
                    raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
                handles = [x for x in handles if x not in hs]  # the list owns them now
                lists.append(h)
                cargs.append(h)
            elif p.kind in ("T", "G", "Y", "O", "R"):
                if a is None:
                    cargs.append(None)
                    continue
                dt = L.ACL_INT32 if a.dtype == torch.int32 else (
                    L.ACL_INT64 if a.dtype == torch.int64 else K.acl_dtype(a, L.snake(name), p.name))
                h = K._new_tensor(a, dt, fn)
                handles.append(h)
                cargs.append(h)
            elif p.kind == "S":
                c = ctypes.c_double(float(a))
                h = L.aclCreateScalar(ctypes.addressof(c), L.ACL_DOUBLE)
                if not h:
                    raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
                scalars.append(h)
                cargs.append(h)
            else:
                cargs.append(a)
        tl = K._tls
        st = L.phase1[name](*cargs, tl.wsize_addr, tl.executor_addr)
        if st:
            raise OpgradError(st, L.error_message(), fn + "GetWorkspaceSize")
        ex, ws = tl.executor.value, tl.wsize.value
        st = K._repeatable(ex)
        if st:
            K._destroy_executor(ex)
            raise OpgradError(st, L.error_message(), "aclSetAclOpExecutorRepeatable")
        return _ListPlan(ex, ws, len(_slots(op, args)))
    finally:  # the executor keeps only the slots' addresses
        for h in lists:
            _destroy_list(h)
        for h in handles:
            K._destroy_tensor(h)
        for h in scalars:
            L.aclDestroyScalar(h)


def layout_key(name, args):
    """The plan key of a call: every tensor's layout and the other arguments' values."""
    key = [name]
    for p, a in zip(L.OPS[name].params, args):
        if p.kind in _LISTS:
            key.append(None if a is None else tuple(_layout(t) for t in a))
        elif p.kind in ("T", "G", "Y", "O", "R"):
            key.append(_layout(a))
        else:
            v = float(a) if p.kind in ("S", "D", "F") else a
            key.append(("nan",) if isinstance(v, float) and math.isnan(v) else v)
    return tuple(key)


def run(name, *args, key=None):
    """Runs aclnn<name> on the arguments of its phase 1 (see the module's docstring). `key`: a
    caller that knows the layouts cannot have changed since its last call with this key (an
    optimizer over its own state tensors) passes its own key and skips layout_key's walk over
    every tensor; it must change whenever a layout or a non-tensor argument may."""
    op = L.OPS[name]
    fn = "aclnn" + name
    key = layout_key(name, args) if key is None else (name, key)
    tl = _tls
    if tl.gen != K._gen:  # the thread count changed: plan again
        for p in tl.plans.values():
            p.release()
        tl.plans.clear()
        tl.gen = K._gen
    plan = tl.plans.get(key)
    if plan is None:
        plan = _plan(name, op, args, fn)
        while len(tl.plans) >= _CAPACITY:
            tl.plans.pop(next(iter(tl.plans))).release()
        tl.plans[key] = plan
    plan.addrs[:] = [None if t is None else t.data_ptr() or None for t in _slots(op, args)] or [None]
    st = K._run_nogil(*plan.args)
    if st:
        raise OpgradError(st, L.error_message(), fn)
