"""opgrad.torch.batch_norm / group_norm: aclnnBatchNorm + aclnnBatchNormBackward and
aclnnGroupNorm + aclnnGroupNormBackward as torch functions with autograd.

The kernels (this module's *_kernel functions) hand the tensors to libopgrad zero-copy through
the plan cache of _kernels.py (_mm_run: optional tensors may be None). The operators are
functional: the forward returns the saved statistics (BatchNorm: mean, invstd; GroupNorm: mean,
rstd, [N, group]) and, in training, the updated running statistics as new tensors; the public
batch_norm() copies those into the caller's running_mean / running_var (no_grad), as
torch.nn.functional.batch_norm updates them in place.

Autograd: one torch.autograd.Function per operator whose backward runs the aclnn backward with
the outputMask of the gradients autograd asks for. The same Functions serve PyTorch 1.13 and 2.x
(eager). The forwards are also torch.ops.opgrad.batch_norm_fwd / group_norm_fwd (custom ops with
fakes on PyTorch >= 2.4, kernels on the Library on 1.13), without autograd formulas of their own:
the functions go through them under torch.jit.trace (a trace then records the forward; its
backward raises) and under torch.compile when no gradient is wanted.
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _norm as N
from . import _ops

_create_bool_array = L._decl("aclCreateBoolArray", L.P, [L.P, L.U64])
_destroy_bool_array = L._decl("aclDestroyBoolArray", L.I32, [L.P])


class _Mask:
    """An aclBoolArray of 3 entries for one phase-1 call."""

    def __init__(self, mask):
        self.values = (ctypes.c_bool * 3)(*[bool(m) for m in mask])
        self.h = _create_bool_array(ctypes.addressof(self.values), 3)

    def __enter__(self):
        return self.h

    def __exit__(self, *exc):
        _destroy_bool_array(self.h)


def _vec(t, c, dtype):
    return torch.empty(c, dtype=dtype) if t is None else torch.empty_like(
        t, memory_format=torch.contiguous_format)


def batch_norm_fwd(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """aclnnBatchNorm: (y, save_mean, save_invstd, new_running_mean, new_running_var). The
    statistics are float32 [C] (float64 for a float64 x; empty in eval); the running statistics
    are updated copies (None when not given, or in eval)."""
    op = "batch_norm"
    K._checked(op, ((x, "input"), (weight, "weight"), (bias, "bias"),
                    (running_mean, "running_mean"), (running_var, "running_var")))
    if x.dim() < 2:
        raise ValueError("opgrad.torch.batch_norm: input must have 2 to 8 dims [N, C, *], got %s"
                         % list(x.shape))
    c = x.shape[1]
    y = torch.empty_like(x, memory_format=K.memory_format(x))  # channels-last in and out
    mean = torch.empty(c if training else 0, dtype=N._stat_dtype(x))
    invstd = torch.empty(c if training else 0, dtype=N._stat_dtype(x))
    rm = running_mean.clone() if (training and running_mean is not None) else running_mean
    rv = running_var.clone() if (training and running_var is not None) else running_var
    training, momentum, eps = bool(training), float(momentum), float(eps)
    p1 = L.phase1["BatchNorm"]
    K._mm_run("aclnnBatchNorm",
              lambda hi, ho, sc, w, e: p1(hi[0], hi[1], hi[2], hi[3], hi[4], training, momentum,
                                          eps, ho[0], ho[1], ho[2], w, e),
              [x, weight, bias, rm, rv], [y, mean, invstd, rm if training else None,
                                          rv if training else None],
              (training, momentum, eps))
    return y, mean, invstd, (rm if training else None), (rv if training else None)


def batch_norm_bwd(grad, x, weight, running_mean, running_var, save_mean, save_invstd, training,
                   eps, output_mask):
    """aclnnBatchNormBackward: (grad_input, grad_weight, grad_bias), None where not asked for.
    grad_weight / grad_bias take weight's dtype (float32 without a weight)."""
    op = "batch_norm_backward"
    K._checked(op, ((grad, "grad"), (x, "input"), (weight, "weight")))
    c = x.shape[1]
    m = [bool(v) for v in output_mask]
    pdt = weight.dtype if weight is not None else x.dtype
    outs = [torch.empty_like(x, memory_format=K.memory_format(x)) if m[0] else None,
            torch.empty(c, dtype=pdt) if m[1] else None,
            torch.empty(c, dtype=pdt) if m[2] else None]
    if not any(m):
        return tuple(outs)
    training, eps = bool(training), float(eps)
    p1 = L.phase1["BatchNormBackward"]

    def phase1(hi, ho, sc, w, e):
        with _Mask(m) as mask:
            return p1(hi[0], hi[1], hi[2], hi[3], hi[4], hi[5], hi[6], training, eps, mask, ho[0],
                      ho[1], ho[2], w, e)

    K._mm_run("aclnnBatchNormBackward", phase1,
              [grad, x, weight, running_mean, running_var, save_mean, save_invstd], outs,
              (training, eps, tuple(m)))
    return tuple(outs)


