#!/usr/bin/python3
"""Tests of opgrad.torch.embedding / nn.Embedding:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_embedding.py [-v]

(the same with /work/torch2venv/bin/python for the PyTorch >= 2.4 custom_op path): values and
gradients against torch.nn.functional.embedding in float64 (repeats, padding_idx, negative
padding_idx, scale_grad_by_freq, int32 indices, fp16 / bf16 within one rounding of the fp32 sum),
gradcheck in float32, nn.Embedding trained a step against torch.nn.Embedding, out-of-range
indices (a zero row), errors. torch.library.opcheck: tests/python/test_torch_dropout.py.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402


class TestEmbedding(unittest.TestCase):
    def check(self, dtype, idx_dtype, padding_idx, freq, shape=(5, 7)):
        torch.manual_seed(0)
        w = torch.randn(11, 6).to(dtype)
        idx = torch.randint(0, 11, shape).to(idx_dtype)
        g = torch.randn(shape + (6,)).to(dtype)
        a = w.clone().requires_grad_()
        y = ot.embedding(idx, a, padding_idx=padding_idx, scale_grad_by_freq=freq)
        y.backward(g)
        b = w.double().requires_grad_()
        z = F.embedding(idx.long(), b, padding_idx=padding_idx, scale_grad_by_freq=freq)
        z.backward(g.double())
        self.assertTrue(torch.equal(y.double(), z))
        tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
        err = (a.grad.double() - b.grad).abs() / (b.grad.abs() + 1)
        self.assertLessEqual(float(err.max()), tol)

    def test_values(self):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for pad in (None, 3, -2):
                for freq in (False, True):
                    self.check(dt, torch.int64, pad, freq)
        self.check(torch.float32, torch.int32, 0, True, shape=(40,))

    def test_gradcheck(self):
        w = torch.randn(5, 3, dtype=torch.float32, requires_grad=True)
        idx = torch.tensor([[0, 4, 4], [2, 0, 4]])
        self.assertTrue(torch.autograd.gradcheck(
            lambda w_: ot.embedding(idx, w_), (w,), eps=1e-3, atol=2e-3,
            rtol=1e-3))

    def test_module_step(self):
        torch.manual_seed(4)
        a = ot.nn.Embedding(20, 8, padding_idx=1)
        b = torch.nn.Embedding(20, 8, padding_idx=1)
        b.load_state_dict(a.state_dict())
        idx = torch.randint(0, 20, (16, 5))
        for m in (a, b):
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            m(idx).square().sum().backward()
            opt.step()
        self.assertTrue(torch.allclose(a.weight, b.weight, atol=1e-6))

    def test_out_of_range_is_zero(self):
        w = torch.randn(4, 3)
        y = ot.embedding(torch.tensor([0, 4, -1]), w)
        self.assertTrue(torch.equal(y[0], w[0]))
        self.assertTrue(torch.equal(y[1:], torch.zeros(2, 3)))

    def test_errors(self):
        with self.assertRaises(TypeError):
            ot.embedding(torch.tensor([0.5]), torch.randn(3, 2))
        with self.assertRaises(ValueError):
            ot.embedding(torch.tensor([0]), torch.randn(3, 2), max_norm=1.0)


if __name__ == "__main__":
    unittest.main()
