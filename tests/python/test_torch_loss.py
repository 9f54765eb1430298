#!/usr/bin/python3
"""Tests of the loss functions of opgrad.torch (python/opgrad/torch/_loss.py; docs/ops/loss.md):

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_loss.py

mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy, binary_cross_entropy_with_logits (and
the nn modules) against PyTorch's own functions evaluated in float64 on the same quantized
inputs: every reduction, fp32 / fp16 / bf16, broadcast targets and weights, a transposed input;
gradients of input (and of target for the difference losses) through autograd; the torch.ops
registration; torch.autograd.gradcheck in float32 (opgrad has no float64 kernels).

Tolerance: |got - truth| <= c u (|truth| + max|truth|), u the dtype's unit roundoff, c = 32
(fp32) or 8 (16-bit: computed in fp32, rounded once), times sqrt(K) for values that sum K terms
(reductions, a broadcast input's gradient).
"""
import math
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402
from opgrad.torch import _loss  # noqa: E402

U = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
C = {torch.float32: 32.0, torch.float16: 8.0, torch.bfloat16: 8.0}
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
REDUCTIONS = ("none", "mean", "sum")


def close(test, got, truth, dtype, terms=1, what=""):
    got = got.double()
    bound = C[dtype] * U[dtype] * math.sqrt(max(terms, 1)) * (
        truth.abs() + (truth.abs().max() if truth.numel() else 0))
    bad = (got - truth).abs() > bound
    test.assertFalse(bool(bad.any()), "%s %s: max error %g" % (
        what, dtype, float((got - truth).abs().max()) if truth.numel() else 0))


def run(fn, args, grads):
    """fn(*args), and the gradients of the args at positions `grads` for a random upstream g."""
    args = [a.detach().requires_grad_(i in grads) if isinstance(a, torch.Tensor) else a
            for i, a in enumerate(args)]
    y = fn(*args)
    torch.manual_seed(5)
    g = torch.randn(y.shape, dtype=torch.float64).to(y.dtype)
    gs = torch.autograd.grad(y, [args[i] for i in grads], g)
    return y, gs, g


CASES = [
    # name, opgrad fn, torch fn, input maker(dtype) -> args, grads, kwargs builder
    ("mse_loss", ot.mse_loss, F.mse_loss),
    ("l1_loss", ot.l1_loss, F.l1_loss),
    ("smooth_l1_loss", lambda x, t, reduction: ot.smooth_l1_loss(x, t, reduction, beta=0.5),
     lambda x, t, reduction: F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5)),
    ("smooth_l1_loss_beta0", lambda x, t, reduction: ot.smooth_l1_loss(x, t, reduction, beta=0.0),
     lambda x, t, reduction: F.l1_loss(x, t, reduction=reduction)),
]


