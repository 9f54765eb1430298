"""Operator table of opgrad.torch: schemas, autograd formulas, and their registration as
torch.ops.opgrad.<name>.

Two registration paths, chosen by what the installed PyTorch offers:

* PyTorch >= 2.4 (torch.library.custom_op and register_autograd exist): every operator is a
  custom_op ("opgrad::<name>", device_types "cpu", explicit schema) with a register_fake
  (shape / dtype only) and, for differentiable ones, register_autograd(backward,
  setup_context). The backward formulas then call torch.ops.opgrad.* (the backward operators
  are custom ops too), as register_autograd requires: no data_ptr outside an operator body.
* PyTorch 1.13 (Debian's python3-torch): one torch.library.Library("opgrad", "DEF") kept in a
  module global (1.13 removes a Library's registrations when the object is collected),
  define(schema), impl(kernel, "CPU"), and for differentiable operators an "Autograd" impl that
  calls a torch.autograd.Function. That Function's backward calls the kernels directly.

Both paths share the same formula code: `setup(ctx, inputs, output)` saves what the backward
needs, `backward(K, ctx, grad)` returns one gradient per schema argument (None for non-tensor
arguments), with K the namespace the backward's operators come from.
"""
import torch
import torch.autograd.forward_ad as _fwad

from . import _kernels as K

_ALL = {}          # name -> OpDef, in definition order
Library = None     # the 1.13 torch.library.Library object (kept alive for the process)
USING_CUSTOM_OP = False


class OpDef:
    """One operator: its schema (without the name), CPU kernel, and, if differentiable, the
    autograd formula (setup + backward) and the indices of its tensor arguments."""

    def __init__(self, name, schema, kernel, tensor_args, fake, setup=None, backward=None,
                 nout=1):
        self.name, self.schema, self.kernel = name, schema, kernel
        self.tensor_args = tensor_args     # positions of Tensor arguments
        self.fake = fake                   # fake(*args) -> output(s) without data (2.x)
        self.setup, self.backward = setup, backward
        self.nout = nout
        self.jvp = None                    # forward-mode rule jvp(ops, args, out, tangents)
        self.batching = None               # vmap rule: "ew", ("dim", i) or "reduce" (below)
        self.nondiff_outputs = ()          # float outputs marked non-differentiable (no tangent)
        self.vmap_args = None              # generic vmap: (info, b, args) -> sample b's args
        self.function = None               # torch.autograd.Function (both paths: fast path)
        self.op = None                     # torch.ops.opgrad.<name>

    @property
    def differentiable(self):
        return self.backward is not None


def _like(x, *attrs):
    """Fake (meta) output of an operator whose output is like its first input."""
    return x.new_empty(x.shape)


def _define(name, schema, kernel, tensor_args=(0,), fake=_like, setup=None, backward=None, nout=1):
    _ALL[name] = OpDef(name, schema, kernel, tuple(tensor_args), fake, setup, backward, nout)


# ---- autograd formulas ------------------------------------------------------------------------
def _save_input(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.attrs = inputs[1:]


def _save_output(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.attrs = inputs[1:]


def _save_output_fp32(ctx, inputs, output):
    """sigmoid / tanh / softmax / log_softmax: the backward is a function of the output (as in
    PyTorch). For a 16-bit output, saving it would make 1 - y^2 (y near +-1), or the sums of a
    softmax backward, lose most of their digits; PyTorch 1.13 has no float16 kernel, and the way
    users run it, f(x.float()).to(half), differentiates the fp32 output. So for 16-bit inputs the
    input is saved and the backward recomputes the output in float32 (one extra forward call), and
    gets PyTorch's upcast accuracy (tests/python/consistency.py)."""
    x = inputs[0]
    ctx.attrs = inputs[1:]
    ctx.recompute = x.dtype in (torch.float16, torch.bfloat16)  # (float32 / float64: the output)
    ctx.save_for_backward(x if ctx.recompute else output)


def _grad_from_output(forward_name, backward_name):
    def backward(ops, ctx, grad):
        (saved,) = ctx.saved_tensors
        nones = (None,) * len(ctx.attrs)
        if ctx.recompute:
            y32 = getattr(ops, forward_name)(saved.float(), *ctx.attrs)
            return (getattr(ops, backward_name)(grad, y32, *ctx.attrs).to(saved.dtype),) + nones
        return (getattr(ops, backward_name)(grad, saved, *ctx.attrs),) + nones

    return backward


def _grad_of(backward_name, nattrs):
    """backward(K, ctx, g) = (K.<backward_name>(g, saved, *attrs), None per attribute given)."""
    del nattrs  # the attributes the call passed (defaults may be left out on the fast path)

    def backward(ops, ctx, grad):
        (saved,) = ctx.saved_tensors
        return (getattr(ops, backward_name)(grad, saved, *ctx.attrs),) + (None,) * len(ctx.attrs)

    return backward


def _sum_to(ops, t, shape, dtype):
    """Autograd's sum_to_size on opgrad's reduction engine, then the input's dtype."""
    if t.shape != shape:
        lead = t.dim() - len(shape)
        dims = list(range(lead)) + [lead + i for i, n in enumerate(shape)
                                    if n == 1 and t.shape[lead + i] != 1]
        t = ops.reduce_sum(t, dims, True).reshape(shape) if dims else t.reshape(shape)
    return t if t.dtype == dtype else t.to(dtype)


def _setup_binary(ctx, inputs, output):
    x, other = inputs[0], inputs[1]
    ctx.shapes = (x.shape, other.shape)
    ctx.dtypes = (x.dtype, other.dtype)
    ctx.attrs = inputs[2:]
    ctx.save_for_backward(x, other)


def _setup_add(ctx, inputs, output):
    x, other = inputs[0], inputs[1]
    ctx.shapes = (x.shape, other.shape)
    ctx.dtypes = (x.dtype, other.dtype)
    ctx.alpha = inputs[2] if len(inputs) > 2 else 1.0


def _backward_add(ops, ctx, grad):
    (xs, os_), (xd, od) = ctx.shapes, ctx.dtypes
    need = ctx.needs_input_grad
    gx = _sum_to(ops, grad, xs, xd) if need[0] else None
    go = None
    if need[1]:
        g = grad if ctx.alpha == 1 else ops.muls(grad, ctx.alpha)
        go = _sum_to(ops, g, os_, od)
    return gx, go, None


def _backward_mul(ops, ctx, grad):
    x, other = ctx.saved_tensors
    need = ctx.needs_input_grad
    gx = _sum_to(ops, ops.mul(grad, other), x.shape, x.dtype) if need[0] else None
    go = _sum_to(ops, ops.mul(grad, x), other.shape, other.dtype) if need[1] else None
    return (gx, go) + (None,) * (len(need) - 2)  # (functorch's wrapper may count more inputs)


def _setup_muls(ctx, inputs, output):
    ctx.other = inputs[1]


def _backward_muls(ops, ctx, grad):
    return ops.muls(grad, ctx.other), None


def _setup_fas(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:3])


def _backward_fas(ops, ctx, grad):
    x, bias, scale = ctx.saved_tensors
    return tuple(ops.fused_add_scale_backward(grad, x, bias, scale))


# FusedAddScaleBackward(g, x, bias, scale) = (g s, sum g s, sum (x + bias) g) (sums over the rows,
# to bias's and scale's shapes) is bilinear; with GX, GB, GS the gradients of its results:
#   d/dg = (GX + GB) s + GS (x + bias),  d/dx = g GS,  d/dbias = sum g GS,  d/ds = sum g (GX + GB)
def _setup_fas_bwd(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:4])
    ctx.set_materialize_grads(False)


