#!/usr/bin/python3
"""Forward-mode AD and functorch transforms through opgrad.torch (issue 16: a dual tensor used
to come back with a None tangent, silently, and torch.func.vmap failed with "Cannot access data
pointer"). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_func.py [-v]

* torch.autograd.forward_ad (PyTorch 1.13 and >= 2.0): the tangent of every operator with a jvp
  rule (the activations through their backward operators, softmax / log_softmax, add, mul, muls,
  reduce_sum, the matmul family, and the twice-differentiable backward operators themselves)
  against PyTorch's in float64 on the same values; the others (convolution, norms, GLUs,
  pooling, losses, fused_add_scale, ...) raise NotImplementedError, never a missing tangent.
* torch.func (PyTorch >= 2.0): jvp, vmap, jacrev, jacfwd and hessian of the operators with
  batching rules (every activation, softmax / log_softmax, add, mul, muls, reduce_sum) against
  PyTorch's; vmap of an operator without one (the matmul family, ...) raises PyTorch's clear
  error. Tolerance: 1e-4 of the largest value in float32 (the errors seen are below 1e-6).
"""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.autograd.forward_ad as fwAD  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

torch.manual_seed(19)
HAS_FUNC = hasattr(torch, "func")

UNARY = [
    ("mish", ot.mish, F.mish),
    ("gelu", ot.gelu, lambda t: F.gelu(t, approximate="tanh")),
    ("gelu_v2", lambda t: ot.gelu_v2(t, "none"), F.gelu),
    ("silu", ot.silu, F.silu),
    ("sigmoid", ot.sigmoid, torch.sigmoid),
    ("tanh", ot.tanh, torch.tanh),
    ("softplus", lambda t: ot.softplus(t, 1.5, 3.0), lambda t: F.softplus(t, 1.5, 3.0)),
    ("relu", ot.relu, F.relu),
    ("leaky_relu", lambda t: ot.leaky_relu(t, 0.1), lambda t: F.leaky_relu(t, 0.1)),
    ("hardswish", ot.hardswish, F.hardswish),
    ("elu", lambda t: ot.elu(t, 0.7), lambda t: F.elu(t, 0.7)),
    ("softmax", lambda t: ot.softmax(t, 1), lambda t: torch.softmax(t, 1)),
    ("log_softmax", lambda t: ot.log_softmax(t, 0), lambda t: torch.log_softmax(t, 0)),
    ("add", lambda t: ot.add(t, t[0], 0.5), lambda t: torch.add(t, t[0], alpha=0.5)),
    ("mul", lambda t: ot.mul(t, t), lambda t: t * t),
    ("muls", lambda t: ot.muls(t, -2.0), lambda t: t * -2.0),
    ("reduce_sum", lambda t: ot.reduce_sum(ot.mul(t, t), [1], True),
     lambda t: (t * t).sum(1, keepdim=True)),
    # second order of an activation inside a forward pass: its backward operator's own jvp
    ("grad of mish", lambda t: torch.autograd.grad(ot.mish(t).sum(), t, create_graph=True)[0],
     lambda t: torch.autograd.grad(F.mish(t).sum(), t, create_graph=True)[0]),
]
PRODUCTS = [
    ("matmul", lambda t: ot.matmul(t, t.t()), lambda t: t @ t.t()),
    ("mm", lambda t: ot.mm(t, t.t()), lambda t: t @ t.t()),
    ("bmm", lambda t: ot.bmm(t.unsqueeze(0), t.t().unsqueeze(0)),
     lambda t: torch.bmm(t.unsqueeze(0), t.t().unsqueeze(0))),
    ("addmm", lambda t: ot.addmm(t[:, :4], t, t.t()[:, :4], 0.5, 2.0),
     lambda t: torch.addmm(t[:, :4], t, t.t()[:, :4], beta=0.5, alpha=2.0)),
]
NO_JVP = [
    ("conv2d", lambda t: ot.conv2d(t.reshape(1, 1, 4, 6), torch.ones(2, 1, 3, 3))),
    ("layer_norm", lambda t: ot.layer_norm(t, [6])),
    ("rms_norm", lambda t: ot.rms_norm(t, [6])),
    ("swiglu", lambda t: ot.swiglu(t)),
    ("avg_pool2d", lambda t: ot.avg_pool2d(t.reshape(1, 1, 4, 6), 2)),
    ("mse_loss", lambda t: ot.mse_loss(t, torch.zeros(4, 6))),
    ("cross_entropy", lambda t: ot.cross_entropy(t, torch.tensor([0, 1, 2, 3]))),
    ("fused_add_scale", lambda t: ot.fused_add_scale(t, torch.ones(6), torch.ones(6))),
]


def close(test, got, want, what):
    err = (got.double() - want).abs().max().item()
    test.assertLessEqual(err, 1e-4 * max(want.abs().max().item(), 1e-3), "%s: error %.3g"
                         % (what, err))


def fwd_tangent(f, x, t):
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, t))
        return fwAD.unpack_dual(y).tangent


class ForwardAD(unittest.TestCase):
    def test_tangents(self):
        x = torch.randn(4, 6) * 2
        t = torch.randn(4, 6)
        for name, fo, fr in UNARY + PRODUCTS:
            with self.subTest(name):
                xo = x.clone().requires_grad_(name.startswith("grad of"))
                xr = x.double().requires_grad_(name.startswith("grad of"))
                got = fwd_tangent(fo, xo, t)
                self.assertIsNotNone(got, name + ": no tangent")
                close(self, got, fwd_tangent(fr, xr, t.double()), name)

    def test_operators_without_a_rule_refuse(self):
        for name, f in NO_JVP:
            with self.subTest(name):
                with self.assertRaises(NotImplementedError):
                    fwd_tangent(f, torch.randn(4, 6), torch.randn(4, 6))

    def test_no_dual_no_change(self):
        # outside dual_level the fast path is untouched (no autograd.Function for plain tensors)
        from opgrad.torch import _kernels as K
        self.assertFalse(K.forward_ad())
        y = ot.mish(torch.randn(3))
        self.assertIsNone(y.grad_fn)


@unittest.skipUnless(HAS_FUNC, "torch.func (PyTorch >= 2.0)")
class Transforms(unittest.TestCase):
    def test_jvp_vmap_jacrev_jacfwd_hessian(self):
        x = torch.randn(3, 5) * 2
        xb = torch.randn(4, 3, 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's note on its batching fallback
            for name, fo, fr in UNARY[:-1]:
                for tr, run in (
                        ("jvp", lambda g, a: torch.func.jvp(g, (a,), (torch.ones_like(a),))[1]),
                        ("vmap", lambda g, a: torch.func.vmap(g)(xb.to(a.dtype))),
                        ("jacrev", lambda g, a: torch.func.jacrev(g)(a)),
                        ("jacfwd", lambda g, a: torch.func.jacfwd(g)(a)),
                        ("hessian", lambda g, a: torch.func.hessian(lambda u: g(u).sum())(a))):
                    with self.subTest("%s %s" % (name, tr)):
                        if name == "gelu_v2" and tr == "hessian":  # erf: f'' needs exp
                            with self.assertRaises(NotImplementedError):
                                run(fo, x)
                            continue
                        close(self, run(fo, x), run(fr, x.double()), name + " " + tr)

    def test_vmap_without_a_rule_is_a_clear_error(self):
        with self.assertRaises(RuntimeError) as cm:
            torch.func.vmap(lambda t: ot.matmul(t, t.t()))(torch.randn(2, 3, 4))
        self.assertIn("vmap", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
