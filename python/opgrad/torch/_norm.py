"""LayerNorm and RMSNorm for opgrad.torch (issue 14): aclnnLayerNorm / aclnnLayerNormBackward and
aclnnRmsNorm / aclnnRmsNormGrad as torch operators with autograd.

    torch.ops.opgrad.layer_norm_fwd(x, normalized_shape, weight, bias, eps) -> (y, mean, rstd)
    torch.ops.opgrad.layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight, bias,
                                         output_mask) -> (dx, dweight, dbias)
    torch.ops.opgrad.rms_norm_fwd(x, gamma, eps) -> (y, rstd)
    torch.ops.opgrad.rms_norm_backward(grad, x, rstd, gamma) -> (dx, dgamma)

The forwards return their saved statistics (float32, float64 for a float64 x; [A..., 1...]) as
extra outputs, which the backward reads: x is read once by each backward, the statistics are not
recomputed. The operators are registered as the other late operators are (_dropout.register_ops:
torch.library.custom_op + register_autograd on PyTorch >= 2.4, the 1.13 Library with an
"Autograd" kernel over a torch.autograd.Function), whose Functions carry the generic forward-mode
and vmap rules (_ops.py).
The functional forms layer_norm / rms_norm take PyTorch's F.layer_norm / F.rms_norm arguments.
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops
from ._dropout import EXTRA, register_ops

_create_bool_array = L._decl("aclCreateBoolArray", L.P, [L.P, L.U64])
_destroy_bool_array = L._decl("aclDestroyBoolArray", L.I32, [L.P])


def _int_array(values):
    arr = L.aclCreateIntArray(K._i64(tuple(values))[0] if values else None, len(values))
    if not arr:
        raise K.OpgradError(L.Status.PARAM_INVALID, L.error_message(), "aclCreateIntArray")
    return arr


def _stat_shape(x, nr):
    return tuple(x.shape[:x.dim() - nr]) + (1,) * nr


def _check_all(op, pairs):
    for t, name in pairs:
        if t is not None:
            K._check(t, op, name)


# ---- kernels -------------------------------------------------------------------------------------
def layer_norm_fwd(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns = tuple(int(n) for n in normalized_shape)
    _check_all("layer_norm", ((x, "x"), (weight, "weight"), (bias, "bias")))
    y = K._empty(x.shape, dtype=x.dtype)
    mean = K._empty(_stat_shape(x, len(ns)), dtype=_stat_dtype(x))
    rstd = K._empty(_stat_shape(x, len(ns)), dtype=_stat_dtype(x))
    eps = float(eps)

    def p1(hi, ho, sc, w, e):
        arr = _int_array(ns)
        try:
            return L.phase1["LayerNorm"](hi[0], arr, hi[1], hi[2], eps, ho[0], ho[1], ho[2], w, e)
        finally:
            L.aclDestroyIntArray(arr)

    K._mm_run("aclnnLayerNorm", p1, (x, weight, bias), (y, mean, rstd), attrs=(ns, eps))
    return y, mean, rstd


def layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight=None, bias=None,
                        output_mask=(True, True, True)):
    ns = tuple(int(n) for n in normalized_shape)
    mask = tuple(bool(m) for m in output_mask)
    _check_all("layer_norm_backward", ((grad, "grad"), (x, "x"), (mean, "mean"), (rstd, "rstd"),
                                       (weight, "weight"), (bias, "bias")))
    wdt = weight.dtype if weight is not None else x.dtype
    dx = K._empty(x.shape, dtype=x.dtype) if mask[0] else None
    dw = K._empty(ns, dtype=wdt) if mask[1] else None
    db = K._empty(ns, dtype=wdt) if mask[2] else None

    def p1(hi, ho, sc, w, e):
        arr = _int_array(ns)
        flags = (ctypes.c_bool * 3)(*mask)
        barr = _create_bool_array(ctypes.addressof(flags), 3)
        try:
            return L.phase1["LayerNormBackward"](hi[0], hi[1], arr, hi[2], hi[3], hi[4], hi[5],
                                                 barr, ho[0], ho[1], ho[2], w, e)
        finally:
            L.aclDestroyIntArray(arr)
            _destroy_bool_array(barr)

    K._mm_run("aclnnLayerNormBackward", p1, (grad, x, mean, rstd, weight, bias), (dx, dw, db),
              attrs=(ns, mask))
    # a gradient not asked for: an empty tensor of its own (a schema has no None outputs, and
    # custom_op outputs may not alias one another)
    return tuple(t if t is not None else K._empty(0, dtype=x.dtype) for t in (dx, dw, db))


def rms_norm_fwd(x, gamma, eps=1e-6):
    _check_all("rms_norm", ((x, "x"), (gamma, "gamma")))
    y = K._empty(x.shape, dtype=x.dtype)
    rstd = K._empty(_stat_shape(x, gamma.dim()), dtype=_stat_dtype(x))
    eps = float(eps)

    def p1(hi, ho, sc, w, e):
        return L.phase1["RmsNorm"](hi[0], hi[1], eps, ho[0], ho[1], w, e)

    K._mm_run("aclnnRmsNorm", p1, (x, gamma), (y, rstd), attrs=(eps,))
    return y, rstd


def rms_norm_backward(grad, x, rstd, gamma):
    _check_all("rms_norm_backward", ((grad, "grad"), (x, "x"), (rstd, "rstd"), (gamma, "gamma")))
    dx = K._empty(x.shape, dtype=x.dtype)
    dg = K._empty(gamma.shape, dtype=_stat_dtype(x))  # dgammaOut is FLOAT (float64: float64)

    def p1(hi, ho, sc, w, e):
        return L.phase1["RmsNormGrad"](hi[0], hi[1], hi[2], hi[3], ho[0], ho[1], w, e)

    K._mm_run("aclnnRmsNormGrad", p1, (grad, x, rstd, gamma), (dx, dg))
    return dx, dg


# ---- fakes (shapes and dtypes only, PyTorch >= 2.4) -------------------------------------------
def _fake_ln(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    s = _stat_shape(x, len(normalized_shape))
    return (x.new_empty(x.shape), x.new_empty(s, dtype=_stat_dtype(x)),
            x.new_empty(s, dtype=_stat_dtype(x)))


def _fake_ln_bwd(grad, x, normalized_shape, mean, rstd, weight=None, bias=None,
                 output_mask=(True, True, True)):
    wdt = weight.dtype if weight is not None else x.dtype
    ns = tuple(normalized_shape)
    return (x.new_empty(x.shape if output_mask[0] else (0,)),
            x.new_empty(ns if output_mask[1] else (0,), dtype=wdt),
            x.new_empty(ns if output_mask[2] else (0,), dtype=wdt))


def _fake_rms(x, gamma, eps=1e-6):
    return x.new_empty(x.shape), x.new_empty(_stat_shape(x, gamma.dim()), dtype=_stat_dtype(x))


def _fake_rms_bwd(grad, x, rstd, gamma):
    return x.new_empty(x.shape), x.new_empty(gamma.shape, dtype=_stat_dtype(x))


# ---- autograd formulas: setup(ctx, inputs, outputs), backward(ops, ctx, grads) -----------------
def _needs(ctx, n):
    need = getattr(ctx, "needs_input_grad", None)
    need = tuple(need[:n]) if need is not None else (True,) * n
    return need + (False,) * (n - len(need))  # arguments left at their defaults


def _setup_ln(ctx, inputs, output):
    # (the 1.13 dispatcher leaves trailing arguments at their defaults out)
    ctx.nargs = len(inputs)
    x, ns, weight, bias = (tuple(inputs) + (None, None))[:4]
    _, mean, rstd = output
    ctx.ns = tuple(ns)
    ctx.has = (weight is not None, bias is not None)
    ctx.save_for_backward(x, mean, rstd, weight, bias)
    ctx.set_materialize_grads(False)  # the statistics' gradients: None unless a second backward


def _given(t):
    return t is not None and t.numel() > 0


def _stat_dtype(x):
    """The statistics' (and RmsNorm's dgamma's) dtype: float32, float64 for a float64 input."""
    return torch.float64 if x.dtype is torch.float64 else torch.float32


