#!/usr/bin/python3
"""Tests of opgrad.torch's GLU family (python/opgrad/torch/_glu.py). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_glu.py [-v]

(and the same with PyTorch >= 2.4, which also runs torch.library.opcheck on the four operators).
Covered: swiglu / geglu (both approximations) forward and backward against PyTorch's composed
silu(a) * b and a * gelu(b), evaluated in float64 on the same quantized inputs, in fp32 / fp16 /
bf16, along dim -1 and 0, on contiguous, transposed and sliced inputs; torch.autograd.gradcheck
in float32; the gradient through outGelu (torch.ops.opgrad.ge_glu's second output); errors
(odd extent, bad approximate, float64); the nn modules in a small training step.

Tolerance: |got - truth| <= c u (|truth| + max|truth|), u the unit roundoff of the dtype, c = 32
for float32 (the kernels are within 5 ulps, the gradients add the rounding of g times the other
half), 8 for 16-bit results (computed in fp32 and rounded once). Catches any wrong half, wrong
form or wrong layout (errors of order 1).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

U = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
C = {torch.float32: 32.0, torch.float16: 8.0, torch.bfloat16: 8.0}
torch.manual_seed(14)


def ref(kind, x, dim, approximate="none"):
    a, b = x.chunk(2, dim)
    if kind == "swiglu":
        return F.silu(a) * b
    return a * F.gelu(b, approximate=approximate)


def run(kind, x, dim, approximate="none"):
    if kind == "swiglu":
        return ot.swiglu(x, dim)
    return ot.geglu(x, dim, approximate)


def layouts(shape, dtype):
    """contiguous, transposed (the .t() of a leaf), sliced with an offset: leaves of `shape`."""
    base = (torch.rand(shape, dtype=torch.float64) * 8 - 4).to(dtype)
    yield "contiguous", base.clone().requires_grad_()
    t = base.t().contiguous().requires_grad_()
    yield "transposed", t.t()
    wide = torch.zeros(shape[0] + 1, shape[1] + 3, dtype=dtype)
    wide[1:, 2:-1] = base
    wide.requires_grad_()
    yield "sliced", wide[1:, 2:-1]


class TestValues(unittest.TestCase):
    def check(self, got, truth, dtype, what):
        bound = C[dtype] * U[dtype] * (truth.abs() + truth.abs().max())
        err = (got.double() - truth).abs()
        self.assertTrue(bool((err <= bound).all()),
                        "%s: max error %.3g (bound %.3g)" % (what, err.max(), bound.max()))

    def test_forward_backward(self):
        for kind, approx in (("swiglu", "none"), ("geglu", "none"), ("geglu", "tanh")):
            for dtype in (torch.float32, torch.float16, torch.bfloat16):
                for dim in (-1, 0):
                    shape = (7, 10) if dim == -1 else (10, 7)
                    for name, x in layouts(shape, dtype):
                        what = "%s[%s] %s dim %d %s" % (kind, approx, dtype, dim, name)
                        y = run(kind, x, dim, approx)
                        self.assertEqual(y.dtype, dtype)
                        x64 = x.detach().double().requires_grad_()
                        r = ref(kind, x64, dim, approx)
                        self.assertEqual(y.shape, r.shape)
                        self.check(y, r, dtype, what + " forward")
                        g = torch.randn(r.shape, dtype=torch.float64).to(dtype)
                        gx, = torch.autograd.grad(y, x, g)
                        gr, = torch.autograd.grad(r, x64, g.double())
                        self.check(gx, gr, dtype, what + " backward")

    def test_gradcheck(self):
        # float32 (no float64 kernels): eps 1e-3, atol 2e-3, rtol 1e-2, as test_torch_adapter
        for f in (lambda x: ot.swiglu(x, -1), lambda x: ot.swiglu(x, 0),
                  lambda x: ot.geglu(x, -1, "none"), lambda x: ot.geglu(x, 0, "tanh")):
            x = (torch.rand(4, 6) * 4 - 2).requires_grad_()
            self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=2e-3, rtol=1e-2))

    def test_gelu_output_gradient(self):
        x = torch.randn(5, 8, requires_grad=True)
        out, gelu = torch.ops.opgrad.ge_glu(x, -1, 0)
        (out * 2 + 0).sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        x.grad = None
        (out.sum() * 2 + (gelu * 3).sum()).backward()
        xr = x.detach().clone().requires_grad_()
        a, b = xr.chunk(2, -1)
        gb = F.gelu(b)
        ((a * gb).sum() * 2 + (gb * 3).sum()).backward()
        self.assertTrue(torch.allclose(x.grad, xr.grad, rtol=1e-5, atol=1e-6))
        xr.grad = None
        ((a * F.gelu(b)).sum() * 2).backward()
        self.assertTrue(torch.allclose(g1, xr.grad, rtol=1e-5, atol=1e-6))

    def test_errors(self):
        from opgrad._lib import OpgradError
        with self.assertRaises(OpgradError) as cm:
            ot.swiglu(torch.randn(3, 5))
        self.assertIn("must be even", str(cm.exception))
        with self.assertRaises(ValueError):
            ot.geglu(torch.randn(3, 4), -1, "exact")
        with self.assertRaises(TypeError):  # (float64 is supported: test_torch_float64.py)
            ot.swiglu(torch.ones(3, 4, dtype=torch.int32))
        with self.assertRaises(IndexError):
            ot.swiglu(torch.randn(3, 4), 2)

    def test_modules_train(self):
        torch.manual_seed(1)
        for act, twin in ((ot.nn.SwiGLU(), lambda h: ref("swiglu", h, -1)),
                          (ot.nn.GeGLU(approximate="tanh"), lambda h: ref("geglu", h, -1, "tanh"))):
            lin = torch.nn.Linear(6, 8)
            lin2 = torch.nn.Linear(6, 8)
            lin2.load_state_dict(lin.state_dict())
            x = torch.randn(16, 6)
            y1 = act(lin(x)).pow(2).sum()
            y2 = twin(lin2(x)).pow(2).sum()
            y1.backward()
            y2.backward()
            self.assertTrue(torch.allclose(y1, y2, rtol=1e-5))
            self.assertTrue(torch.allclose(lin.weight.grad, lin2.weight.grad, rtol=1e-4, atol=1e-5))

    @unittest.skipUnless(hasattr(torch.library, "opcheck"), "torch.library.opcheck (PyTorch 2)")
    def test_opcheck(self):
        x = torch.randn(4, 6, requires_grad=True)
        g = torch.randn(4, 3)
        torch.library.opcheck(torch.ops.opgrad.swi_glu, (x, -1))
        torch.library.opcheck(torch.ops.opgrad.swi_glu_grad, (g, x.detach(), -1))
        torch.library.opcheck(torch.ops.opgrad.ge_glu, (x, -1, 1))
        out, gelu = torch.ops.opgrad.ge_glu(x.detach(), -1, 1)
        torch.library.opcheck(torch.ops.opgrad.ge_glu_backward, (g, x.detach(), gelu, -1, 1))


if __name__ == "__main__":
    unittest.main()