def _backward_fas_bwd(ops, ctx, gx, gb, gs):
    g, x, bias, scale = ctx.saved_tensors
    need = ctx.needs_input_grad
    keep = (torch.float32, torch.float64)  # (16-bit: in float32)
    f32 = (lambda t: t if t is None or t.dtype in keep else t.float())
    g32, x32, b32, s32 = f32(g), f32(x), f32(bias), f32(scale)
    gx, gb, gs = f32(gx), f32(gb), f32(gs)
    gxb = gx if gb is None else gb if gx is None else ops.add(gx, gb)  # both scaled by s
    dg = dx = db = ds = None
    if need[0] and (gxb is not None or gs is not None):
        terms = [] if gxb is None else [ops.mul(gxb, s32)]
        if gs is not None:
            terms.append(ops.mul(ops.add(x32, b32), gs))
        dg = terms[0] if len(terms) == 1 else ops.add(terms[0], terms[1])
        if dg.shape != g.shape and dg.dim() <= g.dim():  # GB s alone: a row, broadcast over g
            dg = dg.expand(g.shape)
        dg = _sum_to(ops, dg, g.shape, g.dtype)
    if gs is not None and (need[1] or need[2]):
        t = ops.mul(g32, gs)
        dx = _sum_to(ops, t, x.shape, x.dtype) if need[1] else None
        db = _sum_to(ops, t, bias.shape, bias.dtype) if need[2] else None
    if need[3] and gxb is not None:
        ds = _sum_to(ops, ops.mul(g32, gxb), scale.shape, scale.dtype)
    return dg, dx, db, ds


def _setup_reduce_sum(ctx, inputs, output):
    x = inputs[0]
    ctx.shape = x.shape
    dims = inputs[1] if len(inputs) > 1 else ()
    ctx.keepdim = inputs[2] if len(inputs) > 2 else False
    nd = x.dim()
    ctx.dims = sorted(set(d + max(nd, 1) if d < 0 else d for d in dims)) if dims else list(range(nd))


def _backward_reduce_sum(ops, ctx, grad):
    g = grad
    if not ctx.keepdim and len(ctx.shape) > 0:
        for d in ctx.dims:
            g = g.unsqueeze(d)
    return g.expand(ctx.shape), None, None


# ---- fake (meta) implementations for the 2.x path ----------------------------------------------
def _fake_binary(x, other, *attrs):
    shape = K.broadcast_shape(x.shape, other.shape)
    if shape is None:
        raise RuntimeError("opgrad: shapes %s and %s do not broadcast"
                           % (list(x.shape), list(other.shape)))
    return x.new_empty(shape, dtype=torch.result_type(x, other))


def _fake_reduce_sum(x, dims=(), keepdim=False):
    nd = x.dim()
    red = set(d + max(nd, 1) if d < 0 else d for d in dims) if dims else set(range(nd))
    shape = [1 if i in red else n for i, n in enumerate(x.shape) if keepdim or i not in red]
    return x.new_empty(shape)


def _fake_fas(x, bias, scale):
    dtype = torch.promote_types(torch.promote_types(x.dtype, bias.dtype), scale.dtype)
    return x.new_empty(x.shape, dtype=dtype)


def _fake_fas_backward(grad, x, bias, scale):
    return _like(x), _like(bias), _like(scale)


def _fake_grad(grad, x, *attrs):
    return _like(x)


# ---- the matmul family ---------------------------------------------------------------------------
# Forward: one aclnn call each. Backward of matmul / mm / bmm / addmm / baddbmm, composed from
# opgrad operators: dA = dC @ B^T and dB = A^T @ dC through Matmul on transposed views (strides,
# no copies; Addmm / Baddbmm with beta = 0 when alpha != 1, so alpha is applied before the one
# rounding), each gradient written in its input's dtype from the fp32 accumulator. Where a batch
# dim broadcast an operand, its gradient is summed over it: when B has no batch of its own and A
# and dC fold their batch into their rows as views (x @ W), one product over the folded rows;
# otherwise the per-batch products in float32 (Matmul's out_dtype), summed by ReduceSum in
# float32, then the input's dtype (rounded once). FusedMatmul's backward is FusedMatmulBackward,
# one call for every gradient.
def _product(ops, x, y, dtype, alpha):
    """alpha * (x @ y) in dtype, rounded once."""
    if alpha == 1:
        return ops.matmul(x, y, dtype)
    if x.dim() == y.dim() and x.dim() in (2, 3):  # beta = 0: the [1] zero is not read
        zero = x.new_zeros((1,), dtype=dtype)
        p = (ops.addmm if x.dim() == 2 else ops.baddbmm)(zero, x, y, 0.0, alpha)
        return p if p.dtype == dtype else p.to(dtype)
    return ops.muls(ops.matmul(x, y, _wide(x, y)), alpha).to(dtype)


def _wide(*ts):
    """The dtype intermediate results are kept in: float32, float64 when an operand is."""
    return torch.float64 if any(t.dtype is torch.float64 for t in ts) else torch.float32


def _grad_operand(ops, x, y, shape, dtype, alpha):
    """alpha * (x @ y) summed over the batch dims that broadcast an operand of `shape`."""
    full = K.broadcast_shape(x.shape[:-2], y.shape[:-2])
    if tuple(full) == tuple(shape[:-2]):
        return _product(ops, x, y, dtype, alpha)
    return _sum_to(ops, _product(ops, x, y, _wide(x, y), alpha), shape, dtype)


_numel = K._numel


def _matmul_grads(ops, grad, a, b, need_a, need_b, alpha=1.0):
    """Gradients of alpha * (a @ b) under torch.matmul's rules (1-D a is a row, 1-D b a column,
    batch dims broadcast), each of its input's shape and dtype."""
    a1 = a.unsqueeze(0) if a.dim() == 1 else a
    b1 = b.unsqueeze(-1) if b.dim() == 1 else b
    g1 = grad.unsqueeze(-1) if b.dim() == 1 else grad
    g1 = g1.unsqueeze(-2) if a.dim() == 1 else g1
    ga = gb = None
    if need_a:
        ga = _grad_operand(ops, g1, b1.transpose(-1, -2), a1.shape, a.dtype, alpha)
        if a.dim() == 1:
            ga = ga.squeeze(0)
    if need_b:
        if a1.dim() > 2 and _numel(b1.shape[:-2]) == 1 and a1.shape[:-2] == g1.shape[:-2]:
            rows = _numel(a1.shape[:-1])
            try:  # views only: the batch joins the reduction dim of one product
                af = a1.view(rows, a1.shape[-1])
                gf = g1.view(rows, g1.shape[-1])
            except RuntimeError:
                af = gf = None
            if af is not None:
                gb = _product(ops, af.t(), gf, b.dtype, alpha).view(b1.shape)
        if gb is None:
            gb = _grad_operand(ops, a1.transpose(-1, -2), g1, b1.shape, b.dtype, alpha)
        if b.dim() == 1:
            gb = gb.squeeze(-1)
    return ga, gb


def _setup_matmul(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])


def _backward_matmul(ops, ctx, grad):
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    ga, gb = _matmul_grads(ops, grad, a, b, need[0], need[1])
    return (ga, gb) + (None,) * (len(need) - 2)


def _setup_addmm(ctx, inputs, output):
    ctx.input_meta = (inputs[0].shape, inputs[0].dtype)
    ctx.beta = inputs[3] if len(inputs) > 3 else 1.0
    ctx.alpha = inputs[4] if len(inputs) > 4 else 1.0
    ctx.save_for_backward(inputs[1], inputs[2])


def _backward_addmm(ops, ctx, grad):
    m1, m2 = ctx.saved_tensors
    need = ctx.needs_input_grad
    gi = None
    if need[0]:  # beta * grad summed to input's shape; beta != 1 in float32, then rounded once
        g = grad
        if ctx.beta != 1:
            g = ops.muls(g if g.dtype in (torch.float32, torch.float64) else g.float(), ctx.beta)
        gi = _sum_to(ops, g, ctx.input_meta[0], ctx.input_meta[1])
    g1, g2 = _matmul_grads(ops, grad, m1, m2, need[1], need[2], ctx.alpha)
    return (gi, g1, g2) + (None,) * (len(need) - 3)


