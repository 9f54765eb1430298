"""The JAX side of the cross-framework consistency table (tests/python/consistency.py --jax).

    <jax venv>/bin/python tests/python/jax_side.py DIR

Runs in a venv with jax (CPU) and numpy, without torch or opgrad. DIR is written by
consistency.py: cases.json lists the cases (id, case name, dtype, layout, number of inputs) and
in_<id>.npz holds each case's operator inputs x0, x1, ... (the values handed to the operators,
in their logical shapes: layouts are materialized, JAX arrays are dense) and grad_output g, all
float32 arrays whose values are exactly representable in the case's dtype. For every case JAX has
(JAX_OPS below) this computes, in the case's dtype, y = f(*xs) and the gradients by jax.vjp with
cotangent g, under jax.jit (as a JAX user trains), and writes out_<id>.npz (y, g0, g1, ...:
float32, exact copies of the dtype's values). jax.json records jax's version and, per case, the
JAX function used and how ("jax.nn", "jnp", "composed" = JAX has no such operator, written from
jax.nn / jax.numpy as flax / optax do; absent = no JAX counterpart) or the error it raised.
float64 (x64) is never enabled: the truth is computed on the PyTorch side.
"""
import json
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

DTYPES = {"float32": jnp.float32, "float16": jnp.float16, "bfloat16": jnp.bfloat16}


def _halves(x):
    return jnp.split(x, 2, axis=-1)


def _classes(x):
    """optable._classes: class r % m for row r."""
    return jnp.arange(x.shape[0]) % x.shape[1]


def _probs(x):
    """optable._probs: targets 0, 0.5, 1 in turn (row-major over the logical shape)."""
    return ((jnp.arange(x.size) % 3).reshape(x.shape) / 2).astype(x.dtype)


def _softplus_bt(x, beta, threshold):
    # torch's softplus(x, beta, threshold): linear above beta x > threshold
    return jnp.where(beta * x > threshold, x, jax.nn.softplus(beta * x) / beta)


def _linear(act, bias=True):
    acts = {None: lambda z: z, "relu": jax.nn.relu,
            "gelu": lambda z: jax.nn.gelu(z, approximate=False),
            "gelu_tanh": lambda z: jax.nn.gelu(z, approximate=True)}
    f = acts[act]
    if bias:
        return lambda x, w, b: f(jnp.matmul(x, w.T) + b)
    return lambda x, w: f(jnp.matmul(x, w.T))


def _norm(axis, eps=1e-5):
    # the two-pass variance ("stable"), not standardize's default E[x^2] - E[x]^2
    return lambda x, w, b: jax.nn.standardize(x, axis, epsilon=eps, algorithm="stable") * w + b


