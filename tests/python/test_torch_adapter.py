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
built).

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
from optable import CASES, DTYPES, make_inputs, layouts_for, away_from_kinks  # noqa: E402

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
    yt = case.pt(*[v(l) for v, l in zip(views, t_leaves)])
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
                        self.assertTrue(y.is_contiguous(), what + ": output contiguous")
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

    def test_double_backward_is_refused(self):
        """The backward operators are not differentiable: create_graph + a second backward
        raises instead of returning a silently wrong second derivative."""
        x = torch.randn(4, requires_grad=True)
        (g,) = torch.autograd.grad(ot.mish(x).sum(), x, create_graph=True)
        with self.assertRaises(RuntimeError):
            g.sum().backward()


def _ops_fn(case):
    """The same computation through torch.ops.opgrad.<op> (the dispatcher path)."""
    return case.via_ops


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
                     "fused_add_scale_backward"):
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
                  "add": [(2, 1, 4), (3, 1)], "mul": [(2, 1, 4), (3, 1)]}.get(name, [(3, 4)] * nin)
        attrs = {"gelu_v2": ("tanh",), "gelu_v2_backward": ("tanh",), "softplus": (2.0, 5.0),
                 "softplus_backward": (2.0, 5.0), "leaky_relu": (0.2,),
                 "leaky_relu_backward": (0.2,), "elu": (0.7,), "elu_backward": (0.7,),
                 "add": (0.5,), "muls": (2.5,), "reduce_sum": ([0, -1], True)}.get(name, ())
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

        for name, d in ot.OPS.items():
            if not d.differentiable:
                continue
            for dtype in (torch.float32, torch.bfloat16):
                with self.subTest(name=name, dtype=dtype):
                    args = [a.to(dtype) if isinstance(a, torch.Tensor) else a
                            for a in self._sample_args(name)]
                    out = d.kernel(*args)
                    g = torch.randn(out.shape).to(out.dtype)
                    grads = []
                    for ns in (_kernels, torch.ops.opgrad):
                        ctx = Ctx()
                        ctx.needs_input_grad = tuple(isinstance(a, torch.Tensor) for a in args)
                        d.setup(ctx, tuple(args), out)
                        grads.append(d.backward(ns, ctx, g))
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
        for bad in (torch.arange(4), torch.randn(4, dtype=torch.float64),
                    torch.zeros(4, dtype=torch.bool), torch.zeros(4, dtype=torch.complex64)):
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
