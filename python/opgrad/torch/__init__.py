"""opgrad.torch: opgrad's aclnn operators as PyTorch operators with autograd.

    import opgrad.torch as ot
    y = ot.mish(x)                        # functional form
    y = torch.ops.opgrad.mish(x)          # the registered operator (same kernels, same autograd)
    m = ot.nn.Mish()                      # nn.Module

Every operator runs on the CPU through libopgrad (zero-copy: shapes, strides and the storage
offset of the torch tensors are handed to aclCreateTensor), for float32, float16 and bfloat16.
Other dtypes raise TypeError; a non-zero aclnn status raises opgrad.OpgradError (a RuntimeError;
an out-of-range dim is an OpgradIndexError, also an IndexError as in PyTorch)
carrying the status and the library's message. See docs/torch.md.
"""
from typing import Callable, Optional, Sequence

import torch as _torch
from torch import Tensor

from .. import profile  # noqa: F401  (opgrad.profile: the operator profiler)
from .._lib import OpgradError, OpgradIndexError
from . import _kernels  # noqa: F401  (opgrad.torch._kernels: plan cache, clear_plans)
from . import _ops  # noqa: F401  (opgrad.torch._ops.Library: the 1.13 registration)
from ._ops import OPS, USING_CUSTOM_OP

__all__ = [
    "mish", "gelu", "gelu_v2", "silu", "sigmoid", "tanh", "softplus", "relu", "leaky_relu",
    "hardswish", "elu", "add", "mul", "muls", "fused_add_scale", "reduce_sum", "matmul", "mm",
    "bmm", "addmm", "baddbmm", "fused_matmul", "linear", "LINEAR_ACTIVATIONS", "load_custom",
    "OpgradError", "OpgradIndexError", "OPS", "profile", "USING_CUSTOM_OP", "nn",
]

_grad_enabled = _torch.is_grad_enabled
_PLAIN = (_torch.Tensor, _torch.nn.Parameter)
# under torch.jit.trace and torch.compile / export the dispatcher path must be used
_is_compiling = _kernels.use_dispatcher
_fwd_ad = _kernels.forward_ad


def _fast(*ts):
    """True when the call can bypass the dispatcher: plain CPU tensors (data available), not
    being traced by torch.compile. The result is the same either way; only the overhead differs."""
    for t in ts:
        if type(t) not in _PLAIN:
            return False
    return not _is_compiling()


