"""LayerNorm and RMSNorm for opgrad.torch (issue 14): aclnnLayerNorm / aclnnLayerNormBackward and
aclnnRmsNorm / aclnnRmsNormGrad as torch operators with autograd.

    torch.ops.opgrad.layer_norm_fwd(x, normalized_shape, weight, bias, eps) -> (y, mean, rstd)
    torch.ops.opgrad.layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight, bias,
                                         output_mask) -> (dx, dweight, dbias)
    torch.ops.opgrad.rms_norm_fwd(x, gamma, eps) -> (y, rstd)
    torch.ops.opgrad.rms_norm_backward(grad, x, rstd, gamma) -> (dx, dgamma)

The forwards return their saved statistics (float32, [A..., 1...]) as extra outputs, which the
backward reads: x is read once by each backward, the statistics are not recomputed. The mean and
rstd outputs are not differentiable. The operators are registered with the same two paths as
_ops.py: torch.library.custom_op + register_autograd (PyTorch >= 2.4; the formulas call
torch.ops.opgrad.*), or the 1.13 Library with an "Autograd" kernel over a torch.autograd.Function.
The functional forms layer_norm / rms_norm take PyTorch's F.layer_norm / F.rms_norm arguments.
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops

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
    mean = K._empty(_stat_shape(x, len(ns)), dtype=torch.float32)
    rstd = K._empty(_stat_shape(x, len(ns)), dtype=torch.float32)
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
    rstd = K._empty(_stat_shape(x, gamma.dim()), dtype=torch.float32)
    eps = float(eps)

    def p1(hi, ho, sc, w, e):
        return L.phase1["RmsNorm"](hi[0], hi[1], eps, ho[0], ho[1], w, e)

    K._mm_run("aclnnRmsNorm", p1, (x, gamma), (y, rstd), attrs=(eps,))
    return y, rstd


def rms_norm_backward(grad, x, rstd, gamma):
    _check_all("rms_norm_backward", ((grad, "grad"), (x, "x"), (rstd, "rstd"), (gamma, "gamma")))
    dx = K._empty(x.shape, dtype=x.dtype)
    dg = K._empty(gamma.shape, dtype=torch.float32)  # dgammaOut is FLOAT

    def p1(hi, ho, sc, w, e):
        return L.phase1["RmsNormGrad"](hi[0], hi[1], hi[2], hi[3], ho[0], ho[1], w, e)

    K._mm_run("aclnnRmsNormGrad", p1, (grad, x, rstd, gamma), (dx, dg))
    return dx, dg


# ---- fakes (shapes and dtypes only, PyTorch >= 2.4) -------------------------------------------
def _fake_ln(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    s = _stat_shape(x, len(normalized_shape))
    return (x.new_empty(x.shape), x.new_empty(s, dtype=torch.float32),
            x.new_empty(s, dtype=torch.float32))


def _fake_ln_bwd(grad, x, normalized_shape, mean, rstd, weight=None, bias=None,
                 output_mask=(True, True, True)):
    wdt = weight.dtype if weight is not None else x.dtype
    ns = tuple(normalized_shape)
    return (x.new_empty(x.shape if output_mask[0] else (0,)),
            x.new_empty(ns if output_mask[1] else (0,), dtype=wdt),
            x.new_empty(ns if output_mask[2] else (0,), dtype=wdt))


def _fake_rms(x, gamma, eps=1e-6):
    return x.new_empty(x.shape), x.new_empty(_stat_shape(x, gamma.dim()), dtype=torch.float32)


def _fake_rms_bwd(grad, x, rstd, gamma):
    return x.new_empty(x.shape), x.new_empty(gamma.shape, dtype=torch.float32)


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


def _backward_ln(ops, ctx, grads):
    x, mean, rstd, weight, bias = ctx.saved_tensors
    need = _needs(ctx, 4)
    mask = [need[0], need[2] and ctx.has[0], need[3] and ctx.has[1]]
    if not any(mask):
        return (None,) * ctx.nargs
    dx, dw, db = ops.layer_norm_backward(grads[0], x, list(ctx.ns), mean, rstd, weight, bias, mask)
    out = (dx if mask[0] else None, None, dw if mask[1] else None, db if mask[2] else None, None)
    return out[:ctx.nargs]


def _setup_rms(ctx, inputs, output):
    ctx.nargs = len(inputs)
    x, gamma = inputs[0], inputs[1]
    ctx.save_for_backward(x, output[1], gamma)


def _backward_rms(ops, ctx, grads):
    x, rstd, gamma = ctx.saved_tensors
    need = _needs(ctx, 2)
    if not (need[0] or need[1]):
        return (None,) * ctx.nargs
    dx, dg = ops.rms_norm_backward(grads[0], x, rstd, gamma)
    return (dx if need[0] else None, dg.to(gamma.dtype) if need[1] else None, None)[:ctx.nargs]


_DEFS = [
    # name, schema, kernel, fake, setup, backward, tensor args
    ("layer_norm_fwd", "(Tensor x, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
     "float eps=1e-05) -> (Tensor, Tensor, Tensor)", layer_norm_fwd, _fake_ln, _setup_ln,
     _backward_ln, (0, 2, 3)),
    ("layer_norm_backward", "(Tensor grad, Tensor x, int[] normalized_shape, Tensor mean, "
     "Tensor rstd, Tensor? weight=None, Tensor? bias=None, bool[] output_mask=[True, True, True]) "
     "-> (Tensor, Tensor, Tensor)", layer_norm_backward, _fake_ln_bwd, None, None, ()),
    ("rms_norm_fwd", "(Tensor x, Tensor gamma, float eps=1e-06) -> (Tensor, Tensor)", rms_norm_fwd,
     _fake_rms, _setup_rms, _backward_rms, (0, 1)),
    ("rms_norm_backward", "(Tensor grad, Tensor x, Tensor rstd, Tensor gamma) -> (Tensor, Tensor)",
     rms_norm_backward, _fake_rms_bwd, None, None, ()),
]


# ---- registration (the two paths of _ops.py) ----------------------------------------------------
def _function(name, kernel, setup, backward):
    def forward(ctx, *args):
        out = kernel(*args)
        setup(ctx, args, out)
        ctx.mark_non_differentiable(*out[1:])
        return out

    def bwd(ctx, *grads):
        return backward(K_NS, ctx, grads)

    return type("OpgradFunction_" + name, (torch.autograd.Function,),
                {"forward": staticmethod(forward),
                 "backward": staticmethod(_ops.first_order("opgrad." + name)(bwd))})


class _KernelNamespace:
    """The backward formulas' `ops` on the 1.13 path: the kernels themselves."""
    layer_norm_backward = staticmethod(layer_norm_backward)
    rms_norm_backward = staticmethod(rms_norm_backward)


