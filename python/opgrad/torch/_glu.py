"""opgrad.torch: the GLU family (src/ops/glu, docs/ops/glu.md).

    swiglu(x, dim=-1)                      aclnnSwiGlu / aclnnSwiGluGrad: silu(a) * b
    geglu(x, dim=-1, approximate="none")   aclnnGeGlu / aclnnGeGluBackward: a * gelu(b)

x is split into halves a, b along dim (its extent there must be even); the result has half of
x's extent along dim. As torch operators (both PyTorch paths of _ops.py: a custom_op with a fake
and an autograd formula on PyTorch >= 2.4, the module's torch.library.Library with an Autograd
kernel on 1.13):

    torch.ops.opgrad.swi_glu(x, dim) / swi_glu_grad(grad, x, dim)
    torch.ops.opgrad.ge_glu(x, dim, approximate) -> (out, gelu)      approximate 0 erf, 1 tanh
    torch.ops.opgrad.ge_glu_backward(grad, x, gelu, dim, approximate)

These are not same-shape operators, so the list-driven machinery of _ops.py does not make them;
the schemas, kernels and formulas are here and registered the way _ops.register does.
"""
import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops as O
from ._dropout import EXTRA, register_ops

_p1 = L.phase1
_APPROX = {"none": 0, "tanh": 1, 0: 0, 1: 1}


def _dt(op, name, t):
    return K.acl_dtype(t, op, name)


def _half_shape(x, dim):
    if x.dim() == 0:
        raise ValueError("opgrad.torch: a GLU needs a tensor of rank >= 1 (got a 0-d tensor)")
    d = dim + x.dim() if dim < 0 else dim
    if not 0 <= d < x.dim():
        raise IndexError("opgrad.torch: dim %d is out of range for a tensor of rank %d"
                         % (dim, x.dim()))
    shape = list(x.shape)
    shape[d] //= 2
    return shape


def _approx(op, approximate):
    a = _APPROX.get(approximate)
    if a is None:
        raise ValueError("opgrad.torch.%s: approximate must be 'none' or 'tanh' (or 0 / 1), got %r"
                         % (op, approximate))
    return a


# ---- kernels (plans cached by K._run: key = operator, attributes, input layouts) ----------------
def swi_glu(x, dim=-1):
    dt = _dt("swi_glu", "x", x)
    out = torch.empty(_half_shape(x, dim), dtype=x.dtype)
    K._run("SwiGlu", "aclnnSwiGlu", lambda hi, ho, sc, w, e: _p1["SwiGlu"](hi[0], dim, ho[0], w, e),
           (x,), (dt,), (out,), (dt,), attrs=(dim,))
    return out


def swi_glu_grad(grad, x, dim=-1):
    dt = _dt("swi_glu_grad", "x", x)
    gdt = _dt("swi_glu_grad", "grad", grad)
    out = torch.empty(x.shape, dtype=x.dtype)
    K._run("SwiGluGrad", "aclnnSwiGluGrad",
           lambda hi, ho, sc, w, e: _p1["SwiGluGrad"](hi[0], hi[1], dim, ho[0], w, e),
           (grad, x), (gdt, dt), (out,), (dt,), attrs=(dim,))
    return out


def ge_glu(x, dim=-1, approximate=0):
    a = _approx("ge_glu", approximate)
    dt = _dt("ge_glu", "x", x)
    shape = _half_shape(x, dim)
    out, gelu = torch.empty(shape, dtype=x.dtype), torch.empty(shape, dtype=x.dtype)
    K._run("GeGlu", "aclnnGeGlu",
           lambda hi, ho, sc, w, e: _p1["GeGlu"](hi[0], dim, a, ho[0], ho[1], w, e),
           (x,), (dt,), (out, gelu), (dt, dt), attrs=(dim, a))
    return out, gelu


def ge_glu_backward(grad, x, gelu, dim=-1, approximate=0):
    a = _approx("ge_glu_backward", approximate)
    dts = (_dt("ge_glu_backward", "grad", grad), _dt("ge_glu_backward", "x", x),
           _dt("ge_glu_backward", "gelu", gelu))
    out = torch.empty(x.shape, dtype=x.dtype)
    K._run("GeGluBackward", "aclnnGeGluBackward",
           lambda hi, ho, sc, w, e: _p1["GeGluBackward"](hi[0], hi[1], hi[2], dim, a, ho[0], w, e),
           (grad, x, gelu), dts, (out,), (dts[1],), attrs=(dim, a))
    return out


