#!/usr/bin/python3
"""Forward-mode AD and functorch transforms through opgrad.torch (issue 16: a dual tensor used
to come back with a None tangent, silently, and torch.func.vmap failed with "Cannot access data
pointer"). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_func.py [-v]

* torch.autograd.forward_ad (PyTorch 1.13 and >= 2.0): the tangent of every operator with a jvp
  rule (the activations through their backward operators, softmax / log_softmax, add, mul, muls,
  reduce_sum, the matmul family, and the twice-differentiable backward operators themselves; the
  late operators, convolution, pooling, the norms, GLUs, embedding, losses and fused_add_scale,
  through the generic rule: jvp by double vjp) against PyTorch's in float64 on the same values;
  cross_entropy / nll_loss and batch_norm / group_norm through the same rule (max pooling and
  dropout raise NotImplementedError on 1.13, for their integer outputs: never a missing tangent).
* torch.func (PyTorch >= 2.0): jvp, vmap, jacrev, jacfwd and hessian of the operators with
  batching rules (every activation, softmax / log_softmax, add, mul, muls, reduce_sum, and the
  matmul family and linear: vmap over either operand, per-sample gradients; the late operators
  by the generic rules) against PyTorch's; vmap of dropout without a seed raises PyTorch's
  randomness error. Tolerance: 1e-4 of the largest value in float32 (the errors seen are
  below 1e-6).
"""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.autograd.forward_ad as fwAD  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

torch.manual_seed(19)
HAS_FUNC = hasattr(torch, "func")

UNARY = [
    ("mish", ot.mish, F.mish),
    ("gelu", ot.gelu, lambda t: F.gelu(t, approximate="tanh")),
    ("gelu_v2", lambda t: ot.gelu_v2(t, "none"), F.gelu),
    ("silu", ot.silu, F.silu),
    ("sigmoid", ot.sigmoid, torch.sigmoid),
    ("tanh", ot.tanh, torch.tanh),
    ("softplus", lambda t: ot.softplus(t, 1.5, 3.0), lambda t: F.softplus(t, 1.5, 3.0)),
    ("relu", ot.relu, F.relu),
    ("leaky_relu", lambda t: ot.leaky_relu(t, 0.1), lambda t: F.leaky_relu(t, 0.1)),
    ("hardswish", ot.hardswish, F.hardswish),
    ("elu", lambda t: ot.elu(t, 0.7), lambda t: F.elu(t, 0.7)),
    ("softmax", lambda t: ot.softmax(t, 1), lambda t: torch.softmax(t, 1)),
    ("log_softmax", lambda t: ot.log_softmax(t, 0), lambda t: torch.log_softmax(t, 0)),
    ("add", lambda t: ot.add(t, t[0], 0.5), lambda t: torch.add(t, t[0], alpha=0.5)),
    ("mul", lambda t: ot.mul(t, t), lambda t: t * t),
    ("muls", lambda t: ot.muls(t, -2.0), lambda t: t * -2.0),
    ("reduce_sum", lambda t: ot.reduce_sum(ot.mul(t, t), [1], True),
     lambda t: (t * t).sum(1, keepdim=True)),
    # second order of an activation inside a forward pass: its backward operator's own jvp
    ("grad of mish", lambda t: torch.autograd.grad(ot.mish(t).sum(), t, create_graph=True)[0],
     lambda t: torch.autograd.grad(F.mish(t).sum(), t, create_graph=True)[0]),
]
PRODUCTS = [
    ("matmul", lambda t: ot.matmul(t, t.t()), lambda t: t @ t.t()),
    ("mm", lambda t: ot.mm(t, t.t()), lambda t: t @ t.t()),
    ("bmm", lambda t: ot.bmm(t.unsqueeze(0), t.t().unsqueeze(0)),
     lambda t: torch.bmm(t.unsqueeze(0), t.t().unsqueeze(0))),
    ("addmm", lambda t: ot.addmm(t[:, :4], t, t.t()[:, :4], 0.5, 2.0),
     lambda t: torch.addmm(t[:, :4], t, t.t()[:, :4], beta=0.5, alpha=2.0)),
]
# the late operators' generic rules (_ops.py: jvp by double vjp, vmap by the samples); x [4, 6]
W_CONV = torch.randn(2, 1, 3, 3)
IDX = torch.tensor([[0, 2], [3, 2]])
TGT = torch.tensor([0, 5, 2, 3])
RM, RV = torch.randn(6), torch.rand(6) + 0.5


