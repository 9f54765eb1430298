#!/usr/bin/python3
"""float64 through opgrad.torch: torch.autograd.gradcheck and gradgradcheck (float64, PyTorch's
default tolerances) on every operator with float64 kernels, and their values against PyTorch's own
float64 operators. Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_float64.py [-v]

(and under PyTorch >= 2.4 by tests/python/torch2.sh). The operators with float64 kernels: the
activations (mish, gelu in both forms, silu, sigmoid, tanh, softplus, relu, leaky_relu, hardswish,
hardsigmoid, elu), add, mul, muls, fused_add_scale and reduce_sum (a broadcast operand's gradient is summed by
ReduceSum in float64), the matmul family (matmul, mm, bmm, addmm, baddbmm) and linear (FusedMatmul
and its backward in float64, the epilogues included), the pointwise losses (mse, l1, smooth_l1, binary_cross_entropy[_with_logits]) and the GLUs
(swiglu, geglu), softmax, log_softmax, layer_norm, rms_norm, embedding and dropout (its mask is the
same for every dtype); the convolutions, batch_norm / group_norm, pooling and cross_entropy /
nll_loss in test_torch_float64_{conv,batch_norm,pool,cross_entropy}.py. What has no float64
kernels (gradient compression, the optimizers) refuses a float64 tensor with an error naming the
dtype, never a float32 result: tested for compress_cast.
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


def x64(*shape, scale=2.0, kinks=()):
    """Random float64 data, kept 0.05 away from each kink (finite differences step 1e-6 over
    it)."""
    x = torch.randn(*shape, dtype=torch.float64) * scale
    for p in kinks:
        near = (x - p).abs() < 0.05
        x = torch.where(near, x + 0.1, x)
    return x.requires_grad_()


# the BCE losses' target, weight and posWeight (no gradient)
TGT = torch.rand(4, 5, dtype=torch.float64)
WGT = torch.rand(4, 5, dtype=torch.float64) + 0.5
PW = torch.rand(5, dtype=torch.float64) + 0.5

# embedding's indices (every row but 5 used, 2 and 4 twice) and dropout's fixed draw
IDX = torch.tensor([[0, 2, 4], [2, 1, 4], [3, 0, 1]])
P_DROP, SEED = 0.3, 5


def keep_mask(shape):
    """Dropout's keep bits as float64, from a float32 draw of the same seed: the mask depends on
    (seed, offset, element) only, never on the dtype."""
    y, _ = ot.dropout_with_mask(torch.ones(shape), P_DROP, seed=SEED)
    return (y != 0).to(torch.float64)


# name: (opgrad function, PyTorch float64 function, input makers)
CASES = {
    "mish": (ot.mish, F.mish, lambda: (x64(5, 7),)),
    "gelu_tanh": (ot.gelu, lambda x: F.gelu(x, approximate="tanh"), lambda: (x64(5, 7),)),
    "gelu_erf": (lambda x: ot.gelu_v2(x, "none"), F.gelu, lambda: (x64(5, 7),)),
    "silu": (ot.silu, F.silu, lambda: (x64(5, 7),)),
    "sigmoid": (ot.sigmoid, torch.sigmoid, lambda: (x64(5, 7),)),
    "tanh": (ot.tanh, torch.tanh, lambda: (x64(5, 7),)),
    "softplus": (lambda x: ot.softplus(x, 2.0, 5.0), lambda x: F.softplus(x, 2.0, 5.0),
                 lambda: (x64(5, 7, kinks=(2.5,)),)),
    "relu": (ot.relu, torch.relu, lambda: (x64(5, 7, kinks=(0,)),)),
    "leaky_relu": (lambda x: ot.leaky_relu(x, 0.1), lambda x: F.leaky_relu(x, 0.1),
                   lambda: (x64(5, 7, kinks=(0,)),)),
    "hardswish": (ot.hardswish, F.hardswish, lambda: (x64(5, 7, kinks=(-3, 3)),)),
    # (PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32 in every dtype: the
    # float64 truth is relu6(x + 3) / 6)
    "hardsigmoid": (ot.hardsigmoid, lambda x: F.relu6(x + 3) / 6,
                    lambda: (x64(5, 7, kinks=(-3, 3)),)),
    "elu": (ot.elu, F.elu, lambda: (x64(5, 7, kinks=(0,)),)),
    "add": (lambda a, b: ot.add(a, b, alpha=0.3), lambda a, b: torch.add(a, b, alpha=0.3),
            lambda: (x64(5, 7), x64(7))),
    "mul": (ot.mul, torch.mul, lambda: (x64(5, 1, 7), x64(3, 1))),
    "muls": (lambda x: ot.muls(x, 0.1), lambda x: x * 0.1, lambda: (x64(5, 7),)),
    "reduce_sum": (lambda x: ot.reduce_sum(x, [0, 2]), lambda x: x.sum((0, 2)),
                   lambda: (x64(4, 3, 5),)),
    "fused_add_scale": (ot.fused_add_scale, lambda x, b, s: (x + b) * s,
                        lambda: (x64(4, 3, 5), x64(5), x64(5))),
    "swiglu": (lambda x: ot.swiglu(x, -1), lambda x: F.silu(x[:, :3]) * x[:, 3:],
               lambda: (x64(4, 6),)),
    "geglu_tanh": (lambda x: ot.geglu(x, -1, approximate="tanh"),
                   lambda x: x[:, :3] * F.gelu(x[:, 3:], approximate="tanh"),
                   lambda: (x64(4, 6),)),
    "softmax": (lambda x: ot.softmax(x, 1), lambda x: torch.softmax(x, 1),
                lambda: (x64(3, 5, 2),)),
    "log_softmax": (lambda x: ot.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1),
                    lambda: (x64(4, 6),)),
    "layer_norm": (lambda x, w, b: ot.layer_norm(x, [5], w, b),
                   lambda x, w, b: F.layer_norm(x, [5], w, b),
                   lambda: (x64(3, 4, 5), x64(5), x64(5))),
    "layer_norm_2d": (lambda x: ot.layer_norm(x, [4, 5]), lambda x: F.layer_norm(x, [4, 5]),
                      lambda: (x64(3, 4, 5),)),
    "rms_norm": (lambda x, g: ot.rms_norm(x, [5], g),
                 lambda x, g: x * torch.rsqrt((x * x).mean(-1, keepdim=True)
                                              + torch.finfo(x.dtype).eps) * g,
                 lambda: (x64(3, 5), x64(5))),
    "matmul": (ot.matmul, torch.matmul, lambda: (x64(2, 3, 4), x64(4, 5))),
    "matmul_vec": (ot.matmul, torch.matmul, lambda: (x64(4), x64(3, 4, 2))),
    "mm": (ot.mm, torch.mm, lambda: (x64(3, 4), x64(4, 5))),
    "bmm": (ot.bmm, torch.bmm, lambda: (x64(2, 3, 4), x64(2, 4, 5))),
    "addmm": (lambda a, b, c: ot.addmm(a, b, c, beta=0.5, alpha=-1.25),
              lambda a, b, c: torch.addmm(a, b, c, beta=0.5, alpha=-1.25),
              lambda: (x64(5), x64(3, 4), x64(4, 5))),
    "baddbmm": (ot.baddbmm, torch.baddbmm, lambda: (x64(2, 3, 5), x64(2, 3, 4), x64(2, 4, 5))),
    "linear_gelu": (lambda x, w, b: ot.linear(x, w, b, activation="gelu"),
                    lambda x, w, b: F.gelu(F.linear(x, w, b)),
                    lambda: (x64(2, 3, 4), x64(5, 4), x64(5))),
    "linear_relu": (lambda x, w: ot.linear(x, w, activation="relu"),
                    lambda x, w: F.relu(F.linear(x, w)), lambda: (x64(3, 4), x64(5, 4))),
    # FusedMatmul's epilogues in float64: the gelus without a bias, the plain product with one
    "linear_gelu_tanh": (lambda x, w: ot.linear(x, w, activation="gelu_tanh"),
                         lambda x, w: F.gelu(F.linear(x, w), approximate="tanh"),
                         lambda: (x64(2, 3, 4), x64(5, 4))),
    "linear_gelu_nobias": (lambda x, w: ot.linear(x, w, activation="gelu"),
                           lambda x, w: F.gelu(F.linear(x, w)), lambda: (x64(3, 4), x64(5, 4))),
    "linear": (ot.linear, F.linear, lambda: (x64(2, 3, 4), x64(5, 4), x64(5))),
    "mse_loss": (ot.mse_loss, F.mse_loss, lambda: (x64(4, 5), x64(4, 5))),
    "l1_loss_sum": (lambda x, t: ot.l1_loss(x, t, reduction="sum"),
                    lambda x, t: F.l1_loss(x, t, reduction="sum"),
                    lambda: (x64(4, 5), x64(4, 5))),
    "smooth_l1_none": (lambda x, t: ot.smooth_l1_loss(x, t, reduction="none", beta=0.5),
                       lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=0.5),
                       lambda: (x64(4, 5), x64(4, 5))),
    "binary_cross_entropy": (lambda p: ot.binary_cross_entropy(p, TGT, WGT),
                             lambda p: F.binary_cross_entropy(p, TGT, WGT),
                             lambda: ((torch.rand(4, 5, dtype=torch.float64) * 0.8 + 0.1)
                                      .requires_grad_(),)),
    "bce_with_logits": (lambda x: ot.binary_cross_entropy_with_logits(x, TGT, WGT, pos_weight=PW),
                        lambda x: F.binary_cross_entropy_with_logits(x, TGT, WGT, pos_weight=PW),
                        lambda: (x64(4, 5),)),
    "embedding": (lambda w: ot.embedding(IDX, w), lambda w: F.embedding(IDX, w),
                  lambda: (x64(6, 4),)),
    "dropout": (lambda x: ot.dropout(x, P_DROP, seed=SEED),
                lambda x: x * keep_mask(x.shape) * (1 / (1 - P_DROP)), lambda: (x64(6, 7),)),
}


class Float64(unittest.TestCase):
    def test_gradcheck_and_gradgradcheck(self):
        check_gradcheck(self, {name: (f, make) for name, (f, _, make) in CASES.items()})

    def test_values_and_gradients_match_pytorch(self):
        # within a few units of 2^-53 of PyTorch's float64 (both round their own formulas)
        for name, (f, ref, make) in CASES.items():
            with self.subTest(op=name):
                check_against_pytorch(self, f, ref, make(), second_order=False)

    def test_dropout_scales_in_double_with_the_dtype_independent_mask(self):
        x = torch.randn(5, 300, dtype=torch.float64)
        y, mask = ot.dropout_with_mask(x, P_DROP, seed=SEED)
        _, mask32 = ot.dropout_with_mask(x.float(), P_DROP, seed=SEED)
        self.assertTrue(torch.equal(mask, mask32))
        # exactly x * (1 / (1 - p)) in double where kept (a float32 scale would be ~1e-8 off)
        self.assertTrue(torch.equal(y, x * keep_mask(x.shape) * (1 / (1 - P_DROP))))
        self.assertTrue(torch.equal(ot.dropout(x, P_DROP, training=False), x))

    def test_embedding_padding_and_frequency_gradients_match_pytorch(self):
        # (padding_idx and scale_grad_by_freq make the weight's gradient a convention, not a
        # derivative: no gradcheck of the forward, for PyTorch's own embedding either; the
        # backward is linear in the gradient and checked as a function of it)
        for kw in ({"padding_idx": 2}, {"scale_grad_by_freq": True},
                   {"padding_idx": 4, "scale_grad_by_freq": True}):
            with self.subTest(**kw):
                w = x64(6, 4)
                y, y_ref = ot.embedding(IDX, w, **kw), F.embedding(IDX, w, **kw)
                g = torch.randn_like(y)
                gw, = torch.autograd.grad(y, w, g)
                gw_ref, = torch.autograd.grad(y_ref, w, g)
                self.assertEqual(gw.dtype, torch.float64)
                self.assertTrue(torch.equal(y, y_ref))
                self.assertLess((gw - gw_ref).abs().max().item(),
                                1e-15 * (gw_ref.abs().max().item() + 1))
                if "scale_grad_by_freq" not in kw:  # (PyTorch's double backward drops the scale)
                    g.requires_grad_()
                    self.assertTrue(gradcheck(
                        lambda g: torch.autograd.grad(ot.embedding(IDX, w, **kw), w, g,
                                                      create_graph=True)[0], (g,)))

    def test_float64_parameters_are_not_rounded_to_float32(self):
        x = torch.tensor([1.0], dtype=torch.float64)
        self.assertEqual(ot.muls(x, 0.1).item(), 0.1)  # float32(0.1) = 0.10000000149...
        self.assertEqual(ot.leaky_relu(-x, 0.01).item(), -0.01)

    def test_hessian(self):
        x = x64(6)
        h = torch.autograd.functional.hessian(lambda t: ot.mish(t).sum(), x)
        h_ref = torch.autograd.functional.hessian(lambda t: F.mish(t).sum(), x)
        self.assertLess((h - h_ref).abs().max().item(), 1e-13)

    def test_operators_without_float64_kernels_refuse_it(self):
        x = torch.randn(4, 6, dtype=torch.float64)
        calls = {
            "compress_cast": lambda: ot.compress_cast(x.reshape(-1)),
        }
        for name, call in calls.items():
            with self.subTest(op=name):
                with self.assertRaises(TypeError) as cm:
                    call()
                self.assertIn("float64", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
