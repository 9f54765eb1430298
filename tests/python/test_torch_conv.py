"""opgrad.torch conv1d/2d/3d, conv_transpose1d/2d/3d and nn.Conv* / nn.ConvTranspose* against
PyTorch's own (issue 13).

Run: OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_conv.py
(and with a PyTorch >= 2.4 python, which also runs torch.library.opcheck on both operators).

Tolerances. Every result element is a sum of products; its float64 truth comes from PyTorch's
float64 convolution, and its magnitude M (the same convolution of |input|, |weight|, |grad|, plus
|bias|) bounds what fp32 accumulation can get wrong. The bound checked is
    |opgrad - truth| <= REL32 * M + u_out * |truth|
with REL32 = 2e-6 (32 units of 2^-24: a K-term fp32 sum errs by about sqrt(K) units, K <= 300
here) and u_out the output dtype's rounding (0 for float32, 2^-11 float16, 2^-8 bfloat16: one
rounding of the fp32 accumulator). 16-bit inputs are compared with the truth on the same 16-bit
values, i.e. PyTorch's float32 result on the upcast inputs is no better than this truth. A wrong
index, tap, stride or padding is an O(M) error and fails. gradcheck runs here in float32 with the
tolerance policy of docs/torch.md: eps 1e-3, atol 2e-3, rtol 1e-2 (float64 gradcheck and
gradgradcheck: tests/python/test_torch_float64_conv.py).
"""
import itertools
import unittest
import warnings

import torch
import torch.nn.functional as F

import opgrad
import opgrad.torch as ot

REL32 = 2e-6
U_OUT = {torch.float32: 0.0, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}

TORCH_FN = {(1, False): F.conv1d, (2, False): F.conv2d, (3, False): F.conv3d,
            (1, True): F.conv_transpose1d, (2, True): F.conv_transpose2d,
            (3, True): F.conv_transpose3d}
OG_FN = {(1, False): ot.conv1d, (2, False): ot.conv2d, (3, False): ot.conv3d,
         (1, True): ot.conv_transpose1d, (2, True): ot.conv_transpose2d,
         (3, True): ot.conv_transpose3d}


def call(fn, transposed, x, w, b, kw):
    kw = dict(kw)
    if not transposed:
        kw.pop("output_padding", None)
    return fn(x, w, b, **kw)


def assert_bound(tc, name, got, truth, mag, dtype):
    err = (got.double() - truth).abs()
    bound = REL32 * mag + U_OUT[dtype] * truth.abs()
    bad = err > bound
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        tc.fail("%s (%s): %d of %d elements out of bounds; first at flat index %d: got %r, truth "
                "%r, magnitude %r, bound %r" % (name, dtype, int(bad.sum()), bad.numel(), i,
                                                 got.flatten()[i].item(), truth.flatten()[i].item(),
                                                 mag.flatten()[i].item(),
                                                 bound.flatten()[i].item()))


def truth_and_mag(n, transposed, x, w, b, g, kw):
    """float64 forward, gradients (input, weight, bias) for grad_output g, and their magnitudes."""
    fn = TORCH_FN[(n, transposed)]

    def run(xx, ww, bb, gg):
        xx = xx.detach().double().requires_grad_()
        ww = ww.detach().double().requires_grad_()
        bb = None if bb is None else bb.detach().double().requires_grad_()
        y = call(fn, transposed, xx, ww, bb, kw)
        y.backward(gg.double())
        return y.detach(), xx.grad, ww.grad, None if bb is None else bb.grad

    t = run(x, w, b, g)
    m = run(x.abs(), w.abs(), None if b is None else b.abs(), g.abs())
    return t, m


