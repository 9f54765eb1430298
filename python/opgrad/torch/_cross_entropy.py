"""cross_entropy and nll_loss for opgrad.torch (issue 14): aclnnCrossEntropyLoss /
aclnnCrossEntropyLossGrad and aclnnNLLLoss / aclnnNLLLossBackward.

These operators do not have the list's standard shape (one input tensor, one output): they take
an integer target and an optional weight, and the forward has two outputs, the loss and what the
backward reads (the log-probabilities, or NLL's total weight). So they are written out here:

* kernels through the plan cache of _kernels (zero-copy, repeatable executors);
* torch operators torch.ops.opgrad.cross_entropy_loss / cross_entropy_loss_backward /
  nll_loss / nll_loss_backward; the forwards return (loss, saved) and, on PyTorch >= 2.4
  (custom_op), carry an autograd formula through torch.ops.opgrad.*_backward;
* functional forms cross_entropy / nll_loss with PyTorch's signatures and result shapes (a
  reduced loss is 0-d), differentiable with respect to the input on every PyTorch version
  (a torch.autograd.Function on plain tensors).

Targets: int64 or int32 (cross_entropy), int64 / int32 (nll_loss); an index outside [0, C) that
is not ignore_index is treated as ignored (PyTorch raises; the aclnn kernels cannot). Only class
indices (no probability targets); inputs [N, C] (nll_loss also [C]), and [N, C, d1, ...] with a
target [N, d1, ...] (PyTorch's K-dimensional form: the class dim moved last, one row per
element).

float64 (an opgrad extension of these aclnn operators): a float64 input computes in float64 end
to end, its log-probabilities saved in float64, the weight taken in float64; the second-order
gradient is composed in float64 too.
"""

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops

_INT = {torch.int64: L.ACL_INT64, torch.int32: 3}  # ACL_INT32
_RED = {"none": 0, "mean": 1, "sum": 2}
_dummy = torch.zeros(1)  # zlossOut / lseForZlossOut: required by the API, never written


def _acl(t, op, name):
    return K.acl_dtype(t, op, name)


def _target_dtype(t, op):
    dt = _INT.get(t.dtype) if isinstance(t, torch.Tensor) else None
    if dt is None:
        raise TypeError("opgrad.torch.%s: target must be an int64 or int32 tensor, got %s"
                        % (op, getattr(t, "dtype", type(t).__name__)))
    return dt


def _check_reduction(op, reduction):
    if reduction not in _RED:
        raise ValueError("opgrad.torch.%s: reduction must be 'none', 'mean' or 'sum', got %r"
                         % (op, reduction))


def _dummy_handle(n):
    d = L.i64_array((n,))
    return L.aclCreateTensor(d[0], 1, L.ACL_FLOAT, None, 0, L.ACL_FORMAT_ND, None, 0,
                             _dummy.data_ptr())


# ---- kernels -----------------------------------------------------------------------------------
def ce_forward(x, target, weight=None, reduction="mean", ignore_index=-100,
               label_smoothing=0.0):
    """(loss, log_prob): loss [N] for 'none', [1] otherwise; log_prob [N, C] in float32 whatever
    x's dtype (aclnnCrossEntropyLoss allows it; float64 for a float64 x): the backward recomputes
    the softmax as exp(log_prob), and a log-probability rounded to fp16 / bf16 would cost that
    softmax |log p| * 2^-11 (2^-8) relative, far more than the gradient's own rounding."""
    op = "cross_entropy_loss"
    _check_reduction(op, reduction)
    dts = [_acl(x, op, "input"), _target_dtype(target, op)]
    ins = [x, target]
    if weight is not None:
        ins.append(weight)
        dts.append(_acl(weight, op, "weight"))
    n = x.shape[0] if x.dim() >= 1 else 0
    loss = torch.empty((n,) if reduction == "none" else (1,), dtype=x.dtype)
    lp = torch.empty(x.shape, dtype=_wide(x.dtype))
    p1 = L.phase1["CrossEntropyLoss"]
    red = reduction.encode()
    has_w = weight is not None

    def phase1(hin, hout, sc, w, e):
        z, lse = _dummy_handle(1), _dummy_handle(1)
        try:
            return p1(hin[0], hin[1], hin[2] if has_w else None, red, int(ignore_index),
                      float(label_smoothing), 0.0, False, hout[0], hout[1], z, lse, w, e)
        finally:
            L.aclDestroyTensor(z)
            L.aclDestroyTensor(lse)

    K._run("CrossEntropyLoss", "aclnnCrossEntropyLoss", phase1, ins, dts, [loss, lp],
           [dts[0], _acl(lp, op, "log_prob")],
           (reduction, int(ignore_index), float(label_smoothing), has_w))
    return loss, lp