def _unary(name: str, doc: str) -> Callable[[Tensor], Tensor]:
    d = OPS[name]
    fn, kernel, op = d.function, d.kernel, d.op

    def f(x):
        if type(x) in _PLAIN and not _is_compiling():
            if (x.requires_grad and _grad_enabled()) or _fwd_ad():
                return fn.apply(x)
            return kernel(x)
        return op(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


mish = _unary("mish", "mish(x) = x * tanh(softplus(x)) (aclnnMish / aclnnMishBackward).")
gelu = _unary("gelu", "GELU, tanh approximation (aclnnGelu / aclnnGeluBackward), as "
                      "torch.nn.functional.gelu(x, approximate='tanh').")
silu = _unary("silu", "silu(x) = x * sigmoid(x) (aclnnSilu / aclnnSiluBackward).")
sigmoid = _unary("sigmoid", "sigmoid(x) (aclnnSigmoid; backward from the output).")
tanh = _unary("tanh", "tanh(x) (aclnnTanh; backward from the output).")
relu = _unary("relu", "relu(x) (aclnnRelu; backward aclnnThresholdBackward(0) on the output).")
hardswish = _unary("hardswish", "hardswish(x) (aclnnHardswish / aclnnHardswishBackward).")


def _call(d, args, tensors):
    if _fast(*tensors):
        if _fwd_ad():
            return d.function.apply(*args)
        if _grad_enabled():
            for t in tensors:
                if t.requires_grad:
                    return d.function.apply(*args)
        return d.kernel(*args)
    return d.op(*args)


_D = OPS


def _bind(name):
    d = OPS[name]
    return d.function, d.kernel, d.op


_GELU_V2 = _bind("gelu_v2")
_SOFTPLUS = _bind("softplus")
_LEAKY = _bind("leaky_relu")
_ELU = _bind("elu")
_ADD = _bind("add")
_MUL = _bind("mul")
_MULS = _bind("muls")
_RSUM = _bind("reduce_sum")

# The functional forms below are spelled out (no shared helper) because this is the per-call
# overhead of every small tensor: plain CPU tensors go straight to the autograd.Function (when a
# gradient is needed) or to the kernel; anything else (tensor subclasses, torch.compile tracing)
# goes through torch.ops.opgrad.<name>.


def gelu_v2(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU with approximate 'none' (erf form) or 'tanh' (aclnnGeluV2 / aclnnGeluBackwardV2), as
    torch.nn.functional.gelu(x, approximate=...)."""
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _GELU_V2[0].apply(x, approximate)
        return _GELU_V2[1](x, approximate)
    return _GELU_V2[2](x, approximate)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold (aclnnSoftplus)."""
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _SOFTPLUS[0].apply(x, beta, threshold)
        return _SOFTPLUS[1](x, beta, threshold)
    return _SOFTPLUS[2](x, float(beta), float(threshold))


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """x > 0 ? x : negative_slope * x (aclnnLeakyRelu / aclnnLeakyReluBackward)."""
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _LEAKY[0].apply(x, negative_slope)
        return _LEAKY[1](x, negative_slope)
    return _LEAKY[2](x, float(negative_slope))


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """x > 0 ? x : alpha (exp(x) - 1) (aclnnElu / aclnnEluBackward)."""
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _ELU[0].apply(x, alpha)
        return _ELU[1](x, alpha)
    return _ELU[2](x, float(alpha))


def add(x: Tensor, other: Tensor, alpha: float = 1.0) -> Tensor:
    """x + alpha * other with broadcasting and PyTorch dtype promotion (aclnnAdd). The gradients
    are reduced to each input's shape on opgrad's ReduceSum."""
    if type(x) in _PLAIN and type(other) in _PLAIN and not _is_compiling():
        if ((x.requires_grad or other.requires_grad) and _grad_enabled()) or _fwd_ad():
            return _ADD[0].apply(x, other, alpha)
        return _ADD[1](x, other, alpha)
    return _ADD[2](x, other, float(alpha))


def mul(x: Tensor, other: Tensor) -> Tensor:
    """x * other with broadcasting and PyTorch dtype promotion (aclnnMul); gradients g*other and
    g*x reduced to each input's shape on opgrad's ReduceSum."""
    if type(x) in _PLAIN and type(other) in _PLAIN and not _is_compiling():
        if ((x.requires_grad or other.requires_grad) and _grad_enabled()) or _fwd_ad():
            return _MUL[0].apply(x, other)
        return _MUL[1](x, other)
    return _MUL[2](x, other)


def muls(x: Tensor, other: float) -> Tensor:
    """x * other for a Python number (aclnnMuls; other is rounded to x's dtype first)."""
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _MULS[0].apply(x, other)
        return _MULS[1](x, other)
    return _MULS[2](x, float(other))


def fused_add_scale(x: Tensor, bias: Tensor, scale: Tensor) -> Tensor:
    """(x + bias) * scale, bias [C] over rows of x [..., C], scale [1]/0-d or [C]
    (aclnnFusedAddScale / aclnnFusedAddScaleBackward)."""
    return _call(_D["fused_add_scale"], (x, bias, scale), (x, bias, scale))


def reduce_sum(x: Tensor, dims: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    """Sum over dims (all when empty) in x's dtype, fp32 accumulation in a fixed order
    (aclnnReduceSum: deterministic, independent of the thread count)."""
    dims = dims if type(dims) is list else list(dims)
    if type(x) in _PLAIN and not _is_compiling():
        if (x.requires_grad and _grad_enabled()) or _fwd_ad():
            return _RSUM[0].apply(x, dims, bool(keepdim))
        return _RSUM[1](x, dims, bool(keepdim))
    return _RSUM[2](x, dims, bool(keepdim))


# ---- the matmul family ----------------------------------------------------------------------------
_MATMUL = _bind("matmul")
_MM = _bind("mm")
_BMM = _bind("bmm")
_ADDMM = _bind("addmm")
_BADDBMM = _bind("baddbmm")
_FUSED = _bind("fused_matmul")


def _eager(*ts):
    """Plain CPU tensors (None allowed: an optional tensor not given), not under torch.compile."""
    for t in ts:
        if t is not None and type(t) not in _PLAIN:
            return False
    return not _is_compiling()


def _any_grad(*ts):
    """The autograd.Function is needed: a gradient wanted, or forward-mode AD active."""
    if _fwd_ad():
        return True
    if not _grad_enabled():
        return False
    for t in ts:
        if t is not None and t.requires_grad:
            return True
    return False


def _apply(b, args, tensors):
    """b = (autograd.Function, kernel, torch.ops op): the fast path or the dispatcher."""
    if _eager(*tensors):
        return b[0].apply(*args) if _any_grad(*tensors) else b[1](*args)
    return b[2](*args)


def matmul(x: Tensor, other: Tensor, *, out_dtype: Optional[_torch.dtype] = None) -> Tensor:
    """torch.matmul(x, other) (1-D operands, broadcast batch dims; aclnnMatmul). The inputs
    promote (PyTorch rules); out_dtype (default: that promotion) receives the fp32 accumulator
    rounded once. Backward: dA = dC @ B^T and dB = A^T @ dC on transposed views (no copies),
    summed over broadcast batch dims, each in its input's dtype, rounded once."""
    return _apply(_MATMUL, (x, other, out_dtype), (x, other))


def mm(x: Tensor, mat2: Tensor) -> Tensor:
    """x [M, K] @ mat2 [K, N] (aclnnMm), as torch.mm."""
    return _apply(_MM, (x, mat2), (x, mat2))


def bmm(x: Tensor, mat2: Tensor) -> Tensor:
    """x [B, M, K] @ mat2 [B, K, N] (aclnnBatchMatMul), as torch.bmm; a batch of 1 broadcasts
    (an opgrad extension; its gradient is summed over the batch)."""
    return _apply(_BMM, (x, mat2), (x, mat2))


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, beta: float = 1.0,  # noqa: A002
          alpha: float = 1.0) -> Tensor:  # (torch.addmm's names)
    """beta * input + alpha * (mat1 @ mat2), input broadcast to [M, N] (aclnnAddmm), as
    torch.addmm; formed in fp32 and rounded once, beta = 0 does not read input."""
    return _apply(_ADDMM, (input, mat1, mat2, float(beta), float(alpha)), (input, mat1, mat2))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: float = 1.0,  # noqa: A002
            alpha: float = 1.0) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), [B, M, N] (aclnnBaddbmm), as torch.baddbmm."""
    return _apply(_BADDBMM, (input, batch1, batch2, float(beta), float(alpha)),
                  (input, batch1, batch2))


def fused_matmul(x1: Tensor, x2: Tensor, bias: Optional[Tensor] = None,
                 x3: Optional[Tensor] = None, fused_op_type: str = "",
                 cube_math_type: int = 0) -> Tensor:
    """aclnnFusedMatmul: OP(x1 @ x2 + bias, x3) for fused_op_type "", "relu", "gelu_erf",
    "gelu_tanh", "add", "mul", "16cast32", with ops-nn's dtype rules (docs/ops/matmul.md);
    backward aclnnFusedMatmulBackward (one call, every gradient). linear() picks the type and
    cubeMathType for you."""
    return _apply(_FUSED, (x1, x2, bias, x3, fused_op_type, int(cube_math_type)),
                  (x1, x2, bias, x3))


#: activation of linear() -> FusedMatmul's fusedOpType
LINEAR_ACTIVATIONS = {None: "", "relu": "relu", "gelu": "gelu_erf", "gelu_tanh": "gelu_tanh"}
_GELU_APPROX = {"gelu_erf": "none", "gelu_tanh": "tanh"}


def linear_type(activation: Optional[str]) -> str:
    """FusedMatmul's fusedOpType for an activation of linear(), or ValueError."""
    t = LINEAR_ACTIVATIONS.get(activation) if isinstance(activation, (str, type(None))) else None
    if t is None:
        raise ValueError("opgrad.torch.linear: activation must be one of None, 'relu', 'gelu', "
                         "'gelu_tanh', got %r" % (activation,))
    return t


