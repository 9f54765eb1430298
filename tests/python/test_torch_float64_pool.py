#!/usr/bin/python3
"""float64 pooling through opgrad.torch: torch.autograd.gradcheck and gradgradcheck (float64,
PyTorch's default tolerances) on max_pool2d (with its indices), avg_pool2d (ceil_mode,
count_include_pad, divisor_override) and adaptive_avg_pool2d, and their values, indices and
gradients against PyTorch's own float64 torch.nn.functional ops. Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_float64_pool.py [-v]

(and under PyTorch >= 2.4 by tests/python/torch2.sh). The pool family's float64 kernels are an
opgrad extension (ops-nn lists no DOUBLE for them): docs/ops/pool.md.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from float64_checks import check_against_pytorch, check_gradcheck  # noqa: E402
from opgrad.torch import _pool  # noqa: E402

torch.manual_seed(2)


def x64(*shape, channels_last=False):
    """Random float64 data whose values are at least 1e-3 apart (a window's maximum stays the
    maximum under gradcheck's finite-difference steps of 1e-6)."""
    n = 1
    for s in shape:
        n *= s
    x = (torch.randperm(n, dtype=torch.float64) * 1e-3 + torch.rand(n, dtype=torch.float64)
         * 1e-4).reshape(shape)
    x = (x - x.mean()) * 2
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    return x.requires_grad_()


# name: (opgrad function, PyTorch float64 function, input maker)
CASES = {
    "max_pool2d": (lambda x: ot.max_pool2d(x, 3, 2, 1), lambda x: F.max_pool2d(x, 3, 2, 1),
                   lambda: x64(2, 3, 7, 8)),
    "max_pool2d_ceil_dilation": (
        lambda x: ot.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True),
        lambda x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True),
        lambda: x64(1, 2, 8, 7)),
    "max_pool2d_3d": (lambda x: ot.max_pool2d(x, 2, 2, 1, ceil_mode=True),
                      lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True), lambda: x64(2, 5, 7)),
    "max_pool2d_channels_last": (lambda x: ot.max_pool2d(x, 3, 1, 1),
                                 lambda x: F.max_pool2d(x, 3, 1, 1),
                                 lambda: x64(2, 3, 6, 5, channels_last=True)),
    "avg_pool2d": (lambda x: ot.avg_pool2d(x, 3, 2, 1), lambda x: F.avg_pool2d(x, 3, 2, 1),
                   lambda: x64(2, 3, 7, 8)),
    "avg_pool2d_ceil_exclude": (
        lambda x: ot.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        lambda: x64(1, 2, 8, 10)),
    "avg_pool2d_ceil_include": (
        lambda x: ot.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True),
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True),
        lambda: x64(1, 2, 8, 10, channels_last=True)),
    "avg_pool2d_divisor": (lambda x: ot.avg_pool2d(x, (2, 3), (3, 2), divisor_override=5),
                           lambda x: F.avg_pool2d(x, (2, 3), (3, 2), divisor_override=5),
                           lambda: x64(2, 2, 8, 7)),
    "adaptive_avg_pool2d": (lambda x: ot.adaptive_avg_pool2d(x, (3, 4)),
                            lambda x: F.adaptive_avg_pool2d(x, (3, 4)), lambda: x64(2, 3, 7, 5)),
    "adaptive_avg_pool2d_up": (lambda x: ot.adaptive_avg_pool2d(x, (7, 4)),
                               lambda x: F.adaptive_avg_pool2d(x, (7, 4)), lambda: x64(3, 5, 3)),
    "adaptive_avg_pool2d_global": (lambda x: ot.adaptive_avg_pool2d(x, 1),
                                   lambda x: F.adaptive_avg_pool2d(x, 1),
                                   lambda: x64(2, 3, 7, 7, channels_last=True)),
}


class Float64Pool(unittest.TestCase):
    def test_gradcheck_and_gradgradcheck(self):
        check_gradcheck(self, {name: (f, lambda m=make: (m(),))
                               for name, (f, _, make) in CASES.items()})

    def test_values_and_gradients_match_pytorch(self):
        # the sums' orders differ; the second order is the backward's adjoint (pooling is linear
        # in x away from max pooling's ties)
        for name, (f, ref, make) in CASES.items():
            with self.subTest(op=name):
                check_against_pytorch(self, f, ref, (make(),), (1e-14, 1e-14, 1e-14))

    def test_max_indices_match_pytorch(self):
        for x in (x64(2, 3, 9, 11), x64(3, 6, 6), x64(2, 3, 5, 7, channels_last=True)):
            with torch.no_grad():
                y, i = ot.max_pool2d(x, 3, 2, 1, return_indices=True)
                y_ref, i_ref = F.max_pool2d(x, 3, 2, 1, return_indices=True)
            self.assertEqual(i.dtype, torch.int64)
            self.assertTrue(torch.equal(i, i_ref))
            self.assertTrue(torch.equal(y, y_ref))  # a max is exact

    def test_nan_propagates(self):
        x = torch.arange(16, dtype=torch.float64).reshape(1, 1, 4, 4)
        x[0, 0, 1, 1] = float("nan")
        y, i = ot.max_pool2d(x, 2, 2, return_indices=True)
        y_ref, i_ref = F.max_pool2d(x, 2, 2, return_indices=True)
        self.assertTrue(torch.isnan(y[0, 0, 0, 0]))
        self.assertTrue(torch.equal(y.isnan(), y_ref.isnan()))
        self.assertTrue(torch.equal(i, i_ref))

    def test_not_rounded_through_float32(self):
        # values 2^-40 apart (all 1.0 in float32): the 2 x 2 means keep them
        x = (1 + torch.arange(16, dtype=torch.float64) * 2.0 ** -40).reshape(1, 1, 4, 4)
        y = ot.avg_pool2d(x, 2)
        self.assertLess((y - F.avg_pool2d(x, 2)).abs().max().item(), 2.0 ** -52)
        self.assertTrue(bool((y != 1).all()))
        y = ot.adaptive_avg_pool2d(x, (1, 2))
        self.assertLess((y - F.adaptive_avg_pool2d(x, (1, 2))).abs().max().item(), 2.0 ** -52)

    @unittest.skipUnless(hasattr(torch.library, "opcheck") and hasattr(torch.library, "custom_op"),
                         "torch.library.opcheck needs PyTorch >= 2.4")
    def test_opcheck(self):
        # the fakes give float64 outputs for float64 inputs (int64 indices)
        x = x64(2, 3, 9, 10)
        ops = torch.ops.opgrad
        torch.library.opcheck(ops.max_pool2d_with_indices.default,
                              (x, [3, 3], [2, 2], [1, 1], [1, 1], True))
        torch.library.opcheck(ops.avg_pool2d.default, (x, [3, 3], [2, 2], [1, 1], True, False, 0))
        torch.library.opcheck(ops.adaptive_avg_pool2d.default, (x, [4, 3]))

    def test_mixed_dtypes_are_refused(self):
        # the family takes one dtype per call: a float32 gradient with a float64 input is refused
        # by aclnn, naming the argument (never a silent float32 result; autograd itself always
        # passes a gradient of the input's dtype)
        x = x64(1, 2, 6, 6).detach()
        with self.assertRaises((TypeError, opgrad.OpgradError)) as cm:
            _pool.avg_pool2d_backward_kernel(torch.ones(1, 2, 3, 3), x, [2, 2], [2, 2], [0, 0])
        self.assertIn("gradOutput", str(cm.exception))

if __name__ == "__main__":
    unittest.main()
