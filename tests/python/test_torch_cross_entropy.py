"""opgrad.torch.cross_entropy / nll_loss (and nn.CrossEntropyLoss / nn.NLLLoss) against PyTorch's
own functions: values and input gradients for every reduction, class weights, ignore_index,
label smoothing, int32 / int64 targets, strided inputs, fp16 / bf16 (against PyTorch in float32
on the same rounded inputs), and torch.ops.opgrad.* (with autograd on PyTorch >= 2.4).

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 \
        tests/python/test_torch_cross_entropy.py
"""
import unittest

import torch
import torch.nn.functional as F

import opgrad.torch as ot

REDS = ("mean", "sum", "none")


def _pair(fn_ot, fn_pt, x, *args, **kw):
    """(value, grad) of both, with the same random incoming gradient."""
    xa = x.detach().clone().requires_grad_()
    xb = x.detach().float().clone().requires_grad_()
    a = fn_ot(xa, *args, **kw)
    b = fn_pt(xb, *args, **kw)
    g = torch.randn(b.shape, generator=torch.Generator().manual_seed(3))
    (da,) = torch.autograd.grad(a, xa, g.to(a.dtype))
    (db,) = torch.autograd.grad(b, xb, g)
    return a, b, da, db


class CrossEntropyTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.n, self.c = 9, 7
        self.x = torch.randn(self.n, self.c) * 2
        self.t = torch.tensor([0, 6, -100, 2, 1, 3, 2, -100, 5])
        self.w = torch.rand(self.c) + 0.5

    def close(self, a, b, tol, msg):
        self.assertEqual(tuple(a.shape), tuple(b.shape), msg)
        err = float((a.float() - b.float()).abs().max()) if a.numel() else 0.0
        scale = float(b.float().abs().max()) if b.numel() else 0.0
        self.assertLessEqual(err, tol * (1 + scale), "%s: max error %g" % (msg, err))

    def test_cross_entropy_fp32(self):
        for red in REDS:
            for ls in (0.0, 0.15):
                for w in (None, self.w):
                    for tdt in (torch.int64, torch.int32):
                        t = self.t.to(tdt)
                        a, b, da, db = _pair(
                            ot.cross_entropy, lambda x, *r, **k: F.cross_entropy(
                                x, self.t, *r[1:], **k),
                            self.x, t, w, reduction=red, label_smoothing=ls)
                        msg = "%s ls=%g w=%s %s" % (red, ls, w is not None, tdt)
                        self.close(a, b, 2e-6, msg + " loss")
                        self.close(da, db, 2e-6, msg + " grad")

    def test_ignore_index_valid_class(self):
        t = torch.tensor([1, 1, 0, 3, 1, 2, 6, 1, 5])
        for red in REDS:
            a, b, da, db = _pair(ot.cross_entropy, F.cross_entropy, self.x, t, self.w,
                                 ignore_index=1, reduction=red, label_smoothing=0.1)
            self.close(a, b, 2e-6, red)
            self.close(da, db, 2e-6, red)
            self.assertTrue(bool((da[t == 1] == 0).all()))

    def test_16bit(self):
        for dt, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1.6e-2)):
            x = self.x.to(dt)
            for red in REDS:
                a, b, da, db = _pair(ot.cross_entropy, F.cross_entropy, x, self.t, self.w,
                                     reduction=red, label_smoothing=0.1)
                self.assertEqual(a.dtype, dt)
                self.assertEqual(da.dtype, dt)
                self.close(a, b, tol, "%s %s loss" % (dt, red))
                self.close(da, db, 4 * tol, "%s %s grad" % (dt, red))

    def test_strided_input(self):
        xt = (torch.randn(self.c, self.n) * 2).t()  # [N, C], transposed in memory
        self.assertFalse(xt.is_contiguous())
        for red in REDS:
            a, b, da, db = _pair(ot.cross_entropy, F.cross_entropy, xt, self.t[::1], None,
                                 reduction=red)
            self.close(a, b, 2e-6, red)
            self.close(da, db, 2e-6, red)
        t2 = torch.stack([self.t, self.t], 1)[:, 0]  # stride 2
        self.assertEqual(t2.stride(), (2,))
        self.close(ot.cross_entropy(self.x, t2), F.cross_entropy(self.x, self.t), 2e-6, "t2")

    def test_out_of_range_is_ignored(self):
        t = torch.tensor([7, -1, 3, 100, 0, 2, 1, 4, 5])
        keep = torch.tensor([False, False, True, False, True, True, True, True, True])
        loss = ot.cross_entropy(self.x, t, reduction="none")
        self.assertTrue(bool((loss[~keep] == 0).all()))
        ref = F.cross_entropy(self.x[keep], t[keep], reduction="none")
        self.close(loss[keep], ref, 2e-6, "kept rows")

    def test_nll_loss(self):
        lp = torch.log_softmax(self.x, 1)
        for red in REDS:
            for w in (None, self.w):
                for tdt in (torch.int64, torch.int32):
                    a, b, da, db = _pair(
                        ot.nll_loss, lambda x, *r, **k: F.nll_loss(x, self.t, *r[1:], **k),
                        lp, self.t.to(tdt), w, reduction=red)
                    self.close(a, b, 2e-6, "nll %s" % red)
                    self.close(da, db, 2e-6, "nll %s grad" % red)
        # a 1-d input and a 0-d target
        v = lp[3]
        for red in REDS:
            a, b, da, db = _pair(ot.nll_loss, F.nll_loss, v, torch.tensor(4), self.w,
                                 reduction=red)
            self.close(a, b, 2e-6, "1-d nll %s" % red)
            self.close(da, db, 2e-6, "1-d nll %s grad" % red)

    def test_modules(self):
        m = ot.nn.CrossEntropyLoss(weight=self.w, label_smoothing=0.05)
        r = torch.nn.CrossEntropyLoss(weight=self.w, label_smoothing=0.05)
        self.close(m(self.x, self.t), r(self.x, self.t), 2e-6, "CrossEntropyLoss")
        lp = torch.log_softmax(self.x, 1)
        m = ot.nn.NLLLoss(reduction="sum")
        self.close(m(lp, self.t), torch.nn.NLLLoss(reduction="sum")(lp, self.t), 2e-6, "NLLLoss")

    def test_torch_ops(self):
        loss, lp = torch.ops.opgrad.cross_entropy_loss(self.x, self.t, self.w, "sum", -100, 0.0)
        self.close(loss.reshape(()), F.cross_entropy(self.x, self.t, self.w, reduction="sum"),
                   2e-6, "ops loss")
        self.close(lp, torch.log_softmax(self.x, 1), 2e-6, "ops log_prob")
        if ot.USING_CUSTOM_OP:  # autograd through the registered operator (PyTorch >= 2.4)
            x = self.x.clone().requires_grad_()
            loss, _ = torch.ops.opgrad.cross_entropy_loss(x, self.t, None, "mean", -100, 0.2)
            (d,) = torch.autograd.grad(loss.sum(), x)
            xr = self.x.clone().requires_grad_()
            (dr,) = torch.autograd.grad(F.cross_entropy(xr, self.t, label_smoothing=0.2), xr)
            self.close(d, dr, 2e-6, "ops grad")

    @unittest.skipUnless(ot.USING_CUSTOM_OP, "torch.library.opcheck needs the custom_op path")
    def test_opcheck(self):
        ut = ("test_schema", "test_autograd_registration", "test_faketensor")
        x = self.x.clone().requires_grad_()
        lp = torch.log_softmax(self.x, 1).requires_grad_()
        cases = [("cross_entropy_loss", (x, self.t, self.w, "mean", -100, 0.1)),
                 ("cross_entropy_loss", (x, self.t, None, "none", 1, 0.0)),
                 ("nll_loss", (lp, self.t, self.w, "sum", -100)),
                 ("cross_entropy_loss_backward",
                  (torch.tensor(1.0), lp.detach(), self.t, self.w, "mean", -100, 0.2)),
                 ("nll_loss_backward", (torch.ones(self.n), lp.detach(), self.t, self.w,
                                        torch.tensor([3.0]), "none", -100))]
        for name, args in cases:
            r = torch.library.opcheck(getattr(torch.ops.opgrad, name).default, args,
                                      test_utils=ut)
            self.assertTrue(all(v == "SUCCESS" for v in r.values()), "%s: %s" % (name, r))

    def test_errors(self):
        with self.assertRaises(TypeError):
            ot.cross_entropy(self.x, self.t.float())
        with self.assertRaises(ValueError):
            ot.cross_entropy(self.x, self.t, reduction="avg")


if __name__ == "__main__":
    unittest.main()