def _w(t):
    return W_CONV.to(t.dtype)


LAYERS = [
    ("conv2d", lambda t: ot.conv2d(t.reshape(1, 1, 4, 6), _w(t), padding=1),
     lambda t: F.conv2d(t.reshape(1, 1, 4, 6), _w(t), padding=1)),
    ("conv_transpose2d", lambda t: ot.conv_transpose2d(t.reshape(1, 1, 4, 6), _w(t).transpose(0, 1)),
     lambda t: F.conv_transpose2d(t.reshape(1, 1, 4, 6), _w(t).transpose(0, 1))),
    ("layer_norm", lambda t: ot.layer_norm(t, [6]), lambda t: F.layer_norm(t, [6])),
    ("rms_norm", lambda t: ot.rms_norm(t, [6]),
     lambda t: t * torch.rsqrt((t * t).mean(-1, keepdim=True) + torch.finfo(torch.float32).eps)),
    ("swiglu", lambda t: ot.swiglu(t), lambda t: F.silu(t[:, :3]) * t[:, 3:]),
    ("geglu", lambda t: ot.geglu(t), lambda t: t[:, :3] * F.gelu(t[:, 3:])),
    ("avg_pool2d", lambda t: ot.avg_pool2d(t.reshape(1, 1, 4, 6), 2),
     lambda t: F.avg_pool2d(t.reshape(1, 1, 4, 6), 2)),
    ("adaptive_avg_pool2d", lambda t: ot.adaptive_avg_pool2d(t.reshape(1, 1, 4, 6), (3, 4)),
     lambda t: F.adaptive_avg_pool2d(t.reshape(1, 1, 4, 6), (3, 4))),
    ("embedding", lambda t: ot.embedding(IDX, t), lambda t: F.embedding(IDX, t)),
    ("mse_loss", lambda t: ot.mse_loss(t, t.flip(0).detach()),
     lambda t: F.mse_loss(t, t.flip(0).detach())),
    ("l1_loss", lambda t: ot.l1_loss(t, t.flip(0).detach() + 0.5),
     lambda t: F.l1_loss(t, t.flip(0).detach() + 0.5)),
    ("smooth_l1_loss", lambda t: ot.smooth_l1_loss(t, t.flip(1).detach(), beta=0.5),
     lambda t: F.smooth_l1_loss(t, t.flip(1).detach(), beta=0.5)),
    ("binary_cross_entropy", lambda t: ot.binary_cross_entropy(torch.sigmoid(t),
                                                               torch.full_like(t, 0.3)),
     lambda t: F.binary_cross_entropy(torch.sigmoid(t), torch.full_like(t, 0.3))),
    ("bce_with_logits", lambda t: ot.binary_cross_entropy_with_logits(t, torch.full_like(t, 0.2),
                                                                     reduction="sum"),
     lambda t: F.binary_cross_entropy_with_logits(t, torch.full_like(t, 0.2), reduction="sum")),
    ("fused_add_scale", lambda t: ot.fused_add_scale(t, t[0], t[1]),
     lambda t: (t + t[0]) * t[1]),
    ("cross_entropy", lambda t: ot.cross_entropy(t, TGT, label_smoothing=0.1),
     lambda t: F.cross_entropy(t, TGT, label_smoothing=0.1)),
    ("nll_loss", lambda t: ot.nll_loss(t, TGT, reduction="sum"),
     lambda t: F.nll_loss(t, TGT, reduction="sum")),
    ("batch_norm", lambda t: ot.batch_norm(t, None, None, training=True),
     lambda t: F.batch_norm(t, None, None, training=True)),
    ("batch_norm eval", lambda t: ot.batch_norm(t, RM.to(t.dtype), RV.to(t.dtype)),
     lambda t: F.batch_norm(t, RM.to(t.dtype), RV.to(t.dtype))),
    ("group_norm", lambda t: ot.group_norm(t.reshape(2, 4, 3), 2),
     lambda t: F.group_norm(t.reshape(2, 4, 3), 2)),
    # (PyTorch 1.13 has no forward mode through its own layer_norm backward: 2.x only)
    ("grad of layer_norm", lambda t: torch.autograd.grad(ot.layer_norm(t, [6]).pow(3).sum(), t,
                                                         create_graph=True)[0],
     lambda t: torch.autograd.grad(F.layer_norm(t, [6]).pow(3).sum(), t, create_graph=True)[0]),
]
# with an integer output (max pooling's indices, dropout's mask): forward mode on PyTorch >= 2.0
# only
INT_OUTPUT = [
    ("max_pool2d", lambda t: ot.max_pool2d(t.reshape(1, 1, 4, 6), 2),
     lambda t: F.max_pool2d(t.reshape(1, 1, 4, 6), 2)),
    ("dropout", lambda t: ot.dropout(t, 0.3, seed=4),
     lambda t: t * (ot.dropout(torch.ones(t.shape[-2:]), 0.3, seed=4) != 0) / 0.7),
]


