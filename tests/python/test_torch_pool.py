#!/usr/bin/python3
"""Tests of opgrad.torch.max_pool2d / avg_pool2d / adaptive_avg_pool2d and their nn modules:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_pool.py [-v]

(the same with /work/torch2venv/bin/python for the PyTorch >= 2.4 custom_op path): values and
gradients against torch.nn.functional's in float64 (the boundary cases: strides that do not
divide, ceil mode, padding = kernel / 2, dilation, countIncludePad both ways, divisor_override,
adaptive sizes that do not divide and that upsample), max-pool indices equal to PyTorch's (ties
included: the first maximum), fp16 / bf16 within one rounding of the fp32 result, strided and 3-d
inputs, an empty batch, gradcheck in float32, the nn modules, errors; torch.library.opcheck on
PyTorch >= 2.4.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402

TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}

MAX_CASES = [  # kernel, stride, padding, dilation, ceil_mode, input H, W
    (3, 2, 1, 1, False, 9, 10), (3, 2, 0, 1, True, 8, 10), (2, 2, 1, 1, True, 5, 7),
    (3, 1, 1, 2, False, 7, 8), (2, 3, 1, 1, False, 8, 7),
    ((3, 2), (2, 1), (1, 0), (1, 2), True, 8, 7),
]
AVG_CASES = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, H, W
    (3, 2, 1, False, True, None, 9, 10), (3, 2, 1, False, False, None, 9, 10),
    (3, 2, 1, True, True, None, 8, 10), (3, 2, 1, True, False, None, 8, 10),
    (3, 2, 1, False, True, 5, 7, 8), ((2, 3), (3, 2), 0, True, True, None, 8, 7),
    (2, 2, 0, False, True, None, 112, 112),
]
ADAPTIVE_CASES = [((7, 5), (3, 4)), ((5, 3), (7, 4)), ((7, 7), (1, 1)), ((9, 10), (4, None))]


def rel_err(a, b):
    return float(((a.double() - b).abs() / (b.abs() + 1)).max()) if b.numel() else 0.0


class TestPool(unittest.TestCase):
    def compare(self, ours, theirs, shape, dtype, seed=0, indices=False):
        torch.manual_seed(seed)
        x = torch.randn(shape)
        a = x.to(dtype).detach().clone().requires_grad_()
        b = x.to(dtype).double().detach().requires_grad_()
        ya, yb = ours(a), theirs(b)
        if indices:
            ya, ia = ya
            yb, ib = yb
            self.assertTrue(torch.equal(ia, ib), "indices differ from PyTorch's")
        g = torch.randn(yb.shape).to(dtype)
        ya.backward(g)
        yb.backward(g.double())
        self.assertEqual(ya.dtype, dtype)
        self.assertLessEqual(rel_err(ya, yb), TOL[dtype])
        self.assertLessEqual(rel_err(a.grad, b.grad), TOL[dtype] * 2)

    def test_max_pool(self):
        for k, s, p, d, c, h, w in MAX_CASES:
            for dt in TOL:
                with self.subTest(k=k, s=s, p=p, d=d, ceil=c, dtype=dt):
                    self.compare(lambda x: ot.max_pool2d(x, k, s, p, d, c, return_indices=True),
                                 lambda x: F.max_pool2d(x, k, s, p, d, c, return_indices=True),
                                 (2, 3, h, w), dt, indices=True)

    def test_avg_pool(self):
        for k, s, p, c, cip, div, h, w in AVG_CASES:
            for dt in TOL:
                with self.subTest(k=k, s=s, p=p, ceil=c, cip=cip, div=div, dtype=dt):
                    self.compare(lambda x: ot.avg_pool2d(x, k, s, p, c, cip, div),
                                 lambda x: F.avg_pool2d(x, k, s, p, c, cip, div),
                                 (2, 3, h, w), dt)

    def test_adaptive(self):
        for (h, w), size in ADAPTIVE_CASES:
            for dt in TOL:
                with self.subTest(size=size, hw=(h, w), dtype=dt):
                    self.compare(lambda x: ot.adaptive_avg_pool2d(x, size),
                                 lambda x: F.adaptive_avg_pool2d(x, size), (2, 3, h, w), dt)

    def test_ties_first_max(self):
        x = torch.tensor([[[1., 3, 3, 0], [2, 3, 1, 1], [0, 0, 5, 5], [0, 0, 5, 4]]])
        y, i = ot.max_pool2d(x, 2, return_indices=True)
        y2, i2 = F.max_pool2d(x, 2, return_indices=True)
        self.assertTrue(torch.equal(y, y2) and torch.equal(i, i2))
        self.assertEqual(i.flatten().tolist(), [1, 2, 8, 10])
        # integer-valued data (many ties) in bf16, overlapping windows
        torch.manual_seed(1)
        x = torch.randint(-2, 3, (2, 4, 11, 13)).to(torch.bfloat16)
        _, i = ot.max_pool2d(x, 3, 2, 1, return_indices=True)
        _, i2 = F.max_pool2d(x.float(), 3, 2, 1, return_indices=True)
        self.assertTrue(torch.equal(i, i2))

    def test_layouts(self):
        torch.manual_seed(2)
        base = torch.randn(3, 11, 9, 8)
        x = base.transpose(2, 3)[:, 1:9:2]  # strided channels, transposed plane, an offset
        self.assertTrue(torch.equal(ot.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1)))
        self.assertTrue(torch.equal(ot.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 3, 2, 1)))
        x3 = torch.randn(4, 7, 6)  # [C, H, W]
        self.assertLessEqual(rel_err(ot.adaptive_avg_pool2d(x3, 3),
                                     F.adaptive_avg_pool2d(x3.double(), 3)), 1e-6)
        e = torch.randn(0, 3, 8, 8, requires_grad=True)
        y = ot.avg_pool2d(e, 2)
        self.assertEqual(tuple(y.shape), (0, 3, 4, 4))
        y.sum().backward()
        self.assertEqual(tuple(e.grad.shape), (0, 3, 8, 8))

    def test_gradcheck(self):
        torch.manual_seed(3)
        x = torch.randn(1, 2, 7, 6, requires_grad=True)
        for f in (lambda t: ot.avg_pool2d(t, 3, 2, 1, True, False),
                  lambda t: ot.adaptive_avg_pool2d(t, (3, 4)),
                  lambda t: ot.max_pool2d(t, 3, 2, 1)):
            self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=2e-3, rtol=1e-3))

    def test_modules(self):
        torch.manual_seed(4)
        x = torch.randn(2, 3, 12, 11, requires_grad=True)
        pairs = [(ot.nn.MaxPool2d(3, 2, 1, ceil_mode=True),
                  torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True)),
                 (ot.nn.AvgPool2d(2, count_include_pad=False),
                  torch.nn.AvgPool2d(2, count_include_pad=False)),
                 (ot.nn.AdaptiveAvgPool2d((5, 4)), torch.nn.AdaptiveAvgPool2d((5, 4)))]
        for a, b in pairs:
            with self.subTest(module=type(a).__name__):
                ya, yb = a(x), b(x)
                self.assertLessEqual(rel_err(ya, yb.double()), 1e-6)
                ga, = torch.autograd.grad(ya.sum(), x)
                gb, = torch.autograd.grad(yb.sum(), x)
                self.assertLessEqual(rel_err(ga, gb.double()), 1e-6)
        y, i = ot.nn.MaxPool2d(2, return_indices=True)(x)
        self.assertEqual(i.dtype, torch.int64)

    def test_errors(self):
        x = torch.randn(1, 2, 6, 6)
        with self.assertRaises(opgrad.OpgradError) as e:
            ot.max_pool2d(x, 2, 2, 2)  # padding > kernel / 2
        self.assertIn("at most half", str(e.exception))
        with self.assertRaises(opgrad.OpgradError):
            ot.avg_pool2d(torch.randn(6, 6), 2)  # rank 2
        with self.assertRaises(opgrad.OpgradError):
            ot.avg_pool2d(x, 9)  # no window fits
        with self.assertRaises(TypeError):  # (float64 is supported: test_torch_float64_pool.py)
            ot.max_pool2d(torch.ones(1, 2, 6, 6, dtype=torch.int32), 2)

    @unittest.skipUnless(hasattr(torch.library, "opcheck") and hasattr(torch.library, "custom_op"),
                         "torch.library.opcheck needs PyTorch >= 2.4")
    def test_opcheck(self):
        x = torch.randn(2, 3, 9, 10, requires_grad=True)
        ops = torch.ops.opgrad
        torch.library.opcheck(ops.max_pool2d_with_indices.default,
                              (x, [3, 3], [2, 2], [1, 1], [1, 1], True))
        torch.library.opcheck(ops.avg_pool2d.default, (x, [3, 3], [2, 2], [1, 1], True, False, 0))
        torch.library.opcheck(ops.adaptive_avg_pool2d.default, (x, [4, 3]))


if __name__ == "__main__":
    unittest.main()
