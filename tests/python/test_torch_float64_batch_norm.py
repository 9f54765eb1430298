#!/usr/bin/python3
"""float64 through opgrad.torch.batch_norm and group_norm: torch.autograd.gradcheck and
gradgradcheck (float64, PyTorch's default tolerances) on BatchNorm (training and eval, with and
without weight and bias) and GroupNorm (with and without gamma and beta), their values and
gradients against PyTorch's own float64 F.batch_norm / F.group_norm, and the running statistics
updated in double. Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_float64_batch_norm.py [-v]

(and under PyTorch >= 2.4 by tests/python/torch2.sh). The second order is composed from
LayerNorm's backward over a view (_batch_norm.py), in float64 for a float64 input.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402
from float64_checks import check_against_pytorch, check_gradcheck  # noqa: E402

torch.manual_seed(65)


def x64(*shape, scale=1.0, shift=0.0):
    return (torch.randn(*shape, dtype=torch.float64) * scale + shift).requires_grad_()


def rm64():  # running statistics for 3 channels (no gradient)
    return torch.randn(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64) + 0.5


RM, RV = rm64()


def bn(train, affine):
    """(opgrad function, PyTorch function, input maker) of a BatchNorm case over [4, 3, 5]: the
    running statistics are fresh copies per call (training updates them)."""
    def call(lib):
        def f(x, *wb):
            w, b = (wb + (None, None))[:2] if affine else (None, None)
            return lib(x, RM.clone(), RV.clone(), w, b, training=train, momentum=0.1, eps=1e-5)
        return f

    make = (lambda: (x64(4, 3, 5, shift=0.5), x64(3), x64(3))) if affine else \
        (lambda: (x64(4, 3, 5, shift=0.5),))
    return call(ot.batch_norm), call(F.batch_norm), make


def gn(affine, groups=2):
    def call(lib):
        def f(x, *wb):
            w, b = (wb + (None, None))[:2] if affine else (None, None)
            return lib(x, groups, w, b, eps=1e-5)
        return f

    make = (lambda: (x64(3, 4, 5, scale=2.0, shift=1.0), x64(4), x64(4))) if affine else \
        (lambda: (x64(3, 4, 5, scale=2.0, shift=1.0),))
    return call(ot.group_norm), call(F.group_norm), make


CASES = {
    "batch_norm_train": bn(True, True),
    "batch_norm_train_noaffine": bn(True, False),
    "batch_norm_eval": bn(False, True),
    "batch_norm_eval_noaffine": bn(False, False),
    "group_norm": gn(True),
    "group_norm_noaffine": gn(False),
    "group_norm_g1": gn(True, groups=1),
}


class Float64BatchNorm(unittest.TestCase):
    def test_gradcheck_and_gradgradcheck(self):
        check_gradcheck(self, {name: (f, make) for name, (f, _, make) in CASES.items()})

    def test_values_and_gradients_match_pytorch(self):
        # float64 throughout (a float32 statistic or coefficient would be ~1e-8 off); the second
        # order is composed
        for name, (f, ref, make) in CASES.items():
            with self.subTest(op=name):
                check_against_pytorch(self, f, ref, make(), (1e-14, 1e-13, 1e-12))

    def test_first_order_backward_matches_pytorch(self):
        # without create_graph: aclnnBatchNormBackward / aclnnGroupNormBackward in float64
        for name, (f, ref, make) in CASES.items():
            with self.subTest(op=name):
                inputs = make()
                y, y_ref = f(*inputs), ref(*inputs)
                w = torch.randn_like(y_ref)
                g = torch.autograd.grad((y * w).sum(), inputs)
                g_ref = torch.autograd.grad((y_ref * w).sum(), inputs)
                for a, b in zip(g, g_ref):
                    self.assertEqual(a.dtype, torch.float64)
                    self.assertLess((a - b).abs().max().item(), 1e-13 * (b.abs().max() + 1))

    def test_running_statistics_in_double(self):
        x = torch.randn(8, 3, 7, dtype=torch.float64) * 3 + 1e3  # a large mean: cancellation
        rm, rv = torch.full((3,), 0.1, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
        rm_ref, rv_ref = rm.clone(), rv.clone()
        y = ot.batch_norm(x, rm, rv, training=True, momentum=0.3, eps=1e-5)
        y_ref = F.batch_norm(x, rm_ref, rv_ref, training=True, momentum=0.3, eps=1e-5)
        self.assertLess((y - y_ref).abs().max().item(), 1e-12)
        self.assertEqual(rm.dtype, torch.float64)
        self.assertLess((rm - rm_ref).abs().max().item(), 1e-12)
        self.assertLess((rv - rv_ref).abs().max().item(), 1e-12)
        self.assertNotEqual(rm.float().double().tolist(), rm.tolist())  # not float32 values

    def test_channels_last(self):
        x = torch.randn(2, 3, 4, 5, dtype=torch.float64).to(memory_format=torch.channels_last)
        w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
        y = ot.batch_norm(x, None, None, w, b, training=True)
        y_ref = F.batch_norm(x, None, None, w, b, training=True)
        self.assertLess((y - y_ref).abs().max().item(), 1e-13)


if __name__ == "__main__":
    unittest.main()
