#!/usr/bin/python3
"""Output layouts follow PyTorch's memory-format rule (issue 16: channels-last inputs used to come
back contiguous). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_memory_format.py [-v]

For each operator and input layout (channels-last 4-d and 5-d, contiguous, transposed), the
forward output and the input's gradient have exactly the strides PyTorch's own operator gives on
the same input (in the installed PyTorch), and the same values within float32 rounding. The
elementwise engine walks such outputs in memory order (tests/tiling: test_plan_channels_last).
Dropout's output takes its input's layout too, while its bit mask stays in logical element order
(the same mask for every layout).
"""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

torch.manual_seed(18)
W2 = torch.randn(4, 3, 3, 3) * 0.3
W3 = torch.randn(4, 3, 3, 3, 3) * 0.3

ELEMENTWISE = [
    ("mish", ot.mish, F.mish),
    ("gelu_v2", lambda t: ot.gelu_v2(t, "none"), F.gelu),
    ("sigmoid", ot.sigmoid, torch.sigmoid),
    ("softplus", lambda t: ot.softplus(t, 2.0, 10.0), lambda t: F.softplus(t, 2.0, 10.0)),
    ("leaky_relu", lambda t: ot.leaky_relu(t, 0.1), lambda t: F.leaky_relu(t, 0.1)),
    ("elu", lambda t: ot.elu(t, 0.5), lambda t: F.elu(t, 0.5)),
    ("add", lambda t: ot.add(t, t, 0.5), lambda t: torch.add(t, t, alpha=0.5)),
    ("mul by a [W] row", lambda t: ot.mul(t, torch.linspace(-1, 1, t.shape[-1])),
     lambda t: t * torch.linspace(-1, 1, t.shape[-1])),
    ("muls", lambda t: ot.muls(t, -1.5), lambda t: t * -1.5),
    ("softmax dim 1", lambda t: ot.softmax(t, 1), lambda t: torch.softmax(t, 1)),
]
SPATIAL = [
    ("conv2d", lambda t: ot.conv2d(t, W2, padding=1), lambda t: F.conv2d(t, W2, padding=1)),
    ("avg_pool2d", lambda t: ot.avg_pool2d(t, 2), lambda t: F.avg_pool2d(t, 2)),
    ("max_pool2d", lambda t: ot.max_pool2d(t, 2), lambda t: F.max_pool2d(t, 2)),
    ("adaptive_avg_pool2d", lambda t: ot.adaptive_avg_pool2d(t, 3),
     lambda t: F.adaptive_avg_pool2d(t, 3)),
    ("batch_norm", lambda t: ot.batch_norm(t, None, None, training=True),
     lambda t: F.batch_norm(t, None, None, training=True)),
    ("group_norm", lambda t: ot.group_norm(t, 3, torch.linspace(0.5, 2, 3), torch.ones(3)),
     lambda t: F.group_norm(t, 3, torch.linspace(0.5, 2, 3), torch.ones(3))),
]


def layouts(rank):
    shape = (2, 3, 6, 6) if rank == 4 else (2, 3, 4, 4, 4)
    cl = torch.channels_last if rank == 4 else torch.channels_last_3d
    base = torch.randn(shape)
    return {"channels_last": base.to(memory_format=cl), "contiguous": base.contiguous(),
            "transposed": base.transpose(-1, -2)}


class MemoryFormat(unittest.TestCase):
    def check(self, name, fo, fr, x):
        a, b = x.detach().clone(), x.detach().clone()
        a = a.as_strided(x.shape, x.stride()).requires_grad_()  # same layout as x
        b = b.as_strided(x.shape, x.stride()).requires_grad_()
        ya, yb = fo(a), fr(b)
        self.assertEqual(ya.stride(), yb.stride(), name + ": output strides")
        torch.testing.assert_close(ya, yb, rtol=1e-5, atol=1e-5)
        c = torch.linspace(-1, 1, ya.numel()).reshape(ya.shape)
        (ya * c).sum().backward()
        (yb * c).sum().backward()
        self.assertEqual(a.grad.stride(), b.grad.stride(), name + ": gradient strides")
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-5)

    def test_elementwise(self):
        for rank in (4, 5):
            for lname, x in layouts(rank).items():
                for name, fo, fr in ELEMENTWISE:
                    with self.subTest("%s %d-d %s" % (name, rank, lname)):
                        self.check(name, fo, fr, x)

    def test_spatial(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for lname, x in layouts(4).items():
                if lname == "transposed":
                    continue  # PyTorch's own choice there is version-specific
                for name, fo, fr in SPATIAL:
                    with self.subTest("%s %s" % (name, lname)):
                        self.check(name, fo, fr, x)

    def test_dropout(self):
        # PyTorch's dropout draws its own mask: the strides are compared with it, the values with
        # x * keep / (1 - p) for opgrad's logical-order mask
        for rank in (4, 5):
            for lname, x in layouts(rank).items():
                with self.subTest("dropout %d-d %s" % (rank, lname)):
                    a = x.detach().clone().as_strided(x.shape, x.stride()).requires_grad_()
                    y = ot.dropout(a, 0.3, seed=7)
                    self.assertEqual(y.stride(), F.dropout(x, 0.3).stride())
                    keep = ot.dropout(torch.ones(x.shape), 0.3, seed=7) != 0
                    self.assertTrue(torch.equal(y, x * keep * (1 / 0.7)))
                    c = torch.linspace(-1, 1, y.numel()).reshape(y.shape)
                    (y * c).sum().backward()
                    self.assertTrue(torch.equal(a.grad, c * keep * (1 / 0.7)))

    def test_conv_channels_last_weight_and_3d(self):
        x = torch.randn(2, 3, 6, 6)
        w = W2.to(memory_format=torch.channels_last)
        self.check("conv2d cl weight", lambda t: ot.conv2d(t, w), lambda t: F.conv2d(t, w), x)
        if int(torch.__version__.split(".")[0]) >= 2:  # 1.13's conv3d returns contiguous
            x3 = layouts(5)["channels_last"]
            self.check("conv3d", lambda t: ot.conv3d(t, W3, padding=1),
                       lambda t: F.conv3d(t, W3, padding=1), x3)


if __name__ == "__main__":
    unittest.main()
