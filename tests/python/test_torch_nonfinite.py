#!/usr/bin/python3
"""Non-finite conventions: opgrad against PyTorch at -inf, -1e30, -0, +0, 1e30, +inf and NaN, every
difference a stated decision (docs/nonfinite.md). Plain unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_nonfinite.py [-v]
    ... test_torch_nonfinite.py --markdown      # prints the table of docs/nonfinite.md

For each operator, forward and backward (gradient 1) at each point: a value "agrees" when both are
NaN, or both are the same infinity or zero (sign included), or both are finite within 1e-5
relative (rounding is the other suites' business). Every disagreement must be listed in DECISIONS
with opgrad's and PyTorch's values, and every listed decision must still occur: a change on
either side (a kernel, or a new PyTorch) fails here until the table and the docs say it. The same
table holds for PyTorch 1.13 and 2.5.1. Softmax / log_softmax put the point in a row with two
finite entries (0.5, -1) and compare the whole row.
"""
import math
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opgrad.torch as ot  # noqa: E402

INF, NAN = math.inf, math.nan
POINTS = (-INF, -1e30, -0.0, 0.0, 1e30, INF, NAN)

OPS = [
    ("mish", ot.mish, F.mish),
    ("gelu (tanh)", ot.gelu, lambda t: F.gelu(t, approximate="tanh")),
    ("gelu_v2 (erf)", lambda t: ot.gelu_v2(t, "none"), F.gelu),
    ("silu", ot.silu, F.silu),
    ("sigmoid", ot.sigmoid, torch.sigmoid),
    ("tanh", ot.tanh, torch.tanh),
    ("softplus", ot.softplus, F.softplus),
    ("relu", ot.relu, F.relu),
    ("leaky_relu", ot.leaky_relu, F.leaky_relu),
    ("hardswish", ot.hardswish, F.hardswish),
    ("hardsigmoid", ot.hardsigmoid, F.hardsigmoid),
    ("elu", ot.elu, F.elu),
    ("softmax", lambda t: ot.softmax(t, 0), lambda t: torch.softmax(t, 0)),
    ("log_softmax", lambda t: ot.log_softmax(t, 0), lambda t: torch.log_softmax(t, 0)),
]
ROW_OPS = {"softmax", "log_softmax"}

LIMIT = ("the mathematical limit: PyTorch's formula meets inf * 0 or inf - inf and gives NaN, "
         "which would poison a whole step; the function has a limit there")
SIGN = ("an underflowed negative value keeps its sign (-0); PyTorch's formula rounds to +0 there "
        "(the two compare equal)")
NAN_IN = ("a NaN input gives a NaN gradient; PyTorch's comparison chain falls through to the "
          "gradient (1) for NaN")
RELU_NAN = ("aclnnThresholdBackward's formula, self > threshold ? grad : 0: NaN > 0 is false, so "
            "0; PyTorch's threshold_backward computes self <= threshold ? 0 : grad, so grad")