def _setup_fused_matmul(ctx, inputs, output):
    ctx.fused = (inputs[4] if len(inputs) > 4 else "", inputs[5] if len(inputs) > 5 else 0)
    ctx.save_for_backward(*(tuple(inputs[:4]) + (None,) * (4 - len(inputs[:4]))))


def _fused_matmul_composed(ops, grad, x1, x2, bias, x3, t, mask):
    """FusedMatmulBackward's gradients composed from operators that have batching rules (the
    functorch transforms) and derivatives of their own (create_graph): z = x1 @ x2 + bias
    recomputed where the epilogue needs it, the epilogue's derivative by its activation's
    backward operator, then the products."""
    def z():
        p = ops.matmul(x1, x2)
        return p if bias is None else ops.add(p, bias)

    gz, g3 = grad, None
    if t == "relu":
        gz = ops.relu_backward(grad, ops.relu(z()))
    elif t in ("gelu_erf", "gelu_tanh"):
        gz = ops.gelu_v2_backward(grad, z(), "none" if t == "gelu_erf" else "tanh")
    elif t == "add":
        g3 = grad
    elif t == "mul":
        gz, g3 = ops.mul(grad, x3), ops.mul(grad, z()) if mask[3] else None
    ga, gb = _matmul_grads(ops, gz, x1, x2, mask[0], mask[1])
    gbias = _sum_to(ops, gz, bias.shape, bias.dtype) if mask[2] else None
    if mask[3] and g3 is not None:
        g3 = _sum_to(ops, g3, x3.shape, x3.dtype)
    return (ga, gb, gbias, g3 if mask[3] else None)


def _backward_fused_matmul(ops, ctx, grad):
    x1, x2, bias, x3 = ctx.saved_tensors
    need = ctx.needs_input_grad
    t, cube = ctx.fused
    mask = K.fused_grad_mask(t, bias, x3, need[:4])
    if not any(mask):
        return (None,) * len(need)
    if ops is _TRANSFORMS or torch.is_grad_enabled():  # transforms, or create_graph: from
        # operators that have batching rules and derivatives of their own
        outs = _fused_matmul_composed(ops, grad, x1, x2, bias, x3, t, mask)
        return outs + (None,) * (len(need) - 4)
    outs = ops.fused_matmul_backward(grad, x1, x2, bias, x3, t, cube, mask)
    return tuple(o if m else None for o, m in zip(outs, mask)) + (None,) * (len(need) - 4)


def _fake_matmul(x, other, out_dtype=None):
    shape = K.matmul_shape(x.shape, other.shape)
    if shape is None:
        raise RuntimeError("opgrad.matmul: shapes %s and %s do not multiply"
                           % (list(x.shape), list(other.shape)))
    return x.new_empty(shape, dtype=out_dtype if out_dtype is not None else K.promote(x, other))


def _fake_mm(x, mat2):
    if x.dim() != 2 or mat2.dim() != 2 or x.shape[1] != mat2.shape[0]:
        raise RuntimeError("opgrad.mm: shapes %s and %s do not multiply"
                           % (list(x.shape), list(mat2.shape)))
    return x.new_empty((x.shape[0], mat2.shape[1]), dtype=K.promote(x, mat2))


def _fake_bmm(x, mat2):
    shape = K._bmm_shape(x.shape, mat2.shape)
    if shape is None or x.shape[2] != mat2.shape[1]:
        raise RuntimeError("opgrad.bmm: shapes %s and %s do not multiply"
                           % (list(x.shape), list(mat2.shape)))
    return x.new_empty(shape, dtype=K.promote(x, mat2))


def _fake_addmm(input, mat1, mat2, beta=1.0, alpha=1.0):  # noqa: A002
    out = _fake_mm(mat1, mat2)
    return out.new_empty(out.shape, dtype=K.promote(input, mat1, mat2))


def _fake_baddbmm(input, batch1, batch2, beta=1.0, alpha=1.0):  # noqa: A002
    out = _fake_bmm(batch1, batch2)
    return out.new_empty(out.shape, dtype=K.promote(input, batch1, batch2))


def _fake_fused_matmul(x1, x2, bias=None, x3=None, fused_op_type="", cube_math_type=0):
    shape = K.fused_matmul_shape(x1.shape, x2.shape)
    if shape is None:
        raise RuntimeError("opgrad.fused_matmul: shapes %s and %s do not multiply"
                           % (list(x1.shape), list(x2.shape)))
    return x1.new_empty(shape, dtype=K.fused_matmul_dtype(x1, x2, bias, x3, fused_op_type))


def _fake_fused_matmul_backward(grad, x1, x2, bias, x3, fused_op_type, cube_math_type,
                                output_mask):
    return K.fused_matmul_grads_like(x1, x2, bias, x3,
                                     K.fused_grad_mask(fused_op_type, bias, x3, output_mask))


# ---- second order: the backward operators' own derivatives ---------------------------------------
# A backward operator B(grad, x, *attrs) = grad * f'(x) (x the forward's input, or its output y
# for sigmoid / tanh / relu / softmax / log_softmax) is linear in grad, so
#     dB/dgrad . gg = B(gg, x)            dB/dx . gg = gg * grad * f''(x)
# Both are composed from opgrad operators (through `ops`, so they are differentiable again), in
# float32 for 16-bit tensors, and summed to each input's shape where B broadcast them. A backward
# operator without a formula here is refused at the second backward (_refuse), never answered with
# zeros. f'' per operator, as d2(ops, h, x, attrs) -> h * f''(x) for h = gg * grad (None: zero):


def _c(t, v):
    """A 0-d constant like t (broadcasts in opgrad's Add / Mul)."""
    return t.new_full((), v)


def _lin(ops, t, a, b):
    """a * t + b."""
    return ops.add(ops.muls(t, a), _c(t, b))


def _d2_sigmoid(ops, h, y, attrs):  # B = g y (1 - y): d/dy = g (1 - 2y)
    return ops.mul(h, _lin(ops, y, -2.0, 1.0))


def _d2_tanh(ops, h, y, attrs):  # B = g (1 - y^2): d/dy = -2 g y
    return ops.mul(ops.muls(h, -2.0), y)


def _d2_silu(ops, h, x, attrs):  # f'' = s (1 - s) (2 + x (1 - 2s)), s = sigmoid(x)
    s = ops.sigmoid(x)
    return ops.sigmoid_backward(ops.mul(h, ops.add(ops.mul(x, _lin(ops, s, -2.0, 1.0)),
                                                   _c(x, 2.0))), s)


def _d2_softplus(ops, h, x, attrs):
    # f' = sigmoid(beta x) below the threshold, 1 above: s = B(1, x) is both, and
    # f'' = beta s (1 - s), which is 0 where s = 1
    beta = attrs[0] if attrs else 1.0
    s = ops.softplus_backward(torch.ones_like(x), x, *attrs)
    return ops.sigmoid_backward(ops.muls(h, beta), s)


def _d2_mish(ops, h, x, attrs):
    # f' = t + x s (1 - t^2), t = tanh(softplus(x)), s = sigmoid(x);
    # f'' = s (1 - t^2) (2 + x (1 - s) - 2 x s t)
    t = ops.tanh(ops.softplus(x))
    s = ops.sigmoid(x)
    inner = ops.add(ops.mul(x, ops.add(_lin(ops, s, -1.0, 1.0), ops.muls(ops.mul(s, t), -2.0))),
                    _c(x, 2.0))
    return ops.tanh_backward(ops.mul(ops.mul(h, s), inner), t)


_K_GELU = 1.5957691216057308  # 2 sqrt(2 / pi): gelu_tanh(x) = x sigmoid(z), z = K (x + C x^3)
_C_GELU = 0.044715


