"""The operator table shared by test_torch_adapter.py and consistency.py: each opgrad.torch
operator with the PyTorch function it must agree with, its input domain and its kinks.

Run everything with Debian's /usr/bin/python3 (python3-torch 1.13) and
    PYTHONPATH=<repo>/python OPGRAD_LIBRARY=<build>/libopgrad.so
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# OPGRAD_TEST_INSTALLED=1: test the installed package (the wheel), not the source tree
if os.path.join(REPO, "python") not in sys.path and os.environ.get("OPGRAD_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class Case:
    """name: row label; og(*ts) / pt(*ts): opgrad's and PyTorch's function of the same tensors;
    nin: tensor inputs; domain: inputs uniform in [lo, hi]; kinks: points where the function is
    not differentiable (gradcheck keeps away from them); shapes(n, m): the inputs' logical shapes
    for the plain layouts (binary ops broadcast in the 'broadcast' layout); shapes: a function
    (n, m) -> the inputs' shapes when they are not [n, m] each; k: how many products or terms
    one result element sums at most (the test bound grows with sqrt(k)); truth: the float64
    reference when PyTorch's own function is not accurate enough in float64 (default pt); absfn:
    for sums of products, absfn(xs, abs_xs) is the result's magnitude, the sum of |terms|, a
    function of the inputs' absolute values (see magnitudes())."""

    def __init__(self, name, og, pt, nin=1, domain=(-6.0, 6.0), kinks=(), op=None,
                 domains=None, torch_has=True, via_ops=None, layouts=None, shapes=None, k=None,
                 truth=None, absfn=None, magfn=None):
        self.name, self.og, self.pt, self.nin = name, og, pt, nin
        self.domain, self.kinks = domain, kinks
        self.domains = domains or [domain] * nin
        self.op = op or name           # the torch.ops.opgrad name
        self.torch_has = torch_has     # PyTorch has this operator (consistency table)
        # the same computation through torch.ops.opgrad (default: the op called with the tensors)
        self.via_ops = via_ops or (lambda *ts, _n=self.op: getattr(torch.ops.opgrad, _n)(*ts))
        self.layouts = layouts         # None: every layout that applies
        self.shapes = shapes           # None: [n, m] each (fused_add_scale: its own)
        self.k = k                     # None: 1 (elementwise); else k(n, m)
        self.truth = truth or pt       # float64 reference
        self.absfn = absfn             # None: not a sum of products
        self.magfn = magfn             # magfn(xs, g): the results' magnitudes, directly

    def layouts_or_all(self):
        return layouts_for(self)


SOFTMAX_LAYOUTS = ("contiguous", "transposed", "offset")

