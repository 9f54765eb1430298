#!/usr/bin/python3
"""Tests of opgrad.torch.batch_norm / group_norm and nn.BatchNorm2d / nn.GroupNorm (plain
unittest):

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_batch_norm.py

Forward and backward against PyTorch's own functions evaluated in float64 on the same (quantized)
inputs, in float32 / float16 / bfloat16, contiguous and channels-last (strided) inputs; training
(the gradient through the batch statistics) and eval; running statistics (momentum, unbiased
variance); weight / bias absent; gradients asked for one at a time; torch.autograd.gradcheck in
float32 (opgrad has no float64 kernels); the nn modules trained a few steps next to torch.nn's.

Tolerance: |got - truth| <= c u (|truth| + max|truth|) with u the dtype's unit roundoff, c = 64
for float32 (the statistics sum K values: a few ulps each, and dx combines three terms of the
size of max|truth|) and 8 for 16-bit results (computed in fp32, rounded once). Any wiring error
(a missing term, a wrong channel, the mean's dependence forgotten) is of order 1.
"""
import os
import sys
import unittest

import torch
import torch.nn.functional as F

import opgrad.torch as ot

U = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
C = {torch.float32: 64.0, torch.float16: 8.0, torch.bfloat16: 8.0}
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
torch.manual_seed(1414)


def close(case, got, truth, dtype, what):
    got, truth = got.double(), truth.double()
    bound = C[dtype] * U[dtype] * (truth.abs() + truth.abs().max())
    err = (got - truth).abs()
    case.assertTrue(bool((err <= bound).all()), "%s %s: max error %.3g, bound %.3g"
                    % (what, dtype, err.max().item(), bound.min().item()))


def q(t, dtype):
    """t rounded to dtype (the inputs both sides see)."""
    return t.to(dtype)


class TestBatchNorm(unittest.TestCase):
    def run_case(self, dtype, training, affine, channels_last=False):
        x = q(torch.randn(4, 6, 5, 7) * 2 + 0.5, dtype)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        w = q(torch.randn(6), dtype) if affine else None
        b = q(torch.randn(6), dtype) if affine else None
        rm, rv = q(torch.randn(6), dtype), q(torch.rand(6) + 0.5, dtype)
        g = q(torch.randn(4, 6, 5, 7), dtype)
        leaves = [t.clone().requires_grad_() if t is not None else None for t in (x, w, b)]
        rm1, rv1 = rm.clone(), rv.clone()
        y = ot.batch_norm(leaves[0], rm1, rv1, leaves[1], leaves[2], training, 0.1, 1e-5)
        self.assertEqual(y.dtype, dtype)
        grads = torch.autograd.grad(y, [t for t in leaves if t is not None], g)
        # float64 truth on the same values
        ref = [t.double().requires_grad_() if t is not None else None for t in (x, w, b)]
        rm2, rv2 = rm.double(), rv.double()
        yr = F.batch_norm(ref[0], rm2, rv2, ref[1], ref[2], training, 0.1, 1e-5)
        rgrads = torch.autograd.grad(yr, [t for t in ref if t is not None], g.double())
        close(self, y, yr, dtype, "y")
        for name, a, r in zip(("dx", "dw", "db"), grads, rgrads):
            close(self, a, r, dtype, name)
        if training:
            close(self, rm1, rm2, dtype, "running_mean")
            close(self, rv1, rv2, dtype, "running_var")
        else:
            self.assertTrue(torch.equal(rm1, rm) and torch.equal(rv1, rv))

    def test_training_and_eval(self):
        for dtype in DTYPES:
            for training in (True, False):
                for affine in (True, False):
                    with self.subTest(dtype=dtype, training=training, affine=affine):
                        self.run_case(dtype, training, affine)

    def test_channels_last(self):
        for training in (True, False):
            self.run_case(torch.float32, training, True, channels_last=True)

    def test_one_gradient_at_a_time(self):
        x, w, b = torch.randn(8, 3, 10), torch.randn(3), torch.randn(3)
        rm, rv = torch.zeros(3), torch.ones(3)
        full = None
        for k in range(3):
            leaves = [t.clone().requires_grad_(i == k) for i, t in enumerate((x, w, b))]
            y = ot.batch_norm(leaves[0], rm.clone(), rv.clone(), leaves[1], leaves[2], True)
            g = torch.ones_like(y) * torch.arange(10.0)
            (gk,) = torch.autograd.grad(y, [leaves[k]], g)
            if full is None:
                fl = [t.clone().requires_grad_() for t in (x, w, b)]
                yf = ot.batch_norm(fl[0], rm.clone(), rv.clone(), fl[1], fl[2], True)
                full = torch.autograd.grad(yf, fl, g)
            self.assertTrue(torch.equal(gk, full[k]), "gradient %d alone differs" % k)

    def test_gradcheck(self):
        x = torch.randn(3, 2, 4).requires_grad_()
        w, b = torch.randn(2).requires_grad_(), torch.randn(2).requires_grad_()
        for training in (True, False):
            rm, rv = torch.zeros(2), torch.ones(2)
            self.assertTrue(torch.autograd.gradcheck(
                lambda x, w, b: ot.batch_norm(x, rm.clone(), rv.clone(), w, b, training),
                (x, w, b), eps=1e-3, atol=3e-3, rtol=1e-2))

    def test_module(self):
        torch.manual_seed(5)
        ref = torch.nn.BatchNorm2d(6)
        mine = ot.nn.BatchNorm2d(6)
        mine.load_state_dict(ref.state_dict())
        for step in range(3):
            x = torch.randn(4, 6, 3, 3) + step
            close(self, mine(x), ref(x), torch.float32, "BatchNorm2d train step %d" % step)
        close(self, mine.running_mean, ref.running_mean, torch.float32, "running_mean")
        close(self, mine.running_var, ref.running_var, torch.float32, "running_var")
        self.assertEqual(int(mine.num_batches_tracked), 3)
        mine.eval(), ref.eval()
        x = torch.randn(2, 6, 3, 3)
        close(self, mine(x), ref(x), torch.float32, "BatchNorm2d eval")