# (operator, point, "fwd" / "bwd", entry) -> (opgrad's value, PyTorch's value, reason)
DECISIONS = {
    ("mish", -INF, "fwd", 0): (-0.0, NAN, LIMIT),
    ("mish", -INF, "bwd", 0): (0.0, NAN, LIMIT),
    ("mish", -1e30, "bwd", 0): (-0.0, 0.0, SIGN),
    ("mish", INF, "bwd", 0): (1.0, NAN, LIMIT),
    ("gelu (tanh)", -INF, "fwd", 0): (-0.0, NAN, LIMIT),
    ("gelu (tanh)", -INF, "bwd", 0): (-0.0, NAN, LIMIT),
    ("gelu (tanh)", -1e30, "bwd", 0): (-0.0, NAN, LIMIT),
    ("gelu (tanh)", 1e30, "bwd", 0): (1.0, NAN, LIMIT),
    ("gelu (tanh)", INF, "bwd", 0): (1.0, NAN, LIMIT),
    ("gelu_v2 (erf)", -INF, "fwd", 0): (-0.0, NAN, LIMIT),
    ("gelu_v2 (erf)", -INF, "bwd", 0): (-0.0, NAN, LIMIT),
    ("gelu_v2 (erf)", -1e30, "bwd", 0): (-0.0, 0.0, SIGN),
    ("gelu_v2 (erf)", INF, "bwd", 0): (1.0, NAN, LIMIT),
    ("silu", -INF, "fwd", 0): (-0.0, NAN, LIMIT),
    ("silu", -INF, "bwd", 0): (-0.0, NAN, LIMIT),
    ("silu", INF, "bwd", 0): (1.0, NAN, LIMIT),
    ("relu", NAN, "bwd", 0): (0.0, 1.0, RELU_NAN),
    ("hardswish", -INF, "fwd", 0): (-0.0, NAN, LIMIT),
    ("hardswish", NAN, "bwd", 0): (NAN, 1.0, NAN_IN),
    ("elu", -0.0, "fwd", 0): (-0.0, 0.0, SIGN),
    ("elu", NAN, "bwd", 0): (NAN, 1.0, NAN_IN),
}


def agree(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b) or (a == 0 and b == 0):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    # finite: rounding (softmax's gradient at gradient 1 is exactly 0 in opgrad, 1e-8 in PyTorch)
    return abs(a - b) <= 1e-5 * max(abs(a), abs(b)) + 1e-6


def same_value(a, b):
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1, a) == math.copysign(1, b))


def differences():
    """{(op, point, fwd/bwd, entry): (opgrad, torch)} where the two disagree."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fo, fr in OPS:
            for p in POINTS:
                x = torch.tensor([p, 0.5, -1.0]) if name in ROW_OPS else torch.tensor([p])
                a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
                ya, yb = fo(a), fr(b)
                ya.backward(torch.ones_like(ya))
                yb.backward(torch.ones_like(yb))
                for what, u, v in (("fwd", ya, yb), ("bwd", a.grad, b.grad)):
                    for j in range(u.numel()):
                        g, t = u[j].item(), v[j].item()
                        if not agree(g, t):
                            out[(name, p, what, j)] = (g, t)
    return out


class NonFinite(unittest.TestCase):
    def test_every_difference_is_a_stated_decision(self):
        diffs = differences()
        for key, (g, t) in diffs.items():
            with self.subTest(str(key)):
                self.assertTrue(key in DECISIONS, "undocumented: opgrad %r, PyTorch %r" % (g, t))
                want_g, want_t, _ = DECISIONS[key]
                self.assertTrue(same_value(g, want_g), "opgrad gives %r, the table %r" % (g, want_g))
                self.assertTrue(same_value(t, want_t), "PyTorch gives %r, the table %r"
                                % (t, want_t))
        for key in DECISIONS:
            with self.subTest("still " + str(key)):
                self.assertTrue(key in diffs, "a stated difference no longer occurs")

    def test_agreement_elsewhere(self):
        # (a sanity check of the comparison: the points where both are finite agree)
        self.assertTrue(agree(0.5, 0.5 + 1e-9) and not agree(0.0, -0.0) and agree(NAN, NAN))
        self.assertFalse(agree(1.0, NAN) or agree(INF, 1e30) or agree(0.5, 0.6))


def markdown():
    rows = ["| operator | x | | opgrad | PyTorch | why |", "|---|---|---|---|---|---|"]
    for (op, p, what, j), (g, t, why) in DECISIONS.items():
        rows.append("| %s | %r | %s | %r | %r | %s |" % (op, p, "f(x)" if what == "fwd" else
                                                     "f'(x) (gradient 1)", g, t, why))
    return "\n".join(rows)


if __name__ == "__main__":
    if "--markdown" in sys.argv:
        print(markdown())
    else:
        unittest.main()
