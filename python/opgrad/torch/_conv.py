"""opgrad.torch: convolution (issue 13) on aclnnConvolution / aclnnConvolutionBackward.

    conv1d / conv2d / conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
    conv_transpose1d / 2d / 3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                               groups=1, dilation=1)

take torch.nn.functional's arguments (padding also 'same' / 'valid' for the direct ones) and
return the same values. As torch operators (both registration paths of _ops.py, through
_dropout.register_ops):

    torch.ops.opgrad.convolution(input, weight, bias, stride, padding, dilation, transposed,
                                 output_padding, groups) -> Tensor
    torch.ops.opgrad.convolution_backward(grad, input, weight, has_bias, stride, padding,
                                          dilation, transposed, output_padding, groups,
                                          output_mask) -> (grad_input, grad_weight, grad_bias)

padding has one entry per spatial dim, or begin / end pairs ([left, right] for 1-D,
[top, bottom, left, right] for 2-D) where aclnn takes them: direct 1-D and 2-D convolutions and
the 2-D transposed one. That is how padding='same' with an even effective kernel (PyTorch puts
the extra row / column at the end) is passed; a 3-D convolution takes no pairs, so 'same' there
needs an odd effective kernel in every dim (else ValueError).

The backward runs one aclnnConvolutionBackward whose outputMask holds the gradients autograd
asks for (ctx.needs_input_grad): a frozen weight costs no weight gradient, a first layer's input
no data gradient. Tensors go to libopgrad zero-copy with their own strides (channels_last,
transposed and sliced inputs are read in place); outputs take PyTorch's memory format
(channels_last when the input or the weight has it, else contiguous). dtypes
float32, float16, bfloat16 (accumulated in fp32 in a fixed order, rounded once: the results do
not depend on the thread count) and float64 (the GEMM's float64 loop, in double, in the same
fixed order; gradcheck and gradgradcheck pass). Double backward works: ConvolutionBackward's
derivative is composed from Convolution and ConvolutionBackward again (below, "second order").
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops as O
from ._dropout import register_ops

_create_bool_array = L._decl("aclCreateBoolArray", L.P, [L.P, L.U64])
_destroy_bool_array = L._decl("aclDestroyBoolArray", L.I32, [L.P])
_P1 = L.phase1
_KEEP_DTYPE = 0  # cubeMathType: on the CPU every dtype is computed exactly in fp32


class _Arrays:
    """aclIntArrays (and an optional aclBoolArray) alive for one phase-1 call."""

    def __init__(self, lists, mask=None):
        self.h, self._keep = [], []
        try:
            for v in lists:
                if v is None:
                    self.h.append(None)
                    continue
                arr = L.aclCreateIntArray(K._i64(tuple(v))[0] if v else None, len(v))
                if not arr:
                    raise K.OpgradError(L.Status.PARAM_INVALID, L.error_message(),
                                        "aclCreateIntArray")
                self.h.append(arr)
            self.mask = None
            if mask is not None:
                vals = (ctypes.c_bool * len(mask))(*mask)
                self._keep.append(vals)
                self.mask = _create_bool_array(ctypes.addressof(vals), len(mask))
        except BaseException:
            self.close()
            raise

    def close(self):
        for h in self.h:
            if h:
                L.aclDestroyIntArray(h)
        self.h = []
        if getattr(self, "mask", None):
            _destroy_bool_array(self.mask)
            self.mask = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- shapes -------------------------------------------------------------------------------------
def _pads(padding, n):
    """(begin, end) per spatial dim from n entries or n begin / end pairs."""
    p = list(padding)
    if len(p) == n:
        return p, p
    return p[0::2], p[1::2]


def conv_output_shape(input, weight, stride, padding, dilation, transposed, output_padding,
                      groups):
    """The result's shape; a ValueError names what does not fit (the C library's checks come
    after this and carry aclnn's messages)."""
    n = input.dim() - 2
    if n < 1 or n > 3 or weight.dim() != input.dim():
        raise ValueError("opgrad.torch.convolution: input %s and weight %s: expected ranks 3, 4 "
                         "or 5 (batched NCL, NCHW, NCDHW) and equal" % (list(input.shape),
                                                                   list(weight.shape)))
    for name, v in (("stride", stride), ("dilation", dilation)):
        if len(v) != n:
            raise ValueError("opgrad.torch.convolution: %s %s must have %d entries"
                             % (name, list(v), n))
    if len(padding) not in (n, 2 * n):
        raise ValueError("opgrad.torch.convolution: padding %s must have %d entries (or %d begin /"
                         " end pairs)" % (list(padding), n, 2 * n))
    lo, hi = _pads(padding, n)
    k = weight.shape[2:]
    if transposed:
        op = list(output_padding) if output_padding else [0] * n
        if len(op) != n:
            raise ValueError("opgrad.torch.convolution: output_padding %s must have %d entries"
                             % (op, n))
        cout = weight.shape[1] * groups
        sp = [(input.shape[2 + i] - 1) * stride[i] - lo[i] - hi[i] + dilation[i] * (k[i] - 1)
              + op[i] + 1 for i in range(n)]
    else:
        cout = weight.shape[0]
        sp = [(input.shape[2 + i] + lo[i] + hi[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(n)]
    if any(s < 0 for s in sp):
        raise ValueError("opgrad.torch.convolution: input %s, weight %s, stride %s, padding %s, "
                         "dilation %s: the output size %s would be negative"
                         % (list(input.shape), list(weight.shape), list(stride), list(padding),
                            list(dilation), sp))
    return (input.shape[0], cout) + tuple(sp)


# ---- kernels ------------------------------------------------------------------------------------
_SHAPES = {}  # (shapes, attributes) -> output shape: checked once per geometry


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups, out=None):
    """aclnnConvolution. out (not in the schema): a preallocated result tensor (the
    benchmark's reuse mode); by default a new contiguous one. out must not overlap an input: a
    cached plan (planned with another output) does not check the memory again."""
    op = "convolution"
    K._checked(op, ((input, "input"), (weight, "weight"), (bias, "bias")))
    stride, padding, dilation = tuple(stride), tuple(padding), tuple(dilation)
    output_padding, groups, transposed = tuple(output_padding), int(groups), bool(transposed)
    key = (input.shape, weight.shape, stride, padding, dilation, transposed, output_padding,
           groups)
    shape = _SHAPES.get(key)
    if shape is None:
        shape = conv_output_shape(input, weight, stride, padding, dilation, transposed,
                                  output_padding, groups)
        if len(_SHAPES) >= 4096:
            _SHAPES.clear()
        _SHAPES[key] = shape
    if out is None:  # channels-last in (input or weight), channels-last out, as PyTorch
        out = torch.empty(shape, dtype=torch.promote_types(input.dtype, weight.dtype),
                          memory_format=K.memory_format(input, weight))

    def p1(hi, ho, sc, w, e):
        with _Arrays((stride, padding, dilation, output_padding if transposed else None)) as a:
            s, p, d, op_ = a.h
            return _P1["Convolution"](hi[0], hi[1], hi[2], s, p, d, transposed, op_, groups,
                                      ho[0], _KEEP_DTYPE, w, e)

    K._mm_run("aclnnConvolution", p1, (input, weight, bias), (out,),
              attrs=(stride, padding, dilation, transposed, output_padding, groups))
    return out


def convolution_backward(grad, input, weight, has_bias, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask, outs=None):
    """aclnnConvolutionBackward: (grad_input, grad_weight, grad_bias), each in its input's dtype
    (grad_bias: the promoted dtype); one not in output_mask is not computed and comes back as an
    empty [0] tensor. outs (not in the schema): preallocated gradients (None where not wanted),
    which must not overlap the inputs (as out in convolution)."""
    op = "convolution_backward"
    K._checked(op, ((grad, "grad"), (input, "input"), (weight, "weight")))
    stride, padding, dilation = tuple(stride), tuple(padding), tuple(dilation)
    output_padding, groups, transposed = tuple(output_padding), int(groups), bool(transposed)
    mask = tuple(bool(m) for m in output_mask)
    if len(mask) != 3:
        raise ValueError("opgrad.torch.convolution_backward: output_mask must have 3 entries "
                         "(input, weight, bias), got %d" % len(mask))
    pdt = torch.promote_types(input.dtype, weight.dtype)
    cout = weight.shape[1] * groups if transposed else weight.shape[0]
    if outs is None:  # the convolution's memory format (channels-last in, channels-last out)
        fmt = K.memory_format(input, weight)
        outs = (torch.empty(input.shape, dtype=input.dtype, memory_format=fmt) if mask[0] else None,
                torch.empty(weight.shape, dtype=weight.dtype, memory_format=fmt)
                if mask[1] else None,
                torch.empty((cout,), dtype=pdt) if mask[2] else None)
    bias_sizes = (cout,) if has_bias else None

    def p1(hi, ho, sc, w, e):
        with _Arrays((bias_sizes, stride, padding, dilation,
                      output_padding if transposed else None), mask) as a:
            bs, s, p, d, op_ = a.h
            return _P1["ConvolutionBackward"](hi[0], hi[1], hi[2], bs, s, p, d, transposed, op_,
                                              groups, a.mask, _KEEP_DTYPE, ho[0], ho[1], ho[2],
                                              w, e)

    K._mm_run("aclnnConvolutionBackward", p1, (grad, input, weight), tuple(outs),
              attrs=(has_bias, stride, padding, dilation, transposed, output_padding, groups,
                     mask))
    # a gradient not asked for: an empty tensor of its own (a schema has no None outputs)
    return tuple(t if t is not None else torch.empty(0, dtype=input.dtype) for t in outs)


# ---- fakes (shapes and dtypes only, PyTorch >= 2.4) ---------------------------------------------
def _fake_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    shape = conv_output_shape(input, weight, tuple(stride), tuple(padding), tuple(dilation),
                              transposed, tuple(output_padding), groups)
    return input.new_empty(shape, dtype=torch.promote_types(input.dtype, weight.dtype)).to(
        memory_format=K.memory_format(input, weight))


def _fake_conv_bwd(grad, input, weight, has_bias, stride, padding, dilation, transposed,
                   output_padding, groups, output_mask):
    cout = weight.shape[1] * groups if transposed else weight.shape[0]
    pdt = torch.promote_types(input.dtype, weight.dtype)
    fmt = K.memory_format(input, weight)
    return (input.new_empty(input.shape if output_mask[0] else (0,)).to(
                memory_format=fmt if output_mask[0] else torch.contiguous_format),
            weight.new_empty(weight.shape if output_mask[1] else (0,)).to(
                memory_format=fmt if output_mask[1] else torch.contiguous_format),
            input.new_empty((cout,) if output_mask[2] else (0,),
                            dtype=pdt if output_mask[2] else input.dtype))


# ---- autograd formula ---------------------------------------------------------------------------
def _setup_conv(ctx, inputs, output):
    input, weight, bias = inputs[0], inputs[1], inputs[2]
    ctx.attrs = tuple(inputs[3:9])  # stride, padding, dilation, transposed, output_padding, groups
    ctx.has_bias = bias is not None
    ctx.bias_dtype = bias.dtype if bias is not None else None
    ctx.save_for_backward(input, weight)


def _backward_conv(ops, ctx, grad):
    input, weight = ctx.saved_tensors
    need = tuple(ctx.needs_input_grad[:3])
    mask = [need[0], need[1], need[2] and ctx.has_bias]
    none = (None,) * 6  # the attributes
    if grad is None or not any(mask):
        return (None, None, None) + none
    stride, padding, dilation, transposed, output_padding, groups = ctx.attrs
    gi, gw, gb = ops.convolution_backward(grad, input, weight, ctx.has_bias, stride, padding,
                                          dilation, transposed, output_padding, groups, mask)
    if mask[2] and gb.dtype != ctx.bias_dtype:
        gb = gb.to(ctx.bias_dtype)
    return (gi if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None) + none


# ---- second order: ConvolutionBackward's own derivative ------------------------------------------
# conv(x, w) is linear in x and in w, and the backward's results are its adjoints:
# gi = J_x(w)^T g, gw = J_w(x)^T g, gb = g summed to the channels. With GI, GW, GB the gradients of
# those results:
#   d/dg = conv(GI, w) + conv(x, GW) + GB (as a bias)       (<GI, J_x^T g> = <J_x GI, g>, ...)
#   d/dx = J_x(GW)^T g = ConvolutionBackward(g, x, GW)'s gradInput
#   d/dw = J_w(GI)^T g = ConvolutionBackward(g, GI, w)'s gradWeight
# the same two operators again (differentiable in turn), with the same attributes.
def _setup_conv_bwd(ctx, inputs, output):
    ctx.set_materialize_grads(False)  # a result not computed (output_mask) has no gradient
    ctx.save_for_backward(inputs[0], inputs[1], inputs[2])
    ctx.attrs = tuple(inputs[4:10])  # stride, padding, dilation, transposed, output_padding, groups


def _given(t):
    return t is not None and t.numel() > 0


def _backward_conv_bwd(ops, ctx, GI, GW, GB):
    grad, input, weight = ctx.saved_tensors
    need = ctx.needs_input_grad
    a = ctx.attrs
    GI, GW, GB = (t if _given(t) else None for t in (GI, GW, GB))
    dg = dx = dw = None
    if need[0] and (GI is not None or GW is not None or GB is not None):
        if GI is not None:
            dg = ops.convolution(GI, weight, GB, *a)
        if GW is not None:
            t = ops.convolution(input, GW, GB if dg is None else None, *a)
            dg = t if dg is None else ops.add(dg, t)
        if dg is None:  # GB alone: the bias gradient's adjoint broadcasts it over grad
            shape = [1] * grad.dim()
            shape[1] = GB.shape[0]
            dg = GB.reshape(shape).expand(grad.shape)
        dg = dg.to(grad.dtype)
    if need[1] and GW is not None:
        dx = ops.convolution_backward(grad, input, GW, False, *a, [True, False, False])[0]
    if need[2] and GI is not None:
        dw = ops.convolution_backward(grad, GI, weight, False, *a, [False, True, False])[1]
    return (dg, dx, dw) + (None,) * 8


_DEFS = (
    O.OpDef("convolution_backward",
            "(Tensor grad, Tensor input, Tensor weight, bool has_bias, int[] stride, "
            "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, "
            "bool[] output_mask) -> (Tensor, Tensor, Tensor)",
            convolution_backward, (0, 1, 2), _fake_conv_bwd, _setup_conv_bwd, _backward_conv_bwd,
            nout=3),
    O.OpDef("convolution",
            "(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
            "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",
            convolution, (0, 1, 2), _fake_conv, _setup_conv, _backward_conv),
)


def _register():
    # the 1.13 formulas call the kernels through _kernels (as _glu.py does)
    K.convolution_backward = convolution_backward
    K.convolution = convolution
    for d in _DEFS:
        d.twice = True  # both formulas run on differentiable operators (second order and on)
    register_ops(_DEFS)


_register()
_CONV = torch.ops.opgrad.convolution
_FUNCTION = _DEFS[1].function  # the torch.autograd.Function over the kernel (both paths)


_PLAIN = (torch.Tensor, torch.nn.Parameter)
_is_compiling = K.use_dispatcher  # torch.jit.trace, torch.compile / export: the dispatcher


def _conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    args = (input, weight, bias, list(stride), list(padding), list(dilation), bool(transposed),
            list(output_padding), int(groups))
    # Plain CPU tensors skip the dispatcher (as opgrad.torch's other functional forms do): the
    # autograd.Function when a gradient is wanted, else the kernel; tensor subclasses and
    # torch.compile tracing go through torch.ops.opgrad.convolution. Same results either way.
    if (type(input) in _PLAIN and type(weight) in _PLAIN
            and (bias is None or type(bias) in _PLAIN)
            and not _is_compiling()):
        if K.forward_ad() or (torch.is_grad_enabled() and (
                input.requires_grad or weight.requires_grad
                or (bias is not None and bias.requires_grad))):
            return _FUNCTION.apply(*args)
        return convolution(*args)
    return _CONV(*args)


# ---- functional forms (torch.nn.functional's arguments) -----------------------------------------
def _tuple(v, n, name, fn):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError("opgrad.torch.%s: %s must be an int or %d ints, got %s"
                         % (fn, name, n, list(v)))
    return v


def _batched(input, n, fn):
    """input with a batch dim (PyTorch also takes unbatched [C, *spatial] inputs) and whether
    one was added."""
    if not isinstance(input, torch.Tensor):
        raise TypeError("opgrad.torch.%s: input must be a torch.Tensor, got %s"
                        % (fn, type(input).__name__))
    if input.dim() == n + 1:
        return input.unsqueeze(0), True
    if input.dim() != n + 2:
        raise ValueError("opgrad.torch.%s: expected a %dD (unbatched) or %dD (batched) input, got"
                         " shape %s" % (fn, n + 1, n + 2, list(input.shape)))
    return input, False


def _same_padding(weight, dilation, stride, n, fn):
    """PyTorch's padding='same': total d*(k-1) per dim, the odd one at the end."""
    if any(s != 1 for s in stride):
        raise ValueError("opgrad.torch.%s: padding='same' is not supported for strided "
                         "convolutions (as in PyTorch)" % fn)
    total = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(n)]
    lo = [t // 2 for t in total]
    hi = [t - l for t, l in zip(total, lo)]
    if lo == hi:
        return tuple(lo)
    if n == 3:
        raise ValueError("opgrad.torch.%s: padding='same' with an even effective kernel %s needs "
                         "asymmetric padding, which aclnnConvolution takes for 1-D and 2-D "
                         "convolutions only" % (fn, [t + 1 for t in total]))
    pairs = []
    for a, b in zip(lo, hi):
        pairs += [a, b]
    return tuple(pairs)


def _conv_nd(n, fn, input, weight, bias, stride, padding, dilation, groups):
    x, added = _batched(input, n, fn)
    stride = _tuple(stride, n, "stride", fn)
    dilation = _tuple(dilation, n, "dilation", fn)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * n
        elif padding == "same":
            padding = _same_padding(weight, dilation, stride, n, fn)
        else:
            raise ValueError("opgrad.torch.%s: padding must be an int, a tuple, 'same' or 'valid',"
                             " got %r" % (fn, padding))
    else:
        padding = _tuple(padding, n, "padding", fn)
    y = _conv(x, weight, bias, stride, padding, dilation, False, (0,) * n, groups)
    return y.squeeze(0) if added else y


def _conv_transpose_nd(n, fn, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    x, added = _batched(input, n, fn)
    if isinstance(padding, str):
        raise ValueError("opgrad.torch.%s: padding must be an int or a tuple, got %r"
                         % (fn, padding))
    y = _conv(x, weight, bias, _tuple(stride, n, "stride", fn), _tuple(padding, n, "padding", fn),
              _tuple(dilation, n, "dilation", fn), True,
              _tuple(output_padding, n, "output_padding", fn), groups)
    return y.squeeze(0) if added else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d on aclnnConvolution (backward: aclnnConvolutionBackward)."""
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d on aclnnConvolution (backward: aclnnConvolutionBackward)."""
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv3d on aclnnConvolution (backward: aclnnConvolutionBackward)."""
    return _conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """torch.nn.functional.conv_transpose1d on aclnnConvolution (transposed = true)."""
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """torch.nn.functional.conv_transpose2d on aclnnConvolution (transposed = true)."""
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """torch.nn.functional.conv_transpose3d on aclnnConvolution (transposed = true)."""
    return _conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


FUNCTIONS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d")