def _norm_dims(x, nr):
    return list(range(x.dim() - nr, x.dim()))


def _stats_grad(ops, x, mean, rstd, gmean, grstd, nr):
    """What the gradients of the statistics add to x's (a second backward sends them): mean =
    mean(x) gives gmean / D; rstd = (var + eps)^-1/2 gives -grstd rstd^3 (x - mean) / D (mean
    None: RmsNorm, rstd = (mean(x^2) + eps)^-1/2, -grstd rstd^3 x / D)."""
    d = 1
    for n in x.shape[x.dim() - nr:]:
        d *= int(n)
    xf = x if x.dtype in (torch.float32, torch.float64) else x.float()
    out = None
    if _given(grstd):
        xm = xf if mean is None else ops.add(xf, mean, -1.0)
        r3 = ops.mul(ops.mul(rstd, rstd), rstd)
        out = ops.mul(xm, ops.muls(ops.mul(grstd, r3), -1.0 / d))
    if _given(gmean):
        t = ops.muls(gmean, 1.0 / d)
        out = ops.add(ops.mul(xf, _ops._c(xf, 0.0)), t) if out is None else ops.add(out, t)
    return None if out is None else out.to(x.dtype)


def _backward_ln(ops, ctx, grads):
    x, mean, rstd, weight, bias = ctx.saved_tensors
    need = _needs(ctx, 4)
    mask = [need[0], need[2] and ctx.has[0], need[3] and ctx.has[1]]
    if not any(mask):
        return (None,) * ctx.nargs
    dx = dw = db = None
    if grads[0] is not None:
        dx, dw, db = ops.layer_norm_backward(grads[0], x, list(ctx.ns), mean, rstd, weight, bias,
                                             mask)
    if mask[0] and len(grads) > 1:
        extra = _stats_grad(ops, x, mean, rstd, grads[1], grads[2], len(ctx.ns))
        if extra is not None:
            dx = extra if dx is None else ops.add(dx, extra)
    out = (dx if mask[0] else None, None, dw if mask[1] else None, db if mask[2] else None, None)
    return out[:ctx.nargs]