def ce_backward(grad, log_prob, target, weight=None, reduction="mean", ignore_index=-100,
                label_smoothing=0.0):
    """dL/dinput [N, C] in grad's dtype; grad [N] for 'none', one element otherwise."""
    op = "cross_entropy_loss_backward"
    _check_reduction(op, reduction)
    if reduction != "none":
        grad = grad.reshape(())
    if target.dtype != torch.int64:
        target = target.to(torch.int64)  # the grad takes int64 targets only
    dts = [_acl(grad, op, "grad"), _acl(log_prob, op, "log_prob"), _target_dtype(target, op)]
    ins = [grad, log_prob, target]
    if weight is not None:
        ins.append(weight)
        dts.append(_acl(weight, op, "weight"))
    out = torch.empty(log_prob.shape, dtype=grad.dtype)
    p1 = L.phase1["CrossEntropyLossGrad"]
    red = reduction.encode()
    has_w = weight is not None

    def phase1(hin, hout, sc, w, e):
        return p1(hin[0], hin[1], hin[2], hin[3] if has_w else None, None, None, red,
                  int(ignore_index), float(label_smoothing), 0.0, hout[0], w, e)

    K._run("CrossEntropyLossGrad", "aclnnCrossEntropyLossGrad", phase1, ins, dts, [out],
           [dts[0]], (reduction, int(ignore_index), float(label_smoothing), has_w))
    return out


def nll_forward(x, target, weight, reduction="mean", ignore_index=-100):
    """(out, total_weight): out [N] for 'none' with a 2-d x, [1] otherwise."""
    op = "nll_loss"
    _check_reduction(op, reduction)
    dt = _acl(x, op, "input")
    dts = [dt, _target_dtype(target, op), _acl(weight, op, "weight")]
    per_row = reduction == "none" and x.dim() == 2
    out = torch.empty((x.shape[0],) if per_row else (1,), dtype=x.dtype)
    total = torch.empty((1,), dtype=x.dtype)
    p1 = L.phase1["NLLLoss"]
    r = _RED[reduction]

    def phase1(hin, hout, sc, w, e):
        return p1(hin[0], hin[1], hin[2], r, int(ignore_index), hout[0], hout[1], w, e)

    K._run("NLLLoss", "aclnnNLLLoss", phase1, [x, target, weight], dts, [out, total], [dt, dt],
           (r, int(ignore_index)))
    return out, total


def nll_backward(grad, x, target, weight, total_weight, reduction="mean", ignore_index=-100):
    op = "nll_loss_backward"
    _check_reduction(op, reduction)
    dt = _acl(x, op, "input")
    per_row = reduction == "none" and x.dim() == 2
    grad = grad.reshape((x.shape[0],) if per_row else (1,)).to(x.dtype)
    weight = weight.to(x.dtype)
    total_weight = total_weight.reshape((1,)).to(x.dtype)
    dts = [dt, dt, _target_dtype(target, op), dt, dt]
    out = torch.empty(x.shape, dtype=x.dtype)
    p1 = L.phase1["NLLLossBackward"]
    r = _RED[reduction]

    def phase1(hin, hout, sc, w, e):
        return p1(hin[0], hin[1], hin[2], hin[3], r, int(ignore_index), hin[4], hout[0], w, e)

    K._run("NLLLossBackward", "aclnnNLLLossBackward", phase1,
           [grad, x, target, weight, total_weight], dts, [out], [dt], (r, int(ignore_index)))
    return out