def close(test, got, want, what):
    err = (got.double() - want).abs().max().item()
    test.assertLessEqual(err, 1e-4 * max(want.abs().max().item(), 1e-3), "%s: error %.3g"
                         % (what, err))


def fwd_tangent(f, x, t):
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, t))
        return fwAD.unpack_dual(y).tangent


class ForwardAD(unittest.TestCase):
    def test_tangents(self):
        x = torch.randn(4, 6) * 2
        t = torch.randn(4, 6)
        for name, fo, fr in UNARY + PRODUCTS:
            with self.subTest(name):
                xo = x.clone().requires_grad_(name.startswith("grad of"))
                xr = x.double().requires_grad_(name.startswith("grad of"))
                got = fwd_tangent(fo, xo, t)
                self.assertIsNotNone(got, name + ": no tangent")
                close(self, got, fwd_tangent(fr, xr, t.double()), name)

    def test_layer_tangents(self):
        # the generic rule: a forward, a backward and a double backward on opgrad operators
        x = torch.randn(4, 6) * 2
        t = torch.randn(4, 6)
        new = int(torch.__version__.split(".")[0]) >= 2
        for name, fo, fr in LAYERS + INT_OUTPUT:
            with self.subTest(name):
                grad_of = name.startswith("grad of")
                if grad_of and not new:
                    continue
                xo = x.clone().requires_grad_(grad_of)
                if (name, fo, fr) in INT_OUTPUT and not new:
                    with self.assertRaises(NotImplementedError):
                        fwd_tangent(fo, xo, t)
                    continue
                got = fwd_tangent(fo, xo, t)
                self.assertIsNotNone(got, name + ": no tangent")
                close(self, got, fwd_tangent(fr, x.double().requires_grad_(grad_of), t.double()),
                      name)

    def test_no_dual_no_change(self):
        # outside dual_level the fast path is untouched (no autograd.Function for plain tensors)
        from opgrad.torch import _kernels as K
        self.assertFalse(K.forward_ad())
        y = ot.mish(torch.randn(3))
        self.assertIsNone(y.grad_fn)