K_NS = _KernelNamespace()
FUNCTIONS = {}


def _register():
    if _ops.USING_CUSTOM_OP:
        ops_ns = torch.ops.opgrad
        for name, schema, kernel, fake, setup, backward, _ in _DEFS:
            torch.library.custom_op("opgrad::" + name, kernel, mutates_args=(),
                                    device_types="cpu", schema=schema)
            torch.library.register_fake("opgrad::" + name, fake)
            if backward is not None:
                def bwd(ctx, *grads, _b=backward):
                    return _b(ops_ns, ctx, grads)

                torch.library.register_autograd("opgrad::" + name, bwd, setup_context=setup)
        return
    lib = _ops.Library
    for name, schema, kernel, fake, setup, backward, targs in _DEFS:
        lib.define(name + schema)
        lib.impl(name, kernel, "CPU")
        if backward is None:
            continue
        fn = FUNCTIONS[name] = _function(name, kernel, setup, backward)

        def autograd_impl(*args, _fn=fn, _kernel=kernel, _t=targs):
            if K.forward_ad():  # the Function's jvp carries the tangent
                return _fn.apply(*args)
            if torch.is_grad_enabled():
                for i in _t:
                    if i < len(args) and args[i] is not None and args[i].requires_grad:
                        return _fn.apply(*args)
            return _kernel(*args)

        lib.impl(name, autograd_impl, "Autograd")


_register()


# ---- functional forms (PyTorch's F.layer_norm / F.rms_norm arguments) --------------------------
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm on aclnnLayerNorm (+ aclnnLayerNormBackward): statistics in fp32, the
    weight / bias gradients summed over the rows in a fixed order (deterministic)."""
    K.refuse_forward_ad("layer_norm")
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return torch.ops.opgrad.layer_norm_fwd(x, list(normalized_shape), weight, bias, float(eps))[0]


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """F.rms_norm on aclnnRmsNorm (+ aclnnRmsNormGrad): y = x / sqrt(mean(x^2) + eps) * weight
    (eps None: torch.finfo(x.dtype).eps, as PyTorch; no weight: ones)."""
    K.refuse_forward_ad("rms_norm")
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    if weight is None:
        weight = torch.ones(tuple(normalized_shape), dtype=x.dtype)
    elif tuple(weight.shape) != tuple(normalized_shape):
        raise ValueError("opgrad.torch.rms_norm: weight has shape %s, normalized_shape is %s"
                         % (tuple(weight.shape), tuple(normalized_shape)))
    return torch.ops.opgrad.rms_norm_fwd(x, weight, float(eps))[0]


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
