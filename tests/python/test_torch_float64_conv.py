#!/usr/bin/python3
"""float64 convolution through opgrad.torch: torch.autograd.gradcheck and gradgradcheck (float64,
PyTorch's default tolerances) on conv1d / conv2d / conv3d and conv_transpose1d / 2d / 3d (stride,
padding, asymmetric 'same' padding, dilation, groups, depthwise, output_padding, bias or none),
and their values and gradients against PyTorch's own float64 convolutions. Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_float64_conv.py [-v]

(and under PyTorch >= 2.4 by tests/python/torch2.sh). The kernels: aclnnConvolution and
aclnnConvolutionBackward on the GEMM engine's float64 loop (docs/ops/conv.md, "float64"); the
double backward composes the same two operators again.
"""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from float64_checks import check_against_pytorch, check_gradcheck  # noqa: E402

torch.manual_seed(64)
# (PyTorch's own conv1d with padding='same' and an even kernel warns that it copies the input)
warnings.filterwarnings("ignore", message="Using padding='same'")


def x64(*shape):
    return torch.randn(*shape, dtype=torch.float64).requires_grad_()


# name: (opgrad function, PyTorch float64 function, keyword arguments, input shapes: x, w[, b])
CASES = {
    "conv1d_stride2_pad": (ot.conv1d, F.conv1d, dict(stride=2, padding=1),
                           ((2, 3, 9), (4, 3, 3), (4,))),
    "conv1d_same_even": (ot.conv1d, F.conv1d, dict(padding="same"), ((2, 2, 7), (3, 2, 4))),
    "conv2d_3x3": (ot.conv2d, F.conv2d, dict(padding=1), ((2, 3, 5, 6), (4, 3, 3, 3), (4,))),
    "conv2d_stride3_dilation": (ot.conv2d, F.conv2d, dict(stride=(3, 2), padding=(2, 1),
                                                          dilation=(2, 1)),
                                ((1, 2, 8, 7), (3, 2, 2, 3), (3,))),
    "conv2d_groups": (ot.conv2d, F.conv2d, dict(stride=2, padding=1, groups=2),
                      ((2, 4, 6, 5), (6, 2, 3, 3), (6,))),
    "conv2d_depthwise": (ot.conv2d, F.conv2d, dict(padding=1, groups=3),
                         ((2, 3, 5, 5), (6, 1, 3, 3), (6,))),
    "conv2d_1x1": (ot.conv2d, F.conv2d, dict(), ((2, 5, 4, 3), (3, 5, 1, 1))),
    # 8+ input channels at stride 1: the data product by the stride gather in every dtype
    "conv2d_5x5_gather": (ot.conv2d, F.conv2d, dict(padding=2), ((1, 9, 5, 4), (2, 9, 5, 5))),
    "conv3d": (ot.conv3d, F.conv3d, dict(stride=(1, 2, 1), padding=1),
               ((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,))),
    "conv_transpose1d": (ot.conv_transpose1d, F.conv_transpose1d,
                         dict(stride=3, padding=2, output_padding=1),
                         ((2, 3, 5), (3, 2, 4), (2,))),
    "conv_transpose2d": (ot.conv_transpose2d, F.conv_transpose2d,
                         dict(stride=2, padding=1, output_padding=1),
                         ((2, 3, 3, 4), (3, 2, 3, 3), (2,))),
    "conv_transpose2d_groups_dilation": (ot.conv_transpose2d, F.conv_transpose2d,
                                         dict(stride=(3, 2), padding=(1, 0),
                                              output_padding=(2, 1), groups=2, dilation=2),
                                         ((1, 4, 3, 3), (4, 1, 2, 3), (2,))),
    "conv_transpose2d_depthwise": (ot.conv_transpose2d, F.conv_transpose2d,
                                   dict(stride=2, groups=3), ((2, 3, 3, 3), (3, 1, 3, 2), (3,))),
    "conv_transpose3d": (ot.conv_transpose3d, F.conv_transpose3d,
                         dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0)),
                         ((1, 2, 2, 2, 3), (2, 2, 2, 2, 2), (2,))),
}


def make(shapes):
    return tuple(x64(*s) for s in shapes)


def bind(f, kw):
    return lambda *t: f(*t, **kw)


class Float64Conv(unittest.TestCase):
    def test_gradcheck_and_gradgradcheck(self):
        check_gradcheck(self, {name: (bind(f, kw), lambda s=shapes: make(s))
                               for name, (f, _, kw, shapes) in CASES.items()})

    def test_values_and_gradients_match_pytorch(self):
        # both sum the same products in their own orders
        for name, (f, ref, kw, shapes) in CASES.items():
            with self.subTest(op=name):
                check_against_pytorch(self, bind(f, kw), bind(ref, kw), make(shapes))

    def test_float32_and_float64_promote_to_float64(self):
        # (PyTorch's conv refuses mixed dtypes; aclnnConvolution promotes as its other operators
        # do: the float32 input is read exactly and the products run in float64)
        x = torch.randn(2, 3, 6, 5)
        w = x64(4, 3, 3, 3)
        y = ot.conv2d(x, w, padding=1)
        self.assertEqual(y.dtype, torch.float64)
        y_ref = F.conv2d(x.double(), w, padding=1)
        self.assertLess((y - y_ref).abs().max().item(), 1e-14 * (y_ref.abs().max().item() + 1))
        (gw,) = torch.autograd.grad(y.sum(), w)
        (gw_ref,) = torch.autograd.grad(y_ref.sum(), w)
        self.assertLess((gw - gw_ref).abs().max().item(), 1e-13 * (gw_ref.abs().max().item() + 1))

    def test_thread_count_bitwise(self):
        # every element one sum in a fixed order: the same bits on 1 and 2 threads
        x, w, b = make(((4, 8, 12, 11), (16, 8, 3, 3), (16,)))
        g = torch.randn(4, 16, 6, 6, dtype=torch.float64)
        before = opgrad.get_num_threads()
        try:
            results = []
            for n in (1, 2):
                opgrad.set_num_threads(n)
                y = ot.conv2d(x, w, b, stride=2, padding=1)
                results.append((y,) + torch.autograd.grad(y, (x, w, b), g))
        finally:
            opgrad.set_num_threads(before)
        for a, c in zip(*results):
            self.assertTrue(torch.equal(a, c))


if __name__ == "__main__":
    unittest.main()
