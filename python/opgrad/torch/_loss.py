"""The pointwise losses of opgrad.torch (issue 14, family loss; docs/ops/loss.md):
mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy, binary_cross_entropy_with_logits, with
PyTorch's signatures (reduction "none" / "mean" / "sum"). Forward and backward are one aclnn call
each (aclnnMseLoss / aclnnMseLossBackward, ...); a broadcast input's gradient is summed down to
its shape on opgrad's reduction engine. Gradients: input always; target for mse_loss, l1_loss and
smooth_l1_loss (the negated input gradient, summed to target's shape); none for the targets and
weights of the two cross entropies (PyTorch 1.13 has none for binary_cross_entropy's target
either).

Registration follows _ops.py's OpDef machinery: on PyTorch >= 2.4 each operator is a custom_op
torch.ops.opgrad.<name> with a fake and register_autograd; on 1.13 the "opgrad" library is
already defined (one DEF per namespace), so these live in their own namespace,
torch.ops.opgrad_loss.<name>, with an Autograd kernel calling a torch.autograd.Function.
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops as O

_RED = {"none": 0, "mean": 1, "sum": 2}

# SmoothL1's beta is a C float; the operator list has no float kind (D is double), so the
# phase-1 ctypes declarations of these two are corrected here.
for _name in ("SmoothL1Loss", "SmoothL1LossBackward"):
    _f = L.phase1[_name]
    _kinds = [p.kind for p in L.OPS[_name].params] + ["", ""]  # + workspaceSize, executor
    _f.argtypes = [ctypes.c_float if k == "D" else t for k, t in zip(_kinds, _f.argtypes)]


def _reduction(op, reduction):
    if reduction not in _RED:
        raise ValueError("opgrad.torch.%s: reduction must be 'none', 'mean' or 'sum', got %r"
                         % (op, reduction))
    return _RED[reduction]


def _bshape(*ts):
    shape = None
    for t in ts:
        if t is None:
            continue
        shape = t.shape if shape is None else K.broadcast_shape(shape, t.shape)
        if shape is None:
            return None
    return shape


# ---- kernels (one aclnn call each; reduction as an int 0/1/2) ------------------------------------
_NAMES = ("input", "target", "weight", "pos_weight")


def _forward(op, acl, x, t, w, pw, red, beta, has_w, has_pw):
    K._checked(op, tuple(zip((x, t, w, pw), _NAMES)))
    shape = _bshape(x, t, w, pw)
    out = torch.empty((0,) if shape is None else (shape if red == 0 else ()),
                      dtype=K.promote(x, t, w, pw))
    p1 = L.phase1[acl]
    ins = [x, t] + ([w] if has_w else []) + ([pw] if has_pw else [])

    def phase1(hi, ho, sc, ws, ex):
        args = list(hi) + [red] + ([beta] if beta is not None else []) + [ho[0], ws, ex]
        return p1(*args)

    K._mm_run("aclnn" + acl, phase1, ins, [out], (red, beta))
    return out


def _backward(op, acl, g, x, t, w, pw, red, beta, has_w, has_pw):
    K._checked(op, tuple(zip((g, x, t, w, pw), ("grad",) + _NAMES)))
    shape = _bshape(g, x, t, w, pw)
    out = torch.empty((0,) if shape is None else shape, dtype=K.promote(g, x, t, w, pw))
    p1 = L.phase1[acl]
    ins = [g, x, t] + ([w] if has_w else []) + ([pw] if has_pw else [])

    def phase1(hi, ho, sc, ws, ex):
        args = list(hi) + [red] + ([beta] if beta is not None else []) + [ho[0], ws, ex]
        return p1(*args)

    K._mm_run("aclnn" + acl, phase1, ins, [out], (red, beta))
    return out


def mse_loss_kernel(x, t, reduction=1):
    return _forward("mse_loss", "MseLoss", x, t, None, None, reduction, None, False, False)


def mse_loss_backward_kernel(g, x, t, reduction=1):
    return _backward("mse_loss", "MseLossBackward", g, x, t, None, None, reduction, None, False,
                     False)


def l1_loss_kernel(x, t, reduction=1):
    return _forward("l1_loss", "L1Loss", x, t, None, None, reduction, None, False, False)


def l1_loss_backward_kernel(g, x, t, reduction=1):
    return _backward("l1_loss", "L1LossBackward", g, x, t, None, None, reduction, None, False,
                     False)


def smooth_l1_loss_kernel(x, t, reduction=1, beta=1.0):
    return _forward("smooth_l1_loss", "SmoothL1Loss", x, t, None, None, reduction, float(beta),
                    False, False)


def smooth_l1_loss_backward_kernel(g, x, t, reduction=1, beta=1.0):
    return _backward("smooth_l1_loss", "SmoothL1LossBackward", g, x, t, None, None, reduction,
                     float(beta), False, False)


# The cross entropies pass an absent weight as NULL: the list's parameter is there either way.
def binary_cross_entropy_kernel(x, t, weight=None, reduction=1):
    return _forward("binary_cross_entropy", "BinaryCrossEntropy", x, t, weight, None, reduction,
                    None, True, False)


def binary_cross_entropy_backward_kernel(g, x, t, weight=None, reduction=1):
    return _backward("binary_cross_entropy", "BinaryCrossEntropyBackward", g, x, t, weight, None,
                     reduction, None, True, False)


def binary_cross_entropy_with_logits_kernel(x, t, weight=None, pos_weight=None, reduction=1):
    return _forward("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogits", x, t,
                    weight, pos_weight, reduction, None, True, True)


def binary_cross_entropy_with_logits_backward_kernel(g, x, t, weight=None, pos_weight=None,
                                                     reduction=1):
    return _backward("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward",
                     g, x, t, weight, pos_weight, reduction, None, True, True)


# ---- autograd formulas ----------------------------------------------------------------------------
def _setup(ctx, inputs, output):
    ctx.save_for_backward(*[t for t in inputs if isinstance(t, torch.Tensor)])
    ctx.inputs_none = [t is None for t in inputs]
    ctx.attrs = [a for a in inputs if not isinstance(a, torch.Tensor) and a is not None]
    ctx.ntensor = sum(1 for t in inputs if isinstance(t, torch.Tensor) or t is None)


def _saved(ctx):
    it = iter(ctx.saved_tensors)
    return [None if none else next(it) for none in ctx.inputs_none[:ctx.ntensor]]


def _reducer():
    # the engine's reduce_sum (the 1.13 path calls kernels, 2.x the custom ops)
    return K if not O.USING_CUSTOM_OP else torch.ops.opgrad


def _pair_backward(bname, with_target):
    """Backward of (input, target, attrs...): input's gradient, and target's (its negation) for
    the differences losses."""

    def backward(ops, ctx, grad):
        x, t = _saved(ctx)[:2]
        gx_full = getattr(ops, bname)(grad, x, t, *ctx.attrs)
        red = _reducer()
        gx = O._sum_to(red, gx_full, x.shape, x.dtype) if ctx.needs_input_grad[0] else None
        gt = None
        if with_target and ctx.needs_input_grad[1]:
            gt = O._sum_to(red, -gx_full, t.shape, t.dtype)
        return (gx, gt) + (None,) * len(ctx.attrs)

    return backward


def _weighted_backward(bname, nweights):
    def backward(ops, ctx, grad):
        vals = _saved(ctx)
        x = vals[0]
        gx_full = getattr(ops, bname)(grad, *vals, *ctx.attrs)
        gx = O._sum_to(_reducer(), gx_full, x.shape, x.dtype)
        return (gx, None) + (None,) * nweights + (None,) * len(ctx.attrs)

    return backward


# ---- second order: the backward operators' own derivatives (see _ops.py, "second order") --------
# A loss backward B(g, x, t, ...) = g r l'(x, t) (r = 1/N for the mean, 1 for the sum; g of the
# output's shape for "none") is linear in g: d/dg = the sum over G B(1, x, t) (B with reduction
# "none" applied to G, then reduced as g was), and d/dx = G g r l''(x, t), d/dt = -d/dx for the
# difference losses (l a function of x - t). l'' per loss, composed from opgrad operators in
# float32 for 16-bit tensors (float64 ones as they are): mse 2; l1 0; smooth_l1 1/beta where
# |x - t| < beta, else 0; binary_cross_entropy_with_logits w (pw t + 1 - t) s (1 - s),
# s = sigmoid(x), and binary_cross_entropy w (t / x^2 + (1 - t) / (1 - x)^2) (their targets,
# weights and pos_weight get no gradient, as in the first order).
def _wide(*ts):
    keep = (torch.float32, torch.float64)
    return tuple(None if t is None else t if t.dtype in keep else t.float() for t in ts)


def _dgrad(ops, bname, G, g, ins, red, rest):
    e = getattr(ops, bname)(G, *ins, 0, *rest)  # G l'(x, t), elementwise
    if red == 0:
        return O._sum_to(ops, e, g.shape, g.dtype)
    total = ops.reduce_sum(e, list(range(e.dim())), False) if e.dim() else e
    if red == 1 and e.numel():
        total = ops.muls(total, 1.0 / e.numel())
    return total.reshape(g.shape).to(g.dtype)


def _mse_curvature(ops, x, t, rest):
    return 2.0


def _l1_curvature(ops, x, t, rest):
    return None


def _smooth_l1_curvature(ops, x, t, rest):
    beta = float(rest[0]) if rest else 1.0
    if beta == 0:
        return None  # (l1)
    inside = (x - t).abs() < beta  # a constant mask: its own derivative is 0
    return inside.to(x.dtype) / beta


def _pair_second_order(bname, curvature):
    def backward(ops, ctx, G):
        g, x, t = _saved(ctx)[:3]
        red, rest = (ctx.attrs[0] if ctx.attrs else 1), tuple(ctx.attrs[1:])
        need = ctx.needs_input_grad
        g32, x32, t32, G32 = _wide(g, x, t, G)
        dg = dx = dt = None
        if need[0]:
            dg = _dgrad(ops, bname, G32, g, (x32, t32), red, rest)
        h = curvature(ops, x32, t32, rest) if need[1] or need[2] else None
        if h is not None:
            v = ops.mul(G32, g32)
            v = ops.muls(v, h / G.numel() if red == 1 else h) if isinstance(h, float) else \
                ops.mul(ops.muls(v, 1.0 / G.numel()) if red == 1 else v, h)
            dx = O._sum_to(ops, v, x.shape, x.dtype) if need[1] else None
            dt = O._sum_to(ops, ops.muls(v, -1.0), t.shape, t.dtype) if need[2] else None
        return (dg, dx, dt) + (None,) * len(ctx.attrs)

    return backward


def _scaled_upstream(ops, G, g, w, red):
    """G g r w: the gradient of dx times the loss's incoming one, the mean's 1/N and the weight."""
    h = ops.mul(G, g)
    if red == 1:
        h = ops.muls(h, 1.0 / G.numel())
    return h if w is None else ops.mul(h, w)


def _bce_logits_second_order(ops, ctx, G):
    g, x, t, w, pw = _saved(ctx)[:5]
    red = ctx.attrs[0] if ctx.attrs else 1
    need = ctx.needs_input_grad
    g32, x32, t32, w32, pw32, G32 = _wide(g, x, t, w, pw, G)
    dg = dx = None
    if need[0]:
        dg = _dgrad(ops, "binary_cross_entropy_with_logits_backward", G32, g,
                    (x32, t32, w32, pw32), red, ())
    if need[1]:
        h = _scaled_upstream(ops, G32, g32, w32, red)
        if pw32 is not None:  # pw t + 1 - t
            h = ops.mul(h, ops.add(ops.add(ops.mul(pw32, t32), t32, -1.0), O._c(t32, 1.0)))
        dx = O._sum_to(ops, ops.sigmoid_backward(h, ops.sigmoid(x32)), x.shape, x.dtype)
    return (dg, dx) + (None,) * (len(need) - 2)


def _bce_second_order(ops, ctx, G):
    # l'' = w (t / x^2 + (1 - t) / (1 - x)^2): the reciprocals from torch (opgrad has no division
    # operator); PyTorch's clamps of the log (-100) and of x (1 - x) (1e-12) are not followed
    # into the second derivative
    g, x, t, w = _saved(ctx)[:4]
    red = ctx.attrs[0] if ctx.attrs else 1
    need = ctx.needs_input_grad
    g32, x32, t32, w32, G32 = _wide(g, x, t, w, G)
    dg = dx = None
    if need[0]:
        dg = _dgrad(ops, "binary_cross_entropy_backward", G32, g, (x32, t32, w32), red, ())
    if need[1]:
        h = _scaled_upstream(ops, G32, g32, w32, red)
        inv_x, inv_1mx = torch.reciprocal(x32), torch.reciprocal(ops.add(O._c(x32, 1.0), x32, -1.0))
        curv = ops.add(ops.mul(t32, ops.mul(inv_x, inv_x)),
                       ops.mul(ops.add(O._c(t32, 1.0), t32, -1.0), ops.mul(inv_1mx, inv_1mx)))
        dx = O._sum_to(ops, ops.mul(h, curv), x.shape, x.dtype)
    return (dg, dx) + (None,) * (len(need) - 2)


def _fake_loss(x, t, *rest):
    red = [a for a in rest if isinstance(a, int) and not isinstance(a, bool)]
    shape = _bshape(x, t, *[a for a in rest if isinstance(a, torch.Tensor)])
    dt = K.promote(x, t, *[a for a in rest if isinstance(a, torch.Tensor)])
    return x.new_empty(shape if red and red[0] == 0 else (), dtype=dt)


def _fake_grad(g, x, t, *rest):
    ts = [a for a in rest if isinstance(a, torch.Tensor)]
    return x.new_empty(_bshape(g, x, t, *ts), dtype=K.promote(g, x, t, *ts))


DEFS = {}


def _def(name, schema, kernel, tensor_args, fake, backward=None):
    DEFS[name] = O.OpDef(name, schema, kernel, tuple(tensor_args), fake,
                         _setup if backward else None, backward)
    O.LATE[name] = DEFS[name]  # the differentiable namespace _ops._DIFF finds it


_def("mse_loss_backward", "(Tensor grad, Tensor input, Tensor target, int reduction=1) -> Tensor",
     mse_loss_backward_kernel, (0, 1, 2), _fake_grad,
     _pair_second_order("mse_loss_backward", _mse_curvature))
_def("l1_loss_backward", "(Tensor grad, Tensor input, Tensor target, int reduction=1) -> Tensor",
     l1_loss_backward_kernel, (0, 1, 2), _fake_grad,
     _pair_second_order("l1_loss_backward", _l1_curvature))
_def("smooth_l1_loss_backward", "(Tensor grad, Tensor input, Tensor target, int reduction=1, "
     "float beta=1.0) -> Tensor", smooth_l1_loss_backward_kernel, (0, 1, 2), _fake_grad,
     _pair_second_order("smooth_l1_loss_backward", _smooth_l1_curvature))
_def("binary_cross_entropy_backward", "(Tensor grad, Tensor input, Tensor target, "
     "Tensor? weight=None, int reduction=1) -> Tensor", binary_cross_entropy_backward_kernel,
     (0, 1, 2, 3), _fake_grad, _bce_second_order)
_def("binary_cross_entropy_with_logits_backward", "(Tensor grad, Tensor input, Tensor target, "
     "Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor",
     binary_cross_entropy_with_logits_backward_kernel, (0, 1, 2, 3, 4), _fake_grad,
     _bce_logits_second_order)
_def("mse_loss", "(Tensor input, Tensor target, int reduction=1) -> Tensor", mse_loss_kernel,
     (0, 1), _fake_loss, _pair_backward("mse_loss_backward", True))
_def("l1_loss", "(Tensor input, Tensor target, int reduction=1) -> Tensor", l1_loss_kernel,
     (0, 1), _fake_loss, _pair_backward("l1_loss_backward", True))
_def("smooth_l1_loss", "(Tensor input, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
     smooth_l1_loss_kernel, (0, 1), _fake_loss, _pair_backward("smooth_l1_loss_backward", True))
_def("binary_cross_entropy", "(Tensor input, Tensor target, Tensor? weight=None, "
     "int reduction=1) -> Tensor", binary_cross_entropy_kernel, (0, 1, 2), _fake_loss,
     _weighted_backward("binary_cross_entropy_backward", 1))
_def("binary_cross_entropy_with_logits", "(Tensor input, Tensor target, Tensor? weight=None, "
     "Tensor? pos_weight=None, int reduction=1) -> Tensor",
     binary_cross_entropy_with_logits_kernel, (0, 1, 2, 3), _fake_loss,
     _weighted_backward("binary_cross_entropy_with_logits_backward", 2))


class _KernelNS:
    """The namespace the 1.13 path's backward formulas call without create_graph: this module's
    kernels, and _kernels' for the rest (the second-order formulas' products and sums)."""

    def __getattr__(self, name):
        return getattr(K, name)


def _loss_backward(backward):
    """A Function's backward on the 1.13 path: under create_graph on differentiable operators
    (_ops._DIFF, which finds these too: a backward operator without a formula refuses the next
    backward), else on the kernels."""
    def bwd(ctx, grad):
        if K.transforms_active():  # functorch: on the Functions (their vmap rules)
            return backward(O._TRANSFORMS, ctx, grad)
        if torch.is_grad_enabled():
            return backward(O._DIFF, ctx, grad)
        return backward(_KNS, ctx, grad)

    return bwd


_KNS = _KernelNS()
for _d in DEFS.values():
    setattr(_KNS, _d.name, _d.kernel)
    if _d.differentiable:
        O.generic_rules(_d)  # forward mode by double vjp, vmap by the samples
        _d.function = O._make_function(_d)
        # _make_function's backward calls the formulas with _kernels; these need this module's
        _d.function.backward = staticmethod(_loss_backward(_d.backward))

LIBRARY = None
NAMESPACE = None


def _register():
    global LIBRARY, NAMESPACE
    if O.USING_CUSTOM_OP:
        NAMESPACE = "opgrad"
        ns = torch.ops.opgrad
        for d in DEFS.values():
            d.custom_op = torch.library.custom_op("opgrad::" + d.name, d.kernel, mutates_args=(),
                                                  device_types="cpu", schema=d.schema)
            torch.library.register_fake("opgrad::" + d.name, d.fake)
            if d.differentiable:
                torch.library.register_autograd(
                    "opgrad::" + d.name, lambda ctx, grad, _b=d.backward: _b(ns, ctx, grad),
                    setup_context=d.setup)
    else:
        NAMESPACE = "opgrad_loss"
        lib = torch.library.Library(NAMESPACE, "DEF")
        for d in DEFS.values():
            lib.define(d.name + d.schema)
            lib.impl(d.name, d.kernel, "CPU")
            if d.differentiable:
                def autograd_impl(*args, _fn=d.function, _k=d.kernel, _t=d.tensor_args):
                    if K.forward_ad():  # the Function's jvp carries the tangent
                        return _fn.apply(*args)
                    if torch.is_grad_enabled():
                        for i in _t:
                            if args[i] is not None and args[i].requires_grad:
                                return _fn.apply(*args)
                    return _k(*args)

                lib.impl(d.name, autograd_impl, "Autograd")
        LIBRARY = lib
    for d in DEFS.values():
        d.op = getattr(getattr(torch.ops, NAMESPACE), d.name)


_register()


def _call(name, args):
    """Eager fast path: the Function (autograd) or the kernel; under torch.jit.trace and
    torch.compile the op."""
    d = DEFS[name]
    if K.use_dispatcher():
        return d.op(*args)
    if K.forward_ad() or (torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args)):
        return d.function.apply(*args)
    return d.kernel(*args)


# ---- public functions (PyTorch's signatures) -----------------------------------------------------
def mse_loss(input, target, reduction="mean"):  # noqa: A002  (PyTorch's names)
    """torch.nn.functional.mse_loss (aclnnMseLoss / aclnnMseLossBackward)."""
    return _call("mse_loss", (input, target, _reduction("mse_loss", reduction)))


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    """torch.nn.functional.l1_loss (aclnnL1Loss / aclnnL1LossBackward)."""
    return _call("l1_loss", (input, target, _reduction("l1_loss", reduction)))


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):  # noqa: A002
    """torch.nn.functional.smooth_l1_loss (aclnnSmoothL1Loss / aclnnSmoothL1LossBackward); beta
    0 is the L1 loss."""
    return _call("smooth_l1_loss",
                 (input, target, _reduction("smooth_l1_loss", reduction), float(beta)))


def binary_cross_entropy(input, target, weight=None, reduction="mean"):  # noqa: A002
    """torch.nn.functional.binary_cross_entropy (aclnnBinaryCrossEntropy / ...Backward); logs
    clamped at -100 as PyTorch."""
    return _call("binary_cross_entropy",
                 (input, target, weight, _reduction("binary_cross_entropy", reduction)))


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",  # noqa: A002
                                     pos_weight=None):
    """torch.nn.functional.binary_cross_entropy_with_logits (aclnnBinaryCrossEntropyWithLogits /
    ...Backward), with weight and pos_weight broadcast to input."""
    return _call("binary_cross_entropy_with_logits",
                 (input, target, weight, pos_weight,
                  _reduction("binary_cross_entropy_with_logits", reduction)))


# ---- nn modules -----------------------------------------------------------------------------------
class MSELoss(torch.nn.Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return mse_loss(input, target, self.reduction)


class L1Loss(torch.nn.Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return l1_loss(input, target, self.reduction)


class SmoothL1Loss(torch.nn.Module):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):  # noqa: A002
        return smooth_l1_loss(input, target, self.reduction, self.beta)


class BCELoss(torch.nn.Module):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(torch.nn.Module):
    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                self.pos_weight)


FUNCTIONS = ("mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
             "binary_cross_entropy_with_logits")
MODULES = ("MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss")