def _group_norm(x, w, b, groups=4):
    n, m = x.shape
    xs = jax.nn.standardize(x.reshape(n, groups, m // groups), -1, epsilon=1e-5,
                            algorithm="stable")
    return xs.reshape(n, m) * w + b


def _rms_norm(x, w, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * w


def _cross_entropy(x, ls=0.0):
    logp = jax.nn.log_softmax(x, axis=-1)
    nll = -jnp.take_along_axis(logp, _classes(x)[:, None], axis=-1)[:, 0]
    if ls:  # torch's label smoothing: (1 - ls) nll + ls / C * sum_c(-log p_c)
        nll = (1 - ls) * nll - ls * jnp.mean(logp, axis=-1)
    return jnp.mean(nll)


def _smooth_l1(x, t, beta):
    d = jnp.abs(x - t)
    return jnp.mean(jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta))


def _bce(x):
    t = _probs(x)
    return -jnp.mean(t * jnp.log(x) + (1 - t) * jnp.log1p(-x))


def _bce_logits(x):  # optax.sigmoid_binary_cross_entropy
    t = _probs(x)
    return jnp.mean(-t * jax.nn.log_sigmoid(x) - (1 - t) * jax.nn.log_sigmoid(-x))


# case name (optable) -> (how, what, function of the operator inputs)
JAX_OPS = {
    "mish": ("jax.nn", "jax.nn.mish", jax.nn.mish if hasattr(jax.nn, "mish") else None),
    "gelu": ("jax.nn", "jax.nn.gelu(approximate=True)", lambda x: jax.nn.gelu(x, True)),
    "gelu_v2[none]": ("jax.nn", "jax.nn.gelu(approximate=False)",
                      lambda x: jax.nn.gelu(x, False)),
    "gelu_v2[tanh]": ("jax.nn", "jax.nn.gelu(approximate=True)", lambda x: jax.nn.gelu(x, True)),
    "silu": ("jax.nn", "jax.nn.silu", jax.nn.silu),
    "sigmoid": ("jax.nn", "jax.nn.sigmoid", jax.nn.sigmoid),
    "tanh": ("jnp", "jnp.tanh", jnp.tanh),
    "softplus": ("jax.nn", "jax.nn.softplus", jax.nn.softplus),
    "softplus[b=2,t=5]": ("composed", "where(2x > 5, x, jax.nn.softplus(2x) / 2)",
                          lambda x: _softplus_bt(x, 2.0, 5.0)),
    "relu": ("jax.nn", "jax.nn.relu", jax.nn.relu),
    "leaky_relu[0.2]": ("jax.nn", "jax.nn.leaky_relu(0.2)", lambda x: jax.nn.leaky_relu(x, 0.2)),
    "hardswish": ("jax.nn", "jax.nn.hard_swish", jax.nn.hard_swish),
    "hardsigmoid": ("jax.nn", "jax.nn.hard_sigmoid", jax.nn.hard_sigmoid),
    "elu[0.7]": ("jax.nn", "jax.nn.elu(alpha=0.7)", lambda x: jax.nn.elu(x, 0.7)),
    "elu": ("jax.nn", "jax.nn.elu", jax.nn.elu),
    "add": ("jnp", "a + b", jnp.add),
    "add[alpha=0.5]": ("jnp", "a + 0.5 b", lambda a, b: a + 0.5 * b),
    "mul": ("jnp", "a * b", jnp.multiply),
    "muls[2.5]": ("jnp", "x * 2.5", lambda x: x * 2.5),
    "reduce_sum[-1]": ("jnp", "jnp.sum(x, -1)", lambda x: jnp.sum(x, -1)),
    "reduce_sum[all]": ("jnp", "jnp.sum(x)", jnp.sum),
    "softmax": ("jax.nn", "jax.nn.softmax(-1)", lambda x: jax.nn.softmax(x, -1)),
    "softmax[0]": ("jax.nn", "jax.nn.softmax(0)", lambda x: jax.nn.softmax(x, 0)),
    "log_softmax": ("jax.nn", "jax.nn.log_softmax(-1)", lambda x: jax.nn.log_softmax(x, -1)),
    "log_softmax[0]": ("jax.nn", "jax.nn.log_softmax(0)", lambda x: jax.nn.log_softmax(x, 0)),
    "matmul": ("jnp", "jnp.matmul", jnp.matmul),
    "matmul[vec]": ("jnp", "jnp.matmul", jnp.matmul),
    "matmul[batch]": ("jnp", "jnp.matmul", jnp.matmul),
    "mm": ("jnp", "jnp.matmul", jnp.matmul),
    "bmm": ("jnp", "jnp.matmul", jnp.matmul),
    "addmm[b=0.5,a=2]": ("jnp", "0.5 i + 2 (a @ b)", lambda i, a, b: 0.5 * i + 2.0 * (a @ b)),
    "baddbmm[b=0.5,a=1.5]": ("jnp", "0.5 i + 1.5 (a @ b)",
                             lambda i, a, b: 0.5 * i + 1.5 * (a @ b)),
    "layer_norm": ("jax.nn", "jax.nn.standardize(-1) * w + b", _norm(-1)),
    "batch_norm[train]": ("jax.nn", "jax.nn.standardize(0) * w + b", _norm(0)),
    "group_norm[4]": ("jax.nn", "jax.nn.standardize over groups * w + b", _group_norm),
    "rms_norm": ("composed", "x * rsqrt(mean(x^2) + eps) * w", _rms_norm),
    "swiglu": ("composed", "jax.nn.silu(a) * b", lambda x: jax.nn.silu(_halves(x)[0])
               * _halves(x)[1]),
    "geglu": ("composed", "a * jax.nn.gelu(b, approximate=False)",
              lambda x: _halves(x)[0] * jax.nn.gelu(_halves(x)[1], False)),
    "mse_loss": ("composed", "mean((x - t)^2)", lambda x, t: jnp.mean(jnp.square(x - t))),
    "mse_loss[sum]": ("composed", "sum((x - t)^2)", lambda x, t: jnp.sum(jnp.square(x - t))),
    "l1_loss": ("composed", "mean|x - t|", lambda x, t: jnp.mean(jnp.abs(x - t))),
    "smooth_l1_loss[0.5]": ("composed", "mean(huber(x - t) / 0.5)",
                            lambda x, t: _smooth_l1(x, t, 0.5)),
    "bce": ("composed", "-mean(t log x + (1 - t) log1p(-x))", _bce),
    "bce_with_logits": ("composed", "optax.sigmoid_binary_cross_entropy", _bce_logits),
    "cross_entropy": ("composed", "-mean(jax.nn.log_softmax(x)[class])", _cross_entropy),
    "cross_entropy[ls=0.1]": ("composed", "optax-style label smoothing 0.1",
                              lambda x: _cross_entropy(x, 0.1)),
    "nll_loss": ("composed", "-mean(x[class])",
                 lambda x: -jnp.mean(jnp.take_along_axis(x, _classes(x)[:, None], -1))),
}
for _act in (None, "relu", "gelu", "gelu_tanh"):
    _name = "linear" + ("[%s]" % _act if _act else "")
    JAX_OPS[_name] = ("jnp", "act(x @ w.T + b)", _linear(_act))
    if _act:
        JAX_OPS[_name + "[nobias]"] = ("jnp", "act(x @ w.T)", _linear(_act, bias=False))


_JITTED = {}


def fwd_bwd(name, f):
    """jit(x, g -> (f(x), vjp(g))), compiled as a training step is; one per case name, so that
    the layouts of a case (the same shapes and dtype) reuse its compilation."""
    if name not in _JITTED:
        def run(xs, g):
            y, pull = jax.vjp(f, *xs)
            return y, pull(g)
        _JITTED[name] = jax.jit(run)
    return _JITTED[name]


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    report = {"jax": jax.__version__, "backend": jax.default_backend(), "cases": {}}
    for c in cases:
        how, what, f = JAX_OPS.get(c["case"], (None, None, None))
        entry = report["cases"][str(c["id"])] = {"how": how, "what": what}
        if f is None:
            entry["how"] = None  # no JAX counterpart (e.g. jax.nn.mish in an older jax)
            continue
        dtype = DTYPES[c["dtype"]]
        with np.load(os.path.join(d, "in_%d.npz" % c["id"])) as z:
            xs = [jnp.asarray(z["x%d" % i], dtype) for i in range(c["nin"])]
            g = jnp.asarray(z["g"], dtype)
        try:
            y, grads = fwd_bwd(c["case"], f)(xs, g)
        except Exception as e:  # noqa: BLE001 -- reported per case, consistency.py fails it
            entry["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
            continue
        out = {"y": np.asarray(y, np.float32)}
        for i, gx in enumerate(grads):
            out["g%d" % i] = np.asarray(gx, np.float32)
        np.savez(os.path.join(d, "out_%d.npz" % c["id"]), **out)
    with open(os.path.join(d, "jax.json"), "w") as f:
        json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
