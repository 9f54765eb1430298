#!/usr/bin/python3
"""Tests of opgrad.torch.amp (GradScaler, clip_grad_norm_, foreach_norm, foreach_mul_):

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_amp.py [-v]

(the same with /work/torch2venv/bin/python: there the scaler's kernels are also compared with
PyTorch's own CPU kernels torch._amp_foreach_non_finite_check_and_unscale_ and
torch._amp_update_scale_, where the build has them).

GradScaler against a Python model of PyTorch's documented rule over a sequence of clean and
overflowing steps (the scale, the tracker, skipped steps), unscale_ exactly 1/scale per element
on fp32 / fp16 / bf16 gradients, the inf / NaN flag, state_dict round trip and the usage errors;
clip_grad_norm_ against torch.nn.utils.clip_grad_norm_ for orders 2, 1, inf and 3.
"""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

import opgrad.torch as ot  # noqa: E402
from opgrad.torch import amp  # noqa: E402


class _Opt:
    """The least an optimizer needs for the scaler: param_groups and step()."""

    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.steps = 0

    def step(self):
        self.steps += 1


def _params(dtype, shapes=((5, 3), (7,), (64, 33)), seed=0):
    g = torch.Generator().manual_seed(seed)
    ps = []
    for s in shapes:
        p = torch.nn.Parameter(torch.zeros(s, dtype=dtype))
        p.grad = (torch.randn(s, generator=g) * 100).to(dtype)
        ps.append(p)
    return ps


class TestGradScaler(unittest.TestCase):
    def test_unscale_exact(self):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            ps = _params(dt)
            want = [(p.grad.float() * (1.0 / 1024.0)).to(dt) for p in ps]
            s = amp.GradScaler(init_scale=1024.0)
            opt = _Opt(ps)
            s.unscale_(opt)
            for p, w in zip(ps, want):
                self.assertTrue(torch.equal(p.grad, w), dt)
            self.assertEqual(float(s._states[id(opt)]["found_inf"]), 0.0)

    def test_sequence_matches_documented_rule(self):
        # clean / overflow steps; growth every 3 clean steps
        pattern = [0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0]  # 1: inf, 2: NaN
        s = amp.GradScaler(init_scale=256.0, growth_factor=2.0, backoff_factor=0.5,
                           growth_interval=3)
        scale, tracker, steps = 256.0, 0, 0
        for i, bad in enumerate(pattern):
            ps = _params(torch.float16, seed=i)
            if bad:
                ps[1 + i % 2].grad.view(-1)[3] = float("inf") if bad == 1 else float("nan")
            opt = _Opt(ps)
            s.step(opt)
            s.update()
            # the documented rule (torch.cuda.amp.GradScaler / _amp_update_scale_)
            if bad:
                scale, tracker = scale * 0.5, 0
            else:
                steps += 1
                tracker += 1
                if tracker == 3:
                    scale, tracker = scale * 2.0, 0
            self.assertEqual(opt.steps, 0 if bad else 1, "step %d" % i)
            self.assertEqual(s.get_scale(), scale, "step %d" % i)
            self.assertEqual(int(s._tracker[0]), tracker, "step %d" % i)

    def test_growth_stops_at_float32_range(self):
        s = amp.GradScaler(init_scale=2.0 ** 127, growth_interval=1)
        s.step(_Opt(_params(torch.float32)))
        s.update()
        self.assertEqual(s.get_scale(), 2.0 ** 127)  # 2^128 is not finite in float32
        self.assertEqual(int(s._tracker[0]), 0)

    def test_state_dict_and_errors(self):
        s = amp.GradScaler(init_scale=8.0, growth_interval=5)
        opt = _Opt(_params(torch.float32))
        s.unscale_(opt)
        with self.assertRaises(RuntimeError):
            s.unscale_(opt)
        s.step(opt)
        with self.assertRaises(RuntimeError):
            s.step(opt)
        s.update()
        t = amp.GradScaler()
        t.load_state_dict(s.state_dict())
        self.assertEqual(t.get_scale(), 8.0)
        self.assertEqual(int(t._tracker[0]), 1)
        loss = torch.tensor(3.0)
        self.assertEqual(float(t.scale(loss)), 24.0)
        off = amp.GradScaler(enabled=False)
        self.assertIs(off.scale(loss), loss)

    @unittest.skipUnless(hasattr(torch, "_amp_update_scale_"), "torch._amp_update_scale_")
    def test_against_torch_kernels(self):
        try:
            torch._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32),
                                     torch.zeros(1), 2.0, 0.5, 3)
        except (RuntimeError, NotImplementedError):
            self.skipTest("no CPU _amp_update_scale_ in this PyTorch")
        g = torch.Generator().manual_seed(3)
        for trial in range(40):
            scale = torch.tensor([float(2 ** (trial % 20))])
            tracker = torch.tensor([trial % 4], dtype=torch.int32)
            found = torch.tensor([float(trial % 3 == 0)])
            a_s, a_t = scale.clone(), tracker.clone()
            torch._amp_update_scale_(a_s, a_t, found, 2.0, 0.5, 4)
            b_s, b_t = scale.clone(), tracker.clone()
            ot._foreach.run("AmpUpdateScale", scale, tracker, found, 2.0, 0.5, 4, b_s, b_t)
            self.assertTrue(torch.equal(a_s, b_s) and torch.equal(a_t, b_t), trial)
            grads = [torch.randn(n, generator=g) * 1e4 for n in (1, 17, 300)]
            if trial % 5 == 0:
                grads[trial % 3][0] = float("inf")
            ta, tb = [x.clone() for x in grads], [x.clone() for x in grads]
            fa, fb = torch.zeros(1), torch.zeros(1)
            inv = torch.tensor([1.0 / 3.0])
            torch._amp_foreach_non_finite_check_and_unscale_(ta, fa, inv)
            ot._foreach.run("ForeachNonFiniteCheckAndUnscale", tb, fb, inv)
            self.assertTrue(torch.equal(fa, fb), trial)
            for x, y in zip(ta, tb):
                self.assertTrue(torch.equal(x, y), trial)


class TestClip(unittest.TestCase):
    def test_matches_torch(self):
        for order in (2.0, 1.0, math.inf, 3.0):
            for max_norm in (0.5, 1e9):
                a, b = _params(torch.float32, seed=1), _params(torch.float32, seed=1)
                ta = amp.clip_grad_norm_(a, max_norm, order)
                tb = torch.nn.utils.clip_grad_norm_(b, max_norm, order)
                self.assertLessEqual(abs(float(ta) - float(tb)), 2e-6 * float(tb), order)
                for p, q in zip(a, b):
                    self.assertTrue(torch.allclose(p.grad, q.grad, rtol=4e-6, atol=0), order)

    def test_foreach_norm_dtypes(self):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            xs = [torch.randn(s).to(dt) for s in ((3, 4), (100,), (0,))]
            got = amp.foreach_norm(xs)
            for x, n in zip(xs, got):
                self.assertEqual(n.dtype, dt)
                want = x.double().norm().to(dt)
                self.assertEqual(float(n), float(want), dt)


if __name__ == "__main__":
    unittest.main()
