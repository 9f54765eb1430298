#!/usr/bin/python3
"""Second order through opgrad.torch (python/opgrad/torch/_ops.py, "second order"). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_double_backward.py [-v]

(and the same under PyTorch >= 2.4: tests/python/torch2.sh, where the backward operators are
custom ops with register_autograd).

For every twice-differentiable operator, the Hessian-vector products of y = f(x) with an upstream
gradient w: g = dL/dx for L = sum(f(x) w) (create_graph), then d(sum(g v))/dx and /dw, against
the same computation by PyTorch in float64 on the same values. Tolerance: max error <= 1e-4
max|truth| in float32 (the formulas chain a handful of fp32 opgrad operators: the errors seen are
below 3e-6 of it; a wrong or missing term is of order 1), 4e-2 for bfloat16 inputs (computed in
float32 and rounded once to bfloat16). Also: the gradient penalty of issue 16 (mish at
[0.5, -1]: x.grad = [1.7162, 0.1006] as PyTorch), torch.autograd.functional.hessian, and a clear
error at the second backward, never a silent constant, for every operator without a formula.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

torch.manual_seed(16)


def hvp(f, x, w, v):
    """(d/dx, d/dw) of sum(v * d/dx sum(f(x) w)); None entries are zeros."""
    x = x.detach().clone().requires_grad_()
    w = w.detach().clone().requires_grad_()
    g, = torch.autograd.grad((f(x) * w).sum(), x, create_graph=True)
    dx, dw = torch.autograd.grad((g * v).sum(), (x, w), allow_unused=True)
    return (torch.zeros_like(x) if dx is None else dx, torch.zeros_like(w) if dw is None else dw)


def away_from_kinks(x, points):
    """x with values within 0.05 of a kink moved 0.1 away (f'' is not defined there)."""
    for p in points:
        near = (x - p).abs() < 0.05
        x = torch.where(near, x + 0.1, x)
    return x


# binary_cross_entropy_with_logits' target, weight and pos_weight
TGT, WGT, PW = torch.rand(5, 7), torch.rand(5, 7) + 0.5, torch.rand(7) + 0.5
# dropout's mask for seed 7, p = 0.3, 35 elements (it does not depend on the values)
KEEP = ot.dropout(torch.ones(5, 7), 0.3, seed=7) != 0

# name, opgrad f, PyTorch f (float64), kinks of f', shape
CASES = [
    ("mish", ot.mish, F.mish, (), (5, 7)),
    ("gelu", ot.gelu, lambda x: F.gelu(x, approximate="tanh"), (), (5, 7)),
    ("gelu_v2 tanh", lambda x: ot.gelu_v2(x, "tanh"), lambda x: F.gelu(x, approximate="tanh"),
     (), (5, 7)),
    ("gelu_v2 none (erf)", lambda x: ot.gelu_v2(x, "none"), F.gelu, (), (5, 7)),
    ("silu", ot.silu, F.silu, (), (5, 7)),
    ("sigmoid", ot.sigmoid, torch.sigmoid, (), (5, 7)),
    ("tanh", ot.tanh, torch.tanh, (), (5, 7)),
    ("softplus", lambda x: ot.softplus(x, 1.5, 3.0), lambda x: F.softplus(x, 1.5, 3.0), (2.0,),
     (5, 7)),
    ("relu", ot.relu, F.relu, (0.0,), (5, 7)),
    ("leaky_relu", lambda x: ot.leaky_relu(x, 0.1), lambda x: F.leaky_relu(x, 0.1), (0.0,),
     (5, 7)),
    ("hardswish", ot.hardswish, F.hardswish, (-3.0, 3.0), (5, 7)),
    ("hardsigmoid", ot.hardsigmoid, None, (-3.0, 3.0), (5, 7)),  # torch: no double backward
    ("elu", lambda x: ot.elu(x, 0.7), lambda x: F.elu(x, 0.7), (0.0,), (5, 7)),
    ("softmax dim 1", lambda x: ot.softmax(x, 1), lambda x: torch.softmax(x, 1), (), (5, 7)),
    ("softmax dim 0", lambda x: ot.softmax(x, 0), lambda x: torch.softmax(x, 0), (), (5, 7)),
    ("log_softmax dim 1", lambda x: ot.log_softmax(x, 1), lambda x: torch.log_softmax(x, 1), (),
     (5, 7)),
    ("log_softmax dim 0", lambda x: ot.log_softmax(x, 0), lambda x: torch.log_softmax(x, 0), (),
     (5, 7)),
    ("add", lambda x: ot.add(ot.mul(x, x), x, 0.5), lambda x: torch.add(x * x, x, alpha=0.5), (),
     (5, 7)),
    ("mul broadcast", lambda x: ot.mul(x, x[0]), lambda x: x * x[0], (), (5, 7)),
    ("muls", lambda x: ot.muls(ot.mul(x, x), -1.5), lambda x: x * x * -1.5, (), (5, 7)),
    ("reduce_sum", lambda x: ot.reduce_sum(ot.mul(x, x), [1], True),
     lambda x: (x * x).sum(1, keepdim=True), (), (5, 7)),
    ("matmul x x^T", lambda x: ot.matmul(x, x.t()), lambda x: x @ x.t(), (), (5, 7)),
    ("mm", lambda x: ot.mm(ot.mul(x, x), x.t()), lambda x: (x * x) @ x.t(), (), (5, 7)),
    ("bmm", lambda x: ot.bmm(x, x.transpose(1, 2)), lambda x: torch.bmm(x, x.transpose(1, 2)), (),
     (2, 3, 4)),
    ("addmm", lambda x: ot.addmm(x[:, :3], x, x.t()[:, :3], 0.5, 2.0),
     lambda x: torch.addmm(x[:, :3], x, x.t()[:, :3], beta=0.5, alpha=2.0), (), (3, 5)),
    # broadcast backward: gelu's gradient of a [5, 7] output through an input of [7]
    ("silu of a broadcast sum", lambda x: ot.silu(ot.add(x, x[0])),
     lambda x: F.silu(x + x[0]), (), (5, 7)),
    # dropout (its backward is linear in the gradient; the mask depends on the seed alone)
    ("silu of dropout", lambda x: ot.silu(ot.dropout(x, 0.3, seed=7)),
     lambda x: F.silu(x * KEEP.double() / 0.7), (), (5, 7)),
    # pooling (the backwards are linear in the gradient: d/dw exercises their derivative)
    ("max_pool2d", lambda x: ot.max_pool2d(ot.mul(x, x), 3, 2, 1),
     lambda x: F.max_pool2d(x * x, 3, 2, 1), (), (2, 3, 7, 7)),
    ("avg_pool2d", lambda x: ot.avg_pool2d(ot.mul(x, x), 3, 2, 1, ceil_mode=True,
                                           count_include_pad=False),
     lambda x: F.avg_pool2d(x * x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (),
     (2, 3, 7, 7)),
    ("adaptive_avg_pool2d", lambda x: ot.adaptive_avg_pool2d(ot.mul(x, x), 3),
     lambda x: F.adaptive_avg_pool2d(x * x, 3), (), (2, 3, 7, 8)),
    # the pointwise losses against a zero target (their kinks at 0 and +-beta), every reduction
    ("mse_loss mean", lambda x: ot.mse_loss(x, torch.zeros_like(x)),
     lambda x: F.mse_loss(x, torch.zeros_like(x)), (), (5, 7)),
    ("mse_loss none", lambda x: ot.mse_loss(x, torch.zeros_like(x), "none"),
     lambda x: F.mse_loss(x, torch.zeros_like(x), reduction="none"), (), (5, 7)),
    ("l1_loss none", lambda x: ot.l1_loss(x, torch.zeros_like(x), "none"),
     lambda x: F.l1_loss(x, torch.zeros_like(x), reduction="none"), (0.0,), (5, 7)),
    ("smooth_l1_loss sum", lambda x: ot.smooth_l1_loss(x, torch.zeros_like(x), "sum", beta=0.8),
     lambda x: F.smooth_l1_loss(x, torch.zeros_like(x), reduction="sum", beta=0.8),
     (-0.8, 0.0, 0.8), (5, 7)),
    ("bce_with_logits mean", lambda x: ot.binary_cross_entropy_with_logits(
        x, TGT.to(x.dtype), weight=WGT.to(x.dtype), pos_weight=PW.to(x.dtype)),
     lambda x: F.binary_cross_entropy_with_logits(x, TGT.double(), weight=WGT.double(),
                                                  pos_weight=PW.double()), (), (5, 7)),
    ("binary_cross_entropy sum", lambda x: ot.binary_cross_entropy(
        ot.sigmoid(x), TGT.to(x.dtype), weight=WGT.to(x.dtype), reduction="sum"),
     lambda x: F.binary_cross_entropy(torch.sigmoid(x), TGT.double(), weight=WGT.double(),
                                      reduction="sum"), (), (5, 7)),
    # the GLUs (SwiGluGrad and GeGluBackward differentiated again, _glu.py)
    ("swiglu", ot.swiglu, lambda x: F.silu(x.chunk(2, -1)[0]) * x.chunk(2, -1)[1], (), (5, 8)),
    ("swiglu dim 0", lambda x: ot.swiglu(x, 0),
     lambda x: F.silu(x.chunk(2, 0)[0]) * x.chunk(2, 0)[1], (), (6, 5)),
    ("geglu tanh", lambda x: ot.geglu(x, approximate="tanh"),
     lambda x: x.chunk(2, -1)[0] * F.gelu(x.chunk(2, -1)[1], approximate="tanh"), (), (5, 8)),
    ("geglu erf", ot.geglu, lambda x: x.chunk(2, -1)[0] * F.gelu(x.chunk(2, -1)[1]), (), (5, 8)),
    # both of GeGlu's outputs used: the gelu output's gradient path is differentiated too
    ("ge_glu out + gelu^2", lambda x: (lambda o: o[0] + o[1] * o[1])(
        torch.ops.opgrad.ge_glu(x, -1, 1)),
     lambda x: (lambda a, b: a * F.gelu(b, approximate="tanh") +
                F.gelu(b, approximate="tanh") ** 2)(*x.chunk(2, -1)), (), (5, 8)),
]


def hardsigmoid_hvp_ref(x, w, v):
    return torch.zeros_like(x), torch.where((x > -3) & (x < 3), v / 6, torch.zeros_like(v))


def param_penalty(f, x, w, b, n):
    """Gradients of x, w, b after a penalty of the first n of their gradients (create_graph) of
    sum(y^2 c), y = f(x, w, b); None where a tensor took no part."""
    x, w, b = (t.clone().requires_grad_() for t in (x, w, b))
    y = f(x, w, b)
    c = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
    gs = torch.autograd.grad((y * y * c).sum(), [x, w, b][:n], create_graph=True,
                             allow_unused=True)
    sum((t ** 2).sum() for t in gs if t is not None).backward()
    return [t.grad for t in (x, w, b)]


class SecondOrder(unittest.TestCase):
    def check(self, name, fo, fr, kinks, shape, dtype, tol):
        x = away_from_kinks(torch.empty(shape).uniform_(-4, 4), kinks).to(dtype)
        with torch.no_grad():
            yshape = fo(x).shape
        w = torch.randn(yshape).to(dtype)  # the upstream gradient, of the output's shape
        v = torch.randn(shape).to(dtype)
        got = hvp(fo, x, w, v)
        if fr is None:
            want = hardsigmoid_hvp_ref(x.double(), w.double(), v.double())
        else:
            want = hvp(fr, x.double(), w.double(), v.double())
        for which, a, b in zip(("d/dx", "d/dw"), got, want):
            self.assertEqual(a.dtype, dtype, "%s %s dtype" % (name, which))
            err = (a.double() - b).abs().max().item()
            scale = b.abs().max().item()
            self.assertLessEqual(err, tol * max(scale, 1e-3),
                                 "%s %s %s: error %.3g, max|truth| %.3g"
                                 % (name, dtype, which, err, scale))

    def test_hessian_vector_products_float32(self):
        for name, fo, fr, kinks, shape in CASES:
            with self.subTest(name):
                self.check(name, fo, fr, kinks, shape, torch.float32, 1e-4)

    def test_hessian_vector_products_bfloat16(self):
        for name, fo, fr, kinks, shape in CASES:
            if name.startswith(("matmul", "mm", "bmm", "addmm", "reduce", "add", "mul")):
                continue  # the products / sums round every step in bf16 (their own tests)
            if name.startswith("binary_cross_entropy"):
                continue  # through a bf16 sigmoid output, which l'' ~ 1/x^2 amplifies
            with self.subTest(name):
                self.check(name, fo, fr, kinks, shape, torch.bfloat16, 4e-2)

    def test_gradient_penalty_of_the_issue(self):
        x = torch.tensor([0.5, -1.0], requires_grad=True)
        y = ot.mish(x)
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        self.assertTrue(g.requires_grad)
        (y.sum() + (g ** 2).sum()).backward()
        xr = x.detach().double().requires_grad_()
        yr = F.mish(xr)
        gr, = torch.autograd.grad(yr.sum(), xr, create_graph=True)
        (yr.sum() + (gr ** 2).sum()).backward()
        self.assertTrue(torch.allclose(x.grad.double(), xr.grad, rtol=1e-5, atol=1e-6),
                        "%s vs %s" % (x.grad, xr.grad))
        self.assertAlmostEqual(x.grad[0].item(), 1.7162, places=3)

    def test_hessian(self):
        x = torch.randn(6)
        h = torch.autograd.functional.hessian(lambda t: ot.silu(t).sum(), x)
        hr = torch.autograd.functional.hessian(lambda t: F.silu(t).sum(), x.double())
        self.assertLess((h.double() - hr).abs().max().item(), 1e-5)
        h = torch.autograd.functional.hessian(lambda t: ot.log_softmax(t, 0)[2], x)
        hr = torch.autograd.functional.hessian(lambda t: torch.log_softmax(t, 0)[2], x.double())
        self.assertLess((h.double() - hr).abs().max().item(), 1e-5)

    def test_gradient_penalty_through_convolution(self):
        # WGAN-GP's penalty: a critic of convolutions (direct with stride and padding, grouped
        # and dilated, transposed, 1-D), an activation and a linear layer; (|d critic / d x| - 1)^2
        # differentiated with respect to every parameter and the input (ConvolutionBackward's
        # own derivative), against PyTorch in float64
        torch.manual_seed(7)
        x = torch.randn(3, 4, 8, 8)
        p = {"w1": torch.randn(6, 4, 3, 3) * 0.3, "b1": torch.randn(6) * 0.1,
             "w2": torch.randn(6, 3, 3, 3) * 0.3, "b2": torch.randn(6) * 0.1,
             "w3": torch.randn(6, 2, 2, 2) * 0.3, "w4": torch.randn(5, 2, 3) * 0.3,
             "wl": torch.randn(1, 5 * 8) * 0.3}

        def critic(c, c_t, c1, act, lin, x, p):
            h = act(c(x, p["w1"], p["b1"], stride=2, padding=1))           # [3, 6, 4, 4]
            h = act(c(h, p["w2"], p["b2"], padding=2, dilation=2, groups=2))
            h = act(c_t(h, p["w3"], None, stride=2))                       # [3, 6, 8, 8]
            h = act(c1(h.mean(2)[:, :2], p["w4"], None, padding=1))        # [3, 5, 8]
            return lin(h.reshape(3, -1), p["wl"].t()).sum()

        def penalty(fns, x, p, wrt):
            x = x.detach().clone().requires_grad_()
            p = {k: v.detach().clone().requires_grad_() for k, v in p.items()}
            g = torch.autograd.grad(critic(*fns, x, p), [x] + [p[k] for k in wrt],
                                    create_graph=True)
            sum(((t.flatten().norm() - 1) ** 2) for t in g).backward()
            return [x.grad] + [p[k].grad for k in sorted(p)]

        # of the input (the penalty's usual form), then of the weights and biases too: their
        # gradients' own gradients reach ConvolutionBackward's input, the conv(x, GW) term and GB
        for wrt in ((), ("w1", "w2", "w3", "w4", "b1", "b2")):
            got = penalty((ot.conv2d, ot.conv_transpose2d, ot.conv1d, ot.silu, ot.mm), x, p, wrt)
            want = penalty((F.conv2d, F.conv_transpose2d, F.conv1d, F.silu, torch.mm),
                           x.double(), {k: v.double() for k, v in p.items()}, wrt)
            for name, a, b in zip(["x"] + sorted(p), got, want):
                self.assertIsNotNone(a, name)
                err = (a.double() - b).abs().max().item()
                self.assertLessEqual(err, 1e-4 * b.abs().max().item(),
                                     "%s (penalty of x%s): error %.3g" % (name, wrt, err))

    def test_gradient_penalty_through_embedding(self):
        # a penalty of the weight's gradient (EmbeddingDenseBackward differentiated again: a
        # gather of the rows, padding rows dropped; with scale_grad_by_freq the count is applied
        # once, by the embedding's own backward), against PyTorch in float64
        idx = torch.tensor([[0, 2, 2, 5], [1, 2, 0, 3]])
        w0 = torch.randn(6, 3)
        for pad in (None, 2):
            for scale in (False, True):
                res = []
                for emb, w in ((ot.embedding, w0.clone()), (F.embedding, w0.double())):
                    w.requires_grad_()
                    y = emb(idx, w, padding_idx=pad, scale_grad_by_freq=scale)
                    c = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
                    g, = torch.autograd.grad((y * y * c).sum(), w, create_graph=True)
                    (g ** 2).sum().backward()
                    res.append(w.grad)
                err = (res[0].double() - res[1]).abs().max().item()
                self.assertLessEqual(err, 1e-5 * res[1].abs().max().item(),
                                     "padding_idx %s, scale_grad_by_freq %s: error %.3g"
                                     % (pad, scale, err))

    def test_cross_entropy_and_nll(self):
        # the gradient of (loss^2) and a penalty of it, for every reduction, with class weights,
        # label smoothing and an ignored row (the gradient composed from softmax under
        # create_graph), against PyTorch in float64
        n, c = 6, 5
        x0, t = torch.randn(n, c), torch.tensor([0, 3, -100, 4, 1, 3])
        w = torch.rand(c) + 0.5

        def run(fn, x):
            x = x.clone().requires_grad_()
            y = fn(x)
            loss = (y * torch.linspace(0.5, 1.5, y.numel(), dtype=y.dtype).reshape(y.shape)).sum()
            g, = torch.autograd.grad(loss * loss, x, create_graph=True)
            (g ** 2).sum().backward()
            return g.detach(), x.grad

        for red in ("mean", "sum", "none"):
            for kw in ({}, {"weight": w, "label_smoothing": 0.1}):
                k64 = {k: v.double() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
                for name, fo, fr, x in (
                        ("cross_entropy", lambda u: ot.cross_entropy(u, t, reduction=red, **kw),
                         lambda u: F.cross_entropy(u, t, reduction=red, **k64), x0),
                        ("nll_loss", lambda u: ot.nll_loss(u * u, t, w, reduction=red),
                         lambda u: F.nll_loss(u * u, t, w.double(), reduction=red),
                         torch.log_softmax(x0, 1))):
                    got, want = run(fo, x), run(fr, x.double())
                    for which, a, b in zip(("gradient", "penalty's gradient"), got, want):
                        err = (a.double() - b).abs().max().item()
                        self.assertLessEqual(err, 1e-5 * b.abs().max().item(), "%s %s %s %s: %.3g"
                                             % (name, red, list(kw), which, err))

    def check_penalties(self, name, fo, fr, x, w, b):
        """param_penalty of the input's gradient, then of all three, opgrad's against float64."""
        for n in (1, 3):
            got = param_penalty(fo, x, w, b, n)
            want = param_penalty(fr, x.double(), w.double(), b.double(), n)
            for which, a, r in zip("xwb", got, want):
                if r is None:
                    self.assertIsNone(a, "%s %s" % (name, which))
                    continue
                err = (a.double() - r).abs().max().item()
                self.assertLessEqual(err, 1e-5 * r.abs().max().item(), "%s (penalty of %d) d/d%s: "
                                     "%.3g" % (name, n, which, err))

    def test_layer_norm_and_rms_norm(self):
        # penalties of the input's gradient, then of the parameters' too (the backward operators
        # differentiated again, the statistics' gradients reaching x), over one and two
        # normalized dims, against PyTorch in float64
        x0, w0, b0 = torch.randn(4, 3, 6), torch.randn(6) * 0.5 + 1, torch.randn(6) * 0.1
        w2 = torch.randn(3, 6) * 0.5 + 1
        cases = [
            ("layer_norm", lambda x, w, b: ot.layer_norm(x, [6], w, b),
             lambda x, w, b: F.layer_norm(x, [6], w, b), w0),
            ("layer_norm over 2 dims, no bias", lambda x, w, b: ot.layer_norm(x, [3, 6], w),
             lambda x, w, b: F.layer_norm(x, [3, 6], w), w2),
            ("rms_norm", lambda x, w, b: ot.rms_norm(x, [6], w, 1e-5),
             lambda x, w, b: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w, w0),
        ]

        for name, fo, fr, w in cases:
            self.check_penalties(name, fo, fr, x0, w, b0)

    def test_batch_norm_and_group_norm(self):
        # penalties of the input's gradient, then of the parameters' too (under create_graph
        # the gradients are composed with LayerNormBackward over a view, the statistics'
        # gradients reaching x), training and eval BatchNorm, 4-d and 2-d, against float64
        x0, w0, b0 = torch.randn(4, 6, 3, 3), torch.rand(6) + 0.5, torch.randn(6) * 0.1
        rm, rv = torch.randn(6) * 0.1, torch.rand(6) + 0.5
        cases = [
            ("group_norm", lambda x, w, b: ot.group_norm(x, 3, w, b),
             lambda x, w, b: F.group_norm(x, 3, w, b)),
            ("batch_norm training", lambda x, w, b: ot.batch_norm(x, None, None, w, b, True),
             lambda x, w, b: F.batch_norm(x, None, None, w, b, True)),
            ("batch_norm eval", lambda x, w, b: ot.batch_norm(x, rm, rv, w, b, False),
             lambda x, w, b: F.batch_norm(x, rm.to(x.dtype), rv.to(x.dtype), w, b, False)),
            ("batch_norm 2-d", lambda x, w, b: ot.batch_norm(x[:, :, 0, 0] * 1, None, None, w, b,
                                                             True),
             lambda x, w, b: F.batch_norm(x[:, :, 0, 0] * 1, None, None, w, b, True)),
        ]

        for name, fo, fr in cases:
            self.check_penalties(name, fo, fr, x0, w0, b0)

    def test_linear(self):
        # linear (FusedMatmul with its epilogue): under create_graph the backward is composed
        # from the product and the activation's backward operator, every fused activation,
        # with and without bias, penalties of all gradients, against PyTorch in float64
        x0, w0, b0 = torch.randn(5, 4), torch.randn(3, 4), torch.randn(3)
        acts = {None: lambda z: z, "relu": F.relu, "gelu": F.gelu,
                "gelu_tanh": lambda z: F.gelu(z, approximate="tanh")}
        for act, ref in acts.items():
            for use_b in (False, True):
                res = []
                for f, dt in ((lambda x, w, b: ot.linear(x, w, b if use_b else None, act),
                               torch.float32),
                              (lambda x, w, b: ref(F.linear(x, w, b if use_b else None)),
                               torch.float64)):
                    x, w, b = (t.to(dt).clone().requires_grad_() for t in (x0, w0, b0))
                    y = f(x, w, b)
                    c = torch.linspace(-1, 1, y.numel(), dtype=dt).reshape(y.shape)
                    gs = torch.autograd.grad((y * y * c).sum(), (x, w, b), create_graph=True,
                                             allow_unused=True)
                    sum((t ** 2).sum() for t in gs if t is not None).backward()
                    res.append([x.grad, w.grad, b.grad])
                for which, a, r in zip("xwb", *res):
                    if r is None:
                        self.assertIsNone(a)
                        continue
                    err = (a.double() - r).abs().max().item()
                    self.assertLessEqual(err, 1e-4 * r.abs().max().item(), "linear(%s), bias %s: "
                                         "d/d%s %.3g" % (act, use_b, which, err))

    def test_fused_add_scale(self):
        # (x + bias) * scale, scale per column or one element: a penalty of all three gradients
        # (FusedAddScaleBackward differentiated again), against PyTorch in float64
        x0, b0 = torch.randn(5, 4), torch.randn(4)
        for s0 in (torch.randn(4), torch.randn(1)):
            res = []
            for f, dt in ((ot.fused_add_scale, torch.float32),
                          (lambda x, b, s: (x + b) * s, torch.float64)):
                x, b, s = (t.to(dt).clone().requires_grad_() for t in (x0, b0, s0))
                y = f(x, b, s)
                c = torch.linspace(-1, 1, y.numel(), dtype=dt).reshape(y.shape)
                gs = torch.autograd.grad((y * y * c).sum(), (x, b, s), create_graph=True)
                sum((t ** 2).sum() for t in gs).backward()
                res.append([x.grad, b.grad, s.grad])
            for which, a, r in zip("xbs", *res):
                err = (a.double() - r).abs().max().item()
                self.assertLessEqual(err, 1e-5 * r.abs().max().item(),
                                     "scale %s: d/d%s %.3g" % (list(s0.shape), which, err))

    def test_third_order_through_sigmoid(self):
        x = torch.tensor([0.3, -1.2], requires_grad=True)
        xr = x.detach().double().requires_grad_()
        out = []
        for f, t in ((ot.sigmoid, x), (torch.sigmoid, xr)):
            g1, = torch.autograd.grad(f(t).sum(), t, create_graph=True)
            g2, = torch.autograd.grad(g1.sum(), t, create_graph=True)
            g3, = torch.autograd.grad(g2.sum(), t)
            out.append(g3)
        self.assertLess((out[0].double() - out[1]).abs().max().item(), 1e-5)


def second_backward(f, *inputs):
    """Runs a gradient penalty through f: the second backward must raise or be right. The
    upstream gradient is a constant (sum(out * c)), so only the backward's saved tensors carry
    the dependence on x: the case once_differentiable does not see."""
    ins = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    out = f(*ins)
    if isinstance(out, tuple):
        out = out[0]
    c = torch.linspace(-1, 2, out.numel()).reshape(out.shape)
    g = torch.autograd.grad((out.float() * c).sum(), ins[0], create_graph=True)[0]
    g.pow(2).sum().backward()


class Refusals(unittest.TestCase):
    """A backward without a derivative in opgrad (now only a custom operator's): the second
    backward raises an error naming the operator (before issue 16, on 1.13 every such backward
    returned a constant: a gradient penalty silently lost its second-order term)."""

    def assert_refused(self, f, *inputs, words=None):
        with self.assertRaises(RuntimeError) as cm:
            second_backward(f, *inputs)
        msg = str(cm.exception)
        self.assertIn("opgrad", msg)
        if words:
            for w in words:
                self.assertIn(w, msg)
        else:  # opgrad's refusal, or PyTorch >= 2.4's for a custom op without autograd
            self.assertTrue("double backward" in msg or "no autograd formula was registered" in msg,
                            msg)

    def test_refusals(self):
        # every built-in operator is twice differentiable now; custom operators (a user's kernel:
        # opgrad.torch.load_custom) keep a first-order backward, through _ops.first_order: its
        # refusal is checked here on a Function of the same shape (it reads a saved input)
        from opgrad.torch import _ops

        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            @_ops.first_order("opgrad custom op Cube")
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

        self.assert_refused(Cube.apply, torch.randn(3, 4), words=("double backward", "Cube"))

    def test_first_order_unchanged_under_create_graph(self):
        # create_graph alone (no second backward) still returns the right first derivative
        x = torch.randn(3, 5, requires_grad=True)
        g, = torch.autograd.grad(ot.layer_norm(x, [5]).pow(2).sum(), x, create_graph=True)
        x2 = x.detach().clone().requires_grad_()
        g2, = torch.autograd.grad(F.layer_norm(x2, [5]).pow(2).sum(), x2)
        self.assertLess((g.detach() - g2).abs().max().item(), 1e-5)


if __name__ == "__main__":
    unittest.main()