# ---- fakes (shapes and dtypes only) -------------------------------------------------------------
def _fake_swi_glu(x, dim=-1):
    return x.new_empty(_half_shape(x, dim))


def _fake_grad(grad, x, *attrs):
    return x.new_empty(x.shape)


def _fake_ge_glu(x, dim=-1, approximate=0):
    shape = _half_shape(x, dim)
    return x.new_empty(shape), x.new_empty(shape)


# ---- autograd formulas --------------------------------------------------------------------------
def _setup_swi_glu(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.dim = inputs[1] if len(inputs) > 1 else -1
    ctx.nattrs = len(inputs) - 1  # one gradient per argument given (None for the attributes)


def _backward_swi_glu(ops, ctx, grad):
    (x,) = ctx.saved_tensors
    return (ops.swi_glu_grad(grad.contiguous(), x, ctx.dim),) + (None,) * ctx.nattrs


def _setup_ge_glu(ctx, inputs, output):
    ctx.set_materialize_grads(False)  # outGelu's gradient is usually not wanted: None, not zeros
    ctx.save_for_backward(inputs[0], output[1])
    ctx.dim = inputs[1] if len(inputs) > 1 else -1
    ctx.approximate = _approx("ge_glu", inputs[2]) if len(inputs) > 2 else 0
    ctx.nattrs = len(inputs) - 1


def _backward_ge_glu(ops, ctx, grad, grad_gelu):
    x, gelu = ctx.saved_tensors
    if grad is None:
        dx = torch.zeros_like(x)
    else:
        dx = ops.ge_glu_backward(grad.contiguous(), x, gelu, ctx.dim, ctx.approximate)
    if grad_gelu is not None:  # outGelu used too: its gradient reaches b through gelu'
        b = x.narrow(ctx.dim, x.shape[ctx.dim] // 2, x.shape[ctx.dim] // 2)
        gb = ops.gelu_v2_backward(grad_gelu.contiguous(), b, ("none", "tanh")[ctx.approximate])
        dx.narrow(ctx.dim, x.shape[ctx.dim] // 2, x.shape[ctx.dim] // 2).add_(gb)
    return (dx,) + (None,) * ctx.nattrs


# ---- second order: the backward operators' own derivatives (see _ops.py, "second order") --------
# With a, b the halves of x and g the incoming gradient (y's shape), G = [Ga, Gb] the gradient of
# a backward's result (x's shape):
#   SwiGluGrad = [g b silu'(a), g silu(a)]
#     d/dg = silu'(a) b Ga + silu(a) Gb,  d/da = silu''(a) g b Ga + silu'(a) g Gb,  d/db = silu'(a) g Ga
#   GeGluBackward(g, x, gelu) = [g gelu, g a gelu'(b)]   (gelu: the forward's second output, an input)
#     d/dg = gelu Ga + gelu'(b) a Gb,  d/da = gelu'(b) g Gb,  d/db = gelu''(b) g a Gb,  d/dgelu = g Ga
# composed from opgrad operators (differentiable again; the erf gelu'' takes its e^(-x^2/2) from
# torch), in float32 for 16-bit tensors.
def _halves(t, dim):
    n = t.shape[dim] // 2
    return t.narrow(dim, 0, n), t.narrow(dim, n, n)


def _wide(*ts):
    """The tensors in float32 when any is a 16-bit float (the formulas' working precision);
    float32 and float64 ones as they are."""
    if all(t.dtype in (torch.float32, torch.float64) for t in ts):
        return ts
    return tuple(t.float() for t in ts)


def _setup_glu_grad(ctx, inputs, output):
    tensors = tuple(t for t in inputs if isinstance(t, torch.Tensor))
    ctx.save_for_backward(*tensors)
    ctx.attrs = tuple(t for t in inputs if not isinstance(t, torch.Tensor))


def _backward_swi_glu_grad(ops, ctx, G):
    grad, x = ctx.saved_tensors
    dim = ctx.attrs[0]
    need = ctx.needs_input_grad
    g, x32, G32 = _wide(grad, x, G.contiguous())
    a, b = _halves(x32, dim)
    Ga, Gb = _halves(G32, dim)
    dg = dx = None
    if need[0]:
        dg = ops.add(ops.silu_backward(ops.mul(Ga, b), a), ops.mul(Gb, ops.silu(a))).to(grad.dtype)
    if need[1]:
        gGa = ops.mul(g, Ga)
        da = ops.add(O._d2_silu(ops, ops.mul(gGa, b), a, ()), ops.silu_backward(ops.mul(g, Gb), a))
        dx = torch.cat((da, ops.silu_backward(gGa, a)), dim).to(x.dtype)
    return dg, dx, None


def _backward_ge_glu_backward(ops, ctx, G):
    grad, x, gelu = ctx.saved_tensors
    dim, approximate = ctx.attrs
    need = ctx.needs_input_grad
    g, x32, gelu32, G32 = _wide(grad, x, gelu, G.contiguous())
    a, b = _halves(x32, dim)
    Ga, Gb = _halves(G32, dim)
    mode = ("none", "tanh")[approximate]
    dg = dx = dgelu = None
    if need[0]:
        dg = ops.add(ops.mul(gelu32, Ga), ops.gelu_v2_backward(ops.mul(a, Gb), b, mode))
        dg = dg.to(grad.dtype)
    if need[1]:
        gGb = ops.mul(g, Gb)
        d2 = O._d2_gelu_tanh if approximate else O._d2_gelu_erf
        db = d2(ops, ops.mul(gGb, a), b, ())
        dx = torch.cat((ops.gelu_v2_backward(gGb, b, mode), db), dim).to(x.dtype)
    if need[2]:
        dgelu = ops.mul(g, Ga).to(gelu.dtype)
    return dg, dx, dgelu, None, None


_DEFS = (
    O.OpDef("swi_glu_grad", "(Tensor grad, Tensor x, int dim) -> Tensor", swi_glu_grad, (0, 1),
            _fake_grad, _setup_glu_grad, _backward_swi_glu_grad),
    O.OpDef("swi_glu", "(Tensor x, int dim=-1) -> Tensor", swi_glu, (0,), _fake_swi_glu,
            _setup_swi_glu, _backward_swi_glu),
    O.OpDef("ge_glu_backward",
            "(Tensor grad, Tensor x, Tensor gelu, int dim, int approximate) -> Tensor",
            ge_glu_backward, (0, 1, 2), _fake_grad, _setup_glu_grad, _backward_ge_glu_backward),
    O.OpDef("ge_glu", "(Tensor x, int dim=-1, int approximate=0) -> (Tensor, Tensor)", ge_glu,
            (0,), _fake_ge_glu, _setup_ge_glu, _backward_ge_glu, nout=2),
)


def _register():
    for d in _DEFS:
        d.twice = True  # every formula above runs on differentiable operators
        setattr(K, d.name, d.kernel)  # the 1.13 formulas call the kernels from _kernels
    # not added to _ops' table (opgrad.torch.OPS): its generic tests assume same-shape operators
    # with one output; tests/python/test_torch_glu.py covers these four, opcheck included
    register_ops(_DEFS)


_register()
_SWI_GLU = torch.ops.opgrad.swi_glu
_GE_GLU = torch.ops.opgrad.ge_glu


def swiglu(x, dim=-1):
    """silu(a) * b for the halves a, b of x along dim (aclnnSwiGlu; backward aclnnSwiGluGrad)."""
    if K.forward_ad():  # forward AD / torch.func: the Function's jvp and vmap rules
        return EXTRA["swi_glu"].function.apply(x, dim)
    return _SWI_GLU(x, dim)


def geglu(x, dim=-1, approximate="none"):
    """a * gelu(b) for the halves a, b of x along dim (aclnnGeGlu; backward aclnnGeGluBackward).
    approximate: "none" (erf) or "tanh", as torch.nn.functional.gelu."""
    args = (x, dim, _approx("geglu", approximate))
    if K.forward_ad():
        return EXTRA["ge_glu"].function.apply(*args)[0]
    return _GE_GLU(*args)[0]


class SwiGLU(torch.nn.Module):
    """torch.nn.Module form of opgrad.torch.swiglu."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return swiglu(x, self.dim)


class GeGLU(torch.nn.Module):
    """torch.nn.Module form of opgrad.torch.geglu."""

    def __init__(self, dim=-1, approximate="none"):
        super().__init__()
        self.dim, self.approximate = dim, approximate

    def forward(self, x):
        return geglu(x, self.dim, self.approximate)