@unittest.skipUnless(HAS_FUNC, "torch.func (PyTorch >= 2.0)")
class Transforms(unittest.TestCase):
    def test_jvp_vmap_jacrev_jacfwd_hessian(self):
        x = torch.randn(3, 5) * 2
        xb = torch.randn(4, 3, 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's note on its batching fallback
            for name, fo, fr in UNARY[:-1]:
                for tr, run in (
                        ("jvp", lambda g, a: torch.func.jvp(g, (a,), (torch.ones_like(a),))[1]),
                        ("vmap", lambda g, a: torch.func.vmap(g)(xb.to(a.dtype))),
                        ("jacrev", lambda g, a: torch.func.jacrev(g)(a)),
                        ("jacfwd", lambda g, a: torch.func.jacfwd(g)(a)),
                        ("hessian", lambda g, a: torch.func.hessian(lambda u: g(u).sum())(a))):
                    with self.subTest("%s %s" % (name, tr)):
                        close(self, run(fo, x), run(fr, x.double()), name + " " + tr)

    def test_layers_by_the_generic_rules(self):
        # a random tangent and sin(y) summed: the norms are invariant to a shifted input and
        # their outputs sum to a constant, which would make ones and a plain sum say nothing
        x, t, xb = torch.randn(4, 6) * 2, torch.randn(4, 6), torch.randn(3, 4, 6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, fo, fr in LAYERS[:-1] + INT_OUTPUT:
                for tr, run in (
                        ("jvp", lambda g, a: torch.func.jvp(g, (a,), (t.to(a.dtype),))[1]),
                        ("vmap", lambda g, a: torch.func.vmap(g)(xb.to(a.dtype))),
                        ("jacrev", lambda g, a: torch.func.jacrev(g)(a)),
                        ("jacfwd", lambda g, a: torch.func.jacfwd(g)(a)),
                        ("hessian",
                         lambda g, a: torch.func.hessian(lambda u: g(u).sin().sum())(a))):
                    with self.subTest("%s %s" % (name, tr)):
                        close(self, run(fo, x), run(fr, x.double()), name + " " + tr)

    def test_matmul_family(self):
        # vmap over either operand or both (1-D samples, batch dims that broadcast), per-sample
        # gradients (vmap of grad), and jacrev / jacfwd / hessian through the products
        vmap, grad = torch.func.vmap, torch.func.grad
        a3, b3 = torch.randn(5, 3, 4), torch.randn(5, 4, 2)
        m, w, v = torch.randn(3, 4), torch.randn(4, 2), torch.randn(5, 4)
        batch3 = torch.randn(5, 2, 3, 4)
        cases = [
            ("matmul x batched", ot.matmul, torch.matmul, (a3, w), (0, None)),
            ("matmul other batched", ot.matmul, torch.matmul, (m, b3), (None, 0)),
            ("matmul both, batch at 1", ot.matmul, torch.matmul,
             (a3.transpose(0, 1), b3), (1, 0)),
            ("matmul 1-D x samples", ot.matmul, torch.matmul, (v, w), (0, None)),
            ("matmul 1-D other samples", ot.matmul, torch.matmul, (m, v), (None, 0)),
            ("matmul 1-D both", ot.matmul, torch.matmul, (v, v), (0, 0)),
            ("matmul 3-D samples", ot.matmul, torch.matmul, (batch3, w), (0, None)),
            ("mm", ot.mm, torch.mm, (a3, w), (0, None)),
            ("bmm", ot.bmm, torch.bmm, (batch3, b3.unsqueeze(1).expand(5, 2, 4, 2)), (0, 0)),
            ("addmm", lambda i, x, y: ot.addmm(i, x, y, 0.5, 2.0),
             lambda i, x, y: torch.addmm(i, x, y, beta=0.5, alpha=2.0),
             (torch.randn(5, 2), a3, w), (0, 0, None)),
            ("baddbmm", lambda i, x, y: ot.baddbmm(i, x, y, 1.0, -1.0),
             lambda i, x, y: torch.baddbmm(i, x, y, beta=1.0, alpha=-1.0),
             (torch.randn(2, 3, 2), batch3, b3.unsqueeze(1).expand(5, 2, 4, 2)), (None, 0, 0)),
        ]
        for name, fo, fr, args, dims in cases:
            with self.subTest(name):
                got = vmap(fo, in_dims=dims)(*args)
                want = vmap(fr, in_dims=dims)(*[a.double() for a in args])
                self.assertEqual(got.shape, want.shape)
                close(self, got, want, name)
        # per-sample gradients of a linear model's loss, through matmul and an activation
        xs, wt = torch.randn(6, 4), torch.randn(4, 3)

        def loss(f, act, w, x):
            return act(f(x, w)).pow(2).sum()

        for wrt in (0, 1):
            with self.subTest("per-sample grad %d" % wrt):
                go = vmap(grad(lambda w, x: loss(ot.matmul, ot.silu, w, x), argnums=wrt),
                          in_dims=(None, 0))(wt, xs)
                gr = vmap(grad(lambda w, x: loss(torch.matmul, F.silu, w, x), argnums=wrt),
                          in_dims=(None, 0))(wt.double(), xs.double())
                close(self, go, gr, "per-sample grad")
        # per-sample gradients of a two-layer MLP on opgrad.torch.linear (FusedMatmul: its
        # backward composed under the transforms), every parameter, every fused activation
        w1, b1, w2 = torch.randn(8, 4), torch.randn(8), torch.randn(3, 8)
        ys = torch.randn(6, 3)
        for act, ref in ((None, lambda z: z), ("relu", F.relu), ("gelu", F.gelu),
                         ("gelu_tanh", lambda z: F.gelu(z, approximate="tanh"))):
            def mlp_o(w1, b1, w2, x, y, act=act):
                return (ot.linear(ot.silu(ot.linear(x, w1, b1, act)), w2) - y).pow(2).sum()

            def mlp_r(w1, b1, w2, x, y, ref=ref):
                return (F.linear(F.silu(ref(F.linear(x, w1, b1))), w2) - y).pow(2).sum()

            for wrt in (0, 1, 2):
                with self.subTest("per-sample grad through linear(%s), parameter %d" % (act, wrt)):
                    dims = (None, None, None, 0, 0)
                    go = vmap(grad(mlp_o, argnums=wrt), in_dims=dims)(w1, b1, w2, xs, ys)
                    gr = vmap(grad(mlp_r, argnums=wrt), in_dims=dims)(
                        w1.double(), b1.double(), w2.double(), xs.double(), ys.double())
                    close(self, go, gr, "linear(%s)" % act)
        with self.assertRaises(NotImplementedError):  # a batched bias: named, not wrong
            vmap(lambda b: ot.linear(xs, w1, b))(torch.randn(2, 8))
        for tr in ("jacrev", "jacfwd"):
            with self.subTest(tr):
                t = getattr(torch.func, tr)
                close(self, t(lambda u: ot.matmul(m, u))(w), t(lambda u: m.double() @ u)(w.double()),
                      tr)
        with self.subTest("hessian"):
            h = torch.func.hessian(lambda u: ot.mm(ot.mm(u, u.t()), u).sum())(m)
            hr = torch.func.hessian(lambda u: ((u @ u.t()) @ u).sum())(m.double())
            close(self, h, hr, "hessian")

    def test_vmap_of_dropout_needs_a_seed(self):
        # a drawn seed is a random operation: PyTorch's randomness error names the flag; with a
        # seed every sample gets the same mask (the mask is a function of seed and position)
        with self.assertRaises(RuntimeError) as cm:
            torch.func.vmap(lambda t: ot.dropout(t, 0.5))(torch.randn(2, 3, 4))
        self.assertIn("randomness", str(cm.exception))
        y = torch.func.vmap(lambda t: ot.dropout(t, 0.5, seed=3))(torch.ones(2, 3, 4))
        self.assertTrue(torch.equal(y[0], y[1]))
        # randomness="same": one drawn seed, one mask for every sample (as torch's dropout)
        y = torch.func.vmap(lambda t: ot.dropout(t, 0.5), randomness="same")(torch.ones(3, 8, 8))
        self.assertTrue(torch.equal(y[0], y[1]) and torch.equal(y[0], y[2]))
        # randomness="different": sample b draws from its own Philox range (offset + b times a
        # sample's blocks), so with a seed it is exactly dropout(x[b], offset=b * blocks)
        x = torch.ones(3, 8, 20)
        blocks = (160 + 127) // 128 * 32
        y = torch.func.vmap(lambda t: ot.dropout(t, 0.5, seed=7), randomness="different")(x)
        for b in range(3):
            self.assertTrue(torch.equal(y[b], ot.dropout(x[b], 0.5, seed=7, offset=b * blocks)))
        self.assertFalse(torch.equal(y[0], y[1]) or torch.equal(y[1], y[2]))
        # a drawn seed: different masks, reproduced by torch.manual_seed
        torch.manual_seed(3)
        y1 = torch.func.vmap(lambda t: ot.dropout(t, 0.5), randomness="different")(x)
        torch.manual_seed(3)
        y2 = torch.func.vmap(lambda t: ot.dropout(t, 0.5), randomness="different")(x)
        self.assertTrue(torch.equal(y1, y2) and not torch.equal(y1[0], y1[1]))


if __name__ == "__main__":
    unittest.main()