def group_norm_fwd(x, num_groups, weight, bias, eps):
    """aclnnGroupNorm: (y, mean, rstd), the statistics float32 [N, group] (float64 for a float64
    x)."""
    op = "group_norm"
    K._checked(op, ((x, "input"), (weight, "weight"), (bias, "bias")))
    if x.dim() < 2:
        raise ValueError("opgrad.torch.group_norm: input must be [N, C, *], got %s"
                         % list(x.shape))
    n, c, hw = x.shape[0], x.shape[1], 1
    for s in x.shape[2:]:
        hw *= s
    g, eps = int(num_groups), float(eps)
    y = torch.empty_like(x, memory_format=K.memory_format(x))  # channels-last in and out
    mean = torch.empty((n, g), dtype=N._stat_dtype(x))
    rstd = torch.empty((n, g), dtype=N._stat_dtype(x))
    p1 = L.phase1["GroupNorm"]
    K._mm_run("aclnnGroupNorm",
              lambda hi, ho, sc, w, e: p1(hi[0], hi[1], hi[2], n, c, hw, g, eps, ho[0], ho[1],
                                          ho[2], w, e),
              [x, weight, bias], [y, mean, rstd], (g, eps))
    return y, mean, rstd


def group_norm_bwd(grad, x, mean, rstd, weight, num_groups, output_mask):
    """aclnnGroupNormBackward: (grad_input, grad_weight, grad_bias), None where not asked for."""
    op = "group_norm_backward"
    K._checked(op, ((grad, "grad"), (x, "input"), (weight, "weight")))
    n, c, hw = x.shape[0], x.shape[1], 1
    for s in x.shape[2:]:
        hw *= s
    g = int(num_groups)
    m = [bool(v) for v in output_mask]
    pdt = weight.dtype if weight is not None else x.dtype
    outs = [torch.empty_like(x, memory_format=K.memory_format(x)) if m[0] else None,
            torch.empty(c, dtype=pdt) if m[1] else None,
            torch.empty(c, dtype=pdt) if m[2] else None]
    if not any(m):
        return tuple(outs)
    p1 = L.phase1["GroupNormBackward"]

    def phase1(hi, ho, sc, w, e):
        with _Mask(m) as mask:
            return p1(hi[0], hi[1], hi[2], hi[3], hi[4], n, c, hw, g, mask, ho[0], ho[1], ho[2],
                      w, e)

    K._mm_run("aclnnGroupNormBackward", phase1, [grad, x, mean, rstd, weight], outs,
              (g, tuple(m)))
    return tuple(outs)


# ---- autograd ----------------------------------------------------------------------------------
# One torch.autograd.Function per operator; the aclnn backward with the outputMask autograd asks
# for. Under create_graph (a second backward) the gradients are composed from differentiable
# operators instead, as LayerNorm's over a view: GroupNorm normalizes x [N, C, *] as [N, G, K]
# over its last dim, training BatchNorm as [C, N * spatial], so LayerNormBackward (whose own
# derivative exists, _norm.py) gives dx from v = g w (the per-channel weight folded into the
# gradient); dw = sum g xh and db = sum g are products and sums. The statistics (mean, rstd) are
# the forward's outputs: what the second backward sends into them reaches x through _stats_grad.
# Eval BatchNorm is affine in x with the running statistics: dx = g w rstd_running. Composed in
# float32, in float64 for a float64 x (_wide).
def _wide(t, x):
    """t in the composition's dtype: float64 for a float64 x, else float32."""
    return t.to(N._stat_dtype(x))


def _channel_view(t, nd):
    """A per-channel tensor [C] as [1, C, 1, ...] against an input of nd dims."""
    return t.reshape((1, -1) + (1,) * (nd - 2))


def _affine_grads(ops, g, xh, weight, bias, need_w, need_b):
    dims = [0] + list(range(2, g.dim()))
    dw = ops.reduce_sum(ops.mul(g, xh), dims, False).to(weight.dtype) if need_w else None
    db = ops.reduce_sum(g, dims, False).to(bias.dtype) if need_b else None
    return dw, db


