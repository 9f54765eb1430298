"""opgrad.mindspore.builtin: opgrad's built-in aot entry points (docs/aot.md) as MindSpore
operators differentiable to any order.

    import opgrad.mindspore
    mish = opgrad.mindspore.builtin("Mish")
    def loss(x): return mish(x).sum()
    g = ms.grad(loss)                                  # first order: opgrad_MishBackward
    def gsum(x): return g(x).sum()
    gg = ms.grad(gsum)(x)                              # second order (and third, ...)

The forward is `ops.Custom(func="<libopgrad>:opgrad_<Name>", func_type="aot")` with a bprop that
calls the backward entry point `opgrad_<Name>Backward`, and that backward Custom has a bprop of
its own, so MindSpore can differentiate the bprop again (a gradient penalty, a Hessian-vector
product, ms.grad of ms.grad). A backward B(x, y, dy) = dy * f'(x) is linear in dy, so:

    dB/d(dy) . g = B(x, y, g)                    (the backward again: every order)
    dB/dx    . g = g * dy * f''(x)               (f'' composed from MindSpore's own ops)

(f'' through y for Sigmoid and Tanh, whose backwards read y). The bilinear operators (Mul,
Matmul, Conv2d, Linear, FusedAddScale) reuse their backward: d(da)/d(b) and d(db)/d(a) are the
backward applied to the incoming gradients, and d/d(dy) is the product rule on the forward itself
(the linear family adds its activation's act' and act'' terms). Softmax, LogSoftmax, the GLUs
and the norms have their second derivatives written out below. Every aot entry point of
docs/aot.md is offered (the activations, Add, Mul, FusedAddScale, Softmax, LogSoftmax, Matmul,
the linear family, SwiGlu, GeGlu, LayerNorm, RmsNorm, Conv2d, Conv2dNoBias); any other name
raises ValueError. The attributes (Softplus beta / threshold, LeakyRelu negative_slope, Elu alpha
/ scale / input_scale, Add alpha, Softmax / GLU dim, GeGlu approximate, the norms' eps) are set
on both Customs and used by the second derivatives, rounded through float32 as MindSpore hands
them to the kernels.
"""
import os

import numpy as np

from . import _lib as L