class TestLoss(unittest.TestCase):
    def check_pair(self, name, ours, theirs, x, t, with_target_grad=True):
        for red in REDUCTIONS:
            grads = (0, 1) if with_target_grad else (0,)
            y, gs, g = run(lambda a, b: ours(a, b, reduction=red), (x, t), grads)
            y64 = theirs(x.double(), t.double(), reduction=red)
            terms = x.numel() if red != "none" else 1
            close(self, y, y64.detach(), x.dtype, terms, "%s %s forward" % (name, red))
            # gradients: compare with PyTorch's float64 gradient for the same g
            xa = x.double().requires_grad_()
            ta = t.double().requires_grad_(with_target_grad)
            y2 = theirs(xa, ta, reduction=red)
            ref = torch.autograd.grad(y2, [xa, ta] if with_target_grad else [xa], g.double())
            bterms = max(1, (torch.broadcast_shapes(x.shape, t.shape).numel() // x.numel()))
            close(self, gs[0], ref[0], x.dtype, bterms, "%s %s d input" % (name, red))
            if with_target_grad:
                tterms = torch.broadcast_shapes(x.shape, t.shape).numel() // max(t.numel(), 1)
                close(self, gs[1], ref[1], x.dtype, tterms, "%s %s d target" % (name, red))

    def test_difference_losses(self):
        torch.manual_seed(0)
        for dt in DTYPES:
            x = (torch.randn(6, 7) * 2).to(dt)
            t = torch.randn(7).round().to(dt)           # broadcast target, integers
            x = x + (x - t).abs().lt(0.05).to(dt) * 0.25  # keep clear of the kinks
            xt = (torch.randn(7, 6) * 2).to(dt).t()      # a transposed input
            xt = xt + (xt - t).abs().lt(0.05).to(dt) * 0.25
            for name, ours, theirs in CASES:
                self.check_pair(name, ours, theirs, x, t)
                self.check_pair(name, ours, theirs, xt, t)

    def test_bce(self):
        torch.manual_seed(1)
        for dt in DTYPES:
            x = torch.rand(5, 6).clamp(0.02, 0.98).to(dt)
            t = torch.rand(5, 6).to(dt)
            w = torch.rand(6).to(dt)
            for red in REDUCTIONS:
                for weight in (None, w):
                    y, gs, g = run(lambda a, b: ot.binary_cross_entropy(a, b, weight, red), (x, t),
                                   (0,))
                    xa = x.double().requires_grad_()
                    y2 = F.binary_cross_entropy(xa, t.double(), None if weight is None else
                                                weight.double().expand(5, 6), reduction=red)
                    ref = torch.autograd.grad(y2, [xa], g.double())
                    terms = x.numel() if red != "none" else 1
                    close(self, y, y2.detach(), dt, terms, "bce %s forward" % red)
                    close(self, gs[0], ref[0], dt, 1, "bce %s d input" % red)

    def test_bce_with_logits(self):
        torch.manual_seed(2)
        for dt in DTYPES:
            x = (torch.randn(5, 6) * 4).to(dt)
            t = torch.rand(5, 6).to(dt)
            w = torch.rand(5, 1).to(dt)
            pw = (torch.rand(6) * 3).to(dt)
            for red in REDUCTIONS:
                for weight, pos in ((None, None), (w, None), (None, pw), (w, pw)):
                    y, gs, g = run(lambda a, b: ot.binary_cross_entropy_with_logits(
                        a, b, weight, red, pos), (x, t), (0,))
                    xa = x.double().requires_grad_()
                    y2 = F.binary_cross_entropy_with_logits(
                        xa, t.double(), None if weight is None else weight.double(), reduction=red,
                        pos_weight=None if pos is None else pos.double())
                    ref = torch.autograd.grad(y2, [xa], g.double())
                    terms = x.numel() if red != "none" else 1
                    what = "bce_with_logits %s w=%s pw=%s" % (red, weight is not None,
                                                              pos is not None)
                    close(self, y, y2.detach(), dt, terms, what + " forward")
                    close(self, gs[0], ref[0], dt, 1, what + " d input")

    def test_fp32_against_pytorch_fp32(self):
        torch.manual_seed(3)
        x, t = torch.randn(64, 33), torch.randn(64, 33)
        for red in REDUCTIONS:
            torch.testing.assert_close(ot.mse_loss(x, t, red), F.mse_loss(x, t, reduction=red))
            torch.testing.assert_close(ot.l1_loss(x, t, red), F.l1_loss(x, t, reduction=red))
            torch.testing.assert_close(ot.smooth_l1_loss(x, t, red, 0.7),
                                       F.smooth_l1_loss(x, t, reduction=red, beta=0.7))
            torch.testing.assert_close(
                ot.binary_cross_entropy_with_logits(x, t.sigmoid(), reduction=red),
                F.binary_cross_entropy_with_logits(x, t.sigmoid(), reduction=red))

    def test_ops_registration_and_modules(self):
        ns = getattr(torch.ops, _loss.NAMESPACE)
        x, t = torch.randn(3, 4), torch.randn(3, 4)
        torch.testing.assert_close(ns.mse_loss(x, t, 1), F.mse_loss(x, t))
        x.requires_grad_()
        ns.l1_loss(x, t, 2).backward()
        torch.testing.assert_close(x.grad, torch.sign(x.detach() - t))
        self.assertAlmostEqual(float(ot.nn.MSELoss()(torch.ones(3), torch.zeros(3))), 1.0)
        self.assertAlmostEqual(float(ot.nn.L1Loss(reduction="sum")(torch.ones(3),
                                                                    torch.zeros(3))), 3.0)
        m = ot.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
        ref = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
        torch.testing.assert_close(m(x.detach(), t.sigmoid()), ref(x.detach(), t.sigmoid()))
        torch.testing.assert_close(ot.nn.SmoothL1Loss(beta=0.5)(x.detach(), t),
                                   torch.nn.SmoothL1Loss(beta=0.5)(x.detach(), t))
        torch.testing.assert_close(ot.nn.BCELoss()(x.detach().sigmoid(), t.sigmoid()),
                                   torch.nn.BCELoss()(x.detach().sigmoid(), t.sigmoid()))

    def test_gradcheck(self):
        torch.manual_seed(4)
        x = torch.randn(4, 5, dtype=torch.float32, requires_grad=True)
        t = torch.randn(5).round()
        x.data += ((x.data - t).abs() < 0.1).float() * 0.3
        tp, w, pw = torch.rand(4, 5), torch.rand(5), torch.rand(5) * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for f in (lambda a: ot.mse_loss(a, t, "sum"), lambda a: ot.l1_loss(a, t, "mean"),
                      lambda a: ot.smooth_l1_loss(a, t, "none", 0.5),
                      lambda a: ot.binary_cross_entropy_with_logits(
                          a, tp, w, "sum", pw),
                      lambda a: ot.binary_cross_entropy(a.sigmoid(), tp, None, "mean")):
                self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=2e-3,
                                                         rtol=1e-2))

    def test_errors(self):
        with self.assertRaises(ValueError):
            ot.mse_loss(torch.ones(2), torch.ones(2), "avg")
        with self.assertRaises(Exception) as cm:
            ot.mse_loss(torch.ones(2, 3), torch.ones(3, 2))
        self.assertIn("broadcast", str(cm.exception))


if __name__ == "__main__":
    print("opgrad.torch losses: torch %s, %s namespace" % (torch.__version__, _loss.NAMESPACE),
          file=sys.stderr)
    unittest.main()