def _gn_composed(ops, g, x, mean, rstd, weight, bias, groups, need):
    ng, nd = x.shape[0], x.dim()
    g32 = _wide(g, x)
    v = g32 if weight is None else ops.mul(g32, _channel_view(_wide(weight, x), nd))
    x3, v3 = x.reshape(ng, groups, -1), v.reshape(ng, groups, -1)
    m3, r3 = mean.reshape(ng, groups, 1), rstd.reshape(ng, groups, 1)
    dx = dw = db = None
    if need[0]:
        dx = ops.layer_norm_backward(v3, x3, [x3.shape[2]], m3, r3, None, None,
                                     [True, False, False])[0].reshape(x.shape).to(x.dtype)
    if need[1] or need[2]:
        xh = ops.mul(ops.add(_wide(x3, x), m3, -1.0), r3).reshape(x.shape)
        dw, db = _affine_grads(ops, g32, xh, weight, bias, need[1], need[2])
    return dx, dw, db


def _gn_stats(ops, x, mean, rstd, gmean, grstd, groups):
    x3 = x.reshape(x.shape[0], groups, -1)
    m3, r3 = mean.reshape(x3.shape[0], groups, 1), rstd.reshape(x3.shape[0], groups, 1)
    gm = None if gmean is None else gmean.reshape(m3.shape)
    gr = None if grstd is None else grstd.reshape(r3.shape)
    extra = N._stats_grad(ops, x3, m3, r3, gm, gr, 1)
    return None if extra is None else extra.reshape(x.shape)


def _bn_rows(t):
    """[N, C, *] as [C, N * spatial] (the channel's values in a row)."""
    return t.transpose(0, 1).reshape(t.shape[1], -1)


def _bn_composed(ops, g, x, mean, invstd, weight, bias, need):
    nd = x.dim()
    g32 = _wide(g, x)
    v = g32 if weight is None else ops.mul(g32, _channel_view(_wide(weight, x), nd))
    m2, r2 = mean.reshape(-1, 1), invstd.reshape(-1, 1)
    dx = dw = db = None
    if need[0]:
        xr, vr = _bn_rows(x), _bn_rows(v)
        d = ops.layer_norm_backward(vr, xr, [xr.shape[1]], m2, r2, None, None,
                                    [True, False, False])[0]
        shape = (x.shape[1], x.shape[0]) + tuple(x.shape[2:])
        dx = d.reshape(shape).transpose(0, 1).to(x.dtype)
    if need[1] or need[2]:
        xh = ops.mul(ops.add(_wide(x, x), _channel_view(mean, nd), -1.0),
                     _channel_view(invstd, nd))
        dw, db = _affine_grads(ops, g32, xh, weight, bias, need[1], need[2])
    return dx, dw, db


def _bn_eval_composed(ops, g, x, weight, bias, running_mean, running_var, eps, need):
    nd = x.dim()
    g32 = _wide(g, x)
    rstd = torch.rsqrt(_wide(running_var, x) + eps)  # constants (no gradient of their own)
    scale = rstd if weight is None else ops.mul(_wide(weight, x), rstd)
    dx = ops.mul(g32, _channel_view(scale, nd)).to(x.dtype) if need[0] else None
    dw = db = None
    if need[1] or need[2]:
        xh = ops.mul(ops.add(_wide(x, x), _channel_view(_wide(running_mean, x), nd), -1.0),
                     _channel_view(rstd, nd))
        dw, db = _affine_grads(ops, g32, xh, weight, bias, need[1], need[2])
    return dx, dw, db


def _add(ops, a, b):
    return b if a is None else a if b is None else ops.add(a, b)


# The Functions (_ops.function_class: the setup_context form on PyTorch >= 2.0 and the generic
# forward-mode and vmap rules).
def _composing_ops():
    """(create_graph, ops): the differentiable operators under create_graph or functorch's
    transforms, else the kernels."""
    if K.transforms_active():
        return True, _ops._TRANSFORMS
    if torch.is_grad_enabled():
        return True, _ops._DIFF
    return False, K


def _bn_setup(ctx, inputs, output):
    x, weight, bias, running_mean, running_var, training, _, eps = inputs
    _, rm, rv, mean, invstd = output
    ctx.training, ctx.eps = training, eps
    ctx.has_bias = bias is not None
    # training: the batch statistics (the running ones are updated in place after this);
    # eval: the running statistics
    keep = (None, None) if training else (running_mean, running_var)
    ctx.save_for_backward(x, weight, bias, keep[0], keep[1], mean, invstd)
    ctx.mark_non_differentiable(*[t for t in (rm, rv) if t is not None])
    # the statistics are outputs too (a second backward differentiates through them); their
    # gradients are None, at no cost, in first-order training
    ctx.set_materialize_grads(False)


