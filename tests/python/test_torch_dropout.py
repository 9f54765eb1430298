#!/usr/bin/python3
"""Tests of opgrad.torch.dropout / nn.Dropout (and torch.library.opcheck of the dropout and
embedding operators; the embedding values are tests/python/test_torch_embedding.py):

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_dropout.py [-v]

(the same with /work/torch2venv/bin/python for the PyTorch >= 2.4 custom_op path).

dropout: the mask against an independent Python Philox4x32-10 (the documented definition), out
= x * bit / (1 - p) exactly in fp32 and rounded once in fp16 / bf16, the gradient exact given the
mask, the keep rate, seeds from torch.manual_seed, eval / p = 0 / p = 1, torch.ops.opgrad.dropout.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox(ctr, key):
    c, (k0, k1) = list(ctr), key
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & 0xFFFFFFFF, p1 & 0xFFFFFFFF,
             ((p0 >> 32) ^ c[3] ^ k1) & 0xFFFFFFFF, p0 & 0xFFFFFFFF]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return c


def keep_bits(n, p, seed, offset):
    s, out = seed % 2 ** 64, []
    for b in range((n + 3) // 4):
        ctr = (offset + b) % 2 ** 64
        w = philox([ctr & 0xFFFFFFFF, ctr >> 32, 0, 0], [s & 0xFFFFFFFF, s >> 32])
        out += [(x >> 8) / 2 ** 24 < 1 - p for x in w]
    return torch.tensor(out[:n])


def unpack(mask, n):
    bits = (mask.to(torch.int64).unsqueeze(1) >> torch.arange(8)) & 1
    return bits.reshape(-1)[:n].bool()


class TestDropout(unittest.TestCase):
    def test_known_answer(self):
        self.assertEqual(philox([0, 0, 0, 0], [0, 0]),
                         [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8])

    def test_mask_and_values(self):
        for n, p, seed, offset in ((1000, 0.3, 12345, 0), (257, 0.5, -7, 2 ** 32 - 3),
                                   (64, 0.9, 2 ** 62 + 1, 5)):
            x = torch.randn(n)
            y, mask = ot.dropout_with_mask(x, p, True, seed, offset)
            self.assertEqual(mask.numel(), (n + 127) // 128 * 16)
            keep = keep_bits(n, p, seed, offset)
            self.assertTrue(torch.equal(unpack(mask, n), keep))
            self.assertTrue(torch.equal(unpack(mask, mask.numel() * 8)[n:],
                                        torch.zeros(mask.numel() * 8 - n, dtype=torch.bool)))
            s = torch.tensor(1 / (1 - p), dtype=torch.float32)
            self.assertTrue(torch.equal(y, torch.where(keep, x * s, torch.zeros(()))))

    def test_half(self):
        for dt in (torch.float16, torch.bfloat16):
            x = torch.randn(3000).to(dt)
            y, mask = ot.dropout_with_mask(x, 0.2, True, 99, 0)
            keep = unpack(mask, 3000)
            want = torch.where(keep, x.float() * torch.tensor(1 / 0.8), torch.zeros(())).to(dt)
            self.assertTrue(torch.equal(y, want))
            self.assertEqual(y.dtype, dt)

    def test_gradient(self):
        x = torch.randn(4, 300, requires_grad=True)
        y, mask = ot.dropout_with_mask(x, 0.25, True, 3, 0)
        g = torch.randn(4, 300)
        y.backward(g)
        keep = unpack(mask, x.numel()).reshape(4, 300)
        s = torch.tensor(1 / 0.75, dtype=torch.float32)
        self.assertTrue(torch.equal(x.grad, torch.where(keep, g * s, torch.zeros(()))))

    def test_keep_rate_and_seeds(self):
        n = 1 << 20
        torch.manual_seed(1)
        y1 = ot.dropout(torch.ones(n), 0.5)
        torch.manual_seed(1)
        y2 = ot.dropout(torch.ones(n), 0.5)
        self.assertTrue(torch.equal(y1, y2))  # torch.manual_seed reproduces the mask
        y3 = ot.dropout(torch.ones(n), 0.5)
        self.assertFalse(torch.equal(y1, y3))  # the next call draws a new seed
        for p in (0.1, 0.5, 0.9):
            kept = int((ot.dropout(torch.ones(n), p) != 0).sum())
            sd = (n * p * (1 - p)) ** 0.5
            self.assertLessEqual(abs(kept - n * (1 - p)), 6 * sd)

    def test_special_cases(self):
        x = torch.randn(500, requires_grad=True)
        self.assertTrue(torch.equal(ot.dropout(x, 0.5, training=False), x))
        self.assertTrue(torch.equal(ot.dropout(x, 0.0), x))
        y = ot.dropout(x, 1.0)
        self.assertTrue(torch.equal(y, torch.zeros(500)))
        y.sum().backward()
        self.assertTrue(torch.equal(x.grad, torch.zeros(500)))
        with self.assertRaises(ValueError):
            ot.dropout(x, 1.5)

    def test_module_and_op(self):
        m = ot.nn.Dropout(0.4)
        x = torch.randn(64, 64)
        self.assertEqual(float((m(x) == 0).float().mean()) > 0.2, True)
        m.eval()
        self.assertTrue(torch.equal(m(x), x))
        out, mask = torch.ops.opgrad.dropout(x, 0.4, True, 5, 0)
        self.assertTrue(torch.equal(unpack(mask, x.numel()), keep_bits(x.numel(), 0.4, 5, 0)))


@unittest.skipUnless(hasattr(torch.library, "opcheck"), "torch.library.opcheck needs PyTorch >= 2.4")
class TestOpcheck(unittest.TestCase):
    def test_opcheck(self):
        x = torch.randn(300, requires_grad=True)
        w = torch.randn(10, 4, requires_grad=True)
        i = torch.tensor([[1, 2, 1], [0, 9, 1]])
        cases = ((torch.ops.opgrad.dropout.default, (x, 0.3, True, 5, 0)),
                 (torch.ops.opgrad.dropout_backward.default,
                  (torch.randn(300), torch.zeros(48, dtype=torch.uint8), 2.0)),
                 (torch.ops.opgrad.embedding.default, (w, i, 0, True)),
                 (torch.ops.opgrad.embedding_dense_backward.default,
                  (torch.randn(2, 3, 4), i, 10, 0, True)))
        for op, args in cases:
            with self.subTest(str(op)):
                torch.library.opcheck(op, args)


if __name__ == "__main__":
    unittest.main()