# geometries: (name, n, transposed, x shape, w shape, bias, kwargs)
CASES = [
    ("1d", 1, False, (2, 3, 11), (4, 3, 3), True, dict(stride=1, padding=1)),
    ("1d_s3_d2", 1, False, (2, 4, 17), (6, 2, 3), True, dict(stride=3, padding=2, dilation=2,
                                                             groups=2)),
    ("1d_same_even", 1, False, (1, 3, 10), (2, 3, 4), False, dict(padding="same")),
    ("2d_basic", 2, False, (2, 3, 7, 6), (5, 3, 3, 3), True, dict(padding=1)),
    ("2d_s2_nodiv", 2, False, (2, 4, 10, 9), (6, 4, 3, 3), True, dict(stride=2, padding=1)),
    ("2d_s3_nodiv", 2, False, (1, 3, 11, 13), (4, 3, 3, 2), False, dict(stride=(3, 2),
                                                                        padding=(1, 0))),
    ("2d_dilation", 2, False, (2, 2, 12, 11), (3, 2, 3, 3), True, dict(padding=2, dilation=2)),
    ("2d_groups", 2, False, (2, 6, 8, 8), (9, 2, 3, 3), True, dict(stride=2, padding=1,
                                                                   groups=3)),
    ("2d_depthwise", 2, False, (2, 8, 9, 9), (8, 1, 3, 3), True, dict(padding=1, groups=8)),
    ("2d_1x1", 2, False, (3, 16, 5, 5), (7, 16, 1, 1), False, dict()),
    ("2d_same_even", 2, False, (2, 3, 8, 7), (4, 3, 4, 2), True, dict(padding="same")),
    ("2d_same_dil", 2, False, (1, 2, 9, 9), (3, 2, 3, 3), True, dict(padding="same",
                                                                     dilation=(2, 1))),
    ("2d_valid", 2, False, (2, 3, 6, 6), (2, 3, 3, 3), False, dict(padding="valid")),
    ("2d_big_k", 2, False, (1, 2, 5, 5), (3, 2, 5, 5), True, dict(padding=3)),
    ("3d", 3, False, (2, 2, 5, 6, 5), (3, 2, 3, 3, 3), True, dict(padding=1)),
    ("3d_s2_g2", 3, False, (1, 4, 7, 6, 5), (4, 2, 3, 2, 3), False, dict(stride=(2, 3, 2),
                                                                         padding=(1, 0, 1),
                                                                         groups=2)),
    ("3d_same_odd", 3, False, (1, 2, 5, 5, 5), (2, 2, 3, 1, 3), True, dict(padding="same")),
    ("t1d", 1, True, (2, 4, 7), (4, 3, 3), True, dict(stride=2, padding=1, output_padding=1)),
    ("t1d_d2", 1, True, (1, 2, 6), (2, 2, 3), False, dict(stride=3, dilation=2,
                                                          output_padding=2)),
    ("t2d", 2, True, (2, 4, 5, 6), (4, 3, 3, 3), True, dict(stride=2, padding=1,
                                                            output_padding=1)),
    ("t2d_groups", 2, True, (2, 6, 4, 5), (6, 2, 3, 2), True, dict(stride=(3, 2),
                                                                   padding=(1, 0), groups=3,
                                                                   output_padding=(2, 1))),
    ("t2d_dil", 2, True, (1, 3, 5, 5), (3, 2, 3, 3), False, dict(stride=2, dilation=2,
                                                                 padding=2,
                                                                 output_padding=1)),
    ("t2d_depthwise", 2, True, (2, 4, 5, 5), (4, 1, 3, 3), True, dict(stride=2, groups=4)),
    ("t3d", 3, True, (1, 2, 3, 4, 3), (2, 3, 3, 2, 3), True, dict(stride=2, padding=1,
                                                                  output_padding=(1, 0, 1))),
]


