"""opgrad.torch layer_norm / rms_norm (+ nn.LayerNorm, nn.RMSNorm) against PyTorch's own.

Run: OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_norm.py
(and with a PyTorch >= 2.4 python). Values and gradients against float64 PyTorch, gradcheck in
float64 (through the fp32 kernels: opgrad has no float64 kernels, so gradcheck runs on a float32
cast with loose tolerances), fp16 / bf16, every subset of requires_grad, strided inputs.
"""
import unittest

import torch
import torch.nn.functional as F

import opgrad.torch as ot


def ref_layer_norm(x, shape, w, b, eps):
    return F.layer_norm(x.double(), shape, None if w is None else w.double(),
                        None if b is None else b.double(), eps)


def ref_rms_norm(x, shape, w, eps):
    xd = x.double()
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    y = xd * torch.rsqrt(xd.pow(2).mean(dims, keepdim=True) + eps)
    return y * w.double() if w is not None else y


def grads(fn, args):
    for a in args:
        if a is not None and a.grad is not None:
            a.grad = None
    y = fn(*args)
    g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    y.backward(g.to(y.dtype))
    return y, [None if a is None or a.grad is None else a.grad.clone() for a in args]


TOL = {torch.float32: 2e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}


class LayerNormTest(unittest.TestCase):
    def check(self, shape, nshape, dtype=torch.float32, affine=(True, True), need=(True, True, True),
              transpose=False):
        torch.manual_seed(0)
        x = torch.randn(*shape).to(dtype)
        if transpose:
            x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
        w = (torch.rand(nshape) + 0.5).to(dtype) if affine[0] else None
        b = torch.randn(nshape).to(dtype) if affine[1] else None
        args = [t.clone().requires_grad_(n) if t is not None else None
                for t, n in zip((x, w, b), need)]
        if transpose:
            args[0] = x.detach().requires_grad_(need[0])
        y, g = grads(lambda a, c, d: ot.layer_norm(a, nshape, c, d, 1e-5), args)
        rargs = [t.detach().double().requires_grad_(n) if t is not None else None
                 for t, n in zip((x, w, b), need)]
        yr, gr = grads(lambda a, c, d: ref_layer_norm(a, nshape, c, d, 1e-5), rargs)
        tol = TOL[dtype]
        self.assertEqual(y.dtype, dtype)
        torch.testing.assert_close(y.double(), yr, atol=tol * 4, rtol=tol)
        for a, ga, gb in zip(args, g, gr):
            if a is None or not a.requires_grad:
                continue
            torch.testing.assert_close(ga.double(), gb, atol=tol * 8 * max(1, gb.abs().max()),
                                       rtol=tol * 4)

    def test_values(self):
        self.check((4, 33), (33,))
        self.check((2, 3, 5, 7), (5, 7))
        self.check((70, 20), (20,), affine=(False, False))
        self.check((70, 20), (20,), affine=(True, False))
        self.check((5, 9), (5, 9), transpose=True)

    def test_masks(self):
        for need in ((True, False, False), (False, True, True), (False, True, False),
                     (True, True, False), (False, False, True)):
            self.check((40, 17), (17,), need=need)

    def test_16bit(self):
        self.check((8, 64), (64,), torch.float16)
        self.check((8, 64), (64,), torch.bfloat16)

    def test_gradcheck(self):
        torch.manual_seed(1)
        x = torch.randn(3, 6, requires_grad=True)
        w = (torch.rand(6) + 0.5).requires_grad_()
        b = torch.randn(6, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(lambda a, c, d: ot.layer_norm(a, (6,), c, d),
                                                 (x, w, b), eps=1e-2, atol=2e-2, rtol=2e-2))

    def test_module(self):
        torch.manual_seed(2)
        m, r = ot.nn.LayerNorm(24), torch.nn.LayerNorm(24)
        with torch.no_grad():
            m.weight.uniform_(0.5, 1.5), m.bias.uniform_(-1, 1)
            r.weight.copy_(m.weight), r.bias.copy_(m.bias)
        x = torch.randn(5, 24)
        torch.testing.assert_close(m(x), r(x), atol=1e-5, rtol=1e-5)
        self.assertEqual(set(m.state_dict()), set(r.state_dict()))


class RmsNormTest(unittest.TestCase):
    def check(self, shape, nshape, dtype=torch.float32, need=(True, True)):
        torch.manual_seed(3)
        x = torch.randn(*shape).to(dtype)
        w = (torch.rand(nshape) + 0.5).to(dtype)
        args = [t.clone().requires_grad_(n) for t, n in zip((x, w), need)]
        y, g = grads(lambda a, c: ot.rms_norm(a, nshape, c, 1e-6), args)
        rargs = [t.detach().double().requires_grad_(n) for t, n in zip((x, w), need)]
        yr, gr = grads(lambda a, c: ref_rms_norm(a, nshape, c, 1e-6), rargs)
        tol = TOL[dtype]
        self.assertEqual(y.dtype, dtype)
        torch.testing.assert_close(y.double(), yr, atol=tol * 4, rtol=tol)
        for a, ga, gb in zip(args, g, gr):
            if a.requires_grad:
                self.assertEqual(ga.dtype, dtype)
                torch.testing.assert_close(ga.double(), gb, atol=tol * 8 * max(1, gb.abs().max()),
                                           rtol=tol * 4)

    def test_values(self):
        self.check((4, 33), (33,))
        self.check((2, 3, 5, 7), (5, 7))
        self.check((100, 16), (16,), need=(False, True))
        self.check((100, 16), (16,), need=(True, False))

    def test_16bit(self):
        self.check((8, 64), (64,), torch.float16)
        self.check((8, 64), (64,), torch.bfloat16)

    def test_gradcheck(self):
        torch.manual_seed(4)
        x = torch.randn(3, 6, requires_grad=True)
        w = (torch.rand(6) + 0.5).requires_grad_()
        self.assertTrue(torch.autograd.gradcheck(lambda a, c: ot.rms_norm(a, (6,), c),
                                                 (x, w), eps=1e-2, atol=2e-2, rtol=2e-2))

    def test_module(self):
        m = ot.nn.RMSNorm(12, eps=1e-6)
        x = torch.randn(3, 12)
        torch.testing.assert_close(m(x).double(), ref_rms_norm(x, (12,), m.weight, 1e-6),
                                   atol=1e-5, rtol=1e-5)
        if hasattr(torch.nn, "RMSNorm"):
            r = torch.nn.RMSNorm(12, eps=1e-6)
            torch.testing.assert_close(m(x), r(x), atol=1e-5, rtol=1e-5)


if __name__ == "__main__":
    unittest.main(verbosity=1)