def _d2_gelu_tanh(ops, h, x, attrs):
    # f' = s + x z' s (1 - s); f'' = s (1 - s) (2 z' + x z'' + x z'^2 (1 - 2s)),
    # z' = K (1 + 3 C x^2), z'' = 6 K C x
    x2 = ops.mul(x, x)
    z = ops.muls(ops.mul(x, _lin(ops, x2, _C_GELU, 1.0)), _K_GELU)
    s = ops.sigmoid(z)
    zp = _lin(ops, x2, 3.0 * _C_GELU * _K_GELU, _K_GELU)
    xzp2 = ops.mul(x, ops.mul(zp, zp))
    inner = ops.add(ops.add(ops.muls(zp, 2.0), ops.muls(x2, 6.0 * _K_GELU * _C_GELU)),
                    ops.mul(xzp2, _lin(ops, s, -2.0, 1.0)))
    return ops.sigmoid_backward(ops.mul(h, inner), s)


_INV_SQRT_2PI = 0.3989422804014327


def _d2_gelu_erf(ops, h, x, attrs):
    # f' = Phi(x) + x phi(x); f'' = phi(x) (2 - x^2), phi the standard normal density. opgrad has
    # no exp operator: torch's (differentiable too) gives e^(-x^2 / 2)
    x2 = ops.mul(x, x)
    e = torch.exp(ops.muls(x2, -0.5))
    return ops.mul(ops.mul(h, e), _lin(ops, x2, -_INV_SQRT_2PI, 2.0 * _INV_SQRT_2PI))


def _d2_gelu_v2(ops, h, x, attrs):
    if (attrs[0] if attrs else "none") == "tanh":
        return _d2_gelu_tanh(ops, h, x, attrs)
    return _d2_gelu_erf(ops, h, x, attrs)


def _d2_hardswish(ops, h, x, attrs):  # f'' = 1/3 on (-3, 3) = 2 hardsigmoid'(x)
    return ops.hardsigmoid_backward(ops.muls(h, 2.0), x)


def _d2_elu_of(bname):
    def d2(ops, h, x, attrs):
        # x <= 0: f' = scale alpha is e^(is x), so f'' = is f'; x > 0: f' = scale, f'' = 0.
        # h f'(x) minus its x > 0 part (h scale there), times is
        scale, input_scale = (tuple(attrs) + (1.0, 1.0, 1.0)[len(attrs):])[1:3]
        full = getattr(ops, bname)(h, x, *attrs)
        return ops.muls(ops.add(full, ops.relu_backward(h, x), -scale), input_scale)
    return d2


def _d2_zero(ops, h, x, attrs):  # piecewise linear: f'' = 0 (almost everywhere)
    return None


def _softmax_d2(ops, gg, grad, y, attrs):
    # B = y (g - S), S = sum(g y), linear in g with a symmetric matrix (diag(y) - y y^T), so
    # d/dg = B(gg, y); d/dy = gg g - gg S - g T, T = sum(gg y)
    dim = attrs[0] if attrs else -1
    S = ops.reduce_sum(ops.mul(grad, y), [dim], True)
    T = ops.reduce_sum(ops.mul(gg, y), [dim], True)
    dy = ops.add(ops.add(ops.mul(gg, grad), ops.mul(gg, S), -1.0), ops.mul(grad, T), -1.0)
    return ops.softmax_backward(gg, y, *attrs), dy


def _log_softmax_d2(ops, gg, grad, y, attrs):
    # B = g - p S, p = e^y = softmax(y) (y is a log-softmax), S = sum(g): the matrix I - p 1^T
    # is not symmetric, so d/dg = gg - sum(p gg) (its transpose applied), and d/dy = -gg p S
    dim = attrs[0] if attrs else -1
    p = ops.softmax(y, dim)
    dg = ops.add(gg, ops.reduce_sum(ops.mul(p, gg), [dim], True), -1.0)
    S = ops.reduce_sum(grad, [dim], True)
    return dg, ops.mul(ops.mul(ops.muls(gg, -1.0), p), S)


_D2 = {  # backward operator -> h * f''(x) (elementwise ones)
    "sigmoid_backward": _d2_sigmoid, "tanh_backward": _d2_tanh, "silu_backward": _d2_silu,
    "softplus_backward": _d2_softplus, "mish_backward": _d2_mish,
    "gelu_backward": _d2_gelu_tanh, "gelu_v2_backward": _d2_gelu_v2,
    "hardswish_backward": _d2_hardswish, "elu_backward": _d2_elu_of("elu_backward"),
    "elu_v2_backward": _d2_elu_of("elu_v2_backward"), "relu_backward": _d2_zero,
    "leaky_relu_backward": _d2_zero, "hardsigmoid_backward": _d2_zero,
}
_D2_ROWS = {"softmax_backward": _softmax_d2, "log_softmax_backward": _log_softmax_d2}


