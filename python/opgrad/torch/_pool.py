"""opgrad.torch.max_pool2d, avg_pool2d, adaptive_avg_pool2d (the pool family, issue 13).

The functional forms take torch.nn.functional's arguments and run aclnnMaxPool2dWithIndices /
aclnnAvgPool2d / aclnnAdaptiveAvgPool2d and their backwards on 3-d [C, H, W] or 4-d [N, C, H, W]
float32, float16, bfloat16 and float64 CPU tensors of any strides (float64 computed in double:
an opgrad extension, docs/ops/pool.md). max_pool2d's indices are int64 (as PyTorch's): the flat
h * W + w position of each maximum in its input plane, the first maximum in window order. The
gradients are deterministic (fixed summation orders, any thread count).
"""
import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops
from ._dropout import EXTRA, _compiling, register_ops
from ._norm import _int_array

_ACL_INT64 = L.ACL_INT64


def _pair(v, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise ValueError("opgrad.torch: %s must be an int or 1 or 2 ints, got %r" % (name, v))
    return v


def _out_size(n, k, s, p, d, ceil_mode):
    """The pooled extent (the aclnn / PyTorch rule), or < 1 when no window fits."""
    span = n + 2 * p - d * (k - 1) - 1
    if span < 0:
        return 0
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pooled_shape(x, k, s, p, d, ceil_mode):
    if x.dim() < 2:  # phase 1 rejects the rank
        return tuple(x.shape)
    ho = _out_size(x.shape[-2], k[0], s[0], p[0], d[0], ceil_mode)
    wo = _out_size(x.shape[-1], k[1], s[1], p[1], d[1], ceil_mode)
    return tuple(x.shape[:-2]) + (max(ho, 0), max(wo, 0))


def _arrays(*lists):
    return [_int_array(v) for v in lists]


def _free(arrs):
    for a in arrs:
        L.aclDestroyIntArray(a)


# ---- max pool -----------------------------------------------------------------------------------
def max_pool2d_kernel(x, kernel_size, stride, padding, dilation, ceil_mode=False):
    """(out, indices int64) = aclnnMaxPool2dWithIndices."""
    k, p, d = tuple(kernel_size), tuple(padding), tuple(dilation)
    s = tuple(stride) if len(stride) else k
    shape = _pooled_shape(x, k, s, p, d, bool(ceil_mode))
    fmt = K.memory_format(x)  # channels-last in, channels-last out (as PyTorch)
    out = torch.empty(shape, dtype=x.dtype, memory_format=fmt)
    idx = torch.empty(shape, dtype=torch.int64, memory_format=fmt)
    return max_pool2d_into(x, kernel_size, stride, padding, dilation, ceil_mode, out, idx)


def max_pool2d_into(x, kernel_size, stride, padding, dilation, ceil_mode, out, idx):
    """aclnnMaxPool2dWithIndices into given contiguous out / idx (int64) tensors."""
    dt = K.acl_dtype(x, "max_pool2d")
    k, p, d = tuple(kernel_size), tuple(padding), tuple(dilation)
    s = tuple(stride) if len(stride) else k
    ceil_mode = bool(ceil_mode)
    shape = tuple(out.shape)

    def p1(hi, ho, sc, w, e):
        arrs = _arrays(k, s, p, d)
        try:
            return L.phase1["MaxPool2dWithIndices"](hi[0], *arrs, ceil_mode, ho[0], ho[1], w, e)
        finally:
            _free(arrs)

    if x.numel() or x.dim() < 3 or min(shape[-2:]) < 1:  # phase 1 judges the arguments
        K._run("MaxPool2dWithIndices", "aclnnMaxPool2dWithIndices", p1, (x,), (dt,), (out, idx),
               (dt, _ACL_INT64), attrs=(k, s, p, d, ceil_mode))
    return out, idx


def max_pool2d_backward_kernel(grad, x, indices, kernel_size, stride, padding, dilation,
                               ceil_mode=False):
    """aclnnMaxPool2dWithIndicesBackward: the gradient of x."""
    return max_pool2d_backward_into(grad, x, indices, kernel_size, stride, padding, dilation,
                                    ceil_mode, torch.empty(x.shape, dtype=x.dtype,
                                                           memory_format=K.memory_format(x)))


def max_pool2d_backward_into(grad, x, indices, kernel_size, stride, padding, dilation, ceil_mode,
                             gi):
    """aclnnMaxPool2dWithIndicesBackward into a given contiguous gi."""
    dt = K.acl_dtype(x, "max_pool2d_backward")
    gdt = K.acl_dtype(grad, "max_pool2d_backward", "grad")
    k, p, d = tuple(kernel_size), tuple(padding), tuple(dilation)
    s = tuple(stride) if len(stride) else k
    ceil_mode = bool(ceil_mode)

    def p1(hi, ho, sc, w, e):
        arrs = _arrays(k, s, p, d)
        try:
            return L.phase1["MaxPool2dWithIndicesBackward"](hi[0], hi[1], hi[2], *arrs, ceil_mode,
                                                            ho[0], w, e)
        finally:
            _free(arrs)

    if x.numel():
        K._run("MaxPool2dWithIndicesBackward", "aclnnMaxPool2dWithIndicesBackward", p1,
               (grad, x, indices), (gdt, dt, _ACL_INT64), (gi,), (dt,),
               attrs=(k, s, p, d, ceil_mode))
    return gi


def _fake_max(x, kernel_size, stride, padding, dilation, ceil_mode=False):
    k = tuple(kernel_size)
    s = tuple(stride) if len(stride) else k
    shape = _pooled_shape(x, k, s, tuple(padding), tuple(dilation), bool(ceil_mode))
    fmt = K.memory_format(x)
    return (x.new_empty(shape).to(memory_format=fmt),
            x.new_empty(shape, dtype=torch.int64).to(memory_format=fmt))


def _fake_max_bwd(grad, x, indices, kernel_size, stride, padding, dilation, ceil_mode=False):
    return x.new_empty(x.shape).to(memory_format=K.memory_format(x))


def _setup_max(ctx, inputs, output):
    ctx.attrs = tuple(inputs[1:])
    ctx.save_for_backward(inputs[0], output[1])


def _backward_max(ops, ctx, grad, grad_indices=None):
    x, idx = ctx.saved_tensors
    return (ops.max_pool2d_backward(grad, x, idx, *ctx.attrs),) + (None,) * len(ctx.attrs)


# ---- avg pool -----------------------------------------------------------------------------------
def avg_pool2d_kernel(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
                      divisor_override=0):
    """aclnnAvgPool2d (divisor_override 0: none)."""
    k = tuple(kernel_size)
    s = tuple(stride) if len(stride) else k
    out = torch.empty(_pooled_shape(x, k, s, tuple(padding), (1, 1), bool(ceil_mode)),
                      dtype=x.dtype, memory_format=K.memory_format(x))
    return avg_pool2d_into(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, out)


def avg_pool2d_into(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override, out):
    """aclnnAvgPool2d into a given contiguous out."""
    dt = K.acl_dtype(x, "avg_pool2d")
    k, p = tuple(kernel_size), tuple(padding)
    s = tuple(stride) if len(stride) else k
    ceil_mode, cip, div = bool(ceil_mode), bool(count_include_pad), int(divisor_override)
    shape = tuple(out.shape)

    def p1(hi, ho, sc, w, e):
        arrs = _arrays(k, s, p)
        try:
            return L.phase1["AvgPool2d"](hi[0], *arrs, ceil_mode, cip, div, 0, ho[0], w, e)
        finally:
            _free(arrs)

    if x.numel() or x.dim() < 3 or min(shape[-2:]) < 1:
        K._run("AvgPool2d", "aclnnAvgPool2d", p1, (x,), (dt,), (out,), (dt,),
               attrs=(k, s, p, ceil_mode, cip, div))
    return out


def avg_pool2d_backward_kernel(grad, x, kernel_size, stride, padding, ceil_mode=False,
                               count_include_pad=True, divisor_override=0):
    """aclnnAvgPool2dBackward: the gradient of x."""
    return avg_pool2d_backward_into(grad, x, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override,
                                    torch.empty(x.shape, dtype=x.dtype,
                                                memory_format=K.memory_format(x)))


def avg_pool2d_backward_into(grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, gi):
    """aclnnAvgPool2dBackward into a given contiguous gi."""
    dt = K.acl_dtype(x, "avg_pool2d_backward")
    gdt = K.acl_dtype(grad, "avg_pool2d_backward", "grad")
    k, p = tuple(kernel_size), tuple(padding)
    s = tuple(stride) if len(stride) else k
    ceil_mode, cip, div = bool(ceil_mode), bool(count_include_pad), int(divisor_override)

    def p1(hi, ho, sc, w, e):
        arrs = _arrays(k, s, p)
        try:
            return L.phase1["AvgPool2dBackward"](hi[0], hi[1], *arrs, ceil_mode, cip, div, 0,
                                                 ho[0], w, e)
        finally:
            _free(arrs)

    if x.numel():
        K._run("AvgPool2dBackward", "aclnnAvgPool2dBackward", p1, (grad, x), (gdt, dt), (gi,),
               (dt,), attrs=(k, s, p, ceil_mode, cip, div))
    return gi


def _fake_avg(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
              divisor_override=0):
    k = tuple(kernel_size)
    s = tuple(stride) if len(stride) else k
    return x.new_empty(_pooled_shape(x, k, s, tuple(padding), (1, 1), bool(ceil_mode))).to(
        memory_format=K.memory_format(x))


def _fake_avg_bwd(grad, x, *attrs):
    return x.new_empty(x.shape).to(memory_format=K.memory_format(x))


def _setup_avg(ctx, inputs, output):
    ctx.attrs = tuple(inputs[1:])
    ctx.save_for_backward(inputs[0])


def _backward_avg(ops, ctx, grad):
    (x,) = ctx.saved_tensors
    return (ops.avg_pool2d_backward(grad, x, *ctx.attrs),) + (None,) * len(ctx.attrs)


# ---- adaptive avg pool --------------------------------------------------------------------------
def adaptive_avg_pool2d_kernel(x, output_size):
    """aclnnAdaptiveAvgPool2d."""
    size = tuple(int(v) for v in output_size)
    return adaptive_avg_pool2d_into(x, size, torch.empty(tuple(x.shape[:-2]) + size,
                                                         dtype=x.dtype,
                                                         memory_format=K.memory_format(x)))


def adaptive_avg_pool2d_into(x, output_size, out):
    """aclnnAdaptiveAvgPool2d into a given contiguous out."""
    dt = K.acl_dtype(x, "adaptive_avg_pool2d")
    size = tuple(int(v) for v in output_size)

    def p1(hi, ho, sc, w, e):
        arrs = _arrays(size)
        try:
            return L.phase1["AdaptiveAvgPool2d"](hi[0], arrs[0], ho[0], w, e)
        finally:
            _free(arrs)

    if x.numel() or x.dim() < 3 or min(size) < 1:
        K._run("AdaptiveAvgPool2d", "aclnnAdaptiveAvgPool2d", p1, (x,), (dt,), (out,), (dt,),
               attrs=(size,))
    return out


def adaptive_avg_pool2d_backward_kernel(grad, x):
    """aclnnAdaptiveAvgPool2dBackward: the gradient of x."""
    return adaptive_avg_pool2d_backward_into(
        grad, x, torch.empty(x.shape, dtype=x.dtype, memory_format=K.memory_format(x)))


def adaptive_avg_pool2d_backward_into(grad, x, gi):
    """aclnnAdaptiveAvgPool2dBackward into a given contiguous gi."""
    dt = K.acl_dtype(x, "adaptive_avg_pool2d_backward")
    gdt = K.acl_dtype(grad, "adaptive_avg_pool2d_backward", "grad")

    def p1(hi, ho, sc, w, e):
        return L.phase1["AdaptiveAvgPool2dBackward"](hi[0], hi[1], ho[0], w, e)

    if x.numel():
        K._run("AdaptiveAvgPool2dBackward", "aclnnAdaptiveAvgPool2dBackward", p1, (grad, x),
               (gdt, dt), (gi,), (dt,))
    return gi


def _fake_adaptive(x, output_size):
    return x.new_empty(tuple(x.shape[:-2]) + tuple(int(v) for v in output_size)).to(
        memory_format=K.memory_format(x))


def _fake_adaptive_bwd(grad, x):
    return x.new_empty(x.shape).to(memory_format=K.memory_format(x))


def _setup_adaptive(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward_adaptive(ops, ctx, grad):
    (x,) = ctx.saved_tensors
    return ops.adaptive_avg_pool2d_backward(grad, x), None


# ---- second order: the backwards are linear in the gradient (x only gives the shape) -----------
# Their derivative in grad is their adjoint: the forward pooling itself for the averages, the
# gather of the saved indices for the max; none in x (or the indices).
def _setup_pool_bwd(ctx, inputs, output):
    ctx.attrs = tuple(inputs[2:])
    ctx.out_size = tuple(inputs[0].shape[-2:])


def _backward_avg_bwd(ops, ctx, gg):
    return (ops.avg_pool2d(gg, *ctx.attrs), None) + (None,) * len(ctx.attrs)


def _backward_adaptive_bwd(ops, ctx, gg):
    return ops.adaptive_avg_pool2d(gg, list(ctx.out_size)), None


def _setup_max_bwd(ctx, inputs, output):
    ctx.save_for_backward(inputs[2])
    ctx.nattrs = len(inputs) - 3


def _backward_max_bwd(ops, ctx, gg):
    (idx,) = ctx.saved_tensors  # each output element's flat position in its input plane
    flat = gg.reshape(tuple(gg.shape[:-2]) + (-1,))
    dg = flat.gather(-1, idx.reshape(tuple(idx.shape[:-2]) + (-1,))).reshape(idx.shape)
    return (dg, None, None) + (None,) * ctx.nattrs


_POOL_DEFS = [
    _ops.OpDef("max_pool2d_backward", "(Tensor grad, Tensor x, Tensor indices, int[] kernel_size, "
               "int[] stride, int[] padding, int[] dilation, bool ceil_mode=False) -> Tensor",
               max_pool2d_backward_kernel, (0, 1, 2), _fake_max_bwd, _setup_max_bwd,
               _backward_max_bwd),
    _ops.OpDef("max_pool2d_with_indices", "(Tensor x, int[] kernel_size, int[] stride, "
               "int[] padding, int[] dilation, bool ceil_mode=False) -> (Tensor, Tensor)",
               max_pool2d_kernel, (0,), _fake_max, _setup_max, _backward_max, nout=2),
    _ops.OpDef("avg_pool2d_backward", "(Tensor grad, Tensor x, int[] kernel_size, int[] stride, "
               "int[] padding, bool ceil_mode=False, bool count_include_pad=True, "
               "int divisor_override=0) -> Tensor", avg_pool2d_backward_kernel, (0, 1),
               _fake_avg_bwd, _setup_pool_bwd, _backward_avg_bwd),
    _ops.OpDef("avg_pool2d", "(Tensor x, int[] kernel_size, int[] stride, int[] padding, "
               "bool ceil_mode=False, bool count_include_pad=True, int divisor_override=0) "
               "-> Tensor", avg_pool2d_kernel, (0,), _fake_avg, _setup_avg, _backward_avg),
    _ops.OpDef("adaptive_avg_pool2d_backward", "(Tensor grad, Tensor x) -> Tensor",
               adaptive_avg_pool2d_backward_kernel, (0, 1), _fake_adaptive_bwd, _setup_pool_bwd,
               _backward_adaptive_bwd),
    _ops.OpDef("adaptive_avg_pool2d", "(Tensor x, int[] output_size) -> Tensor",
               adaptive_avg_pool2d_kernel, (0,), _fake_adaptive, _setup_adaptive,
               _backward_adaptive),
]
for _d in _POOL_DEFS:
    _d.twice = True  # every formula runs on differentiable operators (any order)
register_ops(_POOL_DEFS)
K.max_pool2d_backward = max_pool2d_backward_kernel  # the 1.13 formulas call K.<name>
K.max_pool2d_with_indices = max_pool2d_kernel
K.avg_pool2d_backward = avg_pool2d_backward_kernel
K.avg_pool2d = avg_pool2d_kernel
K.adaptive_avg_pool2d_backward = adaptive_avg_pool2d_backward_kernel
K.adaptive_avg_pool2d = adaptive_avg_pool2d_kernel


def _call(name, x, args):
    d = EXTRA[name]
    if _compiling():
        return d.op(x, *args)
    if (x.requires_grad and torch.is_grad_enabled()) or K.forward_ad():
        return d.function.apply(x, *args)
    return d.kernel(x, *args)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool2d on aclnnMaxPool2dWithIndices (+ its backward)."""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(stride, "stride")
    args = (list(k), list(s), list(_pair(padding, "padding")), list(_pair(dilation, "dilation")),
            bool(ceil_mode))
    out, idx = _call("max_pool2d_with_indices", input, args)
    return (out, idx) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool2d on aclnnAvgPool2d (+ its backward)."""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(stride, "stride")
    if divisor_override is not None and int(divisor_override) == 0:
        raise ValueError("opgrad.torch.avg_pool2d: divisor_override must be non-zero")
    args = (list(k), list(s), list(_pair(padding, "padding")), bool(ceil_mode),
            bool(count_include_pad), int(divisor_override or 0))
    return _call("avg_pool2d", input, args)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """torch.nn.functional.adaptive_avg_pool2d on aclnnAdaptiveAvgPool2d (+ its backward);
    None in output_size keeps that input extent."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    size = [input.shape[-2 + i] if v is None else int(v) for i, v in enumerate(output_size)]
    return _call("adaptive_avg_pool2d", input, (size,))