class ConvValues(unittest.TestCase):
    def check(self, name, n, transposed, xs, ws, has_bias, kw, dtype=torch.float32,
              need=(True, True, True), layout=None):
        gen = torch.Generator().manual_seed(sum(map(ord, name)))
        x = torch.randn(xs, generator=gen).to(dtype)
        w = (torch.randn(ws, generator=gen) * 0.5).to(dtype)
        groups = kw.get("groups", 1)
        cout = ws[1] * groups if transposed else ws[0]
        b = torch.randn(cout, generator=gen).to(dtype) if has_bias else None
        if layout == "channels_last":
            fmt = torch.channels_last if n == 2 else torch.channels_last_3d
            x, w = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
        elif layout == "strided":  # a sliced view with a storage offset and a gap
            big = torch.randn((xs[0], xs[1] * 2) + tuple(s + 3 for s in xs[2:]),
                              generator=gen).to(dtype)
            x = big[(slice(None), slice(1, None, 2)) + tuple(slice(2, 2 + s) for s in xs[2:])]
            self.assertFalse(x.is_contiguous())
            w = w.transpose(0, 1).contiguous().transpose(0, 1)
        og = OG_FN[(n, transposed)]
        xa = x.detach().clone() if layout is None else x.detach()
        xa.requires_grad_(need[0])
        wa = w.detach().clone() if layout is None else w.detach()
        wa.requires_grad_(need[1])
        ba = None if b is None else b.detach().clone().requires_grad_(need[2])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = call(og, transposed, xa, wa, ba, kw)
            g = torch.randn(y.shape, generator=gen).to(dtype)
            (t_y, t_gx, t_gw, t_gb), (m_y, m_gx, m_gw, m_gb) = truth_and_mag(
                n, transposed, x, w, b, g.double(), kw)
        self.assertEqual(y.dtype, dtype)
        self.assertEqual(tuple(y.shape), tuple(t_y.shape))
        assert_bound(self, name + " forward", y.detach(), t_y, m_y, dtype)
        if any(need[:2]) or (b is not None and need[2]):
            y.backward(g)
            for t, tr, mg, nd, lab in ((xa, t_gx, m_gx, need[0], "grad_input"),
                                       (wa, t_gw, m_gw, need[1], "grad_weight"),
                                       (ba, t_gb, m_gb, need[2], "grad_bias")):
                if t is None:
                    continue
                if not nd:
                    self.assertIsNone(t.grad, name + " " + lab)
                    continue
                self.assertEqual(t.grad.dtype, dtype)
                self.assertEqual(t.grad.shape, t.shape)
                assert_bound(self, "%s %s" % (name, lab), t.grad, tr, mg, dtype)

    def test_geometries_fp32(self):
        for c in CASES:
            with self.subTest(c[0]):
                self.check(*c)

    def test_geometries_16bit(self):
        for dtype in (torch.float16, torch.bfloat16):
            for c in CASES:
                with self.subTest(c[0], dtype=dtype):
                    self.check(*c, dtype=dtype)

    def test_output_masks(self):
        # every subset of requires_grad: one ConvolutionBackward with that outputMask
        for c in (CASES[4], CASES[19]):
            for need in itertools.product((False, True), repeat=3):
                with self.subTest(c[0], need=need):
                    self.check(*c, need=need)

    def test_layouts(self):
        for c in CASES:
            if c[1] in (2, 3) and not isinstance(c[6].get("padding"), str):
                with self.subTest(c[0], layout="channels_last"):
                    self.check(*c, layout="channels_last")
            with self.subTest(c[0], layout="strided"):
                self.check(*c, layout="strided")

    def test_unbatched(self):
        torch.manual_seed(3)
        x, w = torch.randn(3, 9, 8), torch.randn(4, 3, 3, 3)
        y = ot.conv2d(x, w, padding=1)
        self.assertEqual(y.shape, (4, 9, 8))
        torch.testing.assert_close(y, F.conv2d(x, w, padding=1), atol=1e-5, rtol=1e-5)
        y = ot.conv_transpose1d(torch.randn(3, 5), torch.randn(3, 2, 3), stride=2)
        self.assertEqual(y.shape, (2, 11))

    def test_expanded_grad(self):
        # y.sum().backward() hands the backward a stride-0 grad_output
        torch.manual_seed(4)
        x = torch.randn(2, 3, 6, 6, requires_grad=True)
        w = torch.randn(4, 3, 3, 3, requires_grad=True)
        b = torch.randn(4, requires_grad=True)
        ot.conv2d(x, w, b, stride=2).sum().backward()
        xr, wr, br = (t.detach().clone().requires_grad_() for t in (x, w, b))
        F.conv2d(xr, wr, br, stride=2).sum().backward()
        for a, r in ((x, xr), (w, wr), (b, br)):
            torch.testing.assert_close(a.grad, r.grad, atol=2e-5, rtol=1e-5)

    def test_empty_batch(self):
        x, w = torch.randn(0, 3, 5, 5, requires_grad=True), torch.randn(4, 3, 3, 3,
                                                                         requires_grad=True)
        y = ot.conv2d(x, w)
        self.assertEqual(y.shape, (0, 4, 3, 3))
        y.sum().backward()
        self.assertEqual(x.grad.shape, x.shape)
        self.assertEqual(float(w.grad.abs().sum()), 0.0)

    def test_thread_count_bitwise(self):
        torch.manual_seed(5)
        x = torch.randn(4, 16, 14, 14, requires_grad=True)
        w = torch.randn(32, 16, 3, 3, requires_grad=True)
        res = []
        old = opgrad.get_num_threads()
        try:
            for nt in (1, 2, 3):
                opgrad.set_num_threads(nt)
                x.grad = w.grad = None
                y = ot.conv2d(x, w, padding=1, stride=2)
                y.backward(torch.ones_like(y) * 0.5)
                res.append((y.detach().clone(), x.grad.clone(), w.grad.clone()))
        finally:
            opgrad.set_num_threads(old)
        for r in res[1:]:
            for a, b in zip(res[0], r):
                self.assertTrue(torch.equal(a, b))

    def test_out_reuse(self):
        # the kernel's out= (used by bench/bench_conv.py): the same values into a given tensor
        from opgrad.torch import _conv
        torch.manual_seed(6)
        x, w = torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3)
        out = torch.full((2, 5, 8, 8), float("nan"))
        r = _conv.convolution(x, w, None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1, out=out)
        self.assertIs(r, out)
        torch.testing.assert_close(out, F.conv2d(x, w, padding=1), atol=1e-5, rtol=1e-5)
        g = torch.randn(2, 5, 8, 8)
        gx, gw = torch.full_like(x, float("nan")), torch.full_like(w, float("nan"))
        _conv.convolution_backward(g, x, w, False, (1, 1), (1, 1), (1, 1), False, (0, 0), 1,
                                   (True, True, False), outs=(gx, gw, None))
        xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
        F.conv2d(xr, wr, padding=1).backward(g)
        torch.testing.assert_close(gx, xr.grad, atol=1e-4, rtol=1e-5)
        torch.testing.assert_close(gw, wr.grad, atol=1e-4, rtol=1e-5)