def _bn_backward(ctx, gy, grm, grv, gmean, ginvstd):
    x, weight, bias, running_mean, running_var, mean, invstd = ctx.saved_tensors
    need = ctx.needs_input_grad
    mask = (need[0], need[1] and weight is not None, need[2] and ctx.has_bias)
    create_graph, ops = _composing_ops()
    gx = gw = gb = None
    if gy is not None and not create_graph:  # first order: one aclnnBatchNormBackward
        gx, gw, gb = batch_norm_bwd(gy, x, weight, running_mean, running_var, mean, invstd,
                                    ctx.training, ctx.eps, mask)
    elif gy is not None:  # create_graph: differentiable again
        if ctx.training:
            gx, gw, gb = _bn_composed(ops, gy, x, mean, invstd, weight, bias, mask)
        else:
            gx, gw, gb = _bn_eval_composed(ops, gy, x, weight, bias, running_mean,
                                           running_var, ctx.eps, mask)
    if mask[0] and ctx.training and (gmean is not None or ginvstd is not None):
        xr = _bn_rows(x)
        extra = N._stats_grad(ops, xr, mean.reshape(-1, 1), invstd.reshape(-1, 1),
                              None if gmean is None else gmean.reshape(-1, 1),
                              None if ginvstd is None else ginvstd.reshape(-1, 1), 1)
        if extra is not None:
            shape = (x.shape[1], x.shape[0]) + tuple(x.shape[2:])
            gx = _add(ops, gx, extra.reshape(shape).transpose(0, 1))
    return gx, gw, gb, None, None, None, None, None


def _gn_setup(ctx, inputs, output):
    x, num_groups, weight, bias, _ = inputs
    _, mean, rstd = output
    ctx.num_groups = num_groups
    ctx.has_bias = bias is not None
    ctx.save_for_backward(x, mean, rstd, weight, bias)
    ctx.set_materialize_grads(False)  # (the statistics' gradients: None in first order)


def _gn_backward(ctx, gy, gmean, grstd):
    x, mean, rstd, weight, bias = ctx.saved_tensors
    need = ctx.needs_input_grad
    mask = (need[0], need[2] and weight is not None, need[3] and ctx.has_bias)
    create_graph, ops = _composing_ops()
    gx = gw = gb = None
    if gy is not None and not create_graph:  # first order: one aclnnGroupNormBackward
        gx, gw, gb = group_norm_bwd(gy, x, mean, rstd, weight, ctx.num_groups, mask)
    elif gy is not None:  # create_graph: differentiable again
        gx, gw, gb = _gn_composed(ops, gy, x, mean, rstd, weight, bias, ctx.num_groups, mask)
    if mask[0] and (gmean is not None or grstd is not None):
        gx = _add(ops, gx, _gn_stats(ops, x, mean, rstd, gmean, grstd, ctx.num_groups))
    return gx, None, gw, gb, None


def _bn_function_outputs(*args):
    """(y, running mean, running var, mean, invstd): the Function's outputs."""
    y, mean, invstd, rm, rv = batch_norm_fwd(*args)
    return y, rm, rv, mean, invstd