# ---- autograd (eager, every PyTorch version) -----------------------------------------------------
# Second order (create_graph): the gradient composed from differentiable opgrad operators instead of
# one aclnnCrossEntropyLossGrad call. Per row n with target t (valid: not ignore_index, inside
# [0, C)), smoothing e and weight w:
#   dl_n/dx = p A_n - a_n,   A_n = (1 - e) w[t] + (e / C) sum(w),   a_n = (1 - e) w[t] onehot(t)
#   + (e / C) w  (both 0 on an ignored row), times g_n, and for "mean" over sum_n w[t_n] (valid),
# with p = softmax(lp) = e^lp from the saved log-probabilities lp (no second [N, C] tensor kept):
# lp is an output of the forward, so what the second backward sends into it comes back to x
# through log_softmax's backward (the Function's backward takes lp's gradient). nll_loss's
# gradient, -w[t] g onehot(t) (over the total weight for "mean"), is linear in g and independent
# of x.
def _wide(dtype):
    """The dtype the composed gradients (and the saved log-probabilities) are computed in."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _class_terms(target, weight, ignore_index, c, dtype):
    t = target.long()
    valid = (t != ignore_index) & (t >= 0) & (t < c)
    tc = torch.where(valid, t, torch.zeros_like(t))
    w = weight.to(dtype) if weight is not None else torch.ones(c, dtype=dtype)
    wt = w[tc] * valid.to(dtype)
    onehot = torch.nn.functional.one_hot(tc, c).to(dtype) * valid.to(dtype).unsqueeze(1)
    return valid.to(dtype), w, wt, onehot


def _per_row(grad, reduction, denom):
    """g as a column [N, 1] ('none'), or the 0-d g over the mean's denominator."""
    if reduction == "none":
        return grad.reshape(-1, 1)
    g = grad.reshape(())
    return g / denom if reduction == "mean" else g


def _diff():
    """The differentiable operators: through their Functions (under functorch's transforms, the
    ones with vmap rules)."""
    return _ops._TRANSFORMS if K.transforms_active() else _ops._DIFF


def _ce_grad_composed(lp, target, weight, grad, reduction, ignore_index, e):
    ops = _diff()
    c = lp.shape[1]
    dt = lp.dtype  # float32, or float64
    valid, w, wt, onehot = _class_terms(target, weight, ignore_index, c, dt)
    big_a = ((1 - e) * wt + (e / c) * w.sum() * valid).unsqueeze(1)
    small_a = (1 - e) * wt.unsqueeze(1) * onehot + (e / c) * w.unsqueeze(0) * valid.unsqueeze(1)
    d = ops.add(ops.mul(ops.softmax(lp, 1), big_a), small_a, -1.0)
    g = _per_row(grad.to(dt), reduction, wt.sum().clamp_min(torch.finfo(dt).tiny))
    return ops.mul(d, g)


def _nll_grad_composed(x, target, weight, total, grad, reduction, ignore_index):
    c = x.shape[-1]
    x2 = x.reshape(-1, c)
    dt = _wide(x.dtype)
    _, _, wt, onehot = _class_terms(target.reshape(-1), weight, ignore_index, c, dt)
    g = _per_row(grad.to(dt), reduction, total.reshape(()).to(dt))
    return _diff().mul(onehot * (-wt).unsqueeze(1), g).to(x.dtype).reshape(x.shape)


# The Functions (_ops.function_class: the setup_context form on PyTorch >= 2.0 and the generic
# forward-mode and vmap rules). Under create_graph the gradients are composed from differentiable
# operators; under functorch's transforms too.
def _ce_setup(ctx, inputs, output):
    x, target, weight = inputs[:3]
    ctx.save_for_backward(output[1], target, weight)
    ctx.attrs = tuple(inputs[3:6])  # reduction, ignore_index, label_smoothing
    ctx.x_dtype = x.dtype
    # lp's gradient is None unless something used it (a second backward does): without this,
    # autograd would hand backward a zero tensor of its size every step
    ctx.set_materialize_grads(False)


def _composing():
    return torch.is_grad_enabled() or K.transforms_active()


@_ops.first_order("opgrad.torch.cross_entropy")
def _ce_first_order(ctx, grad):
    lp, target, weight = ctx.saved_tensors
    return ce_backward(grad.to(lp.dtype).contiguous(), lp, target, weight, *ctx.attrs)


def _ce_backward(ctx, grad, grad_lp):
    lp, target, weight = ctx.saved_tensors
    create_graph = _composing()
    ops = _diff() if create_graph else K
    dx = None
    if grad is not None:
        if create_graph and lp.dim() == 2:  # differentiable again (through lp)
            dx = _ce_grad_composed(lp, target, weight, grad, *ctx.attrs)
        else:
            dx = _ce_first_order(ctx, grad)
    if grad_lp is not None:  # lp = log_softmax(x)
        t = ops.log_softmax_backward(grad_lp.to(lp.dtype), lp, 1)
        dx = t if dx is None else (ops.add(dx, t) if create_graph else dx.add_(t))
    if dx is not None and dx.dtype != ctx.x_dtype:
        dx = dx.to(ctx.x_dtype)
    return dx, None, None, None, None, None