def _setup_rms(ctx, inputs, output):
    ctx.nargs = len(inputs)
    x, gamma = inputs[0], inputs[1]
    ctx.save_for_backward(x, output[1], gamma)
    ctx.set_materialize_grads(False)


def _backward_rms(ops, ctx, grads):
    x, rstd, gamma = ctx.saved_tensors
    need = _needs(ctx, 2)
    if not (need[0] or need[1]):
        return (None,) * ctx.nargs
    dx = dg = None
    if grads[0] is not None:
        dx, dg = ops.rms_norm_backward(grads[0], x, rstd, gamma)
    if need[0] and len(grads) > 1:
        extra = _stats_grad(ops, x, None, rstd, None, grads[1], gamma.dim())
        if extra is not None:
            dx = extra if dx is None else ops.add(dx, extra)
    return (dx if need[0] else None, dg.to(gamma.dtype) if need[1] and dg is not None else None,
            None)[:ctx.nargs]


# ---- second order: the backward operators' own derivatives --------------------------------------
# With D the normalized size, per row xh = (x - mean) rstd (RmsNorm: x rstd), v = g w (w the weight
# broadcast; g without one), and P(u) = u - mean(u) - xh mean(u xh) (RmsNorm: u - xh mean(u xh)),
# a symmetric map: the backward is dx = rstd P(v), dw = sum over rows of g xh, db = sum of g.
# Treating mean and rstd as inputs of their own (they are the forward's outputs: their gradients
# reach x through _stats_grad), with GX, GW, GB the gradients of dx, dw, db:
#   d/dg   = w rstd P(GX) + GW xh + GB          d/dw = sum over rows of g rstd P(GX)
#   T      = -rstd (mean(v xh) GX + v mean(GX xh)) + g GW        (the gradient through xh)
#   d/dx   = rstd T     d/dmean = -rstd sum(T)     d/drstd = sum(GX P(v)) + sum(T (x - mean))
# composed from opgrad operators in float32 (differentiable in turn).
def _rows_mean(ops, t, dims, d):
    return ops.muls(ops.reduce_sum(t, dims, True), 1.0 / d)