_ATTRS = {  # the attributes an entry point reads (docs/mindspore.md, "Attributes"), defaults
    "Softplus": {"beta": 1.0, "threshold": 20.0},
    "LeakyRelu": {"negative_slope": 0.01},
    "Elu": {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0},
    "Add": {"alpha": 1.0},
    "Softmax": {"dim": -1},
    "LogSoftmax": {"dim": -1},
    "SwiGlu": {"dim": -1},
    "LayerNorm": {"eps": 1e-5},
    "RmsNorm": {"eps": 1e-6},
    "GeGlu": {"dim": -1, "approximate": 0},
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
_MATH = {"gelu_k": _GELU_K, "gelu_c": _GELU_C, "inv_sqrt2": 0.7071067811865476,
         "inv_sqrt_2pi": 0.3989422804014327}


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


def _gelu_parts(ops, x, a, approximate):
    """(gelu(x), gelu'(x), gelu''(x)): the tanh form (approximate: x sigmoid(z), z = K (x + C x^3),
    f'' = s (1 - s) (2 z' + x z'' + x z'^2 (1 - 2s))) or the erf form (x Phi(x): f' = Phi + x phi,
    f'' = phi (2 - x^2))."""
    if approximate:
        k, c = _c(ops, x, a["gelu_k"]), _c(ops, x, a["gelu_c"])
        s = ops.sigmoid(k * (x + c * x * x * x))
        zp = k * (1 + 3 * c * x * x)
        d1 = s + x * zp * s * (1 - s)
        d2 = s * (1 - s) * (2 * zp + 6 * k * c * x * x + x * zp * zp * (1 - 2 * s))
        return x * s, d1, d2
    cdf = ops.erfc(-x * _c(ops, x, a["inv_sqrt2"])) / 2  # erfc: no cancellation for x << 0
    pdf = ops.exp(-x * x / 2) * _c(ops, x, a["inv_sqrt_2pi"])
    return x * cdf, cdf + x * pdf, pdf * (2 - x * x)


def _d2_gelu_tanh(ops, h, x, a):
    return h * _gelu_parts(ops, x, a, True)[2]


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
_LINEAR = {"Linear": None, "LinearRelu": "relu", "LinearGelu": "tanh", "LinearGeluErf": "none"}
_OTHERS = ("Softmax", "LogSoftmax", "Add", "Mul", "Matmul", "FusedAddScale", "SwiGlu", "GeGlu",
           "LayerNorm", "RmsNorm", "Conv2d", "Conv2dNoBias") + tuple(_LINEAR)
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


def _unary(lib, name, attrs, bwd_bprop, shape=_first):
    """(backward, forward) of a one-input entry point: opgrad_<name>Backward (x, y, dy -> dx)
    with bwd_bprop as its bprop, and opgrad_<name> (x -> y, `shape` of y) whose bprop calls it."""
    bwd = _custom(lib, name + "Backward", lambda x, y, dy: x, lambda x, y, dy: x, attrs,
                  bwd_bprop)

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    return bwd, _custom(lib, name, shape, _first, attrs, bprop)


def _activation(lib, name, attrs):
    ops = _ms().ops
    d2, from_output = _ACTS[name]
    # MindSpore hands a float attribute to the kernel as a float32 (its AotExtra's GetAttrFloat:
    # 0.7 arrives as 0.699999988), so f'' takes the same rounded value
    f32 = {k: float(np.float32(v)) for k, v in attrs.items() if isinstance(v, float)}
    consts = _consts(dict(attrs, **_MATH, **f32))

    # B(x, y, dy) -> dx, differentiable again: d/d(dy) is B itself (every order), d/dx or d/dy
    # the f'' term (bprops return one gradient per input: x, y, dy)
    if from_output:
        def bwd_bprop(x, y, dy, out, dout):
            return ops.zeros_like(x), d2(ops, dout * dy, y, consts), bwd(x, y, dout)
    else:
        def bwd_bprop(x, y, dy, out, dout):
            return d2(ops, dout * dy, x, consts), ops.zeros_like(y), bwd(x, y, dout)

    bwd, fwd = _unary(lib, name, attrs, bwd_bprop)
    return fwd


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

    bwd, fwd = _unary(lib, name, attrs, bwd_bprop)
    return fwd


def _glu(lib, name, attrs):
    """SwiGlu: y = silu(a) b; GeGlu: y = a gelu(b); (a, b) the halves of x along dim. With the
    incoming (ga, gb) (dx's halves) and y1, y2 the activation's first and second derivatives:
    SwiGlu: d/d(dy) = ga b silu'(a) + gb silu(a), d/da = dy (ga b silu''(a) + gb silu'(a)),
    d/db = dy ga silu'(a); GeGlu: d/d(dy) = ga gelu(b) + gb a gelu'(b), d/da = dy gb gelu'(b),
    d/db = dy (ga gelu'(b) + gb a gelu''(b))."""
    ops = _ms().ops
    dim = attrs["dim"]
    approx = attrs.get("approximate") in (1, "tanh")
    consts = _consts(dict(_MATH))
    swi = name == "SwiGlu"

    def bwd_bprop(x, y, dy, out, dout):
        a, b = ops.chunk(x, 2, dim)
        ga, gb = ops.chunk(dout, 2, dim)
        if swi:
            s = ops.sigmoid(a)
            f0, f1 = a * s, s * (1 + a * (1 - s))
            f2 = s * (1 - s) * (2 + a * (1 - 2 * s))
            gdy = ga * b * f1 + gb * f0
            da, db = dy * (ga * b * f2 + gb * f1), dy * ga * f1
        else:
            f0, f1, f2 = _gelu_parts(ops, b, consts, approx)
            gdy = ga * f0 + gb * a * f1
            da, db = dy * gb * f1, dy * (ga * f1 + gb * a * f2)
        return ops.cat((da, db), dim), ops.zeros_like(y), gdy

    def shape(x):
        d = dim % len(x)
        return [n // 2 if k == d else n for k, n in enumerate(x)]

    _, fwd = _unary(lib, name, attrs, bwd_bprop, shape)
    return fwd


def _norm(lib, name, attrs):
    """LayerNorm (x, gamma, beta) or RmsNorm (x, gamma) over the last dim: per row r = (var +
    eps)^-1/2 (var = mean(xc^2), xc = x - mean(x), or x for RmsNorm), xh = xc r, G = dy gamma,
    and the backward dx = P(G), P(v) = r (v - mean(v) - xh mean(v xh)) (no mean(v) for RmsNorm),
    dgamma = sum dy xh, dbeta = sum dy (sums over the rows). P is symmetric, so with the incoming
    (gdx, gdgamma, gdbeta): d/d(dy) = gamma P(gdx) + gdgamma xh + gdbeta, d/dgamma = sum dy P(gdx),
    d/dx = P(gdgamma dy) - r^2/C xh (s - 3 m2 q) - r^2 q (G - mean G)/C - r^2 m2 (gdx - mean gdx),
    with s = <gdx - mean gdx, G>, m2 = mean(G xh), q = <gdx, xh> per row (no means for RmsNorm)."""
    ops = _ms().ops
    layer = name == "LayerNorm"
    f32 = float(np.float32(attrs["eps"]))  # as MindSpore hands the attribute to the kernel
    consts = _consts({"eps": f32})

    def centred(v):
        return v - ops.mean(v, -1, True) if layer else v

    def stats(x):
        xc = centred(x)
        r = ops.rsqrt(ops.mean(xc * xc, -1, True) + _c(ops, x, consts["eps"]))
        return r, xc * r

    def project(v, r, xh):
        return r * (centred(v) - xh * ops.mean(v * xh, -1, True))

    def rows(v):  # summed over every dim but the last
        return ops.reshape(v, (-1, v.shape[-1])).sum(0)

    def second(x, g, dy, gdx, gdg):
        r, xh = stats(x)
        G = dy * g
        n = x.shape[-1]
        r2 = r * r
        s_ = (centred(gdx) * G).sum(-1, keepdims=True)
        m2 = ops.mean(G * xh, -1, True)
        q = (gdx * xh).sum(-1, keepdims=True)
        dx = project(gdg * dy, r, xh) - r2 / n * xh * (s_ - 3 * m2 * q) \
            - r2 * q * centred(G) / n - r2 * m2 * centred(gdx)
        pg = project(gdx, r, xh)
        return dx, rows(dy * pg), g * pg + gdg * xh

    if layer:
        def bwd_bprop(x, g, b, y, dy, out, dout):
            gdx, gdg, gdb = dout
            dx, dg, gdy = second(x, g, dy, gdx, gdg)
            return dx, dg, ops.zeros_like(b), ops.zeros_like(y), gdy + gdb

        bwd = _custom(lib, "LayerNormBackward", lambda x, g, b, y, dy: (x, g, b),
                      lambda x, g, b, y, dy: (x, g, b), attrs, bwd_bprop)

        def bprop(x, g, b, out, dout):
            return bwd(x, g, b, out, dout)

        return _custom(lib, "LayerNorm", _first, _first, attrs, bprop)

    def bwd_bprop_rms(x, g, y, dy, out, dout):
        gdx, gdg = dout
        dx, dg, gdy = second(x, g, dy, gdx, gdg)
        return dx, dg, ops.zeros_like(y), gdy

    bwd_rms = _custom(lib, "RmsNormBackward", lambda x, g, y, dy: (x, g),
                      lambda x, g, y, dy: (x, g), attrs, bwd_bprop_rms)

    def bprop_rms(x, g, out, dout):
        return bwd_rms(x, g, out, dout)

    return _custom(lib, "RmsNorm", _first, _first, attrs, bprop_rms)


def _conv_shape(x, w, b=None):  # stride 1, 'same' padding (the entry points read it from y)
    return [x[0], w[0]] + list(x[2:])


def _conv(lib, bias):
    """Conv2d (x, w, b) or Conv2dNoBias (x, w): bilinear in (x, w) like Matmul, so the backward's
    derivatives are the backward itself on the incoming gradients: d/dx = its dx for (gdw, dy),
    d/dw = its dw for (gdx, dy), d/d(dy) = conv(gdx, w) + conv(x, gdw) (+ gdb broadcast: the
    forward with gdb as its bias). y is 'same'-padded (the entry points read the padding from y)."""
    ops = _ms().ops
    if bias:
        def bwd_bprop(x, w, b, y, dy, out, dout):
            gdx, gdw, gdb = dout
            dx = bwd(x, gdw, b, y, dy)[0]
            dw = bwd(gdx, w, b, y, dy)[1]
            return dx, dw, ops.zeros_like(b), ops.zeros_like(y), fwd(gdx, w, gdb) + nob(x, gdw)

        bwd = _custom(lib, "Conv2dBackward", lambda x, w, b, y, dy: (x, w, b),
                      lambda x, w, b, y, dy: (x, w, b), {}, bwd_bprop)

        def bprop(x, w, b, out, dout):
            return bwd(x, w, b, out, dout)

        nob = _conv(lib, False)
        fwd = _custom(lib, "Conv2d", _conv_shape, _first, {}, bprop)
        return fwd

    def bwd_bprop_nb(x, w, y, dy, out, dout):
        gdx, gdw = dout
        dx = bwd_nb(x, gdw, y, dy)[0]
        dw = bwd_nb(gdx, w, y, dy)[1]
        return dx, dw, ops.zeros_like(y), fwd_nb(gdx, w) + fwd_nb(x, gdw)

    bwd_nb = _custom(lib, "Conv2dNoBiasBackward", lambda x, w, y, dy: (x, w),
                     lambda x, w, y, dy: (x, w), {}, bwd_bprop_nb)

    def bprop_nb(x, w, out, dout):
        return bwd_nb(x, w, out, dout)

    fwd_nb = _custom(lib, "Conv2dNoBias", _conv_shape, _first, {}, bprop_nb)
    return fwd_nb


def _linear_shape(x, w, b):
    return list(x[:-1]) + [w[0]]


def _linear(lib, name):
    """act(z), z = x w^T + b (w [out, in]). The backward is (dz w, dz^T x, sum dz), dz = dy act'(z).
    With the incoming (gdx, gdw, gdb), u = gdx w^T + x gdw^T + gdb (z's change along them) and
    the plain Linear's backward P: d/d(dy) = act'(z) u; d/dx = P's dx for (gdw, dz) plus P's dx
    for (w, dy act''(z) u); d/dw = P's dw for (gdx, dz) plus P's dw for (x, dy act''(z) u);
    d/db = sum of dy act''(z) u (act'' = 0 for the plain one and relu). z is recomputed by the
    plain Linear (for the gelus); relu' is y > 0."""
    ops = _ms().ops
    act = _LINEAR[name]
    consts = _consts(dict(_MATH))
    plain = _linear(lib, "Linear") if act is not None else None

    def u_of(x, w, b, gdx, gdw, gdb):
        return p_fwd(gdx, w, gdb) + p_fwd(x, gdw, ops.zeros_like(b))

    def first_order_terms(x, w, b, y, dz, gdx, gdw):
        return p_bwd(x, gdw, b, y, dz)[0], p_bwd(gdx, w, b, y, dz)[1]

    if act is None:
        def bwd_bprop(x, w, b, y, dy, out, dout):
            gdx, gdw, gdb = dout
            dx, dw = first_order_terms(x, w, b, y, dy, gdx, gdw)
            return dx, dw, ops.zeros_like(b), ops.zeros_like(y), u_of(x, w, b, gdx, gdw, gdb)
    elif act == "relu":
        def bwd_bprop(x, w, b, y, dy, out, dout):
            gdx, gdw, gdb = dout
            m = _mask(ops, y > 0, y)
            dx, dw = first_order_terms(x, w, b, y, dy * m, gdx, gdw)
            return (dx, dw, ops.zeros_like(b), ops.zeros_like(y),
                    u_of(x, w, b, gdx, gdw, gdb) * m)
    else:
        tanh_form = act == "tanh"

        def bwd_bprop(x, w, b, y, dy, out, dout):
            gdx, gdw, gdb = dout
            _, d1, d2 = _gelu_parts(ops, p_fwd(x, w, b), consts, tanh_form)
            u = u_of(x, w, b, gdx, gdw, gdb)
            dx, dw = first_order_terms(x, w, b, y, dy * d1, gdx, gdw)
            sx, sw, sb = p_bwd(x, w, b, y, dy * d2 * u)
            return dx + sx, dw + sw, sb, ops.zeros_like(y), u * d1

    bwd = _custom(lib, name + "Backward", lambda x, w, b, y, dy: (x, w, b),
                  lambda x, w, b, y, dy: (x, w, b), {}, bwd_bprop)

    def bprop(x, w, b, out, dout):
        return bwd(x, w, b, out, dout)

    fwd = _custom(lib, name, _linear_shape, _first, {}, bprop)
    fwd.opgrad_backward = bwd
    # the plain Linear and its backward (this operator itself when it is the plain one)
    p_fwd, p_bwd = (fwd, bwd) if plain is None else (plain, plain.opgrad_backward)
    return fwd


def _fused_add_scale(lib):
    """y = (x + bias) scale: bilinear in (x, bias) and scale, so d/dx, d/dbias = the backward's
    dx, dbias for scale gds; d/dscale = its dscale for (gdx, gdbias); d/d(dy) = (gdx + gdbias)
    scale + (x + bias) gds, the forward twice."""
    ops = _ms().ops

    def bwd_bprop(x, b, s, y, dy, out, dout):
        gdx, gdb, gds = dout
        dx, db, _ = bwd(x, b, gds, y, dy)
        ds = bwd(gdx, gdb, s, y, dy)[2]
        return dx, db, ds, ops.zeros_like(y), fwd(gdx, gdb, s) + fwd(x, b, gds)

    bwd = _custom(lib, "FusedAddScaleBackward", lambda x, b, s, y, dy: (x, b, s),
                  lambda x, b, s, y, dy: (x, b, s), {}, bwd_bprop)

    def bprop(x, b, s, out, dout):
        return bwd(x, b, s, out, dout)

    fwd = _custom(lib, "FusedAddScale", _first, _first, {}, bprop)
    return fwd


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
        raise ValueError("opgrad.mindspore.builtin: %r is not one of opgrad's aot entry points "
                         "(%s; docs/aot.md)" % (name, ", ".join(SUPPORTED)))
    known = _ATTRS.get(name, {})
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
    if name == "Matmul":
        return _bilinear(lib, "Matmul", _matmul_shape)
    if name == "FusedAddScale":
        return _fused_add_scale(lib)
    if name in ("SwiGlu", "GeGlu"):
        return _glu(lib, name, full)
    if name in ("LayerNorm", "RmsNorm"):
        return _norm(lib, name, full)
    if name in ("Conv2d", "Conv2dNoBias"):
        return _conv(lib, name == "Conv2d")
    return _linear(lib, name)
