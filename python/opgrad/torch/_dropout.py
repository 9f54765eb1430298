"""opgrad.torch.dropout (aclnnDropout + aclnnDropoutBackward) and the registration of operators
defined after opgrad.torch._ops has registered its table (this module, _embedding.py, _glu.py).

Registration follows _ops.py: on PyTorch >= 2.4 each operator is a torch.library.custom_op with a
fake and register_autograd; on 1.13 it is defined on _ops.Library (one Library per namespace
there) with a CPU kernel and an Autograd kernel calling a torch.autograd.Function. The formulas
here take every output's gradient (dropout has two outputs: the result and the mask).

The mask: aclnn's uint8 bit mask (bit i at byte i // 8, least significant bit first, length
align(numel, 128) // 8). Each call draws a fresh 63-bit seed from torch's default generator
(torch.manual_seed reproduces it) unless seed is given; offset counts Philox blocks of 4
elements (docs/ops/dropout.md).
"""
import ctypes

import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops

_ACL_UINT8 = 4


def mask_numel(n):
    """Bytes of aclnn's dropout mask for n elements: align(n, 128) / 8."""
    return (n + 127) // 128 * 16


# ---- registration of late operators -------------------------------------------------------------
# The operators registered here, by name. They stay out of _ops.OPS, whose generic tests
# (tests/python/test_torch_adapter.py) assume float inputs and one output.
EXTRA = _ops.LATE


def register_ops(defs):
    """Registers _ops.OpDef objects whose formulas are setup(ctx, inputs, output) and
    backward(ops, ctx, *grads) (one gradient per output)."""
    for d in defs:
        EXTRA[d.name] = d
        if d.differentiable:
            d.function = _function(d)
    if _ops.USING_CUSTOM_OP:
        ns = torch.ops.opgrad
        for d in defs:
            d.custom_op = torch.library.custom_op("opgrad::" + d.name, d.kernel, mutates_args=(),
                                                  device_types="cpu", schema=d.schema)
            torch.library.register_fake("opgrad::" + d.name, d.fake)
            if d.differentiable:
                def bwd(ctx, *grads, _b=d.backward):
                    return _b(ns, ctx, *grads)

                torch.library.register_autograd("opgrad::" + d.name, bwd, setup_context=d.setup)
    else:
        lib = _ops.Library
        for d in defs:
            lib.define(d.name + d.schema)
            lib.impl(d.name, d.kernel, "CPU")
            if d.differentiable:
                def autograd_impl(*args, _fn=d.function, _kernel=d.kernel, _t=d.tensor_args):
                    if K.forward_ad():  # the Function's jvp carries the tangent
                        return _fn.apply(*args)
                    if torch.is_grad_enabled():
                        for i in _t:
                            if args[i] is not None and args[i].requires_grad:
                                return _fn.apply(*args)
                    return _kernel(*args)

                lib.impl(d.name, autograd_impl, "Autograd")
    for d in defs:
        d.op = getattr(torch.ops.opgrad, d.name)


def _function(d):
    """The autograd.Function of d. Its backward is first order only (the results refuse a second
    backward), unless d.twice: then, under create_graph, the formula runs on differentiable
    operators (_DIFF) and is differentiated again. On PyTorch >= 2.0 it has the setup_context
    form, which functorch's transforms (torch.func.grad, vjp, ...) require."""
    backward = d.backward
    first = _ops.first_order("opgrad." + d.name)(lambda ctx, *grads: backward(K, ctx, *grads))

    def bwd(ctx, *grads):
        if K.transforms_active():  # functorch: the formula on its Functions (differentiable)
            return backward(_ops._TRANSFORMS, ctx, *grads)
        if getattr(d, "twice", False) and torch.is_grad_enabled():
            return backward(_ops._DIFF, ctx, *grads)
        return first(ctx, *grads)

    return _ops.function_class(d, bwd)


# ---- kernels ------------------------------------------------------------------------------------
def _dropout_p1(p, train, seed, offset):
    def phase1(hi, ho, sc, w, e):
        return L.phase1["Dropout"](hi[0], p, train, seed, offset, ho[0], ho[1], w, e)
    return phase1


def dropout_kernel(x, p=0.5, train=True, seed=0, offset=0):
    """(out, mask) = aclnnDropout(x, p, train, seed, offset)."""
    dt = K.acl_dtype(x, "dropout")
    p, train, seed, offset = float(p), bool(train), int(seed), int(offset)
    out = torch.empty_like(x)  # x's layout (channels-last in, out); the mask bits stay logical
    special = not train or p == 0.0 or p == 1.0  # aclnn leaves the mask untouched: zeros here
    mask = (torch.zeros if special else torch.empty)(mask_numel(x.numel()), dtype=torch.uint8)
    if x.numel():
        # seed and offset are phase-1 arguments, so they key the plan: a call with a fresh seed
        # plans anew (the per-thread cache is bounded, FIFO)
        K._run("Dropout", "aclnnDropout", _dropout_p1(p, train, seed, offset), (x,), (dt,),
               (out, mask), (dt, _ACL_UINT8), attrs=(p, train, seed, offset))
    return out, mask


