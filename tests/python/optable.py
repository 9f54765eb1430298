"""The operator table shared by test_torch_adapter.py and consistency.py: each opgrad.torch
operator with the PyTorch function it must agree with, its input domain and its kinks.

Run everything with Debian's /usr/bin/python3 (python3-torch 1.13) and
    PYTHONPATH=<repo>/python OPGRAD_LIBRARY=<build>/libopgrad.so
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
if os.path.join(REPO, "python") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class Case:
    """name: row label; og(*ts) / pt(*ts): opgrad's and PyTorch's function of the same tensors;
    nin: tensor inputs; domain: inputs uniform in [lo, hi]; kinks: points where the function is
    not differentiable (gradcheck keeps away from them); shapes(n, m): the inputs' logical shapes
    for the plain layouts (binary ops broadcast in the 'broadcast' layout)."""

    def __init__(self, name, og, pt, nin=1, domain=(-6.0, 6.0), kinks=(), op=None,
                 domains=None, torch_has=True, via_ops=None, layouts=None):
        self.name, self.og, self.pt, self.nin = name, og, pt, nin
        self.domain, self.kinks = domain, kinks
        self.domains = domains or [domain] * nin
        self.op = op or name           # the torch.ops.opgrad name
        self.torch_has = torch_has     # PyTorch has this operator (consistency table)
        # the same computation through torch.ops.opgrad (default: the op called with the tensors)
        self.via_ops = via_ops or (lambda *ts, _n=self.op: getattr(torch.ops.opgrad, _n)(*ts))
        self.layouts = layouts         # None: every layout that applies


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
BY_NAME = {c.name: c for c in CASES}


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