CASES = [
    Case("mish", ot.mish, F.mish),
    Case("gelu", ot.gelu, lambda x: F.gelu(x, approximate="tanh")),
    Case("gelu_v2[none]", lambda x: ot.gelu_v2(x, "none"), F.gelu, op="gelu_v2",
         via_ops=lambda x: torch.ops.opgrad.gelu_v2(x, "none")),
    Case("gelu_v2[tanh]", lambda x: ot.gelu_v2(x, "tanh"), lambda x: F.gelu(x, approximate="tanh"),
         op="gelu_v2", via_ops=lambda x: torch.ops.opgrad.gelu_v2(x, "tanh")),
    Case("silu", ot.silu, F.silu),
    Case("sigmoid", ot.sigmoid, torch.sigmoid),
    Case("tanh", ot.tanh, torch.tanh),
    Case("softplus", ot.softplus, F.softplus, domain=(-8.0, 8.0)),
    Case("softplus[b=2,t=5]", lambda x: ot.softplus(x, 2.0, 5.0),
         lambda x: F.softplus(x, 2.0, 5.0), kinks=(2.5,), op="softplus",
         via_ops=lambda x: torch.ops.opgrad.softplus(x, 2.0, 5.0)),
    Case("relu", ot.relu, F.relu, kinks=(0.0,)),
    Case("leaky_relu[0.2]", lambda x: ot.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2),
         kinks=(0.0,), op="leaky_relu", via_ops=lambda x: torch.ops.opgrad.leaky_relu(x, 0.2)),
    Case("hardswish", ot.hardswish, F.hardswish, kinks=(-3.0, 3.0)),
    Case("elu[0.7]", lambda x: ot.elu(x, 0.7), lambda x: F.elu(x, 0.7), kinks=(0.0,), op="elu",
         via_ops=lambda x: torch.ops.opgrad.elu(x, 0.7)),
    Case("elu", ot.elu, F.elu, kinks=(0.0,)),
    Case("add", ot.add, torch.add, nin=2),
    Case("add[alpha=0.5]", lambda a, b: ot.add(a, b, 0.5), lambda a, b: torch.add(a, b, alpha=0.5),
         nin=2, op="add", via_ops=lambda a, b: torch.ops.opgrad.add(a, b, 0.5)),
    Case("mul", ot.mul, torch.mul, nin=2),
    Case("muls[2.5]", lambda x: ot.muls(x, 2.5), lambda x: x * 2.5, op="muls",
         via_ops=lambda x: torch.ops.opgrad.muls(x, 2.5)),
    Case("reduce_sum[-1]", lambda x: ot.reduce_sum(x, [-1]), lambda x: x.sum(-1), op="reduce_sum",
         via_ops=lambda x: torch.ops.opgrad.reduce_sum(x, [-1])),
    Case("reduce_sum[all]", lambda x: ot.reduce_sum(x), lambda x: x.sum(), op="reduce_sum"),
    # (no "expanded" layout: equal values along the softmax dim make the expanded leaf's gradient
    # a sum that cancels to exactly 0, which a relative bound cannot judge)
    Case("softmax", ot.softmax, lambda x: torch.softmax(x, -1), layouts=SOFTMAX_LAYOUTS),
    Case("softmax[0]", lambda x: ot.softmax(x, 0), lambda x: torch.softmax(x, 0), op="softmax",
         via_ops=lambda x: torch.ops.opgrad.softmax(x, 0), layouts=SOFTMAX_LAYOUTS),
    Case("log_softmax", ot.log_softmax, lambda x: torch.log_softmax(x, -1),
         layouts=SOFTMAX_LAYOUTS),
    Case("log_softmax[0]", lambda x: ot.log_softmax(x, 0), lambda x: torch.log_softmax(x, 0),
         op="log_softmax", via_ops=lambda x: torch.ops.opgrad.log_softmax(x, 0),
         layouts=SOFTMAX_LAYOUTS),
    Case("fused_add_scale", ot.fused_add_scale, lambda x, b, s: (x + b) * s, nin=3,
         domains=[(-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)], torch_has=False),
]


def _peer(name):
    """PyTorch's function of the same name (torch.nn.functional, then torch), or None."""
    return getattr(F, name, None) or getattr(torch, name, None)


def _list_cases():
    """A case for every standard pair of the operator list (opgrad.torch's LIST_PAIRS) that has
    none above, against the PyTorch function of the same name at the default attributes: an
    operator added to src/ops/ops.inc is compared with PyTorch without an edit here. Domain
    (-6, 6), no kinks (an operator with a kink whose derivative convention differs from PyTorch's
    needs a case of its own). Pairs without a PyTorch peer are in NO_PEER."""
    have = {c.op for c in CASES}
    cases, no_peer = [], []
    for name in sorted(ot._kernels.LIST_PAIRS):
        if name in have:
            continue
        pt = _peer(name)
        if pt is None:
            no_peer.append(name)
        else:
            cases.append(Case(name, getattr(ot, name), pt))
    return cases, no_peer


LIST_CASES, NO_PEER = _list_cases()
CASES += LIST_CASES