def _dropout_bwd_p1(scale):
    def phase1(hi, ho, sc, w, e):
        return L.phase1["DropoutBackward"](hi[0], hi[1], scale, ho[0], w, e)
    return phase1


def dropout_backward_kernel(grad, mask, scale):
    """aclnnDropoutBackward(grad, mask, scale)."""
    dt = K.acl_dtype(grad, "dropout_backward", "grad")
    out = torch.empty_like(grad)
    if grad.numel():
        K._run("DropoutBackward", "aclnnDropoutBackward", _dropout_bwd_p1(float(scale)),
               (grad, mask), (dt, _ACL_UINT8), (out,), (dt,), attrs=(float(scale),))
    return out


def _fake_dropout(x, p=0.5, train=True, seed=0, offset=0):
    return torch.empty_like(x), x.new_empty((mask_numel(x.numel()),), dtype=torch.uint8)


def _fake_dropout_backward(grad, mask, scale):
    return torch.empty_like(grad)


def _scale_of(p, train):
    if not train or p == 0.0:
        return 1.0
    return 0.0 if p == 1.0 else 1.0 / (1.0 - p)


def _setup_dropout(ctx, inputs, output):
    p = inputs[1] if len(inputs) > 1 else 0.5
    train = inputs[2] if len(inputs) > 2 else True
    ctx.scale = _scale_of(float(p), bool(train))
    ctx.nattrs = len(inputs) - 1
    ctx.save_for_backward(output[1])


def _backward_dropout(ops, ctx, grad, grad_mask=None):
    (mask,) = ctx.saved_tensors
    return (ops.dropout_backward(grad, mask, ctx.scale),) + (None,) * ctx.nattrs


# DropoutBackward(g, mask, scale) = g mask scale is linear in g: its derivative is itself (second
# order, and any order after it)
def _setup_dropout_backward(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])
    ctx.scale = inputs[2]


def _backward_dropout_backward(ops, ctx, gg):
    (mask,) = ctx.saved_tensors
    return ops.dropout_backward(gg, mask, ctx.scale), None, None


_DROPOUT_DEFS = [
    _ops.OpDef("dropout_backward", "(Tensor grad, Tensor mask, float scale) -> Tensor",
               dropout_backward_kernel, (0,), _fake_dropout_backward, _setup_dropout_backward,
               _backward_dropout_backward),
    _ops.OpDef("dropout", "(Tensor x, float p=0.5, bool train=True, int seed=0, int offset=0) "
               "-> (Tensor, Tensor)", dropout_kernel, (0,), _fake_dropout, _setup_dropout,
               _backward_dropout, nout=2),
]
def _sample_args(info, b, args):
    """vmap(randomness="different"): sample b draws from its own Philox range, offset + b times
    the blocks one sample takes (align(numel, 128) / 4: 4 elements a block), so the samples' masks
    are independent and reproducible from (seed, offset). "same" (and a seed under "error"):
    every sample the same mask."""
    if getattr(info, "randomness", "error") != "different":
        return args
    x, p, train, seed, offset = args
    return [x, p, train, seed, offset + b * ((x.numel() + 127) // 128 * 32)]


for _d in _DROPOUT_DEFS:
    _d.twice = True
_DROPOUT_DEFS[1].vmap_args = _sample_args
register_ops(_DROPOUT_DEFS)
K.dropout_backward = dropout_backward_kernel  # the 1.13 formulas call K.<name>
K.dropout = dropout_kernel


def _fresh_seed():
    t = torch.randint(0, 2 ** 62, (1,), dtype=torch.int64)
    functorch = getattr(torch._C, "_functorch", None)
    # under vmap(randomness="different") the draw is one seed per sample: the first one seeds
    # the call, and the samples get Philox ranges of their own (_sample_args)
    while functorch is not None and functorch.is_batchedtensor(t):
        t = functorch.get_unwrapped(t)
    return int(t.reshape(-1)[0])


def dropout_with_mask(input, p=0.5, training=True, seed=None, offset=0):  # noqa: A002
    """(out, mask): out = input * mask / (1 - p) with aclnn's bit mask (uint8, bit i of element
    i). seed None draws one from torch's default generator."""
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError("opgrad.torch.dropout: p must be in [0, 1], got %r" % (p,))
    seed = _fresh_seed() if seed is None else int(seed)
    d = EXTRA["dropout"]
    args = (input, float(p), bool(training), seed, int(offset))
    if ((input.requires_grad and torch.is_grad_enabled()) or K.forward_ad()) \
            and not _compiling():
        return d.function.apply(*args)
    if _compiling():
        return d.op(*args)
    return dropout_kernel(*args)


def dropout(input, p=0.5, training=True, inplace=False, seed=None, offset=0):  # noqa: A002
    """torch.nn.functional.dropout on aclnnDropout (inplace=True is not supported)."""
    if inplace:
        raise ValueError("opgrad.torch.dropout: inplace=True is not supported")
    return dropout_with_mask(input, p, training, seed, offset)[0]


def _compiling():
    """torch.jit.trace or torch.compile: call the dispatcher (_kernels.use_dispatcher)."""
    return K.use_dispatcher()
