"""opgrad.mindspore.builtin: opgrad's built-in aot entry points (docs/aot.md) as MindSpore
operators differentiable to any order.

    import opgrad.mindspore
    mish = opgrad.mindspore.builtin("Mish")
    g = ms.grad(lambda_free_loss)(x)                   # first order: opgrad_MishBackward
    gg = ms.grad(grad_of_loss)(x)                      # second order, third, ...

The forward is `ops.Custom(func="<libopgrad>:opgrad_<Name>", func_type="aot")` with a bprop that
calls the backward entry point `opgrad_<Name>Backward`, and that backward Custom has a bprop of
its own, so MindSpore can differentiate the bprop again (a gradient penalty, a Hessian-vector
product, ms.grad of ms.grad). A backward B(x, y, dy) = dy * f'(x) is linear in dy, so:

    dB/d(dy) . g = B(x, y, g)                    (the backward again: every order)
    dB/dx    . g = g * dy * f''(x)               (f'' composed from MindSpore's own ops)

(f'' through y for Sigmoid and Tanh, whose backwards read y). The bilinear operators reuse their
backward: for Mul and Matmul, d(da)/d(b) and d(db)/d(a) are the backward applied to the incoming
gradients, and d/d(dy) is the product rule on the forward itself. Operators outside the table
(the norms, the GLUs, the linear family, convolution, FusedAddScale) are not offered here:
builtin() raises ValueError naming them, rather than a MindSpore operator whose second backward
would fail later. The attributes (Softplus beta / threshold, LeakyRelu negative_slope, Elu alpha
/ scale / input_scale, Add alpha, Softmax dim) are set on both Customs and used by f''.
"""
import os

import numpy as np

from . import _lib as L

_ACT_ATTRS = {  # the attributes an entry point reads (docs/mindspore.md, "Attributes"), defaults
    "Softplus": {"beta": 1.0, "threshold": 20.0},
    "LeakyRelu": {"negative_slope": 0.01},
    "Elu": {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0},
    "Add": {"alpha": 1.0},
    "Softmax": {"dim": -1},
    "LogSoftmax": {"dim": -1},
}


def _ms():
    import mindspore
    return mindspore


# ---- f'' per activation: h * f''(v), v = x (or y where from_output), h = dout * dy ----------
# MindSpore multiplies a float64 Tensor by a Python float as by a float32 (1.5957691216057308 * t
# is off by 1.4e-7 relative; in GRAPH_MODE ops.full_like folds its value through float32 too) and
# its float64 ops.softplus is float32-accurate (6.6e-7 off): every constant and attribute is a
# 0-d float64 Tensor made when the operator is built (_consts), cast to v's dtype where used (_c);
# tanh(softplus(x)) is made from sigmoids (_tanh_softplus: within 7e-16 relative on [-40, 40],
# and only ops that MindSpore's GRAPH_MODE differentiates three deep). The small integers used as
# Python numbers (1, 2, 3, 6) are exact in any float dtype.
_GELU_K, _GELU_C = 1.5957691216057308, 0.044715  # gelu_tanh(x) = x sigmoid(K (x + C x^3))


