#!/usr/bin/python3
"""torch.jit.trace and torch.compile of opgrad.torch operators (issue 16: the eager fast path used to leave only the
output's aten::empty_like in a trace made without grad, so the traced function returned
uninitialised memory on new input, and PyTorch's own trace check did not notice). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_trace.py [-v]

For each operator: the trace records an opgrad:: call, with and without grad; the traced
function on new inputs equals the eager call bitwise; with grad, its gradients equal the eager
ones (where the dispatcher path has an autograd kernel: every operator below on PyTorch >= 2.4;
on 1.13 all but cross_entropy, whose 1.13 registration is forward-only); batch_norm and
group_norm trace as their forward operators, and a trace with grad raises naming them.
On PyTorch >= 2.4 (tests/python/torch2.sh): torch.compile(fullgraph=True, backend="aot_eager": no
graph break is allowed) of a model that uses an operator of every family, forward and backward
equal to eager within float32 rounding. (A second backward through a compiled function is
PyTorch's limit: aot_autograd refuses double backward.)
"""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

import opgrad.torch as ot  # noqa: E402

torch.manual_seed(17)
W = torch.randn(3, 2, 3, 3)
T = torch.tensor([1, 2, 3])
RM, RV = torch.randn(3) * 0.1, torch.rand(3) + 0.5
CASES = {
    "mish": (ot.mish, (3, 8)),
    "gelu_v2": (lambda t: ot.gelu_v2(t, "none"), (3, 8)),
    "softplus": (lambda t: ot.softplus(t, 2.0), (3, 8)),
    "relu": (ot.relu, (3, 8)),
    "softmax": (lambda t: ot.softmax(t, 1), (3, 8)),
    "add": (lambda t: ot.add(t, t[0], 0.5), (3, 8)),
    "matmul": (lambda t: ot.matmul(t, t.t()), (3, 8)),
    "reduce_sum": (lambda t: ot.reduce_sum(t, [1]), (3, 8)),
    "conv2d": (lambda t: ot.conv2d(t, W), (1, 2, 6, 6)),
    "avg_pool2d": (lambda t: ot.avg_pool2d(t, 2), (1, 2, 6, 6)),
    "layer_norm": (lambda t: ot.layer_norm(t, [8]), (3, 8)),
    "swiglu": (ot.swiglu, (3, 8)),
    "mse_loss": (lambda t: ot.mse_loss(t, t * 0.5), (3, 8)),
    "cross_entropy": (lambda t: ot.cross_entropy(t, T), (3, 8)),
    "batch_norm": (lambda t: ot.batch_norm(t, None, None, training=True), (4, 3, 5, 5)),
    "batch_norm eval": (lambda t: ot.batch_norm(t, RM, RV, training=False), (4, 3, 5, 5)),
    "group_norm": (lambda t: ot.group_norm(t, 3), (4, 3, 5, 5)),
}
FORWARD_ONLY_ON_113 = {"cross_entropy"}
# traced as their forward operators (no autograd formula on the dispatcher): a trace made with
# grad raises (1.13, at the trace) or its backward does (>= 2.4), never a silent constant
FORWARD_ONLY = {"batch_norm", "batch_norm eval", "group_norm"}


class Trace(unittest.TestCase):
    def test_trace_without_grad(self):
        for name, (f, shape) in CASES.items():
            with self.subTest(name):
                x1, x2 = torch.randn(shape), torch.randn(shape)
                with torch.no_grad():
                    tr = torch.jit.trace(f, (x1,))  # PyTorch's own check_trace included
                    self.assertTrue(torch.equal(tr(x2), f(x2)), name)
                kinds = [n.kind() for n in tr.graph.nodes()]
                self.assertTrue(any(k.startswith("opgrad") for k in kinds), kinds)

    def test_trace_with_grad(self):
        for name, (f, shape) in CASES.items():
            if name in FORWARD_ONLY_ON_113 and not ot.USING_CUSTOM_OP:
                continue
            if name in FORWARD_ONLY:
                with self.subTest(name), self.assertRaises(RuntimeError) as cm:
                    x1 = torch.randn(shape, requires_grad=True)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tr = torch.jit.trace(f, (x1,), check_trace=False)
                    tr(x1).sum().backward()
                self.assertIn("autograd formula", str(cm.exception))
                continue
            with self.subTest(name):
                x1 = torch.randn(shape, requires_grad=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the tracer's notes about requires_grad
                    tr = torch.jit.trace(f, (x1,), check_trace=False)
                x2 = torch.randn(shape)
                a, b = x2.clone().requires_grad_(), x2.clone().requires_grad_()
                ya, yb = tr(a), f(b)
                self.assertTrue(torch.equal(ya, yb), name)
                c = torch.linspace(-1, 1, ya.numel()).reshape(ya.shape)
                (ya * c).sum().backward()
                (yb * c).sum().backward()
                self.assertTrue(torch.equal(a.grad, b.grad), name)

    def test_eager_calls_stay_on_the_fast_path(self):
        # outside a trace nothing goes through the dispatcher (the per-call cost users see)
        from opgrad.torch import _kernels as K
        self.assertFalse(K.use_dispatcher())


class _Model(torch.nn.Module):
    """An operator of every family: conv, pool, norm, matmul, activations, GLU, softmax, loss."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.w = torch.nn.Parameter(torch.randn(4, 2, 3, 3, generator=g) * 0.3)
        self.lin = torch.nn.Parameter(torch.randn(16, 8, generator=g) * 0.2)

    def forward(self, x, target):
        h = ot.conv2d(x, self.w, padding=1)               # [2, 4, 4, 4]
        h = ot.avg_pool2d(ot.mish(h), 2)                  # [2, 4, 2, 2]
        h = ot.layer_norm(h.reshape(2, 16), [16])
        h = ot.swiglu(ot.matmul(h, self.lin))             # [2, 4]
        h = ot.add(ot.gelu(h), ot.softmax(h, 1), 0.5)
        return ot.cross_entropy(ot.silu(h), target)


@unittest.skipUnless(hasattr(torch, "compile") and hasattr(torch.library, "custom_op"),
                     "torch.compile with custom ops (PyTorch >= 2.4)")
class Compile(unittest.TestCase):
    def test_fullgraph_forward_backward(self):
        import torch._dynamo
        torch._dynamo.reset()
        m = _Model()
        f = torch.compile(m, backend="aot_eager", fullgraph=True)
        x = torch.randn(2, 2, 4, 4)
        t = torch.tensor([1, 3])
        loss_c = f(x, t)
        loss_c.backward()
        gc = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        loss_e = m(x, t)
        loss_e.backward()
        torch.testing.assert_close(loss_c, loss_e, rtol=1e-6, atol=1e-6)
        for a, b in zip(gc, [p.grad for p in m.parameters()]):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