_BN_DEF = _ops.OpDef("batch_norm", "", _bn_function_outputs, (0, 1, 2), None, _bn_setup, None)
_BN_DEF.nondiff_outputs = (1, 2)  # the running statistics
_GN_DEF = _ops.OpDef("group_norm", "", group_norm_fwd, (0, 2, 3), None, _gn_setup, None)
_BatchNormFn = _BN_DEF.function = _ops.function_class(_BN_DEF, _bn_backward)
_GroupNormFn = _GN_DEF.function = _ops.function_class(_GN_DEF, _gn_backward)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm on aclnnBatchNorm (+ aclnnBatchNormBackward): the same
    arguments and results; in training the running statistics given are updated in place
    (momentum; running_var with the unbiased batch variance)."""
    if not training and (running_mean is None or running_var is None):
        raise ValueError("opgrad.torch.batch_norm: running_mean and running_var are required "
                         "when training is False")
    args = (input, weight, bias, running_mean, running_var, bool(training), float(momentum),
            float(eps))
    needs_grad = K.forward_ad() or (torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (input, weight, bias)))
    if _record(needs_grad):
        y, _, _, rm, rv = torch.ops.opgrad.batch_norm_fwd(*args)
    elif needs_grad:
        y, rm, rv = _BatchNormFn.apply(*args)[:3]
    else:
        y, _, _, rm, rv = batch_norm_fwd(*args)
    if training:
        with torch.no_grad():
            if running_mean is not None:
                running_mean.copy_(rm)
            if running_var is not None:
                running_var.copy_(rv)
    return y


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """torch.nn.functional.group_norm on aclnnGroupNorm (+ aclnnGroupNormBackward)."""
    needs_grad = K.forward_ad() or (torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (input, weight, bias)))
    if _record(needs_grad):
        return torch.ops.opgrad.group_norm_fwd(input, int(num_groups), weight, bias,
                                               float(eps))[0]
    if needs_grad:
        return _GroupNormFn.apply(input, int(num_groups), weight, bias, float(eps))[0]
    return group_norm_fwd(input, num_groups, weight, bias, eps)[0]


def _record(needs_grad):
    """Whether to call the dispatcher's forward operator: always under torch.jit.trace (which
    records only dispatcher calls: the eager path would leave an empty trace), and under
    torch.compile when no gradient is wanted (the operators have no autograd formula of their
    own, so a compiled training step keeps the eager Functions)."""
    return K._tracing_state() is not None or (K.use_dispatcher() and not needs_grad)


# ---- PyTorch >= 2.4: the kernels as torch.ops.opgrad.* custom ops (no autograd of their own) ----
_BN_SCHEMA = ("(Tensor x, Tensor? weight, Tensor? bias, Tensor? running_mean, "
              "Tensor? running_var, bool training, float momentum, float eps) -> "
              "(Tensor, Tensor, Tensor, Tensor, Tensor)")
_GN_SCHEMA = ("(Tensor x, int num_groups, Tensor? weight, Tensor? bias, float eps) "
              "-> (Tensor, Tensor, Tensor)")


def _register_custom_ops():
    lib = torch.library
    custom = hasattr(lib, "custom_op") and hasattr(lib, "register_fake")

    def bn_fwd(x, weight, bias, running_mean, running_var, training, momentum, eps):
        y, m, s, rm, rv = batch_norm_fwd(x, weight, bias, running_mean, running_var, training,
                                         momentum, eps)
        c = x.shape[1]
        return (y, m, s, rm if rm is not None else x.new_empty(0 if not training else c),
                rv if rv is not None else x.new_empty(0 if not training else c))

    def bn_fwd_fake(x, weight, bias, running_mean, running_var, training, momentum, eps):
        c = x.shape[1] if training else 0
        f = N._stat_dtype(x)
        rdt = running_mean.dtype if running_mean is not None else x.dtype
        return (torch.empty_like(x, memory_format=K.memory_format(x)), x.new_empty(c, dtype=f),
                x.new_empty(c, dtype=f),
                x.new_empty(c, dtype=rdt), x.new_empty(c, dtype=rdt))

    def gn_fwd(x, num_groups, weight, bias, eps):
        return group_norm_fwd(x, num_groups, weight, bias, eps)

    if not custom:  # PyTorch 1.13: forward kernels on _ops' Library (for torch.jit.trace)
        for name, schema, kernel, tensors in (("batch_norm_fwd", _BN_SCHEMA, bn_fwd, (0, 1, 2)),
                                              ("group_norm_fwd", _GN_SCHEMA, gn_fwd, (0, 2, 3))):
            _ops.Library.define(name + schema)
            _ops.Library.impl(name, kernel, "CPU")

            # without a formula, 1.13 would return outputs that silently need no gradient
            def no_grad_only(*args, _k=kernel, _t=tensors, _n=name):
                if torch.is_grad_enabled() and any(
                        args[i] is not None and args[i].requires_grad for i in _t):
                    raise RuntimeError("opgrad::%s has no autograd formula on PyTorch 1.13: trace "
                                       "it under torch.no_grad() (eager calls are "
                                       "differentiable)" % _n)
                return _k(*args)

            _ops.Library.impl(name, no_grad_only, "Autograd")
        return
    lib.custom_op("opgrad::batch_norm_fwd", bn_fwd, mutates_args=(), device_types="cpu",
                  schema=_BN_SCHEMA)
    lib.register_fake("opgrad::batch_norm_fwd", bn_fwd_fake)

    def gn_fwd_fake(x, num_groups, weight, bias, eps):
        f = N._stat_dtype(x)
        return (torch.empty_like(x, memory_format=K.memory_format(x)),
                x.new_empty((x.shape[0], num_groups), dtype=f),
                x.new_empty((x.shape[0], num_groups), dtype=f))

    lib.custom_op("opgrad::group_norm_fwd", gn_fwd, mutates_args=(), device_types="cpu",
                  schema=_GN_SCHEMA)
    lib.register_fake("opgrad::group_norm_fwd", gn_fwd_fake)


_register_custom_ops()