def _consts(values):
    from mindspore import Tensor
    return {k: Tensor(np.array(v, np.float64)) for k, v in values.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _c(ops, like, t):
    return ops.cast(t, like.dtype)


def _mask(ops, cond, like):
    # 1 where cond, else 0, in like's dtype: a product with it, rather than ops.select with a
    # zeros_like branch, which MindSpore's GRAPH_MODE fails to differentiate three deep
    return ops.stop_gradient(ops.cast(cond, like.dtype))


def _tanh_softplus(ops, x):
    # e^x = s / q (s = sigmoid(x), q = sigmoid(-x) = 1 - s without cancellation), so
    # tanh(log(1 + e^x)) = e^x (e^x + 2) / (e^x (e^x + 2) + 2) = n / (n + 2 q^2), n = s (1 + q)
    s, q = ops.sigmoid(x), ops.sigmoid(-x)
    n = s * (1 + q)
    return n / (n + 2 * q * q)


def _d2_mish(ops, h, x, a):
    # f' = t + x s (1 - t^2), t = tanh(softplus(x)), s = sigmoid(x);
    # f'' = s (1 - t^2) (2 + x (1 - s) - 2 x s t)
    s = ops.sigmoid(x)
    t = _tanh_softplus(ops, x)
    return h * s * (1 - t * t) * (2 + x * (1 - s) - 2 * x * s * t)


def _d2_gelu_tanh(ops, h, x, a):
    # gelu_tanh(x) = x sigmoid(z), z = K (x + C x^3):
    # f'' = s (1 - s) (2 z' + x z'' + x z'^2 (1 - 2s))
    k, c = _c(ops, x, a["gelu_k"]), _c(ops, x, a["gelu_c"])
    s = ops.sigmoid(k * (x + c * x * x * x))
    zp = k * (1 + 3 * c * x * x)
    return h * s * (1 - s) * (2 * zp + 6 * k * c * x * x + x * zp * zp * (1 - 2 * s))


def _d2_silu(ops, h, x, a):  # f'' = s (1 - s) (2 + x (1 - 2s))
    s = ops.sigmoid(x)
    return h * s * (1 - s) * (2 + x * (1 - 2 * s))


def _d2_sigmoid(ops, h, y, a):  # B = dy y (1 - y): d/dy = dy (1 - 2y)
    return h * (1 - 2 * y)


def _d2_tanh(ops, h, y, a):  # B = dy (1 - y^2): d/dy = -2 dy y
    return -2 * h * y


def _d2_softplus(ops, h, x, a):  # f'' = beta s (1 - s), s = sigmoid(beta x); 0 above threshold
    beta = _c(ops, x, a["beta"])
    bx = beta * x
    s = ops.sigmoid(bx)
    return h * beta * s * (1 - s) * _mask(ops, bx <= _c(ops, x, a["threshold"]), x)


def _d2_hardswish(ops, h, x, a):  # f'' = 1/3 on (-3, 3)
    return h / 3 * _mask(ops, ops.logical_and(x > -3, x < 3), x)


def _d2_elu(ops, h, x, a):  # x <= 0: f'' = scale alpha is^2 e^(is x); x > 0: 0
    is_ = _c(ops, x, a["input_scale"])
    k = _c(ops, x, a["scale"]) * _c(ops, x, a["alpha"]) * is_ * is_
    m = _mask(ops, x <= 0, x)
    return h * k * ops.exp(is_ * x * m) * m  # x * m: no overflow of e^(is x) where x > 0


def _d2_zero(ops, h, x, a):  # piecewise linear: f'' = 0 almost everywhere
    return h * 0  # (not zeros_like(x): GRAPH_MODE fails to differentiate that three deep)


# name: (f'' * h, whether the backward reads y rather than x)
_ACTS = {
    "Mish": (_d2_mish, False), "Gelu": (_d2_gelu_tanh, False), "Silu": (_d2_silu, False),
    "Sigmoid": (_d2_sigmoid, True), "Tanh": (_d2_tanh, True), "Softplus": (_d2_softplus, False),
    "Relu": (_d2_zero, False), "LeakyRelu": (_d2_zero, False), "Hardswish": (_d2_hardswish, False),
    "Hardsigmoid": (_d2_zero, False), "Elu": (_d2_elu, False),
}
_OTHERS = ("Softmax", "LogSoftmax", "Add", "Mul", "Matmul")
SUPPORTED = tuple(_ACTS) + _OTHERS


def _custom(lib, symbol, shape, dtype, attrs, bprop=None):
    ops = _ms().ops
    op = ops.Custom(func="%s:opgrad_%s" % (lib, symbol), out_shape=shape, out_dtype=dtype,
                    func_type="aot", bprop=bprop)
    for k, v in attrs.items():
        op.add_prim_attr(k, v)
    return op


def _first(*t):
    return t[0]


def _pair(*t):
    return (t[0], t[1])


def _activation(lib, name, attrs):
    ops = _ms().ops
    d2, from_output = _ACTS[name]
    # MindSpore hands a float attribute to the kernel as a float32 (its AotExtra's GetAttrFloat:
    # 0.7 arrives as 0.699999988), so f'' takes the same rounded value
    f32 = {k: float(np.float32(v)) for k, v in attrs.items() if isinstance(v, float)}
    consts = _consts(dict(attrs, gelu_k=_GELU_K, gelu_c=_GELU_C, **f32))

    # B(x, y, dy) -> dx, differentiable again: d/d(dy) is B itself (every order), d/dx or d/dy
    # the f'' term (bprops return one gradient per input: x, y, dy)
    if from_output:
        def bwd_bprop(x, y, dy, out, dout):
            return ops.zeros_like(x), d2(ops, dout * dy, y, consts), bwd(x, y, dout)
    else:
        def bwd_bprop(x, y, dy, out, dout):
            return d2(ops, dout * dy, x, consts), ops.zeros_like(y), bwd(x, y, dout)

    bwd = _custom(lib, name + "Backward", lambda x, y, dy: x, lambda x, y, dy: x, attrs,
                  bwd_bprop)

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    return _custom(lib, name, _first, _first, attrs, bprop)


def _softmax(lib, name, attrs):
    ops = _ms().ops
    dim = attrs["dim"]
    log = name == "LogSoftmax"

    # softmax: B = y (g - S), S = sum(g y), symmetric in g: d/dg = B(gg); d/dy = gg g - gg S - g T,
    # T = sum(gg y). log_softmax: B = g - p S, p = e^y, S = sum(g): d/dg = gg - sum(p gg),
    # d/dy = -gg p S
    if log:
        def bwd_bprop(x, y, dy, out, dout):
            p = ops.exp(y)
            dg = dout - ops.sum(p * dout, dim, True)
            return ops.zeros_like(x), -dout * p * ops.sum(dy, dim, True), dg
    else:
        def bwd_bprop(x, y, dy, out, dout):
            s = ops.sum(dy * y, dim, True)
            t = ops.sum(dout * y, dim, True)
            return ops.zeros_like(x), dout * dy - dout * s - dy * t, bwd(x, y, dout)

    bwd = _custom(lib, name + "Backward", lambda x, y, dy: x, lambda x, y, dy: x, attrs,
                  bwd_bprop)

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    return _custom(lib, name, _first, _first, attrs, bprop)


def _broadcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [y if x == 1 else x for x, y in zip(a, b)]


def _add(lib, attrs):
    ops = _ms().ops

    # AddBackward(a, b, y, dy) = (sum_to(dy, a), alpha sum_to(dy, b)) is linear in dy alone: its
    # derivative in dy is the forward on the incoming gradients, gda + alpha gdb
    def bwd_bprop(a, b, y, dy, out, dout):
        return ops.zeros_like(a), ops.zeros_like(b), ops.zeros_like(y), fwd(dout[0], dout[1])

    bwd = _custom(lib, "AddBackward", lambda a, b, y, dy: (a, b), lambda a, b, y, dy: (a, b),
                  attrs, bwd_bprop)

    def bprop(a, b, out, dout):
        return bwd(a, b, out, dout)

    fwd = _custom(lib, "Add", _broadcast, _first, attrs, bprop)
    return fwd


def _bilinear(lib, name, shape):
    """Mul or Matmul: y = a * b. The backward (da, db) = (sum_to(dy . b^T), sum_to(a^T . dy)) is
    bilinear in (a or b, dy): the derivative of <gda, da> + <gdb, db> is d/da = the backward's da
    for (a, gdb, dy), d/db = its db for (gda, b, dy), d/d(dy) = gda * b + a * gdb (the forward)."""
    ops = _ms().ops

    def bwd_bprop(a, b, y, dy, out, dout):
        gda, gdb = dout
        da = bwd(a, gdb, y, dy)[0]
        db = bwd(gda, b, y, dy)[1]
        return da, db, ops.zeros_like(y), fwd(gda, b) + fwd(a, gdb)

    bwd = _custom(lib, name + "Backward", lambda a, b, y, dy: (a, b), lambda a, b, y, dy: (a, b),
                  {}, bwd_bprop)

    def bprop(a, b, out, dout):
        return bwd(a, b, out, dout)

    fwd = _custom(lib, name, shape, _first, {}, bprop)
    return fwd


def _matmul_shape(a, b):  # torch.matmul's output shape
    a, b = list(a), list(b)
    batch = _broadcast(a[:-2], b[:-2]) if len(a) > 2 or len(b) > 2 else []
    return batch + a[-2:-1] + (b[-1:] if len(b) >= 2 else [])


def _library(library):
    path = library or L.library_path
    if not os.path.isabs(path):
        raise ValueError("opgrad.mindspore.builtin: MindSpore needs an absolute path to "
                         "libopgrad.so; pass library=/abs/path/libopgrad.so (found %r)" % path)
    return path


def builtin(name, library=None, **attrs):
    """opgrad's built-in operator `name` (aot name without the prefix: "Mish", "Softplus",
    "Matmul", ...) as a MindSpore operator differentiable to any order (module docstring).
    `attrs` are the entry point's attributes (e.g. beta=2.0 for Softplus), set on the forward and
    the backward Custom. library: libopgrad.so's absolute path (default: the one opgrad loaded)."""
    if name not in SUPPORTED:
        raise ValueError("opgrad.mindspore.builtin: %r has no second order here; it is one of %s "
                         "(the others: their first order through ops.Custom, docs/mindspore.md)"
                         % (name, ", ".join(SUPPORTED)))
    known = _ACT_ATTRS.get(name, {})
    unknown = sorted(set(attrs) - set(known))
    if unknown:
        raise ValueError("opgrad.mindspore.builtin(%r): unknown attribute(s) %s; it takes %s"
                         % (name, ", ".join(unknown), ", ".join(known) or "none"))
    full = dict(known, **attrs)
    lib = _library(library)
    if name in _ACTS:
        return _activation(lib, name, full)
    if name in ("Softmax", "LogSoftmax"):
        return _softmax(lib, name, full)
    if name == "Add":
        return _add(lib, full)
    if name == "Mul":
        return _bilinear(lib, "Mul", _broadcast)
    return _bilinear(lib, "Matmul", _matmul_shape)