# The matmul family (kept out of CASES: their results are sums of products, so their bounds grow
# with the number of terms, Case.k; test_torch_adapter.TestMatmul and consistency.py run them).
# Domain (-2, 2); n, m: the operands are [n, m] @ [m, n] (matmul, mm), x [n, m] with weight
# [n, m] (linear: n out features), batches of 3 (bmm / baddbmm: 2).
def _gelu_erf64(z):
    """gelu(z) = z Phi(z) through erfc: accurate in float64 where PyTorch's 0.5 z (1 + erf(z /
    sqrt 2)) cancels to 0 (z < -8: PyTorch gives -0.0 for gelu(-9) = -1.0e-18)."""
    return 0.5 * z * torch.special.erfc(-z * 0.7071067811865476)


def _gelu_tanh64(z):
    """0.5 z (1 + tanh(u)) = z sigmoid(2u), u = sqrt(2/pi) (z + 0.044715 z^3): without the
    cancellation of 1 + tanh(u) for z << 0."""
    return z * torch.sigmoid(1.5957691216057308 * (z + 0.044715 * z * z * z))


_LINEAR_ACTS = {  # activation: (PyTorch's function, accurate float64 function)
    None: (lambda z: z, lambda z: z),
    "relu": (F.relu, F.relu),
    "gelu": (F.gelu, _gelu_erf64),
    "gelu_tanh": (lambda z: F.gelu(z, approximate="tanh"), _gelu_tanh64),
}


def _act_slope(act, z):
    """|act'(z)| in float64 (a constant: no gradient flows through it)."""
    if act is None:
        return torch.ones_like(z)
    z = z.detach().requires_grad_()
    with torch.enable_grad():
        (d,) = torch.autograd.grad(_LINEAR_ACTS[act][1](z).sum(), z)
    return d.abs()


def _linear_case(act, bias=True):
    pt_act, truth_act = _LINEAR_ACTS[act]
    name = "linear" + ("[%s]" % act if act else "") + ("" if bias else "[nobias]")
    if bias:
        og = lambda x, w, b, _a=act: ot.linear(x, w, b, _a)  # noqa: E731
        pt = lambda x, w, b, _f=pt_act: _f(F.linear(x, w, b))  # noqa: E731
        truth = lambda x, w, b, _f=truth_act: _f(F.linear(x, w, b))  # noqa: E731
        shapes = lambda n, m: [(n, m), (n, m), (n,)]  # noqa: E731
    else:
        og = lambda x, w, _a=act: ot.linear(x, w, None, _a)  # noqa: E731
        pt = lambda x, w, _f=pt_act: _f(F.linear(x, w))  # noqa: E731
        truth = lambda x, w, _f=truth_act: _f(F.linear(x, w))  # noqa: E731
        shapes = lambda n, m: [(n, m), (n, m)]  # noqa: E731

    def absfn(xs, ax, _a=act):  # |act'(z)| (|x| @ |w|^T + |b|)
        return _act_slope(_a, F.linear(*xs)) * F.linear(*ax)

    return Case(name, og, pt, nin=3 if bias else 2, domain=(-2.0, 2.0), op="fused_matmul",
                shapes=shapes, k=lambda n, m: max(n, m), kinks=(),
                layouts=("contiguous", "transposed", "offset"), via_ops=og, truth=truth,
                absfn=absfn)


def _bilinear(f):
    return lambda xs, ax: f(*ax)