def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
           activation: Optional[str] = None) -> Tensor:
    """activation(x @ weight^T + bias), as torch.nn.functional.linear followed by relu / gelu
    (erf) / gelu(approximate='tanh'); x [..., in], weight [out, in], bias [out] or None.

    One aclnnFusedMatmul: weight goes in as its transposed view [in, out] (no copy), x as the
    [rows, in] view of its leading dims when its strides allow (else as it is: FusedMatmul
    broadcasts the batch). fp16 / bf16 inputs use cubeMathType 0; float32 ones cubeMathType 3
    (ops-nn allows float32 only there; on the CPU it is exact fp32). The backward is one
    aclnnFusedMatmulBackward (gradX, gradW written as the transposed view of a contiguous
    [out, in] tensor, gradBias; only those required). Where ops-nn's rules refuse the fused gelus
    (a bias, or float32 inputs), the gelu runs after the product on the float32 z (fused type
    '16cast32' for 16-bit inputs, '' for float32), then the result is rounded once to the
    output dtype: the same value as a fused epilogue."""
    t = linear_type(activation)
    if not isinstance(x, _torch.Tensor) or not isinstance(weight, _torch.Tensor):
        raise TypeError("opgrad.torch.linear: x and weight must be torch.Tensors")
    if weight.dim() != 2:
        raise ValueError("opgrad.torch.linear: weight must be [out_features, in_features], got "
                         "shape %s" % (list(weight.shape),))
    nd = x.dim()
    x2 = x
    if nd == 1:
        x2 = x.unsqueeze(0)
    elif nd > 2:
        try:
            x2 = x.view(_kernels._numel(x.shape[:-1]), x.shape[-1])
        except RuntimeError:  # strides that do not fold: FusedMatmul takes the batch as it is
            pass
    wt = weight.t()
    dt = _kernels.promote(x, weight)
    fp32 = dt is _torch.float32
    cube = 3 if fp32 else 0
    if dt is _torch.float64:  # FusedMatmul's float64 (opgrad's extension); gelu with a bias after
        if t in _GELU_APPROX and bias is not None:
            y = gelu_v2(fused_matmul(x2, wt, bias, None, "", 0), _GELU_APPROX[t])
        else:
            y = fused_matmul(x2, wt, bias, None, t, 0)
    elif bias is not None and bias.dtype is _torch.float64:
        # float32 / 16-bit x and w with a float64 bias: a float64 result from float64 operators
        y = matmul(x2, wt)
        if bias is not None:
            y = add(y, bias)
        if t == "relu":
            y = relu(y)
        elif t in _GELU_APPROX:
            y = gelu_v2(y, _GELU_APPROX[t])
    elif t in _GELU_APPROX and (bias is not None or fp32):
        z = fused_matmul(x2, wt, bias, None, "" if fp32 else "16cast32", cube)
        y = gelu_v2(z, _GELU_APPROX[t])
        out_dt = _kernels.promote(x, weight, bias)
        if y.dtype is not out_dt:
            y = y.to(out_dt)
    else:
        y = fused_matmul(x2, wt, bias, None, t, cube)
    if nd == 1:
        return y.squeeze(0)
    if x2 is not x:
        return y.view(tuple(x.shape[:-1]) + (weight.shape[0],))
    return y


