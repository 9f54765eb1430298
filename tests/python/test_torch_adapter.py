#!/usr/bin/python3
"""Tests of opgrad.torch (the PyTorch adapter). Plain unittest, no pytest needed:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_adapter.py [-v]

Covered: forward and backward of every operator against PyTorch's own operator evaluated in
float64 on the same quantized inputs (fp32 / fp16 / bf16; contiguous, transposed, sliced with a
storage offset, stride-0 expanded, broadcast), fp32 results against PyTorch's fp32 operator,
torch.ops.opgrad.* registration and autograd, torch.autograd.gradcheck of every wrapped operator
(float32, tolerances below), broadcast add / mul gradients reduced to each input's shape, error
reporting (TypeError, OpgradError with the C message), threads, nn.Module wrappers in a model
trained with an optimizer, and opgrad.torch.load_custom (skipped when the example library is not
built). The matmul family (matmul, mm, bmm, addmm, baddbmm, fused_matmul, linear, nn.Linear) is
TestMatmul / TestLinear, with the bounds stated there.

Tolerance of the value checks: |got - truth| <= c * u * (|truth| + max|truth|), u the unit
roundoff of the dtype (2^-24, 2^-11, 2^-8), c = 32 for float32 (kernels are within 4 ulps = 8u,
a gradient adds the rounding of g and of the product; 32u leaves a 2x margin) and c = 8 for
16-bit results (computed in fp32 and rounded once: 1u, plus the rounding of inputs that the
backward reuses, e.g. sigmoid / tanh saving their 16-bit output: about 4u absolute relative to
max|g|). Gradients that sum K broadcast terms get c * sqrt(K). These bounds catch any layout,
wiring or reduction mistake (errors of order 1); accuracy proper is measured against PyTorch by
consistency.py.
"""
import math
import os
import sys
import threading
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable  # noqa: E402  (puts <repo>/python on sys.path)
from optable import (CASES, DTYPES, MATMUL_CASES, make_inputs, layouts_for,  # noqa: E402
                     away_from_kinks)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad  # noqa: E402
import opgrad.torch as ot  # noqa: E402
from opgrad.torch import _kernels  # noqa: E402

U = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
C = {torch.float32: 32.0, torch.float16: 8.0, torch.bfloat16: 8.0}

# gradcheck policy (float32: opgrad has no float64 kernels). Central differences with eps = 1e-3
# on O(1) inputs: the fp32 rounding of f(x +- eps) contributes about u |f| / eps <= 4e-4 for
# |f| <= 6, the truncation error eps^2 |f'''| / 6 <= 2e-7, the rounding of x +- eps in fp32 a
# relative 5e-4 of f'; the backward kernels are within a few ulps (1e-6). atol = 2e-3 and
# rtol = 1e-2 leave a margin of about 5x over that noise and still fail any wrong derivative
# (a sign, a factor, a missing term are errors of order 1e-1 or more). Inputs stay >= 0.05 away
# from kinks (relu, leaky_relu, elu at 0, hardswish at +-3, softplus at beta x = threshold), far
# beyond eps. nondet_tol = 0: opgrad is deterministic. fast_mode=False (the full Jacobian).
GC_EPS, GC_ATOL, GC_RTOL = 1e-3, 2e-3, 1e-2
torch.manual_seed(20240)  # every random input below is reproducible


def within(got, truth, dtype, k=1, mag=None):
    """(ok, worst excess ratio, index) of the per-element bound in the module docstring. `mag`,
    when given, replaces max|truth| by a per-element magnitude (a sum of |terms|, which keeps a
    cancelling sum honest)."""
    got = got.double()
    truth = truth.double()
    scale = truth.abs().max().item() if truth.numel() else 0.0
    if mag is not None:
        scale = mag.double()
    bound = C[dtype] * math.sqrt(k) * U[dtype] * (truth.abs() + scale) + 1e-300
    err = (got - truth).abs()
    ratio = err / bound
    if ratio.numel() == 0:
        return True, 0.0, None
    worst = ratio.max().item()
    return worst <= 1.0 and not torch.isnan(got).any().item(), worst, ratio.argmax().item()


class Base(unittest.TestCase):
    def assertClose(self, got, truth, dtype, what, k=1, mag=None):
        self.assertEqual(tuple(got.shape), tuple(truth.shape), "%s: shape" % what)
        ok, worst, idx = within(got, truth, dtype, k, mag)
        if not ok:
            g = got.double().flatten()[idx].item()
            t = truth.double().flatten()[idx].item()
            self.fail("%s: element %d is %r, float64 truth %r (%.2f x the bound)"
                      % (what, idx, g, t, worst))


def run_case(case, dtype, layout, n=6, m=7, seed=0):
    """opgrad's forward / gradients and the float64 truth (PyTorch's op in float64 on the same
    quantized inputs and grad_output)."""
    gen = torch.Generator().manual_seed(seed)
    leaves, views = make_inputs(case, dtype, layout, n, m, gen)
    og_leaves = [l.clone().requires_grad_() for l in leaves]
    y = case.og(*[v(l) for v, l in zip(views, og_leaves)])
    g = (torch.rand(y.shape, generator=gen, dtype=torch.float64) * 4 - 2).to(y.dtype)
    y.backward(g)
    t_leaves = [l.double().requires_grad_() for l in leaves]
    yt = case.truth(*[v(l) for v, l in zip(views, t_leaves)])
    yt.backward(g.double())
    return y, [l.grad for l in og_leaves], yt.detach(), [l.grad for l in t_leaves], leaves, views


def reduced_terms(case, layout, leaf, n, m):
    """How many output elements feed one element of this leaf's gradient."""
    out = 1
    if case.name.startswith("reduce_sum"):
        return 1
    if case.name == "fused_add_scale":
        return {1: n, 2: n * m}.get(leaf, 1)
    if layout in ("expanded", "broadcast") and leaf == case.nin - 1:
        out = n if case.nin == 2 else m
    return out


class TestForwardBackward(Base):
    """Every operator x dtype x layout against PyTorch's operator in float64."""

    def test_all(self):
        n, m = 6, 7
        for case in CASES:
            for dname, dtype in DTYPES.items():
                for layout in layouts_for(case):
                    what = "%s %s %s" % (case.name, dname, layout)
                    with self.subTest(what):
                        y, grads, yt, tgrads, leaves, _ = run_case(case, dtype, layout, n, m)
                        self.assertEqual(y.dtype, dtype, what + ": output dtype")
                        # PyTorch's layout rule (its float64 result on the same views)
                        self.assertEqual(y.stride(), yt.stride(), what + ": output layout")
                        self.assertClose(y, yt, dtype, what + " forward")
                        for i, (gr, tg) in enumerate(zip(grads, tgrads)):
                            self.assertIsNotNone(gr, "%s: no gradient for input %d" % (what, i))
                            self.assertEqual(gr.dtype, leaves[i].dtype, what + ": grad dtype")
                            k = reduced_terms(case, layout, i, n, m)
                            self.assertClose(gr, tg, dtype, "%s grad[%d]" % (what, i), k)

    def test_fp32_matches_torch_fp32(self):
        """In float32 PyTorch has every kernel: compare with its result directly."""
        for case in CASES:
            for layout in layouts_for(case):
                with self.subTest(case.name + " " + layout):
                    gen = torch.Generator().manual_seed(3)
                    leaves, views = make_inputs(case, torch.float32, layout, 5, 9, gen)
                    a = [l.clone().requires_grad_() for l in leaves]
                    b = [l.clone().requires_grad_() for l in leaves]
                    ya = case.og(*[v(l) for v, l in zip(views, a)])
                    yb = case.pt(*[v(l) for v, l in zip(views, b)])
                    torch.testing.assert_close(ya, yb, rtol=4e-6, atol=4e-6)
                    g = torch.rand(yb.shape, generator=gen) * 4 - 2
                    ya.backward(g)
                    yb.backward(g)
                    for p, q in zip(a, b):
                        torch.testing.assert_close(p.grad, q.grad, rtol=2e-5, atol=2e-5)

    def test_grad_output_stride0(self):
        """y.sum().backward() hands the backward a stride-0 grad_output: used as it is."""
        x = torch.linspace(-4, 4, 35).reshape(5, 7).requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        for og, pt in ((ot.mish, F.mish), (ot.softplus, F.softplus), (ot.hardswish, F.hardswish),
                       (ot.elu, F.elu), (ot.tanh, torch.tanh)):
            x.grad = x2.grad = None
            og(x).sum().backward()
            pt(x2).sum().backward()
            torch.testing.assert_close(x.grad, x2.grad, rtol=2e-5, atol=2e-6)

    def test_zero_copy_views(self):
        """Inputs are read in place: a transposed / offset / expanded view gives the same result
        as its contiguous copy, and the input's memory is not copied (no .contiguous())."""
        base = torch.randn(9, 11)
        for v in (base.t(), base[2:7, 3:10], base[:, :1].expand(9, 5), base[1, 2].expand(4, 4),
                  base[::2, ::3]):
            torch.testing.assert_close(ot.mish(v), ot.mish(v.contiguous()), rtol=0, atol=0)

    def test_scalar_and_empty(self):
        x0 = torch.tensor(0.7, requires_grad=True)
        y = ot.mish(x0)
        self.assertEqual(y.shape, torch.Size([]))
        y.backward()
        x1 = torch.tensor(0.7, requires_grad=True)
        F.mish(x1).backward()
        torch.testing.assert_close(x0.grad, x1.grad)
        e = torch.empty(0, 3, requires_grad=True)
        ye = ot.silu(e)
        self.assertEqual(ye.shape, (0, 3))
        ye.sum().backward()
        self.assertEqual(e.grad.shape, (0, 3))
        self.assertEqual(ot.add(torch.empty(0, 3), torch.ones(3)).shape, (0, 3))
        self.assertEqual(ot.reduce_sum(torch.empty(0, 3), [0]).tolist(), [0.0, 0.0, 0.0])