def _norm_second_order(ops, g, x, mean, rstd, w, GX, GW, GB, nr):
    dims = _norm_dims(x, nr)
    d = 1
    for n in x.shape[x.dim() - nr:]:
        d *= int(n)
    keep = (torch.float32, torch.float64)  # (16-bit: in float32)
    f = (lambda t: None if t is None else t if t.dtype in keep else t.float())
    g32, x32, w32, GX, GW, GB = f(g), f(x), f(w), f(GX), f(GW), f(GB)
    xm = x32 if mean is None else ops.add(x32, mean, -1.0)
    xh = ops.mul(xm, rstd)

    def proj(u):
        p = ops.add(u, ops.mul(xh, _rows_mean(ops, ops.mul(u, xh), dims, d)), -1.0)
        return p if mean is None else ops.add(p, _rows_mean(ops, u, dims, d), -1.0)

    v = g32 if w32 is None else ops.mul(g32, w32)
    lead = list(range(x.dim() - nr))
    dg = dw = t = None
    if GX is not None:
        rp = ops.mul(proj(GX), rstd)  # rstd P(GX)
        dg = rp if w32 is None else ops.mul(rp, w32)
        if w32 is not None:
            dw = ops.reduce_sum(ops.mul(g32, rp), lead, False) if lead else ops.mul(g32, rp)
        c = _rows_mean(ops, ops.mul(v, xh), dims, d)
        gx_xh = _rows_mean(ops, ops.mul(GX, xh), dims, d)
        t = ops.muls(ops.mul(rstd, ops.add(ops.mul(GX, c), ops.mul(v, gx_xh))), -1.0)
    if GW is not None:
        dg = ops.mul(xh, GW) if dg is None else ops.add(dg, ops.mul(xh, GW))
        t = ops.mul(g32, GW) if t is None else ops.add(t, ops.mul(g32, GW))
    if GB is not None:
        dg = ops.add(ops.mul(g32, _ops._c(g32, 0.0)), GB) if dg is None else ops.add(dg, GB)
    dx = dmean = drstd = None
    if t is not None:
        dx = ops.mul(rstd, t)
        drstd = ops.reduce_sum(ops.mul(t, xm), dims, True)
        if mean is not None:
            dmean = ops.muls(ops.mul(rstd, ops.reduce_sum(t, dims, True)), -1.0)
    if GX is not None:
        s = ops.reduce_sum(ops.mul(GX, proj(v)), dims, True)
        drstd = s if drstd is None else ops.add(drstd, s)
    return dg, dx, dmean, drstd, dw


def _setup_ln_bwd(ctx, inputs, output):
    grad, x, ns, mean, rstd = inputs[:5]
    weight = inputs[5] if len(inputs) > 5 else None
    ctx.nargs = len(inputs)
    ctx.ns = tuple(ns)
    ctx.save_for_backward(grad, x, mean, rstd, weight)
    ctx.set_materialize_grads(False)


def _backward_ln_bwd(ops, ctx, grads):
    grad, x, mean, rstd, weight = ctx.saved_tensors
    GX, GW, GB = (t if _given(t) else None for t in (tuple(grads) + (None,) * 3)[:3])
    dg, dx, dmean, drstd, dw = _norm_second_order(ops, grad, x, mean, rstd, weight, GX, GW, GB,
                                                  len(ctx.ns))
    need = _needs(ctx, 6)
    out = (None if dg is None or not need[0] else dg.to(grad.dtype),
           None if dx is None or not need[1] else dx.to(x.dtype), None,
           dmean if need[3] else None, drstd if need[4] else None,
           None if dw is None or not need[5] else dw.to(weight.dtype), None, None)
    return out[:ctx.nargs]


def _setup_rms_bwd(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:4])
    ctx.set_materialize_grads(False)