MATMUL_CASES = [
    Case("matmul", ot.matmul, torch.matmul, nin=2, domain=(-2.0, 2.0),
         shapes=lambda n, m: [(n, m), (m, n)], k=lambda n, m: max(n, m),
         layouts=("contiguous", "transposed", "offset", "expanded"),
         absfn=_bilinear(torch.matmul)),
    Case("matmul[vec]", ot.matmul, torch.matmul, nin=2, domain=(-2.0, 2.0), op="matmul",
         shapes=lambda n, m: [(n, m), (m,)], k=lambda n, m: max(n, m),
         layouts=("contiguous", "transposed", "offset"), absfn=_bilinear(torch.matmul)),
    Case("matmul[batch]", ot.matmul, torch.matmul, nin=2, domain=(-2.0, 2.0), op="matmul",
         shapes=lambda n, m: [(3, n, m), (m, n)], k=lambda n, m: 3 * max(n, m),
         layouts=("contiguous", "transposed", "offset", "expanded"),
         absfn=_bilinear(torch.matmul)),
    Case("mm", ot.mm, torch.mm, nin=2, domain=(-2.0, 2.0), shapes=lambda n, m: [(n, m), (m, n)],
         k=lambda n, m: max(n, m), layouts=("contiguous", "transposed", "offset", "expanded"),
         absfn=_bilinear(torch.mm)),
    Case("bmm", ot.bmm, torch.bmm, nin=2, domain=(-2.0, 2.0),
         shapes=lambda n, m: [(2, n, m), (2, m, n)], k=lambda n, m: max(n, m),
         layouts=("contiguous",), absfn=_bilinear(torch.bmm)),
    Case("addmm[b=0.5,a=2]", lambda i, a, b: ot.addmm(i, a, b, 0.5, 2.0),
         lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0), nin=3, domain=(-2.0, 2.0),
         op="addmm", shapes=lambda n, m: [(n,), (n, m), (m, n)], k=lambda n, m: max(n, m),
         absfn=_bilinear(lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0))),
    Case("baddbmm[b=0.5,a=1.5]", lambda i, a, b: ot.baddbmm(i, a, b, 0.5, 1.5),
         lambda i, a, b: torch.baddbmm(i, a, b, beta=0.5, alpha=1.5), nin=3,
         domain=(-2.0, 2.0), op="baddbmm", shapes=lambda n, m: [(n,), (2, n, m), (2, m, n)],
         k=lambda n, m: 2 * max(n, m), layouts=("contiguous",),
         absfn=_bilinear(lambda i, a, b: 0.5 * i + 1.5 * torch.matmul(a, b))),
] + [_linear_case(a) for a in (None, "relu", "gelu", "gelu_tanh")] + [
    _linear_case("gelu", bias=False), _linear_case("gelu_tanh", bias=False),
    _linear_case("relu", bias=False)]