def _list_function(name: str) -> Callable[..., Tensor]:
    """The functional form of an operator made from the library's list (_kernels.LIST_PAIRS):
    f(x, *attrs, **attrs) with the list's attribute names (snake_case) and defaults."""
    d, pair = OPS[name], _kernels.LIST_PAIRS[name]
    fn, kernel, op = d.function, d.kernel, d.op
    names = [n for _, n, _ in pair.attrs]
    defaults = [v for _, _, v in pair.attrs]

    def f(x, *args, **kw):
        vals = list(args) + defaults[len(args):]
        for k, v in kw.items():
            if k not in names:
                raise TypeError("opgrad.torch.%s() got an unexpected keyword argument '%s' "
                                "(it takes %s)" % (name, k, ", ".join(names) or "none"))
            vals[names.index(k)] = v
        if type(x) in _PLAIN and not _is_compiling():
            if (x.requires_grad and _grad_enabled()) or _fwd_ad():
                return fn.apply(x, *vals)
            return kernel(x, *vals)
        return op(x, *vals)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = "%s(x%s) (aclnn%s / aclnn%s, from the operator list)." % (
        name, "".join(", %s=%r" % (n, v) for n, v in zip(names, defaults)), pair.fwd.name,
        pair.bwd.name)
    return f


# every other operator of the list in the standard shape (e.g. softmax, log_softmax)
for _name in _kernels.LIST_PAIRS:
    if _name not in globals():
        globals()[_name] = _list_function(_name)
        __all__.append(_name)