def _setup_grad_op(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.attrs = inputs[2:]


def _second_order(bname):
    """The backward of backward operator `bname` (see above), or None when it has none."""
    d2, rows = _D2.get(bname), _D2_ROWS.get(bname)
    if d2 is None and rows is None:
        return None

    def backward(ops, ctx, gg):
        grad, x = ctx.saved_tensors
        need = ctx.needs_input_grad
        attrs = ctx.attrs
        nones = (None,) * len(attrs)
        # 16-bit: the second order in float32 (rounded once at the end); float32 / float64 as is
        wide = any(t.dtype in (torch.float16, torch.bfloat16) for t in (grad, x, gg))
        g32, x32, gg32 = (grad.float(), x.float(), gg.float()) if wide else (grad, x, gg)
        dgrad = dx = None
        if rows is not None:  # both at once (they share the row sums)
            dg, dy = rows(ops, gg32, g32, x32, attrs)
            return ((_sum_to(ops, dg, grad.shape, grad.dtype) if need[0] else None,
                     _sum_to(ops, dy, x.shape, x.dtype) if need[1] else None) + nones)
        if need[0]:  # elementwise: B(grad, x) = grad f'(x) is its own transpose in grad
            dgrad = _sum_to(ops, getattr(ops, bname)(gg32, x32, *attrs), grad.shape, grad.dtype)
        if need[1]:
            t = d2(ops, ops.mul(gg32, g32), x32, attrs)
            dx = None if t is None else _sum_to(ops, t, x.shape, x.dtype)
        return (dgrad, dx) + nones

    return backward



# ---- the table ----------------------------------------------------------------------------------
# backward operators (differentiable where _second_order has a formula, see above)
_define("gelu_v2_backward", "(Tensor grad, Tensor x, str approximate='none') -> Tensor",
        K.gelu_v2_backward, (0, 1), _fake_grad)
_define("sigmoid_backward", "(Tensor grad, Tensor output) -> Tensor", K.sigmoid_backward, (0, 1),
        _fake_grad)
_define("tanh_backward", "(Tensor grad, Tensor output) -> Tensor", K.tanh_backward, (0, 1),
        _fake_grad)
_define("relu_backward", "(Tensor grad, Tensor output) -> Tensor", K.relu_backward, (0, 1),
        _fake_grad)
_define("fused_add_scale_backward",
        "(Tensor grad, Tensor x, Tensor bias, Tensor scale) -> (Tensor, Tensor, Tensor)",
        K.fused_add_scale_backward, (0, 1, 2, 3), _fake_fas_backward, setup=_setup_fas_bwd,
        backward=_backward_fas_bwd, nout=3)

# differentiable operators
_define("gelu_v2", "(Tensor x, str approximate='none') -> Tensor", K.gelu_v2,
        setup=_save_input, backward=_grad_of("gelu_v2_backward", 1))
_define("sigmoid", "(Tensor x) -> Tensor", K.sigmoid, setup=_save_output_fp32,
        backward=_grad_from_output("sigmoid", "sigmoid_backward"))
_define("tanh", "(Tensor x) -> Tensor", K.tanh, setup=_save_output_fp32,
        backward=_grad_from_output("tanh", "tanh_backward"))
_define("relu", "(Tensor x) -> Tensor", K.relu, setup=_save_output,
        backward=_grad_of("relu_backward", 0))
_define("add", "(Tensor x, Tensor other, float alpha=1.0) -> Tensor", K.add, (0, 1), _fake_binary,
        setup=_setup_add, backward=_backward_add)
_define("mul", "(Tensor x, Tensor other) -> Tensor", K.mul, (0, 1), _fake_binary,
        setup=_setup_binary, backward=_backward_mul)
_define("muls", "(Tensor x, float other) -> Tensor", K.muls, setup=_setup_muls,
        backward=_backward_muls)
_define("fused_add_scale", "(Tensor x, Tensor bias, Tensor scale) -> Tensor", K.fused_add_scale,
        (0, 1, 2), _fake_fas, setup=_setup_fas, backward=_backward_fas)
_define("reduce_sum", "(Tensor x, int[] dims=[], bool keepdim=False) -> Tensor", K.reduce_sum,
        fake=_fake_reduce_sum, setup=_setup_reduce_sum, backward=_backward_reduce_sum)


# the matmul family
_define("fused_matmul_backward",
        "(Tensor grad, Tensor x1, Tensor x2, Tensor? bias, Tensor? x3, str fused_op_type, "
        "int cube_math_type, bool[] output_mask) -> (Tensor, Tensor, Tensor, Tensor)",
        K.fused_matmul_backward, (0, 1, 2, 3, 4), _fake_fused_matmul_backward, nout=4)
_define("matmul", "(Tensor x, Tensor other, ScalarType? out_dtype=None) -> Tensor", K.matmul,
        (0, 1), _fake_matmul, setup=_setup_matmul, backward=_backward_matmul)
_define("mm", "(Tensor x, Tensor mat2) -> Tensor", K.mm, (0, 1), _fake_mm, setup=_setup_matmul,
        backward=_backward_matmul)
_define("bmm", "(Tensor x, Tensor mat2) -> Tensor", K.bmm, (0, 1), _fake_bmm,
        setup=_setup_matmul, backward=_backward_matmul)
_define("addmm", "(Tensor input, Tensor mat1, Tensor mat2, float beta=1.0, float alpha=1.0) -> "
        "Tensor", K.addmm, (0, 1, 2), _fake_addmm, setup=_setup_addmm, backward=_backward_addmm)
_define("baddbmm", "(Tensor input, Tensor batch1, Tensor batch2, float beta=1.0, "
        "float alpha=1.0) -> Tensor", K.baddbmm, (0, 1, 2), _fake_baddbmm, setup=_setup_addmm,
        backward=_backward_addmm)
_define("fused_matmul", "(Tensor x1, Tensor x2, Tensor? bias=None, Tensor? x3=None, "
        "str fused_op_type='', int cube_math_type=0) -> Tensor", K.fused_matmul, (0, 1, 2, 3),
        _fake_fused_matmul, setup=_setup_fused_matmul, backward=_backward_fused_matmul)


# ---- the operators the library's list describes in full (opgrad.torch._kernels.LIST_PAIRS) ------
# Every forward / backward pair of src/ops/ops.inc in the standard shape (one input tensor,
# attributes with defaults, one output; the backward from the gradient and the forward's input
# or output) that is not defined above: schema, kernels and autograd formula all come from the
# list (read from libopgrad at import), so a new operator of that shape needs no Python.
_SCHEMA_TYPES = {float: "float", int: "int", bool: "bool", str: "str"}


def _schema_attrs(pair):
    out = ""
    for p, name, default in pair.attrs:
        value = ("'%s'" % default) if isinstance(default, str) else repr(default)
        out += ", %s %s=%s" % (_SCHEMA_TYPES[type(default)], name, value)
    return out


for _name, _pair in K.LIST_PAIRS.items():
    if _name in _ALL:
        continue  # defined above, with a formula of its own
    _fk, _bk = K.list_kernels(_pair)
    setattr(K, _name, _fk)  # the 1.13 path's formulas call the kernels from this module
    setattr(K, _pair.bname, _bk)
    _attrs = _schema_attrs(_pair)
    _define(_pair.bname, "(Tensor grad, Tensor %s%s) -> Tensor"
            % ("output" if _pair.from_output else "x", _attrs), _bk, (0, 1), _fake_grad)
    if _pair.from_output:  # the backward reads the output: recomputed in fp32 for 16-bit inputs
        _define(_name, "(Tensor x%s) -> Tensor" % _attrs, _fk, setup=_save_output_fp32,
                backward=_grad_from_output(_name, _pair.bname))
    else:
        _define(_name, "(Tensor x%s) -> Tensor" % _attrs, _fk, setup=_save_input,
                backward=_grad_of(_pair.bname, len(_pair.attrs)))


# ---- forward mode: jvp rules ---------------------------------------------------------------------
# jvp(ops, args, out, tangents) -> the output's tangent, from the primal inputs, the output and the
# inputs' tangents (None: no tangent). An activation's Jacobian is diagonal, so its jvp is its
# backward operator applied to the tangent; softmax's is symmetric (the same); log_softmax's is
# not (I - 1 p^T: t - sum(p t)). Used by the 1.13 path's autograd.Function and the eager fast path
# of both (torch.autograd.forward_ad); an operator without a rule raises PyTorch's
# NotImplementedError there, never a missing tangent.


def _jvp_grad_of(bname, from_output):
    def jvp(ops, args, out, ts):
        if ts[0] is None:
            return None
        return getattr(ops, bname)(ts[0], out if from_output else args[0], *args[1:])
    return jvp


def _jvp_log_softmax(ops, args, out, ts):
    if ts[0] is None:
        return None
    dim = args[1] if len(args) > 1 else -1
    p = ops.softmax(args[0], dim)
    return ops.add(ts[0], ops.reduce_sum(ops.mul(p, ts[0]), [dim], True), -1.0)


def _sum_tangents(ops, terms, out):
    """The sum of the terms present (None: absent), broadcast to out's shape."""
    acc = None
    for t in terms:
        if t is not None:
            acc = t if acc is None else ops.add(acc, t)
    if acc is None:
        return None
    if acc.shape != out.shape:
        acc = ops.add(torch.zeros_like(out), acc)
    return acc if acc.dtype == out.dtype else acc.to(out.dtype)


def _jvp_add(ops, args, out, ts):
    alpha = args[2] if len(args) > 2 else 1.0
    to = ts[1]
    return _sum_tangents(ops, (ts[0], None if to is None else ops.muls(to, alpha)), out)


def _jvp_mul(ops, args, out, ts):
    x, o = args[0], args[1]
    return _sum_tangents(ops, (None if ts[0] is None else ops.mul(ts[0], o),
                               None if ts[1] is None else ops.mul(x, ts[1])), out)


def _jvp_muls(ops, args, out, ts):
    return None if ts[0] is None else ops.muls(ts[0], args[1])


def _jvp_reduce_sum(ops, args, out, ts):
    return None if ts[0] is None else ops.reduce_sum(ts[0], *args[1:])


def _jvp_product(name):
    """matmul / mm / bmm: t1 @ b + a @ t2 (matmul's out_dtype kept)."""
    def jvp(ops, args, out, ts):
        f = getattr(ops, name)
        a, b, rest = args[0], args[1], tuple(args[2:])
        return _sum_tangents(ops, (None if ts[0] is None else f(ts[0], b, *rest),
                                   None if ts[1] is None else f(a, ts[1], *rest)), out)
    return jvp


def _jvp_addmm(name):
    """addmm / baddbmm: beta t_input + alpha (t1 @ m2 + m1 @ t2)."""
    def jvp(ops, args, out, ts):
        f = getattr(ops, name)
        beta = args[3] if len(args) > 3 else 1.0
        alpha = args[4] if len(args) > 4 else 1.0
        prod = _sum_tangents(ops, (None if ts[1] is None else f(ts[1], args[2]),
                                   None if ts[2] is None else f(args[1], ts[2])), out)
        return _sum_tangents(ops, (None if prod is None else ops.muls(prod, alpha),
                                   None if ts[0] is None else ops.muls(ts[0], beta)), out)
    return jvp


def _jvp_backward_op(bname):
    """A backward operator's own jvp: B(grad, x) is linear in grad, so
    dB = B(t_grad, x) + (dB/dx) t_x, the second term from the second-order formulas (rows:
    written out)."""
    d2, rows = _D2.get(bname), _D2_ROWS.get(bname)

    def jvp(ops, args, out, ts):
        grad, x, attrs = args[0], args[1], tuple(args[2:])
        terms = [None if ts[0] is None else getattr(ops, bname)(ts[0], x, *attrs)]
        tx = ts[1]
        if tx is not None and rows is not None:
            dim = attrs[0] if attrs else -1
            if bname == "softmax_backward":  # y g - y S: t g - t S - y sum(g t), S = sum(g y)
                S = ops.reduce_sum(ops.mul(grad, x), [dim], True)
                G = ops.reduce_sum(ops.mul(grad, tx), [dim], True)
                terms.append(ops.add(ops.add(ops.mul(tx, grad), ops.mul(tx, S), -1.0),
                                     ops.mul(x, G), -1.0))
            else:  # g - p sum(g), p = softmax(y): -dp sum(g), dp = softmax_backward(t, p)
                p = ops.softmax(x, dim)
                dp = ops.softmax_backward(tx, p, dim)
                terms.append(ops.muls(ops.mul(dp, ops.reduce_sum(grad, [dim], True)), -1.0))
        elif tx is not None:
            terms.append(d2(ops, ops.mul(grad, tx), x, attrs))
        return _sum_tangents(ops, terms, out)

    return jvp


_JVP = {"add": _jvp_add, "mul": _jvp_mul, "muls": _jvp_muls, "reduce_sum": _jvp_reduce_sum,
        "matmul": _jvp_product("matmul"), "mm": _jvp_product("mm"), "bmm": _jvp_product("bmm"),
        "addmm": _jvp_addmm("mm"), "baddbmm": _jvp_addmm("bmm"),
        "log_softmax": _jvp_log_softmax}


# ---- vmap rules (PyTorch >= 2.0 functorch transforms: vmap, jacrev, jacfwd, hessian) ----------
# "ew": an elementwise (broadcasting) operator: the batch dim of every batched tensor moves to the
# front and its per-sample rank is padded with 1s to the largest, so that broadcasting lines the
# samples up; the operator then runs once on the whole batch. ("dim", i): the same, with argument
# i a dim of the sample (shifted by one when it counts from the front). "reduce": reduce_sum's
# dims likewise (none: every dim of the sample).


def _align(args, in_dims, tensor_args):
    """Every tensor argument with the batch in front: a batched one moved there and its sample
    padded with 1s to the largest sample rank; an unbatched one expanded along a new front dim
    (stride 0, no copy), so that outputs allocated like an input get the batch too."""
    args, ranks, batch = list(args), {}, 1
    for i in tensor_args:
        if i < len(args) and isinstance(args[i], torch.Tensor):
            ranks[i] = args[i].dim() - (in_dims[i] is not None)
            if in_dims[i] is not None:
                batch = args[i].shape[in_dims[i]]
    top = max(ranks.values()) if ranks else 0
    for i in ranks:
        bd, t = in_dims[i], args[i]
        t = t.movedim(bd, 0) if bd is not None else t.unsqueeze(0).expand((batch,) + t.shape)
        pad = top - ranks[i]
        args[i] = t.reshape((t.shape[0],) + (1,) * pad + tuple(t.shape[1:])) if pad else t
    return args


def _batched_operands(ts, in_dims, squeeze):
    """The matmul family's operands with the vmap batch in front: a batched one moved there, an
    unbatched one given a front dim of 1 (it broadcasts against the batch), each padded with 1s
    after the batch to one rank so that their own batch dims broadcast as torch.matmul's do.
    squeeze: per operand, 1-D samples made a row (-2) or a column (-1) first, or None."""
    out = []
    for t, bd, sq in zip(ts, in_dims, squeeze):
        if t is None:
            out.append(None)
            continue
        t = t.movedim(bd, 0) if bd is not None else t.unsqueeze(0)
        if sq is not None and t.dim() == 2:  # a 1-D sample
            t = t.unsqueeze(sq)
        out.append(t)
    top = max(t.dim() for t in out if t is not None)
    return [None if t is None else
            t.reshape((t.shape[0],) + (1,) * (top - t.dim()) + tuple(t.shape[1:])) for t in out]


def _vmap_matmul(info, in_dims, x, other, *rest):
    # per sample x_s @ other_s (torch.matmul's rules): 1-D x_s is a row, 1-D other_s a column,
    # removed from the result again; the batch is one more broadcast batch dim
    row, col = x.dim() - (in_dims[0] is not None) == 1, other.dim() - (in_dims[1] is not None) == 1
    a, b = _batched_operands((x, other), in_dims[:2], (-2, -1))
    out = _ALL["matmul"].function.apply(a, b, *rest)
    if row:  # [..., 1, N] (N itself 1 when other_s is 1-D too)
        out = out.squeeze(-2)
    if col:
        out = out.squeeze(-1)
    return out, 0


def _vmap_mm(info, in_dims, x, mat2):  # mm and bmm: per sample a matmul of fixed ranks
    a, b = _batched_operands((x, mat2), in_dims, (None, None))
    return _ALL["matmul"].function.apply(a, b), 0


def _vmap_addmm(info, in_dims, inp, m1, m2, beta=1.0, alpha=1.0):
    # addmm / baddbmm per sample: beta input + alpha m1 @ m2, composed (the product, then one add)
    i, a, b = _batched_operands((inp, m1, m2), in_dims[:3], (None, None, None))
    prod = _ALL["matmul"].function.apply(a, b)
    if i.dim() < prod.dim():  # input's sample broadcasts against the product's: align its dims
        i = i.reshape((i.shape[0],) + (1,) * (prod.dim() - i.dim()) + tuple(i.shape[1:]))
    scaled = i if beta == 1 else _ALL["muls"].function.apply(i, beta)
    return _ALL["add"].function.apply(scaled, prod, alpha), 0


def _vmap_fused_matmul(info, in_dims, x1, x2, bias=None, x3=None, *rest):
    # OP(x1 @ x2 + bias, x3) per sample, over a batch of x1 and / or x2 (linear's input or
    # weight); bias and x3 stay per-sample operands of the fused epilogue
    if (bias is not None and in_dims[2] is not None) or (x3 is not None and in_dims[3] is not None):
        raise NotImplementedError("opgrad.torch: vmap of fused_matmul (linear) over its bias or "
                                  "x3 is not supported; vmap over x1 / x2, or add the bias "
                                  "outside")
    a, b = _batched_operands((x1, x2), in_dims[:2], (None, None))
    if x3 is not None:  # of y_s's shape: the batch in front, as a stride-0 view
        batch = max(a.shape[0], b.shape[0])
        x3 = x3.unsqueeze(0).expand((batch,) + tuple(x3.shape))
    return _ALL["fused_matmul"].function.apply(a, b, bias, x3, *rest), 0


def _batching_rule(d):
    kind = d.batching
    if callable(kind):  # an operator's own rule
        return kind

    def vmap(info, in_dims, *args):
        new = _align(args, in_dims, d.tensor_args)
        if isinstance(kind, tuple):  # ("dim", i)
            i = kind[1]
            dim = new[i] if i < len(new) else -1
            if i >= len(new):
                new = new + [-1] * (i + 1 - len(new))
            new[i] = dim + 1 if dim >= 0 else dim
        elif kind == "reduce":
            dims = list(new[1]) if len(new) > 1 else []
            new = new + [[], False][len(new) - 1:] if len(new) < 3 else new
            nd = new[0].dim()
            new[1] = [x + 1 if x >= 0 else x for x in dims] if dims else list(range(1, nd))
        return d.function.apply(*new), 0

    return vmap


# ---- generic rules for the late operators (_dropout.register_ops: convolution, pooling, the
# GLUs, embedding, dropout, ...), which have a differentiable backward but no formula of their own
# for forward mode or batching.
#
# jvp by double vjp: the backward B(u) = J^T u is linear in u, so J t = (d/du <B(u), t>)^T, the
# vjp of the backward itself, at any u (zeros). It costs a forward, a backward and a double
# backward, each on opgrad operators, and is exactly as right as the double backward (tested
# against PyTorch for every operator). Under a functorch transform the two vjps are torch.func's.
def _floating(t):
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def jvp_by_double_vjp(d, args, out, tangents):
    """The output's tangent(s) of operator d at (args, out), from the inputs' tangents."""
    outs = out if isinstance(out, tuple) else (out,)
    keep = [k for k, o in enumerate(outs) if _floating(o)]  # (integer outputs: no tangent)
    if not _NEW_STYLE_FUNCTION and any(isinstance(o, torch.Tensor) and not _floating(o)
                                       for o in outs):
        raise NotImplementedError(
            "opgrad.torch.%s: forward-mode AD through an operator with an integer output "
            "needs PyTorch >= 2.0 (1.13 gives that output a tangent)" % d.name)
    idx = [i for i, t in enumerate(tangents) if t is not None and _floating(args[i])]
    result = [None] * len(outs)
    if idx and keep:
        # the primals without their tangents (under functorch's jvp they still carry the
        # transform's: the operator would call this rule again)
        prim = [_fwad.unpack_dual(a).primal if isinstance(a, torch.Tensor) else a for a in args]
        ts = tuple(tangents[i] for i in idx)

        def f(*xs):
            a = list(prim)
            for i, x in zip(idx, xs):
                a[i] = x
            o = d.function.apply(*a)
            o = o if isinstance(o, tuple) else (o,)
            return tuple(o[k] for k in keep)

        us = [torch.zeros_like(outs[k]) for k in keep]
        if K.transforms_active():  # torch.func.jvp / jacfwd / hessian: torch.func's vjps
            _, vjp_fn = torch.func.vjp(f, *(prim[i] for i in idx))
            _, vjp2 = torch.func.vjp(lambda *u: vjp_fn(tuple(u)), *us)
            jt = vjp2(ts)  # (zeros where an output does not depend on the inputs)
        else:
            with torch.enable_grad():
                xs = [prim[i].detach().requires_grad_() for i in idx]
                us = [u.requires_grad_() for u in us]
                # (an output marked non-differentiable, NLLLoss's total weight, has no graph)
                live = [(y, u) for y, u in zip(f(*xs), us) if y.requires_grad]
                g = torch.autograd.grad([y for y, _ in live], xs, [u for _, u in live],
                                        create_graph=True, allow_unused=True) \
                    if live else [None] * len(xs)
                live = [(gi, t) for gi, t in zip(g, ts) if gi is not None and gi.requires_grad]
                jt = torch.autograd.grad([gi for gi, _ in live], us, [t for _, t in live],
                                         allow_unused=True) if live else [None] * len(us)
            jt = [None if j is None else j.detach() for j in jt]
        for k, j in zip(keep, jt):
            if k in d.nondiff_outputs and _NEW_STYLE_FUNCTION:
                continue  # (PyTorch >= 2.0 wants None there; 1.13 a tensor)
            result[k] = torch.zeros_like(outs[k]) if j is None else j
    return tuple(result) if isinstance(out, tuple) else result[0]


def generic_jvp(d):
    """jvp_by_double_vjp as an autograd.Function's jvp (ctx.primal: its inputs and output)."""
    return lambda ctx, *tangents: jvp_by_double_vjp(d, *ctx.primal, tangents)


def generic_rules(d):
    """The generic jvp and vmap rules, where d (an OpDef made into a Function by _make_function)
    has no rule of its own."""
    if d.jvp is None:
        d.jvp = lambda ops, args, out, ts: jvp_by_double_vjp(d, args, out, ts)
    if d.batching is None:
        d.batching = generic_vmap(d)


# vmap by the samples: each sample through the operator, the results stacked (what PyTorch's own
# batching fallback does for an operator without a rule, here inside the Function, so that the
# transforms compose: jacrev = vmap of the backward, hessian = jacfwd of jacrev).
def generic_vmap(d):
    def vmap(info, in_dims, *args):
        n = info.batch_size
        rows = []
        for b in range(n):
            a = [x.select(dim, b) if isinstance(x, torch.Tensor) and dim is not None else x
                 for x, dim in zip(args, in_dims)]
            if d.vmap_args is not None:  # (dropout: a Philox range of its own per sample)
                a = d.vmap_args(info, b, a)
            rows.append(d.function.apply(*a))
        if isinstance(rows[0], tuple):  # (an output may be None: batch_norm's running stats)
            cols = [None if col[0] is None else torch.stack(col) for col in zip(*rows)]
            return tuple(cols), tuple(None if c is None else 0 for c in cols)
        return torch.stack(rows), 0

    return vmap


def function_class(d, backward):
    """The torch.autograd.Function of a late operator d: forward = d.kernel, setup_context =
    d.setup, the given backward(ctx, *grads), and the generic jvp (and, on PyTorch >= 2.0, vmap)
    rules; the setup_context form on PyTorch >= 2.0 (functorch's transforms require it),
    forward(ctx, ...) on 1.13."""
    kernel, setup = d.kernel, d.setup

    def setup_context(ctx, inputs, output):
        setup(ctx, inputs, output)
        if K.forward_ad():  # what the jvp reads
            ctx.primal = (inputs, output)

    def forward1(ctx, *args):  # (1.13)
        out = kernel(*args)
        setup_context(ctx, args, out)
        ints = [o for o in (out if isinstance(out, tuple) else (out,))
                if isinstance(o, torch.Tensor) and not o.is_floating_point()]
        if ints:  # (pooling's indices, dropout's mask: no tangent, no gradient)
            ctx.mark_non_differentiable(*ints)
        return out

    methods = {"forward": staticmethod(forward1), "backward": staticmethod(backward),
               "jvp": staticmethod(generic_jvp(d))}
    if _NEW_STYLE_FUNCTION:
        # (*args: PyTorch binds the forward's defaults as inputs, and a kernel may have its own,
        # e.g. out=None)
        methods["forward"] = staticmethod(lambda *args: kernel(*args))
        methods["setup_context"] = staticmethod(setup_context)
        methods["vmap"] = staticmethod(generic_vmap(d))
    return type("OpgradFunction_" + d.name, (torch.autograd.Function,), methods)


# the backward operators with a derivative of their own (second order)
for _d in _ALL.values():
    if _d.backward is None and _second_order(_d.name) is not None:
        _d.setup, _d.backward = _setup_grad_op, _second_order(_d.name)

# forward-mode rules: the activations from their backward operators, the rest from _JVP
_d = None
for _name, _pair in K.LIST_PAIRS.items():
    if _name in _ALL and _name not in _JVP:
        _ALL[_name].jvp = _jvp_grad_of(_pair.bname, _pair.from_output)
for _name, _b, _from_y in (("gelu_v2", "gelu_v2_backward", False),
                           ("sigmoid", "sigmoid_backward", True), ("tanh", "tanh_backward", True),
                           ("relu", "relu_backward", True)):
    _ALL[_name].jvp = _jvp_grad_of(_b, _from_y)
for _name, _rule in _JVP.items():
    _ALL[_name].jvp = _rule
for _d in _ALL.values():  # the twice-differentiable backward operators
    if _d.jvp is None and _d.backward is not None and _second_order(_d.name) is not None:
        _d.jvp = _jvp_backward_op(_d.name)

# batching kinds (vmap)
for _name, _pair in K.LIST_PAIRS.items():
    _kind = ("dim", 1) if _name in ("softmax", "log_softmax") else "ew"
    _ALL[_name].batching = _kind
    _ALL[_pair.bname].batching = ("dim", 2) if _kind != "ew" else "ew"
for _name in ("gelu_v2", "gelu_v2_backward", "sigmoid", "sigmoid_backward", "tanh",
              "tanh_backward", "relu", "relu_backward", "add", "mul", "muls"):
    _ALL[_name].batching = "ew"
_ALL["reduce_sum"].batching = "reduce"
_ALL["matmul"].batching = _vmap_matmul
_ALL["mm"].batching = _ALL["bmm"].batching = _vmap_mm
_ALL["addmm"].batching = _ALL["baddbmm"].batching = _vmap_addmm
_ALL["fused_matmul"].batching = _vmap_fused_matmul
# the rest (fused_add_scale, FusedMatmul's backward, the GLU-free second-order operators, ...):
# the generic rules
for _d in _ALL.values():
    if _d.differentiable:
        generic_rules(_d)


# ---- autograd.Function per differentiable op (the 1.13 "Autograd" kernel and the fast path) ----
def refuse_second_order(outputs, what):
    """outputs (a tensor or a tuple) made differentiable only to raise, at the next backward, a
    clear error naming `what` (as once_differentiable does, which looks only at the incoming
    gradients: a backward that also reads a saved input requiring grad would otherwise hand
    autograd a constant, and a double backward would silently drop its term)."""
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    msg = ("opgrad.torch: double backward through %s is not implemented (it has no derivative "
           "in opgrad); compute the gradient penalty / Hessian term with torch operators, or see "
           "docs/torch.md for the operators that are twice differentiable" % what)
    err = torch._C._functions.DelayedError(msg.encode(), len(outs))

    def fake(v):
        if v is None:
            return v
        v = v.detach()
        v.requires_grad = True
        return v

    res = err(*[fake(v) for v in outs])
    return res[0] if single and isinstance(res, tuple) else res


def first_order(what):
    """Decorator for an autograd.Function backward without a differentiable formula (what: the
    operator's name): under create_graph its results refuse a second backward
    (refuse_second_order) instead of being constants. (Unconditionally: the backward may depend
    on an input through something it does not save as such, e.g. cross-entropy's
    log-probabilities, marked non-differentiable.)"""
    return lambda fn: _first_order(fn, what)


def _first_order(fn, what):
    def wrapper(ctx, *grads):
        with torch.no_grad():
            out = fn(ctx, *grads)
        if not torch.is_grad_enabled():
            return out
        return refuse_second_order(out, what)

    wrapper.__name__ = getattr(fn, "__name__", "backward")
    return wrapper


# The operators registered after this table (_dropout.register_ops: dropout, embedding, pooling,
# the GLUs, ...), by name: _DIFF finds them too.
LATE = {}


class _Differentiable:
    """The operators as a backward formula calls them under create_graph on the 1.13 path:
    through their autograd.Function when an input requires grad, so that the result is
    differentiable again (second order); an operator without a derivative refuses the next
    backward rather than return a constant."""

    def __getattr__(self, name):
        d = _ALL[name] if name in _ALL else LATE[name]

        def call(*args):
            if torch.is_grad_enabled() and any(
                    i < len(args) and args[i] is not None and args[i].requires_grad
                    for i in d.tensor_args):
                if d.differentiable:
                    return d.function.apply(*args)
                with torch.no_grad():
                    out = d.kernel(*args)
                return refuse_second_order(out, "opgrad." + name)
            return d.kernel(*args)

        call.__name__ = name
        setattr(self, name, call)
        return call


_DIFF = _Differentiable()


class _UnderTransforms:
    """The operators as a formula calls them under a functorch transform: through their
    autograd.Function where it has a vmap rule (so that the transforms use its jvp / vmap /
    backward), else through the dispatcher (PyTorch's batching fallback, one sample at a time)."""

    def __getattr__(self, name):
        late = name not in _ALL  # (the late operators' Functions have generic vmap rules)
        d = LATE[name] if late else _ALL[name]
        call = d.function.apply if d.function is not None and (late or d.batching is not None) \
            else getattr(torch.ops.opgrad, name)
        setattr(self, name, call)
        return call


_TRANSFORMS = _UnderTransforms()


# PyTorch >= 2.0: the "setup_context" form, which functorch's transforms (torch.func.jvp, vmap,
# jacrev, jacfwd, hessian) require; 1.13 has only forward(ctx, ...)
_NEW_STYLE_FUNCTION = int(torch.__version__.split(".")[0]) >= 2


def _make_function(d):
    kernel, setup, backward, jvp = d.kernel, d.setup, d.backward, d.jvp

    def forward(ctx, *args):
        out = kernel(*args)
        setup(ctx, args, out)
        if jvp is not None and K.forward_ad():  # what the jvp reads (only under forward AD)
            ctx.primal = (args, out)
        return out

    def setup_context(ctx, inputs, output):
        setup(ctx, inputs, output)
        if jvp is not None and (K.forward_ad() or K.transforms_active()):
            ctx.primal = (inputs, output)

    def bwd(ctx, *grads):  # (one gradient per output)
        if K.transforms_active():  # functorch may batch the gradient
            return backward(_TRANSFORMS, ctx, *grads)
        if torch.is_grad_enabled():  # create_graph: the formula on differentiable operators
            return backward(_DIFF, ctx, *grads)
        return backward(K, ctx, *grads)

    methods = {"forward": staticmethod(forward), "backward": staticmethod(bwd)}
    if _NEW_STYLE_FUNCTION:
        methods["forward"] = staticmethod(kernel)
        methods["setup_context"] = staticmethod(setup_context)
    if jvp is not None:
        def fwd_grad(ctx, *tangents):
            args, out = ctx.primal
            if K.transforms_active():  # functorch's tangents may be wrapped
                return jvp(_TRANSFORMS, args, out, tangents)
            with torch.no_grad():
                return jvp(K, args, out, tangents)

        methods["jvp"] = staticmethod(fwd_grad)
    cls = type("OpgradFunction_" + d.name, (torch.autograd.Function,), methods)
    if _NEW_STYLE_FUNCTION and d.batching is not None:
        cls.vmap = staticmethod(_batching_rule(d))  # reads d.function (cls), set just after
    return cls


for _d in _ALL.values():
    if _d.differentiable:
        _d.function = _make_function(_d)


def _needs_grad(d, args):
    if not torch.is_grad_enabled():
        return False
    for i in d.tensor_args:
        if i < len(args) and args[i] is not None and args[i].requires_grad:
            return True
    return False


# ---- registration ------------------------------------------------------------------------------
def _register_library():
    """PyTorch 1.13 (and any version without custom_op): Library("opgrad", "DEF")."""
    global Library
    lib = torch.library.Library("opgrad", "DEF")
    for d in _ALL.values():
        lib.define(d.name + d.schema)
        lib.impl(d.name, d.kernel, "CPU")
        if d.differentiable:
            fn, kernel, tensor_args = d.function, d.kernel, d.tensor_args

            def autograd_impl(*args, _fn=fn, _kernel=kernel, _t=tensor_args):
                if K.forward_ad():  # the Function's jvp carries the tangent
                    return _fn.apply(*args)
                if torch.is_grad_enabled():
                    for i in _t:  # optional tensors (Tensor?) may be None
                        if args[i] is not None and args[i].requires_grad:
                            return _fn.apply(*args)
                return _kernel(*args)

            lib.impl(d.name, autograd_impl, "Autograd")
    Library = lib


def _register_custom_op():
    """PyTorch >= 2.4: torch.library.custom_op + register_fake + register_autograd."""
    global USING_CUSTOM_OP
    ops_ns = torch.ops.opgrad
    for d in _ALL.values():
        op = torch.library.custom_op("opgrad::" + d.name, d.kernel, mutates_args=(),
                                     device_types="cpu", schema=d.schema)
        torch.library.register_fake("opgrad::" + d.name, d.fake)
        if d.differentiable:
            backward = d.backward

            def bwd(ctx, *grads, _b=backward):  # (one gradient per output)
                return _b(ops_ns, ctx, *grads)

            torch.library.register_autograd("opgrad::" + d.name, bwd, setup_context=d.setup)
        d.custom_op = op
    USING_CUSTOM_OP = True


def register():
    if hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd") \
            and hasattr(torch.library, "register_fake"):
        _register_custom_op()
    else:
        _register_library()
    for d in _ALL.values():
        d.op = getattr(torch.ops.opgrad, d.name)


register()
OPS = _ALL
