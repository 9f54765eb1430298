#!/usr/bin/python3
"""float64 through opgrad.torch for the cross-entropy family: torch.autograd.gradcheck and
gradgradcheck (float64, PyTorch's default tolerances) on cross_entropy and nll_loss (every
reduction, class weights, ignore_index, label smoothing, int32 / int64 targets, a [C] input, the
4-d form [N, C, H, W]), and
their values and gradients against PyTorch's own float64 F.cross_entropy / F.nll_loss. Plain
unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_float64_cross_entropy.py [-v]

(and under PyTorch >= 2.4 by tests/python/torch2.sh). The kernels are aclnnCrossEntropyLoss /
aclnnCrossEntropyLossGrad and aclnnNLLLoss / aclnnNLLLossBackward in float64 (an opgrad
extension: ops-nn lists no DOUBLE); the second order is composed from float64 operators.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.autograd import gradcheck  # noqa: E402

import opgrad.torch as ot  # noqa: E402
from float64_checks import check_against_pytorch, check_gradcheck  # noqa: E402

torch.manual_seed(64)

N, C = 6, 5
# targets with two rows on ignore_index 2 (a valid class: only a kernel that compares with it
# drops those rows) and the rest spread over the classes
TGT = torch.tensor([0, 2, 4, 1, 2, 3])
TGT4 = torch.tensor([[[0, 2], [4, 1], [2, 3]], [[1, 1], [3, 0], [4, 2]]])
W = torch.rand(C, dtype=torch.float64) + 0.5


def x64(*shape):
    return (torch.randn(*shape, dtype=torch.float64) * 2).requires_grad_()


def logp64(*shape):
    """Log-probabilities (nll_loss's input), differentiable."""
    return torch.log_softmax(torch.randn(*shape, dtype=torch.float64) * 2, -1).requires_grad_()


# name: (opgrad function, PyTorch float64 function, input maker); target and weight fixed
CASES = {}
for red in ("none", "mean", "sum"):
    CASES["ce_" + red] = (lambda x, r=red: ot.cross_entropy(x, TGT, reduction=r),
                          lambda x, r=red: F.cross_entropy(x, TGT, reduction=r),
                          lambda: (x64(N, C),))
    CASES["ce_weight_ignore_" + red] = (
        lambda x, r=red: ot.cross_entropy(x, TGT, W, ignore_index=2, reduction=r),
        lambda x, r=red: F.cross_entropy(x, TGT, W, ignore_index=2, reduction=r),
        lambda: (x64(N, C),))
    CASES["ce_smooth_weight_ignore_" + red] = (
        lambda x, r=red: ot.cross_entropy(x, TGT.int(), W, ignore_index=2, reduction=r,
                                          label_smoothing=0.3),
        lambda x, r=red: F.cross_entropy(x, TGT, W, ignore_index=2, reduction=r,
                                         label_smoothing=0.3),
        lambda: (x64(N, C),))
    CASES["ce_smooth_" + red] = (
        lambda x, r=red: ot.cross_entropy(x, TGT, reduction=r, label_smoothing=0.1),
        lambda x, r=red: F.cross_entropy(x, TGT, reduction=r, label_smoothing=0.1),
        lambda: (x64(N, C),))
    CASES["nll_" + red] = (lambda x, r=red: ot.nll_loss(x, TGT, reduction=r),
                           lambda x, r=red: F.nll_loss(x, TGT, reduction=r),
                           lambda: (logp64(N, C),))
    CASES["nll_weight_ignore_" + red] = (
        lambda x, r=red: ot.nll_loss(x, TGT.int(), W, ignore_index=2, reduction=r),
        lambda x, r=red: F.nll_loss(x, TGT, W, ignore_index=2, reduction=r),
        lambda: (logp64(N, C),))
    CASES["nll_1d_" + red] = (lambda x, r=red: ot.nll_loss(x, TGT[2], W, reduction=r),
                              lambda x, r=red: F.nll_loss(x, TGT[2], W, reduction=r),
                              lambda: (logp64(C),))
    # the K-dimensional forms: x [2, C, 3, 2], target [2, 3, 2]
    CASES["ce_4d_smooth_weight_ignore_" + red] = (
        lambda x, r=red: ot.cross_entropy(x, TGT4, W, ignore_index=2, reduction=r,
                                          label_smoothing=0.2),
        lambda x, r=red: F.cross_entropy(x, TGT4, W, ignore_index=2, reduction=r,
                                         label_smoothing=0.2),
        lambda: (x64(2, C, 3, 2),))
    CASES["nll_4d_weight_ignore_" + red] = (
        lambda x, r=red: ot.nll_loss(x, TGT4, W, ignore_index=2, reduction=r),
        lambda x, r=red: F.nll_loss(x, TGT4, W, ignore_index=2, reduction=r),
        lambda: (torch.log_softmax(torch.randn(2, C, 3, 2, dtype=torch.float64) * 2, 1)
                 .requires_grad_(),))


class Float64CrossEntropy(unittest.TestCase):
    def test_gradcheck_and_gradgradcheck(self):
        check_gradcheck(self, {name: (f, make) for name, (f, _, make) in CASES.items()})

    def test_values_and_gradients_match_pytorch(self):
        # the second order composed in float64 (nll_loss's gradient does not depend on x)
        for name, (f, ref, make) in CASES.items():
            with self.subTest(op=name):
                check_against_pytorch(self, f, ref, make(), (1e-14, 1e-14, 1e-13))

    def test_not_rounded_to_float32(self):
        # a loss whose float32 rounding is visible: exactly what float64 gives, not float32
        x = torch.tensor([[0.1, 0.2, 0.3]], dtype=torch.float64, requires_grad=True)
        t = torch.tensor([1])
        y = ot.cross_entropy(x, t, label_smoothing=0.1)
        y_ref = F.cross_entropy(x, t, label_smoothing=0.1)
        self.assertLess(abs(y.item() - y_ref.item()), 4e-16)
        (g,) = torch.autograd.grad(y, x)
        (g_ref,) = torch.autograd.grad(y_ref, x)
        self.assertLess((g - g_ref).abs().max().item(), 4e-16)
        self.assertNotEqual(y.item(), float(torch.tensor(y_ref.item(), dtype=torch.float32)))

    def test_large_int64_targets_are_not_read_as_doubles(self):
        # an int64 target past 2^53 is outside [0, C), so ignored, whatever its double value;
        # ignore_index 2^53 + 1 must not match a target 2^53 (equal as doubles)
        big = 2**53
        x = torch.randn(3, C, dtype=torch.float64)
        t = torch.tensor([big, 1, 3])
        keep = torch.tensor([False, True, True])
        y = ot.cross_entropy(x, t, ignore_index=big + 1, reduction="none")
        self.assertEqual(y[0].item(), 0.0)
        ref = F.cross_entropy(x[keep], t[keep], reduction="none")
        self.assertLess((y[keep] - ref).abs().max().item(), 1e-15)
        y = ot.nll_loss(x, torch.tensor([big + 1, 1, 3]), ignore_index=big + 1, reduction="sum")
        self.assertLess(abs(y.item() - F.nll_loss(x[keep], t[keep], reduction="sum").item()),
                        1e-15)

    def test_4d_float32(self):
        # the K-dimensional form through the float32 kernels too
        x = torch.randn(2, C, 3, 2)
        for red in ("none", "mean", "sum"):
            y = ot.cross_entropy(x, TGT4, W.float(), ignore_index=2, reduction=red)
            y_ref = F.cross_entropy(x, TGT4, W.float(), ignore_index=2, reduction=red)
            self.assertEqual(y.shape, y_ref.shape)
            self.assertLess((y - y_ref).abs().max().item(), 1e-5)

    def test_float64_weight_with_float32_input_is_rounded_like_pytorch(self):
        # a float32 input keeps the float32 kernels (the weight is rounded to float32, as before)
        x = torch.randn(N, C)
        y = ot.cross_entropy(x, TGT, W)
        self.assertEqual(y.dtype, torch.float32)
        self.assertLess(abs(y.item() - F.cross_entropy(x, TGT, W.float()).item()), 1e-5)

    def test_torch_ops(self):
        x = x64(N, C)
        loss, lp = torch.ops.opgrad.cross_entropy_loss(x.detach(), TGT, W, "sum", 2, 0.2)
        self.assertEqual((loss.dtype, lp.dtype), (torch.float64, torch.float64))
        ref = F.cross_entropy(x.detach(), TGT, W, ignore_index=2, reduction="sum",
                              label_smoothing=0.2)
        self.assertLess(abs(loss.item() - ref.item()), 1e-14 * (abs(ref.item()) + 1))
        self.assertLess((lp - torch.log_softmax(x.detach(), 1)).abs().max().item(), 1e-14)
        if ot.USING_CUSTOM_OP:  # autograd through the registered operators (PyTorch >= 2.4)
            self.assertTrue(gradcheck(
                lambda t: torch.ops.opgrad.cross_entropy_loss(t, TGT, W, "mean", 2, 0.2)[0], (x,)))
            lp = logp64(N, C)
            self.assertTrue(gradcheck(
                lambda t: torch.ops.opgrad.nll_loss(t, TGT, W, "none", 2)[0], (lp,)))

    @unittest.skipUnless(ot.USING_CUSTOM_OP, "torch.library.opcheck needs the custom_op path")
    def test_opcheck(self):
        ut = ("test_schema", "test_autograd_registration", "test_faketensor")
        x, lp = x64(N, C), logp64(N, C)
        cases = [("cross_entropy_loss", (x, TGT, W, "mean", 2, 0.1)),
                 ("nll_loss", (lp, TGT, W, "sum", -100)),
                 ("cross_entropy_loss_backward",
                  (torch.tensor(1.0, dtype=torch.float64), lp.detach(), TGT, W, "mean", -100,
                   0.2)),
                 ("nll_loss_backward", (torch.ones(N, dtype=torch.float64), lp.detach(), TGT, W,
                                        torch.tensor([3.0], dtype=torch.float64), "none", -100))]
        for name, args in cases:
            r = torch.library.opcheck(getattr(torch.ops.opgrad, name).default, args,
                                      test_utils=ut)
            self.assertTrue(all(v == "SUCCESS" for v in r.values()), "%s: %s" % (name, r))


if __name__ == "__main__":
    unittest.main()