class TestBroadcastGradients(Base):
    """Gradients summed over broadcast dims: the bound uses the magnitude sum(|g| |other|) (the
    same float64 backward on absolute values), since a sum of random-signed terms may cancel."""

    def setUp(self):
        torch.manual_seed(1234)

    def check(self, f, tf, sa, sb, da=torch.float32, db=torch.float32, alpha=None):
        a = torch.randn(sa).to(da).requires_grad_()
        b = torch.randn(sb).to(db).requires_grad_()
        a2 = a.detach().double().requires_grad_()
        b2 = b.detach().double().requires_grad_()
        y = f(a, b) if alpha is None else f(a, b, alpha)
        yt = tf(a2, b2) if alpha is None else tf(a2, b2, alpha=alpha)
        self.assertEqual(y.dtype, torch.result_type(a, b))
        g = torch.randn(y.shape).to(y.dtype)
        y.backward(g)
        yt.backward(g.double())
        self.assertEqual(a.grad.shape, a.shape)
        self.assertEqual(b.grad.shape, b.shape)
        self.assertEqual(a.grad.dtype, a.dtype)
        self.assertEqual(b.grad.dtype, b.dtype)
        a3 = a.detach().double().abs().requires_grad_()
        b3 = b.detach().double().abs().requires_grad_()
        y3 = tf(a3, b3) if alpha is None else tf(a3, b3, alpha=abs(alpha))
        y3.backward(g.double().abs())
        k = max(1, y.numel() // max(1, min(a.numel(), b.numel())))
        self.assertClose(a.grad, a2.grad, da, "grad a", k, a3.grad)
        self.assertClose(b.grad, b2.grad, db, "grad b", k, b3.grad)

    def test_shapes(self):
        for f, tf in ((ot.add, torch.add), (ot.mul, torch.mul)):
            for sa, sb in (((4, 1, 3), (5, 1)), ((3,), (2, 3)), ((2, 3), ()), ((), (2, 3)),
                           ((1, 1), (4, 5)), ((4, 5), (4, 5)), ((2, 1, 4), (1, 3, 1))):
                with self.subTest(f=f.__name__, a=sa, b=sb):
                    self.check(f, tf, sa, sb)

    def test_alpha(self):
        self.check(ot.add, torch.add, (3, 4), (4,), alpha=-0.25)

    def test_mixed_dtypes(self):
        for da, db in ((torch.float16, torch.float32), (torch.bfloat16, torch.float16),
                       (torch.float32, torch.bfloat16)):
            for f, tf in ((ot.add, torch.add), (ot.mul, torch.mul)):
                with self.subTest(f=f.__name__, a=da, b=db):
                    self.check(f, tf, (5, 3), (3,), da, db)

    def test_only_one_input_requires_grad(self):
        a = torch.randn(3, 4, requires_grad=True)
        b = torch.randn(4)
        ot.mul(a, b).sum().backward()
        torch.testing.assert_close(a.grad, b.expand(3, 4))
        self.assertIsNone(b.grad)


class TestGradcheck(unittest.TestCase):
    """torch.autograd.gradcheck on every wrapped operator (float32, policy above)."""

    def inputs(self, case, seed=0):
        gen = torch.Generator().manual_seed(seed)
        shapes = {"fused_add_scale": [(3, 4), (4,), (1,)]}.get(case.name, [(3, 4)] * case.nin)
        out = []
        for shape, (lo, hi) in zip(shapes, case.domains):
            if case.name.startswith("reduce_sum"):
                lo, hi = -2.0, 2.0
            x = optable.uniform(shape, lo, hi, gen)
            x = away_from_kinks(x, case.kinks, 0.05)
            out.append(x.float().requires_grad_())
        return out

    def test_gradcheck_all(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Input #0 ... is not a double precision" (known)
            for case in CASES:
                for via in ("functional", "torch.ops"):
                    with self.subTest(case=case.name, via=via):
                        fn = case.og if via == "functional" else _ops_fn(case)
                        self.assertTrue(torch.autograd.gradcheck(
                            fn, tuple(self.inputs(case)), eps=GC_EPS, atol=GC_ATOL, rtol=GC_RTOL,
                            nondet_tol=0.0, fast_mode=False))

    def test_broadcast_gradcheck(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for f in (ot.add, ot.mul):
                a = torch.randn(3, 1, 2, requires_grad=True)
                b = torch.randn(4, 1, requires_grad=True)
                self.assertTrue(torch.autograd.gradcheck(f, (a, b), eps=GC_EPS, atol=GC_ATOL,
                                                         rtol=GC_RTOL))

    def test_double_backward(self):
        """create_graph + a second backward gives mish'' (this test used to expect a
        RuntimeError, which it got only because g did not require grad: the term was silently
        lost; tests/python/test_torch_double_backward.py covers every operator)."""
        x = torch.randn(4, requires_grad=True)
        (g,) = torch.autograd.grad(ot.mish(x).sum(), x, create_graph=True)
        self.assertTrue(g.requires_grad)
        g.sum().backward()
        xr = x.detach().double().requires_grad_()
        (gr,) = torch.autograd.grad(F.mish(xr).sum(), xr, create_graph=True)
        gr.sum().backward()
        self.assertLess((x.grad.double() - xr.grad).abs().max().item(), 1e-5)


def _ops_fn(case):
    """The same computation through torch.ops.opgrad.<op> (the dispatcher path)."""
    return case.via_ops


class TestInstalled(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("OPGRAD_TEST_INSTALLED") == "1",
                         "OPGRAD_TEST_INSTALLED=1: the wheel's package (tests/python/torch2.sh)")
    def test_the_installed_package_is_under_test(self):
        # the package and its library come from the wheel, not from the source tree or the
        # environment
        import opgrad
        here = os.path.abspath(opgrad.__file__)
        self.assertNotEqual(here, os.path.join(optable.REPO, "python", "opgrad", "__init__.py"))
        self.assertIn("site-packages", here)
        self.assertEqual(os.path.dirname(opgrad.library_path), os.path.dirname(opgrad.__file__))
        self.assertNotIn("OPGRAD_LIBRARY", os.environ)
        self.assertEqual(opgrad.__version__, opgrad.version())


class TestRegistration(unittest.TestCase):
    NAMES = sorted(set(c.op for c in CASES))

    def test_ops_exist_with_autograd(self):
        for name in self.NAMES:
            with self.subTest(name):
                op = getattr(torch.ops.opgrad, name)
                d = ot.OPS[name]
                nin = len(d.tensor_args)
                shapes = [(3, 4), (4,), (1,)] if name == "fused_add_scale" else [(3, 4)] * nin
                xs = [torch.randn(s, requires_grad=True) for s in shapes]
                extra = (2.0,) if name == "muls" else ()
                y = op(*xs, *extra)
                self.assertIsNotNone(y.grad_fn, name)
                y.sum().backward()
                for x in xs:
                    self.assertIsNotNone(x.grad)
                with torch.no_grad():
                    self.assertIsNone(op(*xs, *extra).grad_fn)

    def test_backward_ops_registered(self):
        for name in ("mish_backward", "gelu_backward", "gelu_v2_backward", "silu_backward",
                     "sigmoid_backward", "tanh_backward", "softplus_backward", "relu_backward",
                     "leaky_relu_backward", "hardswish_backward", "elu_backward",
                     "fused_add_scale_backward", "fused_matmul_backward"):
            self.assertTrue(hasattr(torch.ops.opgrad, name), name)
        x, g = torch.randn(3, 4), torch.randn(3, 4)
        torch.testing.assert_close(torch.ops.opgrad.mish_backward(g, x),
                                   torch.ops.aten.mish_backward(g, x))

    @staticmethod
    def _sample_args(name):
        d = ot.OPS[name]
        nin = len(d.tensor_args)
        shapes = {"fused_add_scale": [(3, 4), (4,), (1,)],
                  "fused_add_scale_backward": [(3, 4), (3, 4), (4,), (1,)],
                  "add": [(2, 1, 4), (3, 1)], "mul": [(2, 1, 4), (3, 1)],
                  "matmul": [(2, 3, 4), (4, 5)], "mm": [(3, 4), (4, 5)],
                  "bmm": [(2, 3, 4), (1, 4, 5)], "addmm": [(5,), (3, 4), (4, 5)],
                  "baddbmm": [(3, 1), (2, 3, 4), (2, 4, 5)],
                  "fused_matmul": [(2, 3, 4), (4, 5), (5,)],
                  "fused_matmul_backward": [(2, 3, 5), (2, 3, 4), (4, 5), (5,)]}.get(
                      name, [(3, 4)] * nin)
        attrs = {"gelu_v2": ("tanh",), "gelu_v2_backward": ("tanh",), "softplus": (2.0, 5.0),
                 "softplus_backward": (2.0, 5.0), "leaky_relu": (0.2,),
                 "leaky_relu_backward": (0.2,), "elu": (0.7,), "elu_backward": (0.7,),
                 "add": (0.5,), "muls": (2.5,), "reduce_sum": ([0, -1], True),
                 "matmul": (None,), "addmm": (0.5, 2.0), "baddbmm": (0.5, 1.5),
                 "fused_matmul": (None, "relu", 3),
                 "fused_matmul_backward": (None, "relu", 3, [True, True, True, False])}.get(
                     name, ())
        return [torch.randn(s) for s in shapes] + list(attrs)

    def test_fake_impls_match_kernels(self):
        """The register_fake functions (used by the PyTorch >= 2.4 path) give the kernels' output
        shapes and dtypes; checked here on meta tensors."""
        for name, d in ot.OPS.items():
            with self.subTest(name):
                args = self._sample_args(name)
                real = d.kernel(*args)
                meta = d.fake(*[a.to("meta") if isinstance(a, torch.Tensor) else a for a in args])
                real = real if isinstance(real, tuple) else (real,)
                meta = meta if isinstance(meta, tuple) else (meta,)
                self.assertEqual([(r.shape, r.dtype) for r in real],
                                 [(m.shape, m.dtype) for m in meta])

    def test_formulas_through_the_dispatcher(self):
        """The autograd formulas with K = torch.ops.opgrad (how PyTorch >= 2.4 runs them, via
        register_autograd) give the same gradients as with the kernels called directly."""
        class Ctx:
            def save_for_backward(self, *ts):
                self.saved_tensors = ts

            def set_materialize_grads(self, value):
                pass

        for name, d in ot.OPS.items():
            if not d.differentiable:
                continue
            for dtype in (torch.float32, torch.bfloat16):
                with self.subTest(name=name, dtype=dtype):
                    args = [a.to(dtype) if isinstance(a, torch.Tensor) else a
                            for a in self._sample_args(name)]
                    out = d.kernel(*args)
                    outs = out if isinstance(out, tuple) else (out,)  # one gradient per output
                    g = [torch.randn(o.shape).to(o.dtype) for o in outs]
                    grads = []
                    for ns in (_kernels, torch.ops.opgrad):
                        ctx = Ctx()
                        ctx.needs_input_grad = tuple(isinstance(a, torch.Tensor) for a in args)
                        d.setup(ctx, tuple(args), out)
                        grads.append(d.backward(ns, ctx, *g))
                    self.assertEqual(len(grads[0]), len(args))
                    for a, b in zip(*grads):
                        if a is None:
                            self.assertIsNone(b)
                        else:
                            self.assertTrue(torch.equal(a, b))

    def test_library_kept_alive(self):
        import gc
        gc.collect()
        self.assertTrue(ot.USING_CUSTOM_OP or ot._ops.Library is not None)
        torch.ops.opgrad.mish(torch.randn(2))


class TestErrors(unittest.TestCase):
    def test_dtype_type_error(self):
        # (float64: the elementwise operators take it, the others raise TypeError naming it,
        # tests/python/test_torch_float64.py)
        for bad in (torch.arange(4), torch.zeros(4, dtype=torch.bool),
                    torch.zeros(4, dtype=torch.complex64)):
            with self.subTest(dtype=bad.dtype):
                with self.assertRaises(TypeError) as cm:
                    ot.mish(bad)
                self.assertIn(str(bad.dtype), str(cm.exception))
                self.assertIn("float32", str(cm.exception))
                with self.assertRaises(TypeError):
                    torch.ops.opgrad.mish(bad)
                with self.assertRaises(TypeError):
                    ot.add(torch.randn(4), bad)

    def test_not_cpu(self):
        with self.assertRaises(TypeError) as cm:
            ot.silu(torch.empty(3, device="meta"))
        self.assertIn("CPU", str(cm.exception))

    def test_not_tensor(self):
        with self.assertRaises((TypeError, RuntimeError)):
            ot.mish([1.0, 2.0])

    def test_shape_error_carries_c_message(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.add(torch.randn(3, 4), torch.randn(5))
        e = cm.exception
        self.assertIsInstance(e, RuntimeError)
        self.assertEqual(e.status, 161002)
        self.assertIn("aclnnAddGetWorkspaceSize", str(e))
        self.assertIn("[3,4]", e.message.replace(" ", ""))

    def test_fused_add_scale_bias_shape(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.fused_add_scale(torch.randn(4, 3), torch.randn(5), torch.randn(1))
        self.assertIn("bias", str(cm.exception))
        self.assertEqual(cm.exception.status, 161002)

    def test_backward_shape_error(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            torch.ops.opgrad.softplus_backward(torch.randn(3, 4), torch.randn(4, 3))
        self.assertIn("aclnnSoftplusBackward", str(cm.exception))

    def test_rank_9(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.mish(torch.randn([1] * 9))
        self.assertIn("rank", str(cm.exception).lower())

    def test_bad_dims(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.reduce_sum(torch.randn(2, 3), [2])
        self.assertIn("out of range", str(cm.exception))

    def test_bad_dim_is_index_error_as_in_torch(self):
        # PyTorch raises IndexError for an out-of-range dim; so does opgrad (still an
        # OpgradError with the aclnn status), forward and backward alike
        x = torch.randn(2, 3, requires_grad=True)
        for call in (lambda: ot.reduce_sum(x, [2]), lambda: ot.softmax(x, 5),
                     lambda: ot.log_softmax(x, -3)):
            with self.assertRaises(IndexError) as cm:
                call()
            self.assertIsInstance(cm.exception, opgrad.OpgradError)
            self.assertEqual(cm.exception.status, opgrad.Status.PARAM_INVALID)
            with self.assertRaises(IndexError):
                torch.softmax(x, 5)  # the behaviour being matched
        # other rule violations stay plain OpgradErrors (RuntimeError), not IndexError
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.mish(torch.randn([1] * 9))
        self.assertNotIsInstance(cm.exception, IndexError)

    def test_bad_approximate(self):
        with self.assertRaises(ValueError):
            ot.gelu_v2(torch.randn(3), "erf")

    def test_error_is_per_thread_and_call_still_works(self):
        with self.assertRaises(opgrad.OpgradError):
            ot.mul(torch.randn(2, 3), torch.randn(4))
        torch.testing.assert_close(ot.mul(torch.ones(2), torch.ones(2)), torch.ones(2))


class TestThreads(unittest.TestCase):
    def test_concurrent_calls_match_serial(self):
        torch.manual_seed(1)
        shapes = [(64,), (7, 9), (3, 1, 5), (256, 33)]
        xs = [torch.randn(s) for s in shapes]
        funcs = [ot.mish, ot.gelu, lambda t: ot.softplus(t, 2.0, 3.0), ot.tanh, ot.hardswish,
                 lambda t: ot.add(t, t[..., :1], 0.5), lambda t: ot.mul(t, t.flip(0)),
                 lambda t: ot.reduce_sum(t, [0])]

        def grad_of(f, x):
            x = x.clone().requires_grad_()
            f(x).sum().backward()
            return x.grad

        serial = [[(f(x), grad_of(f, x)) for x in xs] for f in funcs]
        errors = []

        def worker(seed):
            try:
                for it in range(30):
                    for fi in range(len(funcs)):
                        f = funcs[(fi + seed) % len(funcs)]
                        for xi, x in enumerate(xs):
                            y, g = f(x), grad_of(f, x)
                            ey, eg = serial[(fi + seed) % len(funcs)][xi]
                            if not (torch.equal(y, ey) and torch.equal(g, eg)):
                                errors.append((seed, it, fi, xi))
                                return
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_errors_in_threads(self):
        msgs = []

        def worker():
            try:
                ot.add(torch.randn(3, 4), torch.randn(5))
            except opgrad.OpgradError as e:
                msgs.append(e.message)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(msgs), 4)
        for m in msgs:
            self.assertIn("aclnnAddGetWorkspaceSize", m)


class TestModules(unittest.TestCase):
    PAIRS = [
        (lambda: ot.nn.Mish(), lambda: torch.nn.Mish()),
        (lambda: ot.nn.GELU(), lambda: torch.nn.GELU()),
        (lambda: ot.nn.GELU("tanh"), lambda: torch.nn.GELU(approximate="tanh")),
        (lambda: ot.nn.SiLU(), lambda: torch.nn.SiLU()),
        (lambda: ot.nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
        (lambda: ot.nn.Tanh(), lambda: torch.nn.Tanh()),
        (lambda: ot.nn.Softplus(1.5, 4.0), lambda: torch.nn.Softplus(1.5, 4.0)),
        (lambda: ot.nn.ReLU(), lambda: torch.nn.ReLU()),
        (lambda: ot.nn.LeakyReLU(0.1), lambda: torch.nn.LeakyReLU(0.1)),
        (lambda: ot.nn.Hardswish(), lambda: torch.nn.Hardswish()),
        (lambda: ot.nn.ELU(0.8), lambda: torch.nn.ELU(0.8)),
    ]

    def model(self, acts):
        torch.manual_seed(0)
        layers = [torch.nn.Linear(8, 16)]
        for a in acts:
            layers += [a(), torch.nn.Linear(16, 16)]
        layers.append(torch.nn.Linear(16, 1))
        return torch.nn.Sequential(*layers)

    def test_tiny_model_trains_like_torch(self):
        mo = self.model([p[0] for p in self.PAIRS])
        mt = self.model([p[1] for p in self.PAIRS])
        oo = torch.optim.SGD(mo.parameters(), lr=0.05, momentum=0.9)
        opt = torch.optim.SGD(mt.parameters(), lr=0.05, momentum=0.9)
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(32, 8, generator=gen)
        target = torch.randn(32, 1, generator=gen)
        losses = []
        for step in range(5):
            lo = F.mse_loss(mo(x), target)
            lt = F.mse_loss(mt(x), target)
            oo.zero_grad()
            opt.zero_grad()
            lo.backward()
            lt.backward()
            oo.step()
            opt.step()
            losses.append(lo.item())
            self.assertAlmostEqual(lo.item(), lt.item(), delta=1e-5 * max(1.0, lt.item()))
        for p, q in zip(mo.parameters(), mt.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
        self.assertLess(losses[-1], losses[0])

    def test_modules_repr_and_inplace(self):
        self.assertIn("approximate='tanh'", repr(ot.nn.GELU("tanh")))
        with self.assertRaises(ValueError):
            ot.nn.ReLU(inplace=True)
        with self.assertRaises(ValueError):
            ot.nn.GELU("erf")

    def test_module_bf16(self):
        m = torch.nn.Sequential(torch.nn.Linear(4, 4), ot.nn.Mish()).to(torch.bfloat16)
        y = m(torch.randn(3, 4, dtype=torch.bfloat16))
        self.assertEqual(y.dtype, torch.bfloat16)
        y.float().sum().backward()
        self.assertEqual(m[0].weight.grad.dtype, torch.bfloat16)


class TestPlanCache(unittest.TestCase):
    def test_many_shapes_evict(self):
        old = _kernels._PLAN_CAPACITY
        _kernels._PLAN_CAPACITY = 4
        try:
            for n in range(1, 20):
                x = torch.randn(n, 3)
                torch.testing.assert_close(ot.mish(x), F.mish(x))
            self.assertLessEqual(len(_kernels._tls.plans), 4)
        finally:
            _kernels._PLAN_CAPACITY = old

    def test_set_num_threads_replans(self):
        x = torch.randn(1 << 16)
        y1 = ot.mish(x)
        n = opgrad.get_num_threads()
        opgrad.set_num_threads(1)
        try:
            y2 = ot.mish(x)
        finally:
            opgrad.set_num_threads(n)
        self.assertTrue(torch.equal(y1, y2))  # deterministic across thread counts
        with self.assertRaises(ValueError):
            opgrad.set_num_threads(0)

    def test_attributes_are_part_of_the_key(self):
        x = torch.randn(10)
        for beta in (1.0, 2.0, 0.5):
            torch.testing.assert_close(ot.softplus(x, beta, 20.0), F.softplus(x, beta, 20.0))
        for s in (0.0, 0.1, 0.3):
            torch.testing.assert_close(ot.leaky_relu(x, s), F.leaky_relu(x, s))


# ---- the matmul family -----------------------------------------------------------------------------
# Bounds. Each element of a product is one fp32 FMA chain over K, so |err| <= K 2^-24 mag, mag =
# sum_k |a_ik| |b_kj| (float64; for a gradient summed over a broadcast batch, the sum over it too),
# before the one rounding to the output's dtype (u |truth|, u = 2^-24, 2^-11, 2^-8). "Rounded
# once": |got - truth| <= u |truth| + 2 k 2^-24 mag (+ half the float16 subnormal spacing), k the
# number of terms; a 16-bit result rounded twice (a 16-bit product summed again in 16 bits) is off
# by up to u sum|p_b| and fails it. Activations (relu, gelu) add their kernels' few fp32 ulps and
# the derivative's sensitivity to z's fp32 error: the linear() tests use the looser bound of the
# module docstring with c sqrt(k) instead (8 u for 16-bit results, 32 u for fp32).
ONCE_ABS = {torch.float16: 2.0 ** -25, torch.bfloat16: 0.0, torch.float32: 0.0}


def rounded_once(got, truth, dtype, k, mag):
    """(ok, worst ratio, index) of the "rounded once" bound above."""
    got, truth, mag = got.double(), truth.double(), mag.double()
    bound = U[dtype] * truth.abs() + 2 * k * 2.0 ** -24 * mag + ONCE_ABS[dtype] + 1e-300
    ratio = (got - truth).abs() / bound
    if ratio.numel() == 0:
        return True, 0.0, None
    worst = ratio.max().item()
    return worst <= 1.0 and not torch.isnan(got).any().item(), worst, ratio.argmax().item()


class MatmulBase(Base):
    def assertOnce(self, got, truth, dtype, what, k, mag):
        self.assertEqual(tuple(got.shape), tuple(truth.shape), "%s: shape" % what)
        self.assertEqual(got.dtype, dtype, "%s: dtype" % what)
        ok, worst, idx = rounded_once(got, truth, dtype, k, mag)
        if not ok:
            self.fail("%s: element %d is %r, float64 truth %r (%.2f x the rounded-once bound)"
                      % (what, idx, got.double().flatten()[idx].item(),
                         truth.double().flatten()[idx].item(), worst))

    def compare(self, f, tf, shapes, dtype, k, what, seed=0, mf=None):
        """f(*inputs) and its gradients against tf in float64, rounded once. The magnitudes are
        mf (default tf; a function without negative coefficients) on |inputs| with |g|."""
        gen = torch.Generator().manual_seed(seed)
        leaves = [optable.uniform(sh, -2.0, 2.0, gen).to(dtype) for sh in shapes]
        xs = [l.clone().requires_grad_() for l in leaves]
        y = f(*xs)
        self.assertEqual(y.dtype, dtype, what + ": output dtype")
        g = optable.uniform(y.shape, -2.0, 2.0, gen).to(dtype)
        y.backward(g)
        xt = [l.double().requires_grad_() for l in leaves]
        yt = tf(*xt)
        yt.backward(g.double())
        xm = [l.double().abs().requires_grad_() for l in leaves]
        ym = (mf or tf)(*xm)
        ym.backward(g.double().abs())
        self.assertOnce(y, yt.detach(), dtype, what + " forward", k[0], ym.detach())
        for i, (x, t, m) in enumerate(zip(xs, xt, xm)):
            self.assertIsNotNone(x.grad, "%s: no gradient for input %d" % (what, i))
            self.assertOnce(x.grad, t.grad, dtype, "%s grad[%d]" % (what, i), k[1 + i], m.grad)


class TestMatmul(MatmulBase):
    """matmul / mm / bmm / addmm / baddbmm against PyTorch in float64 (rounded-once bound)."""

    MATMUL_SHAPES = [  # (a, b): 1-D, N-D, broadcast batch dims
        ((5,), (5,)), ((5,), (5, 4)), ((3, 5), (5,)), ((3, 5), (5, 4)), ((2, 3, 5), (5,)),
        ((5,), (2, 5, 4)), ((2, 3, 5), (5, 4)), ((3, 5), (2, 5, 4)), ((2, 3, 5), (2, 5, 4)),
        ((2, 3, 5), (1, 5, 4)), ((2, 1, 3, 5), (4, 5, 6)), ((1, 3, 5), (2, 1, 5, 4)),
        ((6, 1, 3, 5), (1, 2, 5, 4)), ((2, 2, 3, 5), (5, 4)), ((3, 0), (0, 4)), ((0, 5), (5, 4)),
    ]

    def test_matmul_shapes_dtypes(self):
        for sa, sb in self.MATMUL_SHAPES:
            # terms per element: K for the product; out.numel() K / numel for an operand's
            # gradient (N, resp. M, times the batch elements it is summed over)
            K, n_out = sa[-1], torch.matmul(torch.empty(sa), torch.empty(sb)).numel()
            k = (max(1, K),) + tuple(max(1, n_out * K // max(1, math.prod(s))) for s in (sa, sb))
            for dtype in DTYPES.values():
                with self.subTest(a=sa, b=sb, dtype=dtype):
                    self.compare(ot.matmul, torch.matmul, (sa, sb), dtype, k,
                                 "matmul %s @ %s %s" % (sa, sb, dtype))

    def test_matmul_registered_op_and_out_dtype(self):
        a = torch.randn(2, 3, 5, dtype=torch.bfloat16)
        b = torch.randn(5, 4, dtype=torch.bfloat16)
        y32 = ot.matmul(a, b, out_dtype=torch.float32)
        self.assertEqual(y32.dtype, torch.float32)  # the unrounded accumulator
        torch.testing.assert_close(y32, a.float() @ b.float(), rtol=1e-6, atol=1e-6)
        self.assertTrue(torch.equal(ot.matmul(a, b), y32.to(torch.bfloat16)))
        self.assertTrue(torch.equal(torch.ops.opgrad.matmul(a, b), ot.matmul(a, b)))
        self.assertTrue(torch.equal(torch.ops.opgrad.matmul(a, b, torch.float32), y32))

    def test_views_are_read_in_place(self):
        """Transposed, sliced and stride-0 operands give bitwise what their contiguous copies
        give (the products read the strides; nothing is copied)."""
        gen = torch.Generator().manual_seed(5)
        base = torch.randn(2, 9, 11, generator=gen)
        w = torch.randn(9, 7, generator=gen)
        for a, b in ((base.transpose(1, 2)[:, 1:8, :], w),            # [2, 7, 9] transposed
                     (base[:, ::2, 1:8], w[:7, :]),                     # sliced, strided
                     (base[:1, 1:4, :9].expand(3, 3, 9), w),             # stride-0 batch
                     (base[0, :4, :9], w.t()[:, :9].t())):
            for dtype in DTYPES.values():
                with self.subTest(a=tuple(a.stride()), b=tuple(b.stride()), dtype=dtype):
                    av, bv = a.to(dtype), b.to(dtype)
                    if dtype is torch.float32:
                        av = a  # the views themselves (.to() of another dtype copies)
                        bv = b
                    self.assertTrue(torch.equal(ot.matmul(av, bv),
                                                ot.matmul(av.contiguous(), bv.contiguous())))

    def test_gradients_of_views_bitwise(self):
        """Gradients through transposed views equal those of contiguous copies bitwise where
        both take the same products; a batched A that does not fold into rows as a view has dB
        summed per batch in float32 (another order: equal to rounding)."""
        gen = torch.Generator().manual_seed(6)

        def grads(a, b, g):
            a = a.detach().requires_grad_()
            b = b.detach().requires_grad_()
            ot.matmul(a, b).backward(g)
            return a.grad, b.grad

        for sa, ta in (((5, 3), lambda t: t.t()), ((2, 3, 5), lambda t: t),
                       ((2, 5, 3), lambda t: t.transpose(1, 2))):
            with self.subTest(a=sa):
                a_leaf = torch.randn(sa, generator=gen)
                b_leaf = torch.randn(4, 5, generator=gen)
                a, b = ta(a_leaf), b_leaf.t()
                g = torch.randn(ot.matmul(a, b).shape, generator=gen)
                ga_v, gb_v = grads(a, b, g)
                ga_c, gb_c = grads(a.contiguous(), b.contiguous(), g)
                self.assertTrue(torch.equal(ga_v, ga_c))
                if len(sa) == 3 and sa[1] == 5:  # no [rows, K] view of a: per-batch products
                    torch.testing.assert_close(gb_v, gb_c, rtol=1e-6, atol=1e-6)
                else:
                    self.assertTrue(torch.equal(gb_v, gb_c))

    def test_mm_bmm(self):
        for dtype in DTYPES.values():
            with self.subTest(dtype=dtype):
                self.compare(ot.mm, torch.mm, ((4, 6), (6, 5)), dtype, (6, 5, 4), "mm")
                self.compare(ot.bmm, torch.bmm, ((3, 4, 6), (3, 6, 5)), dtype, (6, 5, 4), "bmm")
                # opgrad's bmm broadcasts a batch of 1 (PyTorch's does not: the truth is matmul);
                # that operand's gradient is summed over the batch
                self.compare(ot.bmm, torch.matmul, ((3, 4, 6), (1, 6, 5)), dtype,
                             (6, 5, 12), "bmm broadcast")
                self.compare(ot.bmm, torch.matmul, ((1, 4, 6), (3, 6, 5)), dtype,
                             (6, 15, 4), "bmm broadcast a")

    def test_addmm_baddbmm(self):
        for dtype in DTYPES.values():
            for beta, alpha in ((1.0, 1.0), (0.5, 2.0), (-1.25, 0.75), (0.0, 1.0)):
                for si in ((5,), (1, 5), (4, 1), (4, 5), ()):
                    with self.subTest(dtype=dtype, beta=beta, alpha=alpha, input=si):
                        self.compare(
                            lambda i, a, b: ot.addmm(i, a, b, beta, alpha),
                            lambda i, a, b: torch.addmm(i, a, b, beta=beta, alpha=alpha),
                            (si, (4, 6), (6, 5)), dtype, (6, 20, 5, 4),
                            "addmm b=%g a=%g input %s" % (beta, alpha, si),
                            mf=lambda i, a, b: abs(beta) * i + abs(alpha) * (a @ b))
                for si, s1, s2 in (((5,), (3, 4, 6), (3, 6, 5)), ((3, 1, 5), (3, 4, 6), (1, 6, 5)),
                                   ((4, 5), (1, 4, 6), (3, 6, 5))):
                    with self.subTest(dtype=dtype, beta=beta, alpha=alpha, input=si, b1=s1, b2=s2):
                        # (the truth is spelled out: PyTorch 1.13's baddbmm with beta = 0 and a
                        # stride-0 batch sometimes returns NaN in float64)
                        self.compare(
                            lambda i, a, b: ot.baddbmm(i, a, b, beta, alpha),
                            lambda i, a, b: beta * i + alpha * torch.matmul(a, b),
                            (si, s1, s2), dtype, (6, 60, 15, 12),
                            "baddbmm b=%g a=%g %s %s %s" % (beta, alpha, si, s1, s2),
                            mf=lambda i, a, b: abs(beta) * i + abs(alpha) * torch.matmul(a, b))

    def test_beta_zero_ignores_input(self):
        a, b = torch.randn(3, 4), torch.randn(4, 2)
        nan = torch.full((3, 2), float("nan"))
        torch.testing.assert_close(ot.addmm(nan, a, b, 0.0, 1.0), torch.mm(a, b),
                                   rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(ot.baddbmm(nan[None], a[None], b[None], 0.0, 1.0),
                                   torch.mm(a, b)[None], rtol=1e-6, atol=1e-6)

    def test_cases_of_the_table(self):
        """optable.MATMUL_CASES (what consistency.py compares) x dtypes x layouts, against the
        float64 truth with the module's bound (k: the case's terms)."""
        n, m = 6, 7
        for case in MATMUL_CASES:
            for dname, dtype in DTYPES.items():
                for layout in layouts_for(case):
                    what = "%s %s %s" % (case.name, dname, layout)
                    with self.subTest(what):
                        y, grads, yt, tgrads, leaves, _ = run_case(case, dtype, layout, n, m)
                        k = case.k(n, m)
                        self.assertEqual(y.dtype, dtype, what + ": output dtype")
                        self.assertTrue(y.is_contiguous(), what + ": output contiguous")
                        self.assertClose(y, yt, dtype, what + " forward", k)
                        for i, (gr, tg) in enumerate(zip(grads, tgrads)):
                            self.assertIsNotNone(gr, "%s: no gradient for input %d" % (what, i))
                            self.assertEqual(gr.dtype, leaves[i].dtype, what + ": grad dtype")
                            self.assertClose(gr, tg, dtype, "%s grad[%d]" % (what, i), k)

    def test_fp32_matches_torch_fp32(self):
        """In float32 against PyTorch's own float32 operators (a different summation order:
        tolerance 1e-5 relative to the magnitudes here, K <= 9)."""
        for case in MATMUL_CASES:
            for layout in layouts_for(case):
                with self.subTest(case.name + " " + layout):
                    gen = torch.Generator().manual_seed(3)
                    leaves, views = make_inputs(case, torch.float32, layout, 5, 9, gen)
                    a = [l.clone().requires_grad_() for l in leaves]
                    b = [l.clone().requires_grad_() for l in leaves]
                    ya = case.og(*[v(l) for v, l in zip(views, a)])
                    yb = case.pt(*[v(l) for v, l in zip(views, b)])
                    torch.testing.assert_close(ya, yb, rtol=1e-5, atol=1e-5)
                    g = torch.rand(yb.shape, generator=gen) * 4 - 2
                    ya.backward(g)
                    yb.backward(g)
                    for p, q in zip(a, b):
                        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-5)

    def test_gradcheck_float32(self):
        """opgrad has no float64 kernels: gradcheck in float32 (policy of TestGradcheck; the
        products are linear, so the central differences are exact up to rounding)."""
        gen = torch.Generator().manual_seed(8)

        def r(*s):
            return optable.uniform(s, -1.0, 1.0, gen).float().requires_grad_()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for f, args in ((ot.matmul, (r(2, 3, 4), r(4, 2))), (ot.matmul, (r(4), r(2, 4, 3))),
                            (ot.mm, (r(3, 4), r(4, 2))), (ot.bmm, (r(2, 3, 4), r(1, 4, 2))),
                            (lambda i, a, b: ot.addmm(i, a, b, 0.5, 2.0), (r(2), r(3, 4), r(4, 2))),
                            (lambda i, a, b: ot.baddbmm(i, a, b, 0.5, 2.0),
                             (r(1, 2), r(2, 3, 4), r(2, 4, 2))),
                            (lambda x, w, b: ot.linear(x, w, b, "gelu"), (r(2, 3, 4), r(5, 4), r(5))),
                            (lambda x, w: ot.linear(x, w, None, "gelu_tanh"),
                             (r(3, 4), r(5, 4)))):
                with self.subTest(f=f, shapes=[tuple(a.shape) for a in args]):
                    self.assertTrue(torch.autograd.gradcheck(
                        f, args, eps=GC_EPS, atol=GC_ATOL, rtol=GC_RTOL, nondet_tol=0.0,
                        fast_mode=False))

    def test_errors(self):
        with self.assertRaises(opgrad.OpgradError) as cm:
            ot.matmul(torch.randn(3, 4), torch.randn(5, 6))
        self.assertEqual(cm.exception.status, 161002)
        self.assertIn("aclnnMatmulGetWorkspaceSize", str(cm.exception))
        self.assertIn("[3,4]", cm.exception.message.replace(" ", ""))
        with self.assertRaises(opgrad.OpgradError):
            ot.mm(torch.randn(3, 4, 1), torch.randn(4, 2))
        with self.assertRaises(opgrad.OpgradError):
            ot.bmm(torch.randn(2, 3, 4), torch.randn(3, 4, 2))
        # float32 @ float64 promotes to float64 (test_torch_float64.py); an integer refuses
        self.assertIs(ot.matmul(torch.randn(3, 4), torch.randn(4, 2, dtype=torch.float64)).dtype,
                      torch.float64)
        with self.assertRaises(TypeError):
            ot.matmul(torch.randn(3, 4), torch.ones(4, 2, dtype=torch.int32))
        with self.assertRaises(RuntimeError):  # the fake (meta) implementation refuses too
            ot.OPS["matmul"].fake(torch.empty(3, 4, device="meta"),
                                  torch.empty(5, 6, device="meta"))

    def test_only_one_input_requires_grad(self):
        a = torch.randn(2, 3, 4, requires_grad=True)
        w = torch.randn(4, 5)
        ot.matmul(a, w).sum().backward()
        torch.testing.assert_close(a.grad, w.sum(1).expand(2, 3, 4), rtol=1e-6, atol=1e-6)
        self.assertIsNone(w.grad)

    def test_grad_output_stride0_and_empty(self):
        a = torch.randn(2, 3, 4, requires_grad=True)
        w = torch.randn(4, 5, requires_grad=True)
        ot.matmul(a, w).sum().backward()   # grad_output is an expanded scalar
        torch.testing.assert_close(w.grad, a.detach().sum((0, 1))[:, None].expand(4, 5),
                                   rtol=1e-5, atol=1e-5)
        e = torch.empty(0, 4, requires_grad=True)
        y = ot.matmul(e, w)
        self.assertEqual(tuple(y.shape), (0, 5))
        y.sum().backward()
        self.assertEqual(tuple(e.grad.shape), (0, 4))


class TestLinear(MatmulBase):
    """linear() (FusedMatmul / FusedMatmulBackward, or the gelu composition) and nn.Linear."""

    ACTS = {None: lambda z: z, "relu": F.relu, "gelu": F.gelu,
            "gelu_tanh": lambda z: F.gelu(z, approximate="tanh")}

    def run_linear(self, x_shape, act, bias, dtype, x_view=None, seed=0):
        gen = torch.Generator().manual_seed(seed)
        view = x_view or (lambda t: t)
        fin, fout = view(torch.empty(x_shape)).shape[-1], 6
        leaves = [optable.uniform(x_shape, -2.0, 2.0, gen).to(dtype),
                  optable.uniform((fout, fin), -2.0, 2.0, gen).to(dtype)]
        if bias:
            leaves.append(optable.uniform((fout,), -2.0, 2.0, gen).to(dtype))
        xs = [l.clone().requires_grad_() for l in leaves]
        y = ot.linear(view(xs[0]), xs[1], xs[2] if bias else None, act)
        g = optable.uniform(y.shape, -2.0, 2.0, gen).to(dtype)
        y.backward(g)
        xt = [l.double().requires_grad_() for l in leaves]
        yt = self.ACTS[act](F.linear(view(xt[0]), xt[1], xt[2] if bias else None))
        yt.backward(g.double())
        return y, [x.grad for x in xs], yt.detach(), [x.grad for x in xt], xs

    def test_activations_bias_dtypes_shapes(self):
        views = {"2-D": ((5, 4), None), "1-D": ((4,), None), "3-D": ((2, 3, 4), None),
                 "3-D transposed": ((3, 2, 4), lambda t: t.transpose(0, 1)),  # no [rows, in] view
                 "4-D sliced": ((2, 3, 2, 7), lambda t: t[..., 1:5])}
        for act in (None, "relu", "gelu", "gelu_tanh"):
            for bias in (True, False):
                for dname, dtype in DTYPES.items():
                    for vname, (shape, view) in views.items():
                        what = "linear %s bias=%s %s %s" % (act, bias, dname, vname)
                        with self.subTest(what):
                            y, grads, yt, tgrads, xs = self.run_linear(shape, act, bias, dtype,
                                                                       view)
                            self.assertEqual(y.dtype, dtype)
                            k = 4 * 12  # K = 4; the weight gradient sums up to 12 rows
                            self.assertClose(y, yt, dtype, what + " forward", k)
                            for i, (gr, tg) in enumerate(zip(grads, tgrads)):
                                self.assertEqual(gr.dtype, dtype)
                                self.assertClose(gr, tg, dtype, "%s grad[%d]" % (what, i), k)
                            # the weight's gradient is a contiguous [out, in] tensor
                            self.assertTrue(grads[1].is_contiguous(), what)

    def test_no_activation_rounded_once(self):
        """Without an activation linear is bilinear: the strict rounded-once bound holds."""
        for dtype in DTYPES.values():
            for shape in ((5, 4), (2, 3, 4)):
                with self.subTest(dtype=dtype, shape=shape):
                    rows = 1
                    for d in shape[:-1]:
                        rows *= d
                    self.compare(lambda x, w, b: ot.linear(x, w, b), F.linear,
                                 (shape, (6, 4), (6,)), dtype, (5, 6, rows, rows),
                                 "linear %s" % (shape,))

    def test_fused_gelu_equals_composition(self):
        """The gelu composition (float32 z from '16cast32', gelu, one rounding) gives bitwise the
        fused epilogue's result, forward and backward (16-bit inputs, no bias)."""
        gen = torch.Generator().manual_seed(11)
        for dtype in (torch.bfloat16, torch.float16):
            for act, approx in (("gelu", "none"), ("gelu_tanh", "tanh")):
                with self.subTest(dtype=dtype, act=act):
                    x = torch.randn(7, 9, generator=gen).to(dtype).requires_grad_()
                    w = torch.randn(5, 9, generator=gen).to(dtype).requires_grad_()
                    y = ot.linear(x, w, None, act)
                    x2 = x.detach().clone().requires_grad_()
                    w2 = w.detach().clone().requires_grad_()
                    z = ot.fused_matmul(x2, w2.t(), None, None, "16cast32")
                    y2 = ot.gelu_v2(z, approx).to(dtype)
                    self.assertTrue(torch.equal(y, y2))
                    g = torch.randn(y.shape, generator=gen).to(dtype)
                    y.backward(g)
                    y2.backward(g)
                    torch.testing.assert_close(x.grad, x2.grad, rtol=0, atol=0)
                    torch.testing.assert_close(w.grad, w2.grad, rtol=0, atol=0)

    def test_fused_matmul_types(self):
        """fused_matmul's add / mul (x3) and 16cast32, with their gradients, against float64."""
        gen = torch.Generator().manual_seed(12)
        for t in ("add", "mul", "16cast32", "", "relu"):
            for dtype in (torch.bfloat16, torch.float32):
                if t == "16cast32" and dtype is torch.float32:
                    continue
                with self.subTest(t=t, dtype=dtype):
                    ls = [optable.uniform(s, -2.0, 2.0, gen).to(dtype)
                          for s in ((2, 4, 5), (5, 3), (3,), (1, 4, 3))]
                    xs = [l.clone().requires_grad_() for l in ls]
                    cube = 3 if dtype is torch.float32 else 0
                    y = ot.fused_matmul(*xs, t, cube)
                    tt = [l.double().requires_grad_() for l in ls]
                    z = tt[0] @ tt[1] + tt[2]
                    yt = {"add": lambda: z + tt[3], "mul": lambda: z * tt[3],
                          "16cast32": lambda: z, "": lambda: z, "relu": lambda: F.relu(z)}[t]()
                    self.assertEqual(y.dtype, torch.float32 if t == "16cast32" else dtype)
                    g = optable.uniform(y.shape, -2.0, 2.0, gen).to(y.dtype)
                    y.backward(g)
                    yt.backward(g.double())
                    self.assertClose(y, yt.detach(), y.dtype, t + " forward", 40)
                    for i in range(4):
                        if t not in ("add", "mul") and i == 3:
                            self.assertIsNone(xs[3].grad)  # x3 is not read: no gradient
                            continue
                        self.assertClose(xs[i].grad, tt[i].grad, dtype, "%s grad[%d]" % (t, i), 40)

    def test_dtype_rules_and_errors(self):
        x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
        with self.assertRaises(opgrad.OpgradError) as cm:  # float32 needs cubeMathType 3
            ot.fused_matmul(x, w.t(), b, None, "", 0)
        self.assertIn("cubeMathType", str(cm.exception))
        with self.assertRaises(opgrad.OpgradError) as cm:  # the gelus take no bias
            ot.fused_matmul(x.bfloat16(), w.t().bfloat16(), b.bfloat16(), None, "gelu_erf")
        self.assertEqual(cm.exception.status, 161001)
        with self.assertRaises(opgrad.OpgradError):  # the gelus take 16-bit inputs
            ot.fused_matmul(x, w.t(), None, None, "gelu_tanh", 3)
        with self.assertRaises(ValueError):
            ot.fused_matmul(x, w.t(), None, None, "silu", 3)
        with self.assertRaises(ValueError):
            ot.linear(x, w, b, "tanh")
        with self.assertRaises(ValueError):
            ot.linear(x, w[None], b)
        with self.assertRaises(opgrad.OpgradError):
            ot.linear(torch.randn(3, 5), w, b)
        # linear handles every rule itself: float32 gelu with a bias, mixed dtypes
        for act in (None, "relu", "gelu", "gelu_tanh"):
            y = ot.linear(x, w, b, act)
            torch.testing.assert_close(y, self.ACTS[act](F.linear(x, w, b)), rtol=2e-6, atol=2e-6)
            y = ot.linear(x.bfloat16(), w, b, act)   # promotes to float32
            self.assertEqual(y.dtype, torch.float32)

    def test_module_drop_in(self):
        torch.manual_seed(3)
        m = ot.nn.Linear(5, 4)
        torch.manual_seed(3)
        t = torch.nn.Linear(5, 4)
        self.assertIsInstance(m, torch.nn.Linear)
        self.assertTrue(torch.equal(m.weight, t.weight) and torch.equal(m.bias, t.bias))
        self.assertEqual(list(m.state_dict()), list(t.state_dict()))
        m2 = ot.nn.Linear(5, 4, activation="gelu")
        m2.load_state_dict(t.state_dict())
        self.assertIn("activation='gelu'", repr(m2))
        self.assertEqual(repr(ot.nn.Linear(5, 4, bias=False)),
                         "Linear(in_features=5, out_features=4, bias=False)")
        self.assertIsNone(ot.nn.Linear(5, 4, bias=False).bias)
        h = ot.nn.Linear(5, 4, dtype=torch.bfloat16)
        self.assertEqual(h.weight.dtype, torch.bfloat16)
        with self.assertRaises(ValueError):
            ot.nn.Linear(5, 4, activation="swish")
        w = ot.nn.Linear.from_torch(t, activation="relu")
        self.assertIs(w.weight, t.weight)
        self.assertIs(w.bias, t.bias)
        x = torch.randn(3, 5)
        torch.testing.assert_close(w(x), F.relu(t(x)), rtol=2e-6, atol=2e-6)
        with self.assertRaises(TypeError):
            ot.nn.Linear.from_torch(torch.nn.ReLU())

    def mlp(self, lin, acts):
        layers = [lin(8, 16, acts[0])]
        for a in acts[1:]:
            layers.append(lin(16, 16, a))
        layers.append(lin(16, 1, None))
        return torch.nn.Sequential(*layers)

    def test_training_matches_torch(self):
        """An MLP of opgrad Linear layers (each activation fused) trains as the same MLP of
        torch.nn.Linear + torch activations (same initial parameters, SGD with momentum)."""
        acts = ["relu", "gelu", "gelu_tanh", None, "relu"]
        torch_acts = {"relu": torch.nn.ReLU, "gelu": torch.nn.GELU,
                      "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh")}
        for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 0.0)):
            with self.subTest(dtype=dtype):
                torch.manual_seed(0)
                layers = []
                ref = []
                for i, a in enumerate(acts + [None]):
                    fin = 8 if i == 0 else 16
                    fout = 1 if i == len(acts) else 16
                    t = torch.nn.Linear(fin, fout).to(dtype)
                    ref.append(t)
                    if a:
                        ref.append(torch_acts[a]())
                    layers.append(ot.nn.Linear(fin, fout, activation=a, dtype=dtype))
                    layers[-1].load_state_dict(t.state_dict())
                mo, mt = torch.nn.Sequential(*layers), torch.nn.Sequential(*ref)
                oo = torch.optim.SGD(mo.parameters(), lr=0.05, momentum=0.9)
                opt = torch.optim.SGD(mt.parameters(), lr=0.05, momentum=0.9)
                gen = torch.Generator().manual_seed(1)
                x = torch.randn(32, 8, generator=gen).to(dtype)
                target = torch.randn(32, 1, generator=gen).to(dtype)
                losses = []
                for step in range(5):
                    lo = F.mse_loss(mo(x).float(), target.float())
                    lt = F.mse_loss(mt(x).float(), target.float())
                    oo.zero_grad()
                    opt.zero_grad()
                    lo.backward()
                    lt.backward()
                    oo.step()
                    opt.step()
                    losses.append(lo.item())
                    if dtype is torch.float32:
                        self.assertAlmostEqual(lo.item(), lt.item(),
                                               delta=tol * max(1.0, lt.item()))
                    else:  # opgrad rounds once where PyTorch's bf16 rounds every step
                        self.assertAlmostEqual(lo.item(), lt.item(), delta=0.05 * lt.item())
                if dtype is torch.float32:
                    for p, q in zip(mo.parameters(), mt.parameters()):
                        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
                self.assertLess(losses[-1], losses[0])


def _custom_paths():
    """(spec, library) of the example custom operator, from OPGRAD_CUSTOM_SPEC or next to the
    libopgrad.so in use (<build>/examples/custom/)."""
    spec = os.environ.get("OPGRAD_CUSTOM_SPEC")
    if spec:
        return spec, None
    build = os.path.dirname(os.path.abspath(opgrad.library_path))
    return (os.path.join(build, "examples", "custom", "fused_add_scale.json"),
            os.path.join(build, "examples", "custom", "libfused_add_scale.so"))


class TestLoadCustom(Base):
    def setUp(self):
        self.spec, lib = _custom_paths()
        if not os.path.exists(self.spec) or (lib and not os.path.exists(lib)):
            self.skipTest("example custom operator not built (%s): build it with "
                          "-DOPGRAD_BUILD_EXAMPLES=ON (ninja fused_add_scale) or set "
                          "OPGRAD_CUSTOM_SPEC" % self.spec)

    def test_forward_backward(self):
        op = ot.load_custom(self.spec)
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            with self.subTest(dtype=dtype):
                x = torch.randn(5, 37).to(dtype).requires_grad_()
                b = torch.randn(37).to(dtype).requires_grad_()
                s = (torch.rand(1) + 0.5).to(dtype).requires_grad_()
                y = op(x, b, s)
                x2, b2, s2 = [t.detach().double().requires_grad_() for t in (x, b, s)]
                yt = (x2 + b2) * s2
                self.assertClose(y, yt.detach(), dtype, "custom forward")
                g = torch.randn(y.shape).to(dtype)
                y.backward(g)
                yt.backward(g.double())
                self.assertClose(x.grad, x2.grad, dtype, "custom grad x")
                self.assertClose(b.grad, b2.grad, dtype, "custom grad bias", 5)
                self.assertClose(s.grad, s2.grad, dtype, "custom grad scale", 185)

    def test_registered_and_gradcheck(self):
        op = ot.load_custom(self.spec)
        x = torch.randn(3, 4, requires_grad=True)
        b = torch.randn(4, requires_grad=True)
        s = torch.tensor([1.3], requires_grad=True)
        self.assertIsNotNone(getattr(torch.ops.opgrad_custom, op.name)(x, b, s).grad_fn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertTrue(torch.autograd.gradcheck(op, (x, b, s), eps=GC_EPS, atol=GC_ATOL,
                                                     rtol=GC_RTOL))

    def test_non_contiguous_inputs_and_shape_binding(self):
        op = ot.load_custom(self.spec)
        x = torch.randn(7, 5).t()          # the aot ABI is dense: the adapter makes it contiguous
        b = torch.randn(7)
        s = torch.tensor([0.5])
        torch.testing.assert_close(op(x, b, s), (x + b) * s)
        with self.assertRaises((ValueError, opgrad.OpgradError)):
            op(torch.randn(3, 4), torch.randn(5), s)  # C bound to 4 by x, bias has 5


if __name__ == "__main__":
    print("opgrad.torch: torch %s, libopgrad %s (%s), %s path"
          % (torch.__version__, opgrad.version(), opgrad.library_path,
             "custom_op" if ot.USING_CUSTOM_OP else "torch.library.Library"), file=sys.stderr)
    unittest.main()