class ConvGradcheck(unittest.TestCase):
    def gc(self, fn, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertTrue(torch.autograd.gradcheck(fn, args, eps=1e-3, atol=2e-3, rtol=1e-2,
                                                     nondet_tol=0.0))

    def test_gradcheck(self):
        torch.manual_seed(7)

        def r(*s):
            return (torch.randn(*s) * 0.5).requires_grad_()

        self.gc(lambda x, w, b: ot.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2)),
                r(2, 2, 5, 6), r(3, 2, 2, 3), r(3))
        self.gc(lambda x, w: ot.conv1d(x, w, padding="same", groups=2), r(1, 4, 7), r(2, 2, 4))
        self.gc(lambda x, w, b: ot.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                    output_padding=1, groups=2),
                r(1, 4, 3, 3), r(4, 1, 3, 3), r(2))
        self.gc(lambda x, w: ot.conv3d(x, w, stride=(1, 2, 1)), r(1, 2, 3, 4, 3), r(2, 2, 2, 2, 2))
        self.gc(lambda x, w: ot.conv_transpose3d(x, w, stride=2), r(1, 2, 2, 2, 2),
                r(2, 1, 2, 2, 2))

    def test_ops_schema(self):
        torch.manual_seed(8)
        x, w = torch.randn(1, 2, 5, 5, requires_grad=True), torch.randn(3, 2, 3, 3)
        y = torch.ops.opgrad.convolution(x, w, None, [1, 1], [1, 1, 0, 2], [1, 1], False, [0, 0],
                                         1)
        r = F.conv2d(F.pad(x, (0, 2, 1, 1)), w)
        torch.testing.assert_close(y, r, atol=1e-5, rtol=1e-5)
        y.sum().backward()
        self.assertEqual(x.grad.shape, x.shape)

    @unittest.skipUnless(hasattr(torch.library, "opcheck"), "torch.library.opcheck (PyTorch 2)")
    def test_opcheck(self):
        torch.manual_seed(9)
        x = torch.randn(2, 4, 6, 5, requires_grad=True)
        w = torch.randn(6, 2, 3, 3, requires_grad=True)
        b = torch.randn(6, requires_grad=True)
        torch.library.opcheck(torch.ops.opgrad.convolution,
                              (x, w, b, [2, 1], [1, 1], [1, 1], False, [0, 0], 2))
        torch.library.opcheck(torch.ops.opgrad.convolution,
                              (x, torch.randn(4, 3, 3, 3, requires_grad=True), None, [2, 2],
                               [1, 1], [1, 1], True, [1, 0], 2))
        g = torch.randn(2, 6, 3, 5)
        torch.library.opcheck(torch.ops.opgrad.convolution_backward,
                              (g, x.detach(), w.detach(), True, [2, 1], [1, 1], [1, 1], False,
                               [0, 0], 2, [True, False, True]))


    @unittest.skipUnless(hasattr(torch, "compile") and hasattr(torch.library, "custom_op"),
                         "torch.compile with custom ops (PyTorch >= 2.4)")
    def test_compile(self):
        # under torch.compile the functional form goes through torch.ops.opgrad.convolution
        # (fake kernel for tracing, register_autograd for the backward)
        torch.manual_seed(14)
        m = ot.nn.Conv2d(3, 4, 3, padding=1, stride=2)
        r = torch.nn.Conv2d(3, 4, 3, padding=1, stride=2)
        r.load_state_dict(m.state_dict())
        f = torch.compile(m, backend="aot_eager", fullgraph=True)
        x = torch.randn(2, 3, 9, 8, requires_grad=True)
        xr = x.detach().clone().requires_grad_()
        y, yr = f(x), r(xr)
        torch.testing.assert_close(y, yr, atol=1e-5, rtol=1e-5)
        y.sum().backward()
        yr.sum().backward()
        torch.testing.assert_close(x.grad, xr.grad, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(m.weight.grad, r.weight.grad, atol=1e-4, rtol=1e-5)


class ConvErrors(unittest.TestCase):
    def test_errors(self):
        x, w = torch.randn(1, 4, 6, 6), torch.randn(3, 3, 3, 3)
        with self.assertRaises(opgrad.OpgradError) as e:
            ot.conv2d(x, w)  # 4 channels, weight takes 3
        self.assertIn("weight", e.exception.message)
        with self.assertRaises(opgrad.OpgradError) as e:
            ot.conv2d(x, torch.randn(3, 2, 3, 3), groups=3)  # 3 x 2 != 4
        self.assertIn("groups", e.exception.message)
        with self.assertRaises(opgrad.OpgradError) as e:
            ot.conv_transpose2d(x, torch.randn(4, 2, 3, 3), stride=2, output_padding=2)
        self.assertIn("outputPadding", e.exception.message)
        with self.assertRaisesRegex(ValueError, "strided"):
            ot.conv2d(x, torch.randn(2, 4, 3, 3), stride=2, padding="same")
        with self.assertRaisesRegex(ValueError, "asymmetric"):
            ot.conv3d(torch.randn(1, 2, 4, 4, 4), torch.randn(2, 2, 2, 3, 3), padding="same")
        with self.assertRaisesRegex(ValueError, "padding"):
            ot.conv2d(x, torch.randn(2, 4, 3, 3), padding="full")
        with self.assertRaisesRegex(ValueError, "output size"):
            ot.conv2d(x, torch.randn(2, 4, 9, 9))
        with self.assertRaisesRegex(ValueError, "stride"):
            ot.conv2d(x, torch.randn(2, 4, 3, 3), stride=(1, 2, 3))
        with self.assertRaisesRegex(ValueError, "batched"):
            ot.conv2d(torch.randn(4, 6), torch.randn(2, 4, 3, 3))
        # float64 runs (test_torch_float64_conv.py), but a float64 bias needs float64 operands
        with self.assertRaises(opgrad.OpgradError) as e:
            ot.conv2d(x, torch.randn(2, 4, 3, 3), torch.randn(2, dtype=torch.float64))
        self.assertIn("bias is DOUBLE", e.exception.message)
        with self.assertRaisesRegex(TypeError, "dtype"):
            ot.conv2d(x.to(torch.int64), torch.randn(2, 4, 3, 3))


class ConvModules(unittest.TestCase):
    def pair(self, og_cls, t_cls, x, *args, **kw):
        torch.manual_seed(10)
        m = og_cls(*args, **kw)
        r = t_cls(*args, **kw)
        self.assertIsInstance(m, t_cls)
        self.assertEqual(set(m.state_dict()), set(r.state_dict()))
        r.load_state_dict(m.state_dict())
        xm, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
        ym, yr = m(xm), r(xr)
        torch.testing.assert_close(ym, yr, atol=1e-4, rtol=1e-5)
        g = torch.randn_like(yr)
        ym.backward(g)
        yr.backward(g)
        torch.testing.assert_close(xm.grad, xr.grad, atol=1e-4, rtol=1e-5)
        for (nm, pm), (_, pr) in zip(m.named_parameters(), r.named_parameters()):
            torch.testing.assert_close(pm.grad, pr.grad, atol=1e-4, rtol=1e-5, msg=nm)
        return m

    def test_modules(self):
        nn, tn = ot.nn, torch.nn
        self.pair(nn.Conv1d, tn.Conv1d, torch.randn(2, 4, 15), 4, 6, 3, stride=2, padding=1)
        self.pair(nn.Conv2d, tn.Conv2d, torch.randn(2, 4, 9, 10), 4, 6, 3, padding="same",
                  groups=2, bias=False)
        self.pair(nn.Conv2d, tn.Conv2d, torch.randn(2, 3, 9, 10), 3, 4, (3, 2), stride=2,
                  padding=(1, 2), padding_mode="reflect")
        self.pair(nn.Conv2d, tn.Conv2d, torch.randn(1, 3, 6, 7), 3, 2, 3, padding=1,
                  padding_mode="circular")
        self.pair(nn.Conv3d, tn.Conv3d, torch.randn(1, 2, 5, 6, 5), 2, 3, 3, padding=1,
                  dilation=(1, 2, 1))
        self.pair(nn.ConvTranspose1d, tn.ConvTranspose1d, torch.randn(2, 4, 7), 4, 2, 3,
                  stride=2, output_padding=1)
        self.pair(nn.ConvTranspose2d, tn.ConvTranspose2d, torch.randn(2, 4, 5, 5), 4, 6, 3,
                  stride=2, padding=1, groups=2)
        self.pair(nn.ConvTranspose3d, tn.ConvTranspose3d, torch.randn(1, 2, 3, 3, 3), 2, 2, 2,
                  stride=2)

    def test_from_torch(self):
        torch.manual_seed(15)
        for og_cls, r in ((ot.nn.Conv2d, torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)),
                          (ot.nn.Conv1d, torch.nn.Conv1d(3, 2, 3, bias=False,
                                                         padding_mode="replicate", padding=1)),
                          (ot.nn.ConvTranspose2d, torch.nn.ConvTranspose2d(
                              4, 2, 3, stride=2, padding=1, output_padding=1, dilation=1))):
            m = og_cls.from_torch(r)
            self.assertIs(m.weight, r.weight)
            self.assertIs(m.bias, r.bias)
            x = torch.randn((2, r.in_channels) + (7,) * (r.weight.dim() - 2))
            torch.testing.assert_close(m(x), r(x), atol=1e-5, rtol=1e-5)
        with self.assertRaises(TypeError):
            ot.nn.Conv2d.from_torch(torch.nn.Conv1d(1, 1, 1))

    def test_transpose_output_size(self):
        torch.manual_seed(11)
        m = ot.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        r = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        r.load_state_dict(m.state_dict())
        x = torch.randn(1, 3, 5, 5)
        y = m(x, output_size=[10, 10])
        self.assertEqual(y.shape, (1, 2, 10, 10))
        torch.testing.assert_close(y, r(x, output_size=[10, 10]), atol=1e-5, rtol=1e-5)