def _nll_setup(ctx, inputs, output):
    x, target, weight = inputs[:3]
    ctx.save_for_backward(x, target, weight, output[1])
    ctx.attrs = tuple(inputs[3:5])  # reduction, ignore_index
    ctx.mark_non_differentiable(output[1])
    ctx.set_materialize_grads(False)


def _nll_backward(ctx, grad, _grad_total):
    if grad is None:
        return None, None, None, None, None
    x, target, weight, total = ctx.saved_tensors
    if _composing():  # create_graph: linear in grad, differentiable again
        dx = _nll_grad_composed(x, target, weight, total, grad, *ctx.attrs)
    else:
        dx = nll_backward(grad, x, target, weight, total, *ctx.attrs)
    return dx, None, None, None, None


_CE_DEF = _ops.OpDef("cross_entropy_loss", "", ce_forward, (0, 1, 2), None, _ce_setup, None)
_NLL_DEF = _ops.OpDef("nll_loss", "", nll_forward, (0, 1, 2), None, _nll_setup, None)
_NLL_DEF.nondiff_outputs = (1,)  # the total weight
_CrossEntropy = _CE_DEF.function = _ops.function_class(_CE_DEF, _ce_backward)
_NLL = _NLL_DEF.function = _ops.function_class(_NLL_DEF, _nll_backward)


def _class_last(input, target):
    """[N, C, d1, ...] and [N, d1, ...] as rows [N * d1 * ..., C] and [N * d1 * ...] (a
    differentiable permutation: the K-dimensional losses are the 2-d ones over every element)."""
    c = input.shape[1]
    return input.movedim(1, -1).reshape(-1, c), target.reshape(-1)


def _shape_loss(loss, reduction, x):
    if reduction != "none" or x.dim() == 1:
        return loss.reshape(())
    return loss


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
                  label_smoothing=0.0):
    """torch.nn.functional.cross_entropy for input [N, C] and class-index targets, through
    aclnnCrossEntropyLoss / aclnnCrossEntropyLossGrad (differentiable w.r.t. input)."""
    if isinstance(input, torch.Tensor) and input.dim() > 2:
        x, t = _class_last(input, target)
        loss = cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing)
        return loss.reshape(target.shape) if reduction == "none" else loss
    wdt = _wide(input.dtype) if isinstance(input, torch.Tensor) else torch.float32
    if weight is not None and weight.dtype != wdt:
        weight = weight.to(wdt)  # aclnn takes a FLOAT weight (DOUBLE for a float64 input)
    if K.use_dispatcher():  # torch.jit.trace / torch.compile record the operator
        loss, _ = torch.ops.opgrad.cross_entropy_loss(input, target, weight, reduction,
                                                      ignore_index, label_smoothing)
    elif (input.requires_grad and torch.is_grad_enabled()) or K.forward_ad():
        loss, _ = _CrossEntropy.apply(input, target, weight, reduction, ignore_index,
                                      label_smoothing)
    else:
        loss, _ = ce_forward(input, target, weight, reduction, ignore_index, label_smoothing)
    return _shape_loss(loss, reduction, input)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):  # noqa: A002
    """torch.nn.functional.nll_loss for input [N, C] or [C] of log-probabilities, through
    aclnnNLLLoss / aclnnNLLLossBackward (differentiable w.r.t. input)."""
    if isinstance(input, torch.Tensor) and input.dim() > 2:
        x, t = _class_last(input, target)
        out = nll_loss(x, t, weight, ignore_index, reduction)
        return out.reshape(target.shape) if reduction == "none" else out
    c = input.shape[-1]
    weight = torch.ones(c, dtype=input.dtype) if weight is None else weight.to(input.dtype)
    if K.use_dispatcher():
        out, _ = torch.ops.opgrad.nll_loss(input, target, weight, reduction, ignore_index)
    elif (input.requires_grad and torch.is_grad_enabled()) or K.forward_ad():
        out, _ = _NLL.apply(input, target, weight, reduction, ignore_index)
    else:
        out, _ = nll_forward(input, target, weight, reduction, ignore_index)
    return _shape_loss(out, reduction, input)