def load_custom(spec_path: str, library: Optional[str] = None):
    """A custom operator described by a JSON spec (docs/custom-ops.md) as a torch operator with
    autograd; see opgrad.torch.custom.load_custom."""
    from .custom import load_custom as _load
    return _load(spec_path, library=library)


from . import nn  # noqa: E402  (needs the functions above)


# ---- glu (issue 14)
from ._glu import geglu, swiglu  # noqa: E402,F401

__all__ += ["swiglu", "geglu"]

# ---- norm (issue 14)
from ._norm import layer_norm, rms_norm  # noqa: E402

__all__ += ["layer_norm", "rms_norm"]

# ---- batch_norm (issue 14)
from ._batch_norm import batch_norm, group_norm  # noqa: E402

__all__ += ["batch_norm", "group_norm"]

# ---- loss (issue 14)
from . import _loss  # noqa: E402
for _n in _loss.FUNCTIONS:
    globals()[_n] = getattr(_loss, _n)
    __all__.append(_n)

# ---- cross_entropy (issue 14)
from ._cross_entropy import cross_entropy, nll_loss  # noqa: E402

__all__ += ["cross_entropy", "nll_loss"]

# ---- dropout (issue 14)
from ._dropout import dropout, dropout_with_mask  # noqa: E402
__all__ += ["dropout", "dropout_with_mask"]

# ---- embedding (issue 14)
from ._embedding import embedding  # noqa: E402
__all__ += ["embedding"]

# ---- pool (issue 13)
from ._pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: E402
__all__ += ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]

# ---- conv (issue 13)
from ._conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: E402
                    conv_transpose3d)

__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d"]

# ---- amp (issue 15)
from . import amp  # noqa: E402,F401  (opgrad.torch.amp: GradScaler, clip_grad_norm_)
from . import optim  # noqa: E402,F401  (opgrad.torch.optim: AdamW, SGD on the fused operators)

# ---- compress (issue 15): gradient compressors (plain functions, no autograd); the DDP
# communication hooks are in opgrad.torch.ddp
from ._compress import (compress_cast, compress_sign, compress_topk, decompress_sign,  # noqa: E402
                        decompress_topk, orthonormalize)

__all__ += ["compress_cast", "compress_topk", "decompress_topk", "compress_sign",
            "decompress_sign", "orthonormalize"]