class TestGroupNorm(unittest.TestCase):
    def test_values(self):
        for dtype in DTYPES:
            for groups in (1, 2, 4):
                for affine in (True, False):
                    with self.subTest(dtype=dtype, groups=groups, affine=affine):
                        x = q(torch.randn(3, 8, 5, 4) * 3 - 1, dtype)
                        w = q(torch.randn(8), dtype) if affine else None
                        b = q(torch.randn(8), dtype) if affine else None
                        g = q(torch.randn(3, 8, 5, 4), dtype)
                        leaves = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
                        y = ot.group_norm(leaves[0], groups, *(leaves[1:] if affine else []))
                        grads = torch.autograd.grad(y, leaves, g)
                        ref = [t.double().requires_grad_() for t in (x, w, b) if t is not None]
                        yr = F.group_norm(ref[0], groups, *(ref[1:] if affine else []))
                        rgrads = torch.autograd.grad(yr, ref, g.double())
                        close(self, y, yr, dtype, "y")
                        for name, a, r in zip(("dx", "dw", "db"), grads, rgrads):
                            close(self, a, r, dtype, name)

    def test_gradcheck(self):
        x = torch.randn(2, 4, 3).requires_grad_()
        w, b = torch.randn(4).requires_grad_(), torch.randn(4).requires_grad_()
        self.assertTrue(torch.autograd.gradcheck(lambda x, w, b: ot.group_norm(x, 2, w, b),
                                                 (x, w, b), eps=1e-3, atol=3e-3, rtol=1e-2))

    def test_module(self):
        ref = torch.nn.GroupNorm(2, 6)
        mine = ot.nn.GroupNorm(2, 6)
        mine.load_state_dict(ref.state_dict())
        x = torch.randn(3, 6, 4)
        close(self, mine(x), ref(x), torch.float32, "GroupNorm")


if __name__ == "__main__":
    print("torch %s, %s" % (torch.__version__, os.environ.get("OPGRAD_LIBRARY", "")),
          file=sys.stderr)
    unittest.main()