class TinyCNN(unittest.TestCase):
    """conv-relu-pool-conv-relu-pool-linear trained a few SGD steps with opgrad's convolutions and
    with PyTorch's, from the same initial parameters on the same data: the losses agree."""

    def net(self, conv):
        torch.manual_seed(12)
        return torch.nn.Sequential(conv(3, 8, 3, padding=1), torch.nn.ReLU(),
                                   torch.nn.MaxPool2d(2), conv(8, 16, 3, padding=1, stride=1),
                                   torch.nn.ReLU(), torch.nn.AvgPool2d(2), torch.nn.Flatten(),
                                   torch.nn.Linear(16 * 4 * 4, 10))

    def train(self, model, data):
        opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.5)
        losses = []
        for x, t in data:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), t)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    def test_training(self):
        gen = torch.Generator().manual_seed(13)
        data = [(torch.randn(16, 3, 16, 16, generator=gen),
                 torch.randint(0, 10, (16,), generator=gen)) for _ in range(2)] * 4
        og, ref = self.net(ot.nn.Conv2d), self.net(torch.nn.Conv2d)
        ref.load_state_dict(og.state_dict())
        lo, lr = self.train(og, data), self.train(ref, data)
        # 8 steps of fp32 SGD over 2 batches (4 epochs: the loss must fall): both libraries'
        # rounding differences grow through the steps but stay far below the loss changes (a
        # wrong gradient diverges at once)
        for a, b in zip(lo, lr):
            self.assertAlmostEqual(a, b, delta=1e-4 * max(1.0, abs(b)))
        self.assertLess(lo[-1], lo[0])


if __name__ == "__main__":
    unittest.main()