def _backward_rms_bwd(ops, ctx, grads):
    grad, x, rstd, gamma = ctx.saved_tensors
    GX, GG = (t if _given(t) else None for t in (tuple(grads) + (None,) * 2)[:2])
    dg, dx, _, drstd, dgam = _norm_second_order(ops, grad, x, None, rstd, gamma, GX, GG, None,
                                                gamma.dim())
    need = _needs(ctx, 4)
    return (None if dg is None or not need[0] else dg.to(grad.dtype),
            None if dx is None or not need[1] else dx.to(x.dtype),
            drstd if need[2] else None,
            None if dgam is None or not need[3] else dgam.to(gamma.dtype))


_DEFS = [
    # name, schema, kernel, fake, setup, backward, tensor args
    ("layer_norm_fwd", "(Tensor x, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
     "float eps=1e-05) -> (Tensor, Tensor, Tensor)", layer_norm_fwd, _fake_ln, _setup_ln,
     _backward_ln, (0, 2, 3)),
    ("layer_norm_backward", "(Tensor grad, Tensor x, int[] normalized_shape, Tensor mean, "
     "Tensor rstd, Tensor? weight=None, Tensor? bias=None, bool[] output_mask=[True, True, True]) "
     "-> (Tensor, Tensor, Tensor)", layer_norm_backward, _fake_ln_bwd, _setup_ln_bwd,
     _backward_ln_bwd, (0, 1, 3, 4, 5)),
    ("rms_norm_fwd", "(Tensor x, Tensor gamma, float eps=1e-06) -> (Tensor, Tensor)", rms_norm_fwd,
     _fake_rms, _setup_rms, _backward_rms, (0, 1)),
    ("rms_norm_backward", "(Tensor grad, Tensor x, Tensor rstd, Tensor gamma) -> (Tensor, Tensor)",
     rms_norm_backward, _fake_rms_bwd, _setup_rms_bwd, _backward_rms_bwd, (0, 1, 2, 3)),
]


# ---- registration: _dropout.register_ops (both paths of _ops.py, the late operators' Functions
# with their generic forward-mode and vmap rules) -------------------------------------------------
def _register():
    defs = []
    for name, schema, kernel, fake, setup, backward, targs in _DEFS:
        d = _ops.OpDef(name, schema, kernel, targs, fake, setup,
                       lambda ops, ctx, *grads, _b=backward: _b(ops, ctx, grads),
                       nout=schema.split("->")[1].count("Tensor"))
        d.twice = True  # the formulas run on differentiable operators (second order and on)
        setattr(K, name, kernel)  # (the first-order formulas call the kernels through _kernels)
        defs.append(d)
    register_ops(defs)


_register()


def _call(name, *args):
    """Forward AD and torch.func through the operator's Function (its jvp / vmap rules), else the
    operator (autograd through its registration)."""
    d = EXTRA[name]
    if K.forward_ad() and not K.use_dispatcher():
        return d.function.apply(*args)
    return d.op(*args)


# ---- functional forms (PyTorch's F.layer_norm / F.rms_norm arguments) --------------------------
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm on aclnnLayerNorm (+ aclnnLayerNormBackward): statistics in fp32, the
    weight / bias gradients summed over the rows in a fixed order (deterministic)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _call("layer_norm_fwd", x, list(normalized_shape), weight, bias, float(eps))[0]


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """F.rms_norm on aclnnRmsNorm (+ aclnnRmsNormGrad): y = x / sqrt(mean(x^2) + eps) * weight
    (eps None: torch.finfo(x.dtype).eps, as PyTorch; no weight: ones)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    if weight is None:
        weight = torch.ones(tuple(normalized_shape), dtype=x.dtype)
    elif tuple(weight.shape) != tuple(normalized_shape):
        raise ValueError("opgrad.torch.rms_norm: weight has shape %s, normalized_shape is %s"
                         % (tuple(weight.shape), tuple(normalized_shape)))
    return _call("rms_norm_fwd", x, weight, float(eps))[0]


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm on opgrad (same arguments and parameters: weight, bias)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(self.normalized_shape, dtype=dtype))
            self.bias = (torch.nn.Parameter(torch.zeros(self.normalized_shape, dtype=dtype))
                         if bias else None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__)


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm on opgrad (same arguments; parameter: weight)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__)
