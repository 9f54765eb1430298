#!/usr/bin/python3
"""Tests of opgrad.torch.optim (AdamW, SGD on aclnnFusedAdamw / aclnnFusedSgd):

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_optim.py [-v]

Against torch.optim.AdamW / SGD over several steps with every flag (amsgrad, maximize, weight
decay, nesterov, dampening, several parameter groups, a state_dict round trip): the same
parameters and state to a few
fp32 ulps (both round each operation in fp32; the order of the rounding differs: bound 4e-6
relative after 6 steps, measured 1e-7); a step with found_inf set changes nothing, step counts
included; grad_scale divides the gradients; fp16 / bf16 parameters; with the GradScaler, an
overflowing step is skipped inside the kernel.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

from opgrad.torch import amp  # noqa: E402
from opgrad.torch.optim import SGD, AdamW  # noqa: E402

SHAPES = ((5, 3), (7,), (300,), (0,))


def _twins(seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    a = [torch.nn.Parameter(torch.randn(s, generator=g).to(dtype)) for s in SHAPES]
    b = [torch.nn.Parameter(x.detach().clone()) for x in a]
    return a, b, g


def _grads(a, b, g, scale=1.0):
    for x, y in zip(a, b):
        gr = torch.randn(x.shape, generator=g).to(x.dtype)
        x.grad, y.grad = gr * scale, gr.clone()


def _close(test, a, b, rtol, what):
    for x, y in zip(a, b):
        d = (x.detach().float() - y.detach().float()).abs()
        bound = rtol * y.detach().float().abs() + 1e-7
        test.assertTrue(bool((d <= bound).all()), "%s: max diff %g" % (what, float(d.max())
                                                                     if d.numel() else 0))


class TestAdamW(unittest.TestCase):
    def test_matches_torch(self):
        for ams in (False, True):
            for maxi in (False, True):
                for wd in (0.0, 0.1):
                    a, b, g = _twins(1)
                    oa = AdamW([{"params": a[:2]}, {"params": a[2:], "lr": 3e-3}], lr=1e-2,
                               weight_decay=wd, amsgrad=ams, maximize=maxi)
                    ob = torch.optim.AdamW([{"params": b[:2]}, {"params": b[2:], "lr": 3e-3}],
                                           lr=1e-2, weight_decay=wd, amsgrad=ams, maximize=maxi)
                    for _ in range(6):
                        _grads(a, b, g)
                        oa.step()
                        ob.step()
                    what = "amsgrad %s maximize %s wd %g" % (ams, maxi, wd)
                    _close(self, a, b, 4e-6, what)
                    for x, y in zip(a, b):
                        sa, sb = oa.state[x], ob.state[y]
                        self.assertEqual(float(sa["step"]), float(sb["step"]))
                        _close(self, [sa["exp_avg"], sa["exp_avg_sq"]],
                               [sb["exp_avg"], sb["exp_avg_sq"]], 4e-6, what + " state")

    def test_found_inf_skips_and_grad_scale_divides(self):
        a, b, g = _twins(2)
        oa, ob = AdamW(a, lr=1e-2), torch.optim.AdamW(b, lr=1e-2)
        _grads(a, b, g, scale=64.0)
        oa.step(grad_scale=torch.tensor([64.0]), found_inf=torch.tensor([0.0]))
        ob.step()
        _close(self, a, b, 4e-6, "grad_scale")
        before = [x.detach().clone() for x in a]
        state = [(oa.state[x]["exp_avg"].clone(), float(oa.state[x]["step"])) for x in a]
        _grads(a, b, g)
        oa.step(found_inf=torch.tensor([1.0]))
        for x, x0, (m0, s0) in zip(a, before, state):
            self.assertTrue(torch.equal(x.detach(), x0))
            self.assertTrue(torch.equal(oa.state[x]["exp_avg"], m0))
            self.assertEqual(float(oa.state[x]["step"]), s0)

    def test_state_dict_round_trip(self):
        a, b, g = _twins(7)
        oa, ob = AdamW(a, lr=1e-2, amsgrad=True), torch.optim.AdamW(b, lr=1e-2, amsgrad=True)
        for _ in range(3):
            _grads(a, b, g)
            oa.step()
            ob.step()
        saved = oa.state_dict()
        oa = AdamW(a, lr=1e-2, amsgrad=True)
        oa.load_state_dict(saved)  # new state tensors: new step buffer and plans
        for _ in range(3):
            _grads(a, b, g)
            oa.step()
            ob.step()
        _close(self, a, b, 4e-6, "after load_state_dict")
        self.assertEqual([float(oa.state[x]["step"]) for x in a], [6.0] * len(a))

    def test_half_parameters(self):
        for dt in (torch.float16, torch.bfloat16):
            a, b, g = _twins(3, dt)
            b = [torch.nn.Parameter(x.detach().float()) for x in a]
            oa, ob = AdamW(a, lr=1e-2), torch.optim.AdamW(b, lr=1e-2)
            for _ in range(3):
                for x, y in zip(a, b):
                    gr = torch.randn(x.shape, generator=g).to(dt)
                    x.grad, y.grad = gr, gr.float()
                oa.step()
                ob.step()
            # 16-bit parameters and moments, rounded once per step: a few 16-bit ulps of fp32's
            tol = 4 * (2.0 ** -10 if dt == torch.float16 else 2.0 ** -7)
            _close(self, a, b, tol, str(dt))

    def test_scaler_skips_inside_the_kernel(self):
        a, b, g = _twins(4)
        opt, scaler = AdamW(a, lr=1e-2), amp.GradScaler(init_scale=1024.0)
        _grads(a, b, g, scale=1024.0)
        a[1].grad[2] = float("inf")
        before = [x.detach().clone() for x in a]
        scaler.step(opt)
        scaler.update()
        for x, x0 in zip(a, before):
            self.assertTrue(torch.equal(x.detach(), x0))
            self.assertEqual(float(opt.state[x]["step"]), 0.0)
        self.assertEqual(scaler.get_scale(), 512.0)


class TestSGD(unittest.TestCase):
    def test_matches_torch(self):
        configs = [dict(momentum=0.0), dict(momentum=0.9), dict(momentum=0.9, nesterov=True),
                   dict(momentum=0.9, dampening=0.3, weight_decay=0.05),
                   dict(momentum=0.5, maximize=True, weight_decay=0.1)]
        for cfg in configs:
            a, b, g = _twins(5)
            oa, ob = SGD(a, lr=0.05, **cfg), torch.optim.SGD(b, lr=0.05, **cfg)
            for _ in range(6):
                _grads(a, b, g)
                oa.step()
                ob.step()
            _close(self, a, b, 4e-6, str(cfg))
            if cfg["momentum"]:
                for x, y in zip(a, b):
                    _close(self, [oa.state[x]["momentum_buffer"]],
                           [ob.state[y]["momentum_buffer"]], 4e-6, str(cfg) + " buffer")

    def test_gradients_untouched(self):
        a, b, g = _twins(6)
        opt = SGD(a, lr=0.1, momentum=0.9, weight_decay=0.1)
        _grads(a, b, g)
        grads = [x.grad.clone() for x in a]
        opt.step()
        for x, g0 in zip(a, grads):
            self.assertTrue(torch.equal(x.grad, g0))


if __name__ == "__main__":
    unittest.main()