# Normalizations and gated units (issue 14; kept out of CASES: their inputs have shapes of their
# own and their weight gradients are sums over the rows, Case.k). x is [n, m]: LayerNorm and
# RMSNorm normalize each row (weight / bias [m]); BatchNorm normalizes each of the m channels over
# the n samples (training mode: batch statistics); GroupNorm takes m channels in 4 groups; the
# GLUs split the rows into halves (silu(a) * b, a * gelu(b)). Their results cancel (w xhat + b,
# dy - mean(dy) - xhat mean(dy xhat), sums of signed gradients), so each case has a magnitude
# function (magfn): every result's sum of |terms| in float64, the denominator of its relative
# errors where the result itself cancels, as the matmul cases' absfn.
def _rms64(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _halves(x):
    return x.chunk(2, dim=-1)


def _norm_mags(xhat, rstd, g, w, b, dims):
    """Magnitudes of y = xhat w + b and of its gradients when xhat = (x - mean) rstd normalizes
    over `dims` (the per-statistic reduction dims), w and b broadcast over the other dims."""
    gw = (g * w).abs()
    y = xhat.abs() * w.abs() + (b.abs() if b is not None else 0)
    dx = rstd * (gw + gw.mean(dims, keepdim=True)
                 + xhat.abs() * (gw * xhat.abs()).mean(dims, keepdim=True))
    return y, dx


def _ln_mag(xs, g):
    x, w, b = [t.detach().double() for t in xs]
    g = g.double().abs()
    mean = x.mean(-1, keepdim=True)
    rstd = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    xhat = (x - mean) * rstd
    y, dx = _norm_mags(xhat, rstd, g, w, b, (-1,))
    return [y, dx, (g * xhat.abs()).sum(0), g.sum(0)]


def _bn_mag(xs, g):
    x, w, b = [t.detach().double() for t in xs]
    g = g.double().abs()
    mean = x.mean(0, keepdim=True)
    rstd = torch.rsqrt(x.var(0, unbiased=False, keepdim=True) + 1e-5)
    xhat = (x - mean) * rstd
    y, dx = _norm_mags(xhat, rstd, g, w, b, (0,))
    return [y, dx, (g * xhat.abs()).sum(0), g.sum(0)]


def _gn_mag(xs, g, groups=4):
    x, w, b = [t.detach().double() for t in xs]
    n, m = x.shape
    g = g.double().abs()
    xg = x.reshape(n, groups, m // groups)
    mean = xg.mean(-1, keepdim=True)
    rstd = torch.rsqrt(xg.var(-1, unbiased=False, keepdim=True) + 1e-5)
    xhat = (xg - mean) * rstd
    wg, bg = w.reshape(groups, m // groups), b.reshape(groups, m // groups)
    y, dx = _norm_mags(xhat, rstd, g.reshape(n, groups, m // groups), wg, bg, (-1,))
    xhat = xhat.reshape(n, m)
    return [y.reshape(n, m), dx.reshape(n, m), (g * xhat.abs()).sum(0), g.sum(0)]


def _rms_mag(xs, g):
    x, w = [t.detach().double() for t in xs]
    g = g.double().abs()
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    xn = x.abs() * rstd
    gw = g * w.abs()
    dx = rstd * (gw + xn * (gw * xn).mean(-1, keepdim=True))
    return [xn * w.abs(), dx, (g * xn).sum(0)]


def _glu_mag(act):
    """a * act(b) or act(a) * b: |y|, and the gradient magnitudes |g| |other| (|act'| as the sum
    of its terms' magnitudes: silu' = s + x s (1 - s), gelu' = Phi + x phi)."""
    def mag(xs, g):
        x = xs[0].detach().double()
        g = g.double().abs()
        a, b = _halves(x)
        if act == "silu":
            s = torch.sigmoid(a)
            y = (a * s).abs() * b.abs()
            da = g * b.abs() * (s + (a * s * (1 - s)).abs())
            db = g * (a * s).abs()
            return [y, torch.cat([da, db], -1)]
        phi = torch.exp(-0.5 * b * b) * 0.3989422804014327
        cdf = 0.5 * torch.special.erfc(-b * 0.7071067811865476)
        y = a.abs() * (b * cdf).abs()
        da = g * (b * cdf).abs()
        db = g * a.abs() * (cdf + (b * phi).abs())
        return [y, torch.cat([da, db], -1)]
    return mag


_NORM_LAYOUTS = ("contiguous", "transposed", "offset")
TRAINING_CASES = [
    Case("layer_norm", lambda x, w, b: ot.layer_norm(x, [x.shape[-1]], w, b),
         lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), nin=3, domain=(-2.0, 2.0),
         shapes=lambda n, m: [(n, m), (m,), (m,)], k=lambda n, m: max(n, m),
         layouts=_NORM_LAYOUTS, magfn=_ln_mag),
    Case("rms_norm", lambda x, w: ot.rms_norm(x, [x.shape[-1]], w, 1e-6), _rms64, nin=2,
         domain=(-2.0, 2.0), shapes=lambda n, m: [(n, m), (m,)], k=lambda n, m: max(n, m),
         layouts=_NORM_LAYOUTS, magfn=_rms_mag),
    Case("batch_norm[train]",
         lambda x, w, b: ot.batch_norm(x, None, None, w, b, training=True),
         lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), nin=3,
         domain=(-2.0, 2.0), op="batch_norm", shapes=lambda n, m: [(n, m), (m,), (m,)],
         k=lambda n, m: max(n, m), layouts=_NORM_LAYOUTS, magfn=_bn_mag),
    Case("group_norm[4]", lambda x, w, b: ot.group_norm(x, 4, w, b),
         lambda x, w, b: F.group_norm(x, 4, w, b), nin=3, domain=(-2.0, 2.0), op="group_norm",
         shapes=lambda n, m: [(n, m), (m,), (m,)], k=lambda n, m: max(n, m),
         layouts=_NORM_LAYOUTS, magfn=_gn_mag),
    Case("swiglu", ot.swiglu, lambda x: F.silu(_halves(x)[0]) * _halves(x)[1],
         domain=(-4.0, 4.0), op="swi_glu", k=lambda n, m: 1, layouts=_NORM_LAYOUTS,
         magfn=_glu_mag("silu")),
    Case("geglu", ot.geglu, lambda x: _halves(x)[0] * F.gelu(_halves(x)[1]),
         domain=(-4.0, 4.0), op="ge_glu", k=lambda n, m: 1, layouts=_NORM_LAYOUTS,
         magfn=_glu_mag("gelu")),
]


# Losses (issue 14), reduction "mean" unless named: the targets of the classification losses are
# made from the input's shape (not inputs of the case: they have no gradient), class r % m for row
# r, probabilities 0, 0.5, 1 in turn for the binary ones.
def _classes(x):
    return torch.arange(x.shape[0]) % x.shape[1]


def _probs(x):
    return (torch.arange(x.numel()) % 3).reshape(x.shape).to(x.dtype) / 2


def _ce_mag(ls):
    """The gradient g / N (softmax - (1 - ls) onehot - ls / C) cancels where the softmax is close
    to ls / C: its magnitude is the sum of the three terms' absolute values (the loss, a sum of
    positive terms, needs none)."""
    def mag(xs, g):
        x = xs[0].detach().double()
        n, c = x.shape
        p = torch.softmax(x, -1)
        onehot = F.one_hot(_classes(x), c).double()
        return [None, g.double().abs() / n * (p + (1 - ls) * onehot + ls / c)]
    return mag


_LOSS_LAYOUTS = ("contiguous", "transposed", "offset")
TRAINING_CASES += [
    Case("mse_loss", ot.mse_loss, F.mse_loss, nin=2, domain=(-2.0, 2.0), k=lambda n, m: n * m,
         layouts=_LOSS_LAYOUTS),
    Case("mse_loss[sum]", lambda x, t: ot.mse_loss(x, t, "sum"),
         lambda x, t: F.mse_loss(x, t, reduction="sum"), nin=2, domain=(-2.0, 2.0),
         op="mse_loss", k=lambda n, m: n * m, layouts=_LOSS_LAYOUTS),
    Case("l1_loss", ot.l1_loss, F.l1_loss, nin=2, domain=(-2.0, 2.0), kinks=(), 
         k=lambda n, m: n * m, layouts=("contiguous",)),
    Case("smooth_l1_loss[0.5]", lambda x, t: ot.smooth_l1_loss(x, t, beta=0.5),
         lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), nin=2, domain=(-2.0, 2.0),
         op="smooth_l1_loss", k=lambda n, m: n * m, layouts=("contiguous",)),
    Case("bce", lambda x: ot.binary_cross_entropy(x, _probs(x)),
         lambda x: F.binary_cross_entropy(x, _probs(x)), domain=(0.02, 0.98),
         op="binary_cross_entropy", k=lambda n, m: n * m, layouts=_LOSS_LAYOUTS),
    Case("bce_with_logits", lambda x: ot.binary_cross_entropy_with_logits(x, _probs(x)),
         lambda x: F.binary_cross_entropy_with_logits(x, _probs(x)), domain=(-6.0, 6.0),
         op="binary_cross_entropy_with_logits", k=lambda n, m: n * m, layouts=_LOSS_LAYOUTS),
    Case("cross_entropy", lambda x: ot.cross_entropy(x, _classes(x)),
         lambda x: F.cross_entropy(x, _classes(x)), domain=(-4.0, 4.0),
         k=lambda n, m: n * m, layouts=_LOSS_LAYOUTS, magfn=_ce_mag(0.0)),
    Case("cross_entropy[ls=0.1]", lambda x: ot.cross_entropy(x, _classes(x), label_smoothing=0.1),
         lambda x: F.cross_entropy(x, _classes(x), label_smoothing=0.1), domain=(-4.0, 4.0),
         op="cross_entropy", k=lambda n, m: n * m, layouts=_LOSS_LAYOUTS, magfn=_ce_mag(0.1)),
    Case("nll_loss", lambda x: ot.nll_loss(x, _classes(x)),
         lambda x: F.nll_loss(x, _classes(x)), domain=(-4.0, 0.0), k=lambda n, m: n * m,
         layouts=_LOSS_LAYOUTS),
]

def magnitudes(case, xs, g):
    """For a sum of products (case.absfn): the float64 magnitude, sum of |terms|, of the forward
    result and of the gradient of each operator input xs (float64 tensors as handed to the
    operator), with grad_output g: absfn on |xs|, differentiated with |g|. None otherwise."""
    if case.magfn is not None:
        return case.magfn(xs, g)
    if case.absfn is None:
        return None
    xs = [x.detach().double() for x in xs]
    ax = [x.abs().requires_grad_() for x in xs]
    with torch.enable_grad():
        y = case.absfn(xs, ax)
        y.backward(g.detach().double().abs())
    return [y.detach()] + [a.grad for a in ax]


BY_NAME = {c.name: c for c in CASES + MATMUL_CASES + TRAINING_CASES}


def uniform(shape, lo, hi, gen):
    return torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo


def away_from_kinks(x, kinks, margin):
    """Moves values within `margin` of a kink to kink +- margin (keeps sign of the offset)."""
    for k in kinks:
        d = x - k
        near = d.abs() < margin
        x = torch.where(near, k + torch.where(d >= 0, margin, -margin) * torch.ones_like(x), x)
    return x


def base_shapes(case, n, m):
    """Logical shapes of the inputs of `case` for an [n, m] problem."""
    if case.shapes is not None:
        return [tuple(s) for s in case.shapes(n, m)]
    if case.name == "fused_add_scale":
        return [(n, m), (m,), (1,)]
    return [(n, m)] * case.nin


def make_inputs(case, dtype, layout, n, m, gen):
    """Leaf tensors (what gradients are measured on) and the views handed to the operators.

    layouts: contiguous; transposed (every [n, m] input is the .t() view of an [m, n] leaf);
    offset (every input is a slice, with a non-zero storage offset and a row stride larger than
    its width, of a bigger leaf); expanded (the last input is a stride-0 expand of a [n, 1] or
    [1, m] leaf); broadcast (binary ops: the second input has shape [m] and broadcasts).
    Values are drawn in float64 and quantized to `dtype` (the same quantized values go to every
    framework and to the float64 truth)."""
    shapes = base_shapes(case, n, m)
    leaves, views = [], []
    for i, (shape, (lo, hi)) in enumerate(zip(shapes, case.domains)):
        last = i == len(shapes) - 1
        two_d = len(shape) == 2
        if layout == "transposed" and two_d:
            leaf = uniform((shape[1], shape[0]), lo, hi, gen).to(dtype)
            view = lambda t: t.t()
        elif layout == "offset" and two_d:
            leaf = uniform((shape[0] + 2, shape[1] + 5), lo, hi, gen).to(dtype)
            view = lambda t, s=shape: t[1:1 + s[0], 3:3 + s[1]]
        elif layout == "expanded" and two_d and last:
            if case.nin == 1:
                leaf = uniform((shape[0], 1), lo, hi, gen).to(dtype)
            else:
                leaf = uniform((1, shape[1]), lo, hi, gen).to(dtype)
            view = lambda t, s=shape: t.expand(*s)
        elif layout == "broadcast" and two_d and last and case.nin == 2:
            leaf = uniform((shape[1],), lo, hi, gen).to(dtype)
            view = lambda t: t
        else:
            leaf = uniform(shape, lo, hi, gen).to(dtype)
            view = lambda t: t
        # at a kink the derivative is a convention, not mathematics (PyTorch 1.13's hardswish
        # backward gives 1.5 at x = 3 on its scalar path and 1 on its vectorized one): no
        # framework can be judged there, so values keep the margin gradcheck keeps
        leaves.append(away_from_kinks(leaf, case.kinks, 0.05).to(dtype))
        views.append(view)
    return leaves, views



def layouts_for(case):
    if case.layouts:
        return list(case.layouts)
    out = ["contiguous", "transposed", "offset", "expanded"]
    if case.nin == 2:
        out.append("broadcast")
    return out