# ---- torch.ops.opgrad.* -------------------------------------------------------------------------
_SCHEMAS = {
    "cross_entropy_loss": ("(Tensor input, Tensor target, Tensor? weight=None, "
                           "str reduction='mean', int ignore_index=-100, "
                           "float label_smoothing=0.0) -> (Tensor, Tensor)", ce_forward),
    "cross_entropy_loss_backward": ("(Tensor grad, Tensor log_prob, Tensor target, "
                                    "Tensor? weight=None, str reduction='mean', "
                                    "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
                                    ce_backward),
    "nll_loss": ("(Tensor input, Tensor target, Tensor weight, str reduction='mean', "
                 "int ignore_index=-100) -> (Tensor, Tensor)", nll_forward),
    "nll_loss_backward": ("(Tensor grad, Tensor input, Tensor target, Tensor weight, "
                          "Tensor total_weight, str reduction='mean', int ignore_index=-100) "
                          "-> Tensor", nll_backward),
}

Library = None


def _fake_ce(x, target, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    n = x.shape[0]
    return (x.new_empty((n,) if reduction == "none" else (1,)), x.new_empty(x.shape))


def _fake_ce_bwd(grad, log_prob, *args):
    return grad.new_empty(log_prob.shape)


def _fake_nll(x, target, weight, reduction="mean", ignore_index=-100):
    per_row = reduction == "none" and x.dim() == 2
    return (x.new_empty((x.shape[0],) if per_row else (1,)), x.new_empty((1,)))


def _fake_nll_bwd(grad, x, *args):
    return x.new_empty(x.shape)


_FAKES = {"cross_entropy_loss": _fake_ce, "cross_entropy_loss_backward": _fake_ce_bwd,
          "nll_loss": _fake_nll, "nll_loss_backward": _fake_nll_bwd}


def _register():
    global Library
    if hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd"):
        ops = torch.ops.opgrad
        for name, (schema, kernel) in _SCHEMAS.items():
            torch.library.custom_op("opgrad::" + name, kernel, mutates_args=(),
                                    device_types="cpu", schema=schema)
            torch.library.register_fake("opgrad::" + name, _FAKES[name])

        def ce_setup(ctx, inputs, output):
            ctx.save_for_backward(output[1], inputs[1], inputs[2])
            ctx.attrs = tuple(inputs[3:])
            ctx.set_materialize_grads(False)  # no zero [N, C] gradient for the log-probabilities

        def ce_bwd(ctx, grad, _grad_lp):
            lp, target, weight = ctx.saved_tensors
            if grad is None:  # only the log-probabilities were used: they carry no gradient
                return None, None, None, None, None, None
            return (ops.cross_entropy_loss_backward(grad.to(lp.dtype), lp, target, weight,
                                                    *ctx.attrs), None, None, None, None, None)

        def nll_setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], inputs[1], inputs[2], output[1])
            ctx.attrs = tuple(inputs[3:])
            ctx.set_materialize_grads(False)

        def nll_bwd(ctx, grad, _grad_total):
            x, target, weight, total = ctx.saved_tensors
            if grad is None:
                return None, None, None, None, None
            return (ops.nll_loss_backward(grad, x, target, weight, total, *ctx.attrs),
                    None, None, None, None)

        torch.library.register_autograd("opgrad::cross_entropy_loss", ce_bwd,
                                        setup_context=ce_setup)
        torch.library.register_autograd("opgrad::nll_loss", nll_bwd, setup_context=nll_setup)
    else:  # PyTorch 1.13: kernels only (autograd through the functional forms), defined on
        # _ops' Library("opgrad", "DEF"): 1.13 allows one DEF library per namespace
        from . import _ops
        lib = _ops.Library
        for name, (schema, kernel) in _SCHEMAS.items():
            lib.define(name + schema)
            lib.impl(name, kernel, "CPU")
        Library = lib


_register()


class CrossEntropyLoss(torch.nn.Module):
    """torch.nn.CrossEntropyLoss through opgrad (class-index targets)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):  # noqa: A002
        return cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                             self.label_smoothing)


class NLLLoss(torch.nn.Module):
    """torch.nn.NLLLoss through opgrad."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):  # noqa: A002
        return nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


