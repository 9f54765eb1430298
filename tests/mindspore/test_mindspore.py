#!/usr/bin/env python3
"""opgrad's aot operators inside MindSpore: ops.Custom(func_type="aot") with an aot bprop, on CPU.

The one command (makes the venv, installs MindSpore, builds the libraries, runs this file):
    tests/mindspore/run.sh
Directly, with a Python that has MindSpore installed:
    python tests/mindspore/test_mindspore.py \
        --fused-lib /abs/build/examples/custom/libfused_add_scale.so \
        --opgrad-lib /abs/build/libopgrad.so

What it checks (GRAPH_MODE on CPU unless said otherwise), every result against float64:
  A. examples/custom/fused_add_scale.c, y = (x + bias) * scale with bias [C] broadcast over the
     rows and scale [1] broadcast over everything:
     1. the forward for float32, float16, bfloat16 and float64 against NumPy float64;
     2. ms.grad(f, grad_position=(0, 1, 2)) of a scalar loss sum(w * y) through the aot bprop
        (FusedAddScaleGrad, a second Custom built outside the bprop) against the float64
        gradient AND against ms.grad of the same expression in native MindSpore ops, for float32
        and float16, so dbias and dscale really are reductions over the broadcast dims;
     3. each grad_position alone (0, 1, 2).
  B. opgrad's own aot entry points exported by libopgrad.so (opgrad_Mish, opgrad_MishBackward):
     1. the forward (float32, float16, bfloat16) and the gradient (float32) against float64 and
        against native ops.mish;
     2. a tiny network Dense(8,16) -> Mish -> Dense(16,3), MSE loss, plain SGD, trained for
        --steps steps twice from the same initial weights: Mish through aot (Custom + bprop) vs
        native ops.mish. The two loss curves must agree within --loss-rtol per step, and both
        must agree with the same training done in NumPy float64. A deliberately wrong backward
        (dx * 1.01) must NOT agree: that shows the tolerance can see a 1% gradient error.
  D. the matmul family's entry points (src/aot/aot_matmul.c):
     1. opgrad_Matmul / opgrad_MatmulBackward with torch.matmul shapes (2-D, batch broadcast
        either way, 1-D operands): the forward (float32, float16, bfloat16) and ms.grad(...,
        grad_position=(0, 1)) (float32, bfloat16) against float64, and in float32 against
        native ops.matmul;
     2. opgrad_Linear, LinearRelu, LinearGelu (tanh), LinearGeluErf: y = act(x @ w^T + b) with
        x [6,8], [2,3,8] and [8], w [out, in]: the forward in three dtypes and ms.grad(...,
        grad_position=(0, 1, 2)) in float32 against float64 and against native
        ops.matmul + ops.relu / ops.gelu;
     3. a network LinearGelu(8,16) -> Linear(16,3) on Parameters, trained for --steps SGD steps:
        its loss curve against nn.Dense(activation="gelu") -> nn.Dense and NumPy float64, and a
        deliberately wrong backward (every gradient * 1.01) must NOT agree.
  E. the norms and GLUs (src/aot/aot_norm.c), over the last dim:
     1. opgrad_LayerNorm (eps 1e-5) and opgrad_RmsNorm (eps 1e-6) with x [6,8], [2,3,16], [10]:
        the forward in three dtypes and ms.grad of sum(w * y) over every input (x, gamma[, beta])
        in float32 and bfloat16 against float64, and in float32 against the native composition
        (mean, rsqrt, ...) differentiated by MindSpore;
     2. opgrad_SwiGlu and opgrad_GeGlu (erf form) with x [6,8], [2,3,10], [4]: the same, against
        a * sigmoid(a) * b and a * ops.gelu(b, approximate="none") on ops.chunk(x, 2, -1).
  H. float64 through the built-ins: opgrad_Mish, Matmul, LinearGeluErf, LayerNorm and SwiGlu in
     float64, the forward against NumPy float64 (within 2^-40 of its magnitude: a float32 path
     anywhere would be 2^16 times that), and MindSpore's own gradient check: ms.grad of
     sum(w * y) against central differences of the float64 forward (h = 1e-6) along two random
     directions per input; a backward scaled by 1.001 must fail it.
  I. second order through opgrad.mindspore.builtin (its backward Customs have bprops of their
     own): the Hessian-vector product (ms.grad of ms.grad) of every aot entry point (27 operators:
     the activations, Softmax, LogSoftmax, Add, Mul, FusedAddScale, Matmul, the linear family,
     SwiGlu, GeGlu, LayerNorm, RmsNorm, Conv2d, Conv2dNoBias) in float64 against central
     differences of ms.grad (h = 1e-5), attributes, broadcast, groups and 1-D operands included; third order for Mish, Softplus and Softmax; a gradient penalty against f' + 2 f' f''
     and PyTorch's numbers; an f'' 0.1 % off must fail; unsupported names and attributes refused.
  C. PYNATIVE_MODE: the gradients of A.2, B.1, D.1 (float32), D.2 (Linear, LinearGelu), E
     (LayerNorm, SwiGlu; float32), H's gradient check of LinearGeluErf and I's H.v of Mish,
     Softmax, Matmul, LayerNorm and LinearGelu once more, eagerly.

Tolerances are bounds, not fudge factors (u is the dtype's unit roundoff: 2^-24 float32, 2^-11
float16, 2^-8 bfloat16, 2^-53 float64; the reference is computed in float64 from the inputs as
rounded to the dtype):
  * the FusedAddScale kernels compute in double and round once: |err| <= u |ref| plus the double
    rounding of the sums (n 2^-52 sum|terms|) plus the dtype's smallest subnormal;
  * native MindSpore computes in the dtype: each product and sum rounds, and a sum of n terms
    in any order is within (n - 1) u sum|terms| (Higham's gamma bound), so a reduced gradient
    gets (n + 2) u sum|terms|;
  * custom vs native: the sum of the two bounds.
  * Mish: opgrad's float32 kernel is within a few ulps, its only error being exp's (measured
    over 60001 points of [-30, 30]: forward <= 4.0 u |y|, backward <= 3.5 u m |dy| with
    m = |t| + |x sigmoid(x) (1 - t^2)|, the magnitude of the two terms of mish', which cancel near
    x = -1.19 so the bound cannot be relative to mish' itself). Bounds: 8 u |y| forward (float16 /
    bfloat16: plus one rounding of the float32 result, u16 |y|), 8 u m |dy| backward.
    Native ops.mish (MindSpore 2.10 CPU) is far less accurate away from 0 (measured: backward up
    to 1.5e4 u m on [2, 10] and ~6% relative below -10; forward returns 0 below about -17): its
    gradient is compared with opgrad's on |x| <= 2 only, where it is within 40 u m (bound 64 u m),
    and its worst error elsewhere is printed for information.
  * matmul family: opgrad's GEMM accumulates in fp32 within 2^-22 n sum|terms| (n products
    summed, the broadcast batch included; docs/ops/matmul.md), then rounds once to the dtype;
    native matmul gets (n + 2) u sum|terms|. The activations add their Lipschitz constant times
    z's error (relu 1, gelu 1.2; gelu'' within 1) and 8 fp32 ulps for the kernel (measured
    within 4, docs/ops/activation.md); where relu's mask is ambiguous (|z| within z's error) the
    term's magnitude is allowed either way.
  * norms and GLUs (part E): the bounds of tests/api/test_aot_norm.c: x_hat within 2^-21
    (|x_hat| + mean|x| rstd), products 2^-22, fp32 sums of n terms 2^-22 n sum|terms|; silu,
    gelu and their derivatives within 8 fp32 ulps of their magnitude forms, GeGlu's dA with one
    more rounding of the gelu it saves in x's dtype. The native compositions: (C + 4) u for
    x_hat, (n + 2) u for sums, doubled (first-order bounds); 16 ulps for MindSpore's sigmoid and
    gelu (not measured).
  * loss curves: relative 1e-5 per step (--loss-rtol). The two networks differ only in Mish's
    rounding (a few ulps per element), which moved the curves by at most 1.6e-7 relative in 10
    steps; a backward off by 1% moves them by ~1e-3, and the run checks that it does leave 1e-5.
Every check prints its worst error as a multiple of its bound (err/tol).

Exit status: 0 all passed, 1 a check failed, 2 bad arguments or libraries, 4 MindSpore cannot
be imported.
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

try:
    import mindspore as ms
    import mindspore.nn as nn
    import mindspore.ops as ops
    from mindspore import Tensor
    from mindspore.ops import CustomRegOp, DataType
except Exception as e:  # noqa: BLE001 - any import failure means "MindSpore unavailable"
    print(f"MindSpore unavailable: import mindspore failed: {type(e).__name__}: {e}", flush=True)
    sys.exit(4)

U = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float64": 2.0 ** -53}
DENORM = {"float32": 2.0 ** -149, "float16": 2.0 ** -24, "bfloat16": 2.0 ** -133,
          "float64": 5e-324}
MSDT = {"float32": ms.float32, "float16": ms.float16, "bfloat16": ms.bfloat16,
        "float64": ms.float64}

RESULTS = []  # (label, ok, detail)


def record(label, ok, detail=""):
    RESULTS.append((label, ok, detail))
    print(f"  {'PASS' if ok else 'FAIL'}  {label}  {detail}", flush=True)


def section(title):
    print(f"\n== {title}", flush=True)


def to_ms(a, dtype):
    """(Tensor of dtype, its values as float64) from a float64 array."""
    if dtype == "bfloat16":  # NumPy has no bfloat16: round through a float32 Tensor
        t = Tensor(np.asarray(a, np.float32)).astype(ms.bfloat16)
    else:
        t = Tensor(np.asarray(a, dtype=np.dtype(dtype)))
    return t, as64(t)


def as64(t):
    if t.dtype in (ms.bfloat16, ms.float16):
        return t.astype(ms.float32).asnumpy().astype(np.float64)
    return t.asnumpy().astype(np.float64)


def check_close(label, got, ref, tol):
    """Elementwise |got - ref| <= tol (tol broadcast to ref); prints the worst err/tol."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        record(label, False, f"shape {got.shape}, expected {ref.shape}")
        return False
    tol = np.broadcast_to(np.asarray(tol, np.float64), ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol)  # NaN counts as bad
    ratio = np.where(tol > 0, err / np.where(tol > 0, tol, 1), np.where(err > 0, np.inf, 0))
    if ref.size == 0:
        record(label, True, "(empty)")
        return True
    i = np.unravel_index(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio)), ref.shape)
    detail = (f"max|err|={np.nanmax(err):.3g} max err/tol={np.nanmax(ratio):.3g}"
              f" (worst at {tuple(int(k) for k in i)}: got {got[i]:.9g}, want {ref[i]:.9g},"
              f" tol {tol[i]:.3g})")
    ok = not bad.any()
    record(label, ok, detail if ok else detail + f"; {int(bad.sum())} of {ref.size} outside")
    return ok


def run_check(label, fn):
    """Runs one check function; an exception is a failure with its message, not an abort."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        # MindSpore's errors carry a long C++ stack: keep the first meaningful lines.
        msg = " | ".join(line for line in msg[:6] if line.strip())
        record(label, False, f"raised {type(e).__name__}: {msg}")


def missing_symbols(path, names):
    lib = ctypes.CDLL(path)
    return [n for n in names if not hasattr(lib, n)]


# ------------------------------------------------------------------------------------------------
# A. FusedAddScale from examples/custom

def fused_ops(lib):
    """The forward Custom with its bprop, exactly as a user writes it."""
    # The backward Custom is constructed OUTSIDE the bprop (MindSpore requires definition and use
    # to be separate). Params: x, bias, scale, y, dy -> dx, dbias, dscale (one per input).
    bwd = ops.Custom(func=lib + ":FusedAddScaleGrad",
                     out_shape=lambda x, b, s, y, dy: (x, b, s),
                     out_dtype=lambda x, b, s, y, dy: (x, b, s),
                     func_type="aot")

    def bprop(x, b, s, out, dout):
        return bwd(x, b, s, out, dout)  # already a tuple: one gradient per forward input

    fwd = ops.Custom(func=lib + ":FusedAddScale",
                     out_shape=lambda x, b, s: x, out_dtype=lambda x, b, s: x,
                     func_type="aot", bprop=bprop)
    return fwd


class Apply(nn.Cell):
    """Runs an op inside a Cell, so that GRAPH_MODE really compiles a graph."""

    def __init__(self, op):
        super().__init__()
        self.op = op

    def construct(self, *args):
        return self.op(*args)


FAS_SHAPES = [((8, 16), 16), ((5, 37), 37), ((2, 3, 7), 7), ((1, 1), 1)]


def fas_inputs(rng, xshape, c, dtype):
    x, x64 = to_ms(rng.uniform(-2, 2, xshape), dtype)
    b, b64 = to_ms(rng.uniform(-2, 2, (c,)), dtype)
    s, s64 = to_ms(rng.uniform(0.5, 2, (1,)), dtype)
    w, w64 = to_ms(rng.uniform(-2, 2, xshape), dtype)
    return (x, b, s, w), (x64, b64, s64, w64)


def check_fas_forward(fwd, dtype, rng):
    net = Apply(fwd)
    for xshape, c in FAS_SHAPES:
        (x, b, s, _), (x64, b64, s64, _) = fas_inputs(rng, xshape, c, dtype)
        y = net(x, b, s)
        if y.dtype != MSDT[dtype]:
            record(f"forward {dtype} {xshape}", False, f"output dtype {y.dtype}")
            continue
        ref = (x64 + b64) * s64
        u = U[dtype]
        tol = u * np.abs(ref) + 2.0 ** -52 * (np.abs(x64) + np.abs(b64)) * np.abs(s64) \
            + DENORM[dtype]
        check_close(f"forward {dtype} x{xshape} bias[{c}] scale[1] vs float64", as64(y), ref, tol)


def fas_grad_refs(x64, b64, s64, w64, dtype):
    """float64 gradients of L = sum(w * (x + b) * s) and the custom / native error bounds."""
    rows = x64.size // x64.shape[-1]
    n = x64.size
    u, dn = U[dtype], DENORM[dtype]
    xb = x64 + b64
    red = tuple(range(x64.ndim - 1))
    ref = (w64 * s64, (w64 * s64).sum(axis=red), np.array([(w64 * xb).sum()]))
    abs_db = (np.abs(w64) * np.abs(s64)).sum(axis=red)
    abs_ds = np.array([(np.abs(w64) * np.abs(xb)).sum()])
    # custom: double accumulation, one rounding at the end
    tol_c = (u * np.abs(ref[0]) + dn,
             u * np.abs(ref[1]) + rows * 2.0 ** -52 * abs_db + dn,
             u * np.abs(ref[2]) + (n + 1) * 2.0 ** -52 * abs_ds + dn)
    # native, in the dtype: the product rounds; the sum of m terms is within (m - 1) u sum|terms|
    tol_n = (u * np.abs(ref[0]) + dn,
             1.01 * (rows + 1) * u * abs_db + dn,
             1.01 * (n + 2) * u * abs_ds + dn)
    return ref, tol_c, tol_n


def check_fas_grad(fwd, dtype, rng, mode_label=""):
    def loss_custom(x, b, s, w):  # a def, not a lambda: GRAPH_MODE cannot parse a lambda here
        return (fwd(x, b, s) * w).sum()

    def loss_native(x, b, s, w):
        return (((x + b) * s) * w).sum()

    g_custom = ms.grad(loss_custom, grad_position=(0, 1, 2))
    g_native = ms.grad(loss_native, grad_position=(0, 1, 2))
    names = ("dx", "dbias", "dscale")
    for xshape, c in FAS_SHAPES:
        (x, b, s, w), (x64, b64, s64, w64) = fas_inputs(rng, xshape, c, dtype)
        ref, tol_c, tol_n = fas_grad_refs(x64, b64, s64, w64, dtype)
        gc = g_custom(x, b, s, w)
        gn = g_native(x, b, s, w)
        if len(gc) != 3:
            record(f"{mode_label}grad {dtype} {xshape}", False, f"{len(gc)} gradients, expected 3")
            continue
        for k in range(3):
            tag = f"{mode_label}{names[k]} {dtype} x{xshape} bias[{c}] scale[1]"
            if gc[k].dtype != MSDT[dtype]:
                record(f"{tag} dtype", False, f"custom gradient dtype {gc[k].dtype}")
            c64, n64 = as64(gc[k]), as64(gn[k])
            check_close(f"{tag}: aot bprop vs float64", c64, ref[k], tol_c[k])
            check_close(f"{tag}: native vs float64", n64, ref[k], tol_n[k])
            check_close(f"{tag}: aot bprop vs native", c64, n64, tol_c[k] + tol_n[k])


def check_fas_single_positions(fwd, rng):
    def loss_custom(x, b, s, w):
        return (fwd(x, b, s) * w).sum()

    def loss_native(x, b, s, w):
        return (((x + b) * s) * w).sum()

    (x, b, s, w), (x64, b64, s64, w64) = fas_inputs(rng, (5, 37), 37, "float32")
    ref, tol_c, tol_n = fas_grad_refs(x64, b64, s64, w64, "float32")
    for pos in range(3):
        gc = ms.grad(loss_custom, grad_position=pos)(x, b, s, w)
        gn = ms.grad(loss_native, grad_position=pos)(x, b, s, w)
        check_close(f"grad_position={pos} alone: aot bprop vs float64", as64(gc), ref[pos],
                    tol_c[pos])
        check_close(f"grad_position={pos} alone: aot bprop vs native", as64(gc), as64(gn),
                    tol_c[pos] + tol_n[pos])


# ------------------------------------------------------------------------------------------------
# B. opgrad's built-in Mish through aot

def mish_ops(opgrad_lib, dx_factor=None):
    """opgrad_Mish with its bprop opgrad_MishBackward (params x, y, dy -> dx)."""
    mish_bwd = ops.Custom(func=opgrad_lib + ":opgrad_MishBackward",
                          out_shape=lambda x, y, dy: x, out_dtype=lambda x, y, dy: x,
                          func_type="aot")
    if dx_factor is None:
        def mish_bprop(x, out, dout):
            return (mish_bwd(x, out, dout),)  # a tuple even for one input
    else:  # the deliberately wrong backward of the sensitivity check
        def mish_bprop(x, out, dout):
            return (mish_bwd(x, out, dout) * dx_factor,)
    return ops.Custom(func=opgrad_lib + ":opgrad_Mish",
                      out_shape=lambda x: x, out_dtype=lambda x: x,
                      func_type="aot", bprop=mish_bprop)


def mish64(x):
    t = np.tanh(np.logaddexp(0.0, x))
    return x * t, t


def mish_grad64(x):
    """mish'(x) = t + x sigmoid(x) (1 - t^2), and the magnitude of its two terms."""
    _, t = mish64(x)
    sig = np.exp(-np.logaddexp(0.0, -x))  # not 0.5 (1 + tanh(x / 2)): that cancels for x << 0
    corr = x * sig * (1.0 - t * t)
    return t + corr, np.abs(t) + np.abs(corr)


def mish_points(rng, shape):
    x = rng.uniform(-6, 6, shape)
    special = [-30.0, -20.0, -1.1924, -1.0, -1e-3, 0.0, 1e-3, 1.0, 5.0, 20.0, 30.0]
    x.flat[:len(special)] = special
    return x


def check_mish_forward(mish, rng):
    net = Apply(mish)
    for dtype in ("float32", "float16", "bfloat16"):
        x, x64 = to_ms(mish_points(rng, (64, 33)), dtype)
        y = net(x)
        ref, _ = mish64(x64)
        tol = 8 * U["float32"] * np.abs(ref) + DENORM[dtype]
        if dtype != "float32":
            tol = tol + U[dtype] * np.abs(ref)
        check_close(f"opgrad_Mish forward {dtype} [64,33] vs float64", as64(y), ref, tol)


def check_mish_grad(mish, rng, mode_label=""):
    def loss_aot(x, w):
        return (mish(x) * w).sum()

    def loss_native(x, w):
        return (ops.mish(x) * w).sum()

    x, x64 = to_ms(mish_points(rng, (64, 33)), "float32")
    w, w64 = to_ms(rng.uniform(-2, 2, (64, 33)), "float32")
    d, mag = mish_grad64(x64)
    ref = w64 * d
    u = U["float32"]
    tol = 8 * u * mag * np.abs(w64) + DENORM["float32"]
    ga = as64(ms.grad(loss_aot)(x, w))
    gn = as64(ms.grad(loss_native)(x, w))
    check_close(f"{mode_label}opgrad_Mish dx float32 [64,33]: aot bprop vs float64", ga, ref, tol)
    near = np.abs(x64) <= 2
    tol_n = 64 * u * mag * np.abs(w64) + DENORM["float32"]
    check_close(f"{mode_label}opgrad_Mish dx float32, |x| <= 2: aot bprop vs native ops.mish",
                ga[near], gn[near], tol[near] + tol_n[near])
    scale = u * mag * np.abs(w64) + DENORM["float32"]
    for name, g in (("aot", ga), ("native", gn)):
        r = np.abs(g - ref) / scale
        print(f"  info  {mode_label}{name:>6} dx error in units of u*m*|dy|: "
              f"max {r[near].max():.3g} "
              f"on |x|<=2, {r[~near].max():.3g} on |x|>2 (at x={x64[~near][r[~near].argmax()]:g})")


class MLP(nn.Cell):
    def __init__(self, act, params):
        super().__init__()
        w1, b1, w2, b2 = (Tensor(p.astype(np.float32)) for p in params)
        self.fc1 = nn.Dense(8, 16, weight_init=w1, bias_init=b1)
        self.act = act
        self.fc2 = nn.Dense(16, 3, weight_init=w2, bias_init=b2)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


class NativeMish(nn.Cell):
    def construct(self, x):
        return ops.mish(x)


def train_ms(act, params, X, Y, steps, lr):
    net = MLP(act, params)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.SGD(net.trainable_params(), learning_rate=lr))
    step.set_train()
    xs, ys = Tensor(X.astype(np.float32)), Tensor(Y.astype(np.float32))
    return [float(step(xs, ys).asnumpy()) for _ in range(steps)]  # loss before each update


def train_np64(params, X, Y, steps, lr):
    """The same training in float64 NumPy (nn.Dense: x W^T + b; MSELoss: the mean)."""
    w1, b1, w2, b2 = (p.astype(np.float64).copy() for p in params)
    losses = []
    for _ in range(steps):
        h = X @ w1.T + b1
        a, _ = mish64(h)
        o = a @ w2.T + b2
        r = o - Y
        losses.append(float((r * r).mean()))
        do = 2.0 * r / r.size
        dw2, db2 = do.T @ a, do.sum(0)
        dh = (do @ w2) * mish_grad64(h)[0]
        dw1, db1 = dh.T @ X, dh.sum(0)
        w1 -= lr * dw1
        b1 -= lr * db1
        w2 -= lr * dw2
        b2 -= lr * db2
    return losses


def check_training(opgrad_lib, steps, rtol):
    rng = np.random.default_rng(2024)
    # nn.Dense's default init is uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)): drawn once, here, and
    # given to both networks (and to the float64 reference), so the starts are identical.
    params = (rng.uniform(-8 ** -0.5, 8 ** -0.5, (16, 8)), rng.uniform(-8 ** -0.5, 8 ** -0.5, 16),
              rng.uniform(-0.25, 0.25, (3, 16)), rng.uniform(-0.25, 0.25, 3))
    params = tuple(p.astype(np.float32) for p in params)  # the float32 values both nets start at
    X = rng.normal(size=(64, 8))
    Y = np.stack([np.sin(X[:, 0] + X[:, 1]), X[:, 2] * X[:, 3], np.tanh(X[:, 4:]).sum(1)], 1)
    X32, Y32 = X.astype(np.float32).astype(np.float64), Y.astype(np.float32).astype(np.float64)
    lr = 0.1

    t0 = time.time()
    aot = train_ms(Apply(mish_ops(opgrad_lib)), params, X32, Y32, steps, lr)
    native = train_ms(NativeMish(), params, X32, Y32, steps, lr)
    wrong = train_ms(Apply(mish_ops(opgrad_lib, dx_factor=1.01)), params, X32, Y32, steps, lr)
    ref = train_np64(params, X32, Y32, steps, lr)
    print(f"  (4 trainings of {steps} steps: {time.time() - t0:.1f} s)")
    print(f"  {'step':>4}  {'aot (opgrad_Mish)':>18}  {'native ops.mish':>18}"
          f"  {'float64 numpy':>18}"
          f"  {'|aot-native|/native':>20}  {'wrong bwd (dx*1.01)':>20}")
    for i in range(steps):
        print(f"  {i:>4}  {aot[i]:>18.9g}  {native[i]:>18.9g}  {ref[i]:>18.9g}"
              f"  {abs(aot[i] - native[i]) / abs(native[i]):>20.3g}  {wrong[i]:>20.9g}")
    a, n, r, bad = (np.array(v) for v in (aot, native, ref, wrong))
    check_close(f"loss curve, {steps} SGD steps: aot vs native (rel {rtol:g} per step)", a, n,
                rtol * np.abs(n))
    check_close(f"loss curve: aot vs float64 NumPy (rel {rtol:g})", a, r, rtol * np.abs(r))
    check_close(f"loss curve: native vs float64 NumPy (rel {rtol:g})", n, r, rtol * np.abs(r))
    dev = np.max(np.abs(bad - n) / np.abs(n))
    record("sensitivity: a backward off by 1% (dx * 1.01) leaves the tolerance", dev > rtol,
           f"max rel deviation {dev:.3g} vs tolerance {rtol:g}")
    if not np.all(np.diff(a) < 0):
        record("the aot network's loss decreases every step", False, str(aot))
    else:
        record("the aot network's loss decreases every step", True,
               f"{aot[0]:.6g} -> {aot[-1]:.6g}")


# ------------------------------------------------------------------------------------------------
# D. the matmul family: opgrad_Matmul and opgrad_Linear[Relu|Gelu|GeluErf] (src/aot/aot_matmul.c)

MATMUL_SYMBOLS = ["opgrad_Matmul", "opgrad_MatmulBackward"] + [
    f"opgrad_{n}{b}" for n in ("Linear", "LinearRelu", "LinearGelu", "LinearGeluErf")
    for b in ("", "Backward")]


def matmul_shape(a, b):
    """torch.matmul's output shape: a 1-D a is a row, a 1-D b a column (that dim dropped); the
    batch dims (all but the last two) broadcast."""
    a, b = list(a), list(b)
    batch = list(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])))
    return batch + a[-2:-1] + (b[-1:] if len(b) >= 2 else [])


def matmul_ops(lib):
    """opgrad_Matmul with its bprop opgrad_MatmulBackward (a, b, y, dy -> da, db)."""
    bwd = ops.Custom(func=lib + ":opgrad_MatmulBackward",
                     out_shape=lambda a, b, y, dy: (a, b), out_dtype=lambda a, b, y, dy: (a, b),
                     func_type="aot")

    def bprop(a, b, out, dout):
        return bwd(a, b, out, dout)  # (da, db), each summed to its input's shape

    return ops.Custom(func=lib + ":opgrad_Matmul", out_shape=matmul_shape,
                      out_dtype=lambda a, b: a, func_type="aot", bprop=bprop)


def linear_ops(lib, name="Linear", grad_factor=None):
    """opgrad_<name>: y = act(x @ w^T + b), w [out, in] (nn.Dense's layout), with its bprop
    opgrad_<name>Backward (x, w, b, y, dy -> dx, dw, db). grad_factor: the deliberately wrong
    backward of the sensitivity check (every gradient scaled)."""
    bwd = ops.Custom(func=f"{lib}:opgrad_{name}Backward",
                     out_shape=lambda x, w, b, y, dy: (x, w, b),
                     out_dtype=lambda x, w, b, y, dy: (x, w, b), func_type="aot")

    if grad_factor is None:
        def bprop(x, w, b, out, dout):
            return bwd(x, w, b, out, dout)  # (dx, dw, db)
    else:
        def bprop(x, w, b, out, dout):
            dx, dw, db = bwd(x, w, b, out, dout)
            return dx * grad_factor, dw * grad_factor, db * grad_factor

    return ops.Custom(func=f"{lib}:opgrad_{name}",
                      out_shape=lambda x, w, b: list(x[:-1]) + [w[0]],
                      out_dtype=lambda x, w, b: x, func_type="aot", bprop=bprop)


def sum_to(v, shape):
    """v summed over the dims a tensor of `shape` was broadcast along."""
    lead = v.ndim - len(shape)
    v = v.sum(axis=tuple(range(lead))) if lead else v
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and v.shape[i] != 1)
    return v.sum(axis=dims, keepdims=True) if dims else v


def matmul_grads64(a, b, dy):
    """float64 da, db of torch.matmul with, per element, sum|terms| and the count of terms."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    full = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    dy2 = dy.reshape(full + (a2.shape[-2], b2.shape[-1]))
    bt, at = np.swapaxes(b2, -1, -2), np.swapaxes(a2, -1, -2)
    out = []
    for x, y, shape, n in ((dy2, bt, a2.shape, b2.shape[-1]), (at, dy2, b2.shape, a2.shape[-2])):
        v, m = x @ y, np.abs(x) @ np.abs(y)
        out.append((sum_to(v, shape), sum_to(m, shape), sum_to(np.full(v.shape, float(n)), shape)))
    return [tuple(t.reshape(orig.shape) for t in g) for g, orig in zip(out, (a, b))]


def gemm_tol(ref, mag, n, dtype):
    """opgrad's GEMM bound (docs/ops/matmul.md): fp32 accumulation within 2^-22 n sum|terms|,
    then one rounding to the dtype."""
    e = 2.0 ** -22 * n * mag
    return e + U[dtype] * (np.abs(ref) + e) + DENORM[dtype]


def native_tol(mag, n, dtype):
    """MindSpore in the dtype: a product and a sum of n terms, (n + 2) u sum|terms|."""
    return 1.01 * (n + 2) * U[dtype] * mag + DENORM[dtype]


MATMUL_SHAPES = [((5, 7), (7, 6)), ((2, 3, 5, 7), (7, 6)), ((5, 7), (2, 7, 6)),
                 ((2, 1, 5, 7), (3, 7, 6)), ((7,), (3, 7, 6)), ((4, 5, 7), (7,))]


def check_matmul(mm, rng, dtypes_fwd=("float32", "float16", "bfloat16"),
                 dtypes_grad=("float32", "bfloat16"), mode_label=""):
    net = Apply(mm)

    def loss_aot(a, b, w):
        return (mm(a, b) * w).sum()

    def loss_native(a, b, w):
        return (ops.matmul(a, b) * w).sum()

    g_aot = ms.grad(loss_aot, grad_position=(0, 1))
    g_native = ms.grad(loss_native, grad_position=(0, 1))
    for ashape, bshape in MATMUL_SHAPES:
        tag = f"{mode_label}opgrad_Matmul a{list(ashape)} b{list(bshape)}"
        for dtype in dtypes_fwd:
            if mode_label:
                break
            (a, a64), (b, b64) = to_ms(rng.uniform(-1, 1, ashape), dtype), \
                to_ms(rng.uniform(-1, 1, bshape), dtype)
            y = net(a, b)
            ref = np.matmul(a64, b64)
            mag = np.matmul(np.abs(a64), np.abs(b64))
            check_close(f"{tag} forward {dtype} vs float64", as64(y), ref,
                        gemm_tol(ref, mag, ashape[-1], dtype))
        for dtype in dtypes_grad:
            (a, a64), (b, b64) = to_ms(rng.uniform(-1, 1, ashape), dtype), \
                to_ms(rng.uniform(-1, 1, bshape), dtype)
            w, w64 = to_ms(rng.uniform(-1, 1, matmul_shape(ashape, bshape)), dtype)
            ga = g_aot(a, b, w)
            refs = matmul_grads64(a64, b64, w64)
            gn = g_native(a, b, w) if dtype == "float32" else None
            for k, name in enumerate(("da", "db")):
                ref, mag, n = refs[k]
                tol_a = gemm_tol(ref, mag, n, dtype)
                check_close(f"{tag} {name} {dtype}: aot bprop vs float64", as64(ga[k]), ref, tol_a)
                if gn is not None:
                    tol_n = native_tol(mag, n, dtype)
                    check_close(f"{tag} {name} {dtype}: native vs float64", as64(gn[k]), ref,
                                tol_n)
                    check_close(f"{tag} {name} {dtype}: aot bprop vs native", as64(ga[k]),
                                as64(gn[k]), tol_a + tol_n)


def gelu64(z, approximate):
    """gelu and gelu' in float64: the tanh approximation or the exact erf form."""
    if approximate == "tanh":
        c = np.sqrt(2 / np.pi)
        t = np.tanh(c * (z + 0.044715 * z ** 3))
        d = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)
        return 0.5 * z * (1 + t), d
    from math import erfc
    cdf = 0.5 * np.vectorize(erfc)(-z / np.sqrt(2))
    return z * cdf, cdf + z * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


LINEAR_ACTS = {"Linear": None, "LinearRelu": "relu", "LinearGelu": "tanh", "LinearGeluErf": "none"}


def linear_refs64(x, w, b, dy, act):
    """float64 y, dx, dw, db of act(x @ w^T + b) with their bounds (ref, bound) for opgrad: the
    GEMM bound, relu 1-Lipschitz with its mask either way where |z| is within z's error, gelu
    1.2-Lipschitz, gelu'' within 1, the kernels within 8 fp32 ulps (docs/ops/activation.md)."""
    inn = x.shape[-1]
    x2, dy2 = x.reshape(-1, inn), dy.reshape(-1, w.shape[0])
    z = x2 @ w.T + b
    zmag = np.abs(x2) @ np.abs(w.T) + np.abs(b)
    zerr = 2.0 ** -22 * (inn + 1) * zmag
    yerr = np.zeros_like(z)
    dzerr = np.zeros_like(z)
    if act is None:
        y, d = z, np.ones_like(z)
    elif act == "relu":
        y, d = np.maximum(z, 0), (z > 0).astype(np.float64)
        dzerr = np.where(np.abs(z) <= zerr, np.abs(dy2), 0.0)
    else:
        y, d = gelu64(z, act)
        yerr = 1.2 * zerr + 2.0 ** -20 * (np.abs(y) + 1.2 * zerr)
        dzerr = np.abs(dy2) * (zerr + 2.0 ** -20 * (np.abs(d) + zerr))
    dz = dy2 * d
    rows = x2.shape[0]
    grads = ((dz @ w, np.abs(dz) @ np.abs(w), w.shape[0], dzerr @ np.abs(w)),
             (dz.T @ x2, np.abs(dz.T) @ np.abs(x2), rows, dzerr.T @ np.abs(x2)),
             (dz.sum(0), np.abs(dz).sum(0), rows, dzerr.sum(0)))
    yshape = x.shape[:-1] + (w.shape[0],)
    return ((y.reshape(yshape), zmag.reshape(yshape), inn + 1, yerr.reshape(yshape)),
            [(g[0].reshape(s), g[1].reshape(s), g[2], g[3].reshape(s))
             for g, s in zip(grads, (x.shape, w.shape, b.shape))])


LINEAR_SHAPES = [((6, 8), 5), ((2, 3, 8), 5), ((8,), 4)]


def check_linear(lib, rng, names=tuple(LINEAR_ACTS), dtypes_fwd=("float32", "float16", "bfloat16"),
                 mode_label=""):
    for name in names:
        act = LINEAR_ACTS[name]
        lin = linear_ops(lib, name)
        net = Apply(lin)

        def loss_aot(x, w, b, g):
            return (lin(x, w, b) * g).sum()

        def loss_native(x, w, b, g):
            z = ops.matmul(x, ops.transpose(w, (1, 0))) + b
            if act == "relu":
                z = ops.relu(z)
            elif act is not None:
                z = ops.gelu(z, approximate=act)
            return (z * g).sum()

        g_aot = ms.grad(loss_aot, grad_position=(0, 1, 2))
        g_native = ms.grad(loss_native, grad_position=(0, 1, 2))
        for xshape, out in LINEAR_SHAPES:
            tag = f"{mode_label}opgrad_{name} x{list(xshape)} out {out}"
            for dtype in (() if mode_label else dtypes_fwd):
                (x, x64), (w, w64), (b, b64) = (to_ms(rng.uniform(-1, 1, s), dtype) for s in
                                                (xshape, (out, xshape[-1]), (out,)))
                (ref, mag, n, err), _ = linear_refs64(x64, w64, b64,
                                                      np.zeros(xshape[:-1] + (out,)), act)
                e = 2.0 ** -22 * n * mag + err
                check_close(f"{tag} forward {dtype} vs float64", as64(net(x, w, b)), ref,
                            e + U[dtype] * (np.abs(ref) + e) + DENORM[dtype])
            (x, x64), (w, w64), (b, b64), (g, g64) = (
                to_ms(rng.uniform(-1, 1, s), "float32") for s in
                (xshape, (out, xshape[-1]), (out,), xshape[:-1] + (out,)))
            _, refs = linear_refs64(x64, w64, b64, g64, act)
            ga, gn = g_aot(x, w, b, g), g_native(x, w, b, g)
            for k, gname in enumerate(("dx", "dw", "db")):
                ref, mag, n, err = refs[k]
                e = 2.0 ** -22 * n * mag + err
                tol_a = e + U["float32"] * (np.abs(ref) + e) + DENORM["float32"]
                check_close(f"{tag} {gname} float32: aot bprop vs float64", as64(ga[k]), ref,
                            tol_a)
                # native: its own sums, with the same allowance for the activation (z's error
                # bound covers native's too; MindSpore 2.10's gelu measured well within 8 ulps)
                tol_n = native_tol(mag, n, "float32") + err
                check_close(f"{tag} {gname} float32: native vs float64", as64(gn[k]), ref, tol_n)
                check_close(f"{tag} {gname} float32: aot bprop vs native", as64(ga[k]),
                            as64(gn[k]), tol_a + tol_n)


class AotLinearMLP(nn.Cell):
    """LinearGelu(8, 16) -> Linear(16, 3), both opgrad aot ops on Parameters [out, in], [out]."""

    def __init__(self, lib, params, grad_factor=None):
        super().__init__()
        self.w1, self.b1, self.w2, self.b2 = (
            ms.Parameter(Tensor(p.astype(np.float32)), name=n)
            for p, n in zip(params, ("w1", "b1", "w2", "b2")))
        self.fc1 = linear_ops(lib, "LinearGelu", grad_factor)
        self.fc2 = linear_ops(lib, "Linear", grad_factor)

    def construct(self, x):
        return self.fc2(self.fc1(x, self.w1, self.b1), self.w2, self.b2)


class NativeGeluMLP(nn.Cell):
    def __init__(self, params):
        super().__init__()
        w1, b1, w2, b2 = (Tensor(p.astype(np.float32)) for p in params)
        self.fc1 = nn.Dense(8, 16, weight_init=w1, bias_init=b1, activation="gelu")  # tanh
        self.fc2 = nn.Dense(16, 3, weight_init=w2, bias_init=b2)

    def construct(self, x):
        return self.fc2(self.fc1(x))


def train_net(net, X, Y, steps, lr):
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.SGD(net.trainable_params(), learning_rate=lr))
    step.set_train()
    xs, ys = Tensor(X.astype(np.float32)), Tensor(Y.astype(np.float32))
    return [float(step(xs, ys).asnumpy()) for _ in range(steps)]


def train_gelu_np64(params, X, Y, steps, lr):
    w1, b1, w2, b2 = (p.astype(np.float64).copy() for p in params)
    losses = []
    for _ in range(steps):
        h = X @ w1.T + b1
        a, da = gelu64(h, "tanh")
        o = a @ w2.T + b2
        r = o - Y
        losses.append(float((r * r).mean()))
        do = 2.0 * r / r.size
        dw2, db2 = do.T @ a, do.sum(0)
        dh = (do @ w2) * da
        dw1, db1 = dh.T @ X, dh.sum(0)
        w1 -= lr * dw1
        b1 -= lr * db1
        w2 -= lr * dw2
        b2 -= lr * db2
    return losses


def check_linear_training(lib, steps, rtol):
    rng = np.random.default_rng(2025)
    params = tuple(p.astype(np.float32) for p in (
        rng.uniform(-8 ** -0.5, 8 ** -0.5, (16, 8)), rng.uniform(-8 ** -0.5, 8 ** -0.5, 16),
        rng.uniform(-0.25, 0.25, (3, 16)), rng.uniform(-0.25, 0.25, 3)))
    X = rng.normal(size=(64, 8))
    Y = np.stack([np.sin(X[:, 0] + X[:, 1]), X[:, 2] * X[:, 3], np.tanh(X[:, 4:]).sum(1)], 1)
    X32, Y32 = X.astype(np.float32).astype(np.float64), Y.astype(np.float32).astype(np.float64)
    lr = 0.1
    t0 = time.time()
    aot = train_net(AotLinearMLP(lib, params), X32, Y32, steps, lr)
    native = train_net(NativeGeluMLP(params), X32, Y32, steps, lr)
    wrong = train_net(AotLinearMLP(lib, params, grad_factor=1.01), X32, Y32, steps, lr)
    ref = train_gelu_np64(params, X32, Y32, steps, lr)
    print(f"  (4 trainings of {steps} steps: {time.time() - t0:.1f} s)")
    print(f"  {'step':>4}  {'aot (opgrad_Linear*)':>20}  {'native nn.Dense':>18}"
          f"  {'float64 numpy':>18}  {'|aot-native|/native':>20}  {'wrong bwd (*1.01)':>18}")
    for i in range(steps):
        print(f"  {i:>4}  {aot[i]:>20.9g}  {native[i]:>18.9g}  {ref[i]:>18.9g}"
              f"  {abs(aot[i] - native[i]) / abs(native[i]):>20.3g}  {wrong[i]:>18.9g}")
    a, n, r, bad = (np.array(v) for v in (aot, native, ref, wrong))
    check_close(f"Linear loss curve, {steps} SGD steps: aot vs native (rel {rtol:g} per step)", a,
                n, rtol * np.abs(n))
    check_close(f"Linear loss curve: aot vs float64 NumPy (rel {rtol:g})", a, r, rtol * np.abs(r))
    check_close(f"Linear loss curve: native vs float64 NumPy (rel {rtol:g})", n, r,
                rtol * np.abs(r))
    dev = np.max(np.abs(bad - n) / np.abs(n))
    record("sensitivity: Linear backwards off by 1% (gradients * 1.01) leave the tolerance",
           dev > rtol, f"max rel deviation {dev:.3g} vs tolerance {rtol:g}")
    record("the aot Linear network's loss decreases every step", bool(np.all(np.diff(a) < 0)),
           f"{aot[0]:.6g} -> {aot[-1]:.6g}")


# ------------------------------------------------------------------------------------------------
# E. the norms and GLUs: opgrad_LayerNorm, RmsNorm, SwiGlu, GeGlu (src/aot/aot_norm.c)

NORM_SYMBOLS = [f"opgrad_{n}{b}" for n in ("LayerNorm", "RmsNorm", "SwiGlu", "GeGlu")
                for b in ("", "Backward")]
LAYER_NORM_EPS, RMS_NORM_EPS = 1e-5, 1e-6  # the entry points' fixed eps (docs/aot.md)


def norm_ops(lib, name, attrs=None):
    """opgrad_LayerNorm (x, gamma, beta) or opgrad_RmsNorm (x, gamma), over the last dim, with
    its bprop (x, gamma[, beta], y, dy -> dx, dgamma[, dbeta]); `attrs` (part F) go on both."""
    def with_attrs(op):
        for k, v in (attrs or {}).items():
            op.add_prim_attr(k, v)
        return op

    if name == "LayerNorm":
        bwd = with_attrs(ops.Custom(func=f"{lib}:opgrad_LayerNormBackward",
                                    out_shape=lambda x, g, b, y, dy: (x, g, b),
                                    out_dtype=lambda x, g, b, y, dy: (x, g, b), func_type="aot"))

        def bprop(x, g, b, out, dout):
            return bwd(x, g, b, out, dout)  # (dx, dgamma, dbeta)

        return with_attrs(ops.Custom(func=f"{lib}:opgrad_LayerNorm", out_shape=lambda x, g, b: x,
                                     out_dtype=lambda x, g, b: x, func_type="aot", bprop=bprop))
    bwd = with_attrs(ops.Custom(func=f"{lib}:opgrad_RmsNormBackward",
                                out_shape=lambda x, g, y, dy: (x, g),
                                out_dtype=lambda x, g, y, dy: (x, g), func_type="aot"))

    def bprop(x, g, out, dout):
        return bwd(x, g, out, dout)  # (dx, dgamma)

    return with_attrs(ops.Custom(func=f"{lib}:opgrad_RmsNorm", out_shape=lambda x, g: x,
                                 out_dtype=lambda x, g: x, func_type="aot", bprop=bprop))


def glu_ops(lib, name):
    """opgrad_SwiGlu or opgrad_GeGlu (erf form): x [..., 2H] -> y [..., H], with its bprop
    (x, y, dy -> dx)."""
    bwd = ops.Custom(func=f"{lib}:opgrad_{name}Backward", out_shape=lambda x, y, dy: x,
                     out_dtype=lambda x, y, dy: x, func_type="aot")

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    return ops.Custom(func=f"{lib}:opgrad_{name}", out_shape=lambda x: list(x[:-1]) + [x[-1] // 2],
                      out_dtype=lambda x: x, func_type="aot", bprop=bprop)


def norm_refs64(x, g, b, dy, layer, k_stat, k_prod, k_sum):
    """float64 y, dx, dgamma, dbeta of LayerNorm (layer) or RMSNorm over the last dim, each with
    the bound of a computation whose x_hat = (x - mean) rstd is within k_stat (|x_hat| +
    mean|x| rstd), whose products add k_prod of their magnitude and whose sums of n terms add
    k_sum(n) times the sum of their magnitudes (the form of tests/api/test_aot_norm.c)."""
    C = x.shape[-1]
    mu = x.mean(-1, keepdims=True) if layer else 0.0
    d = x - mu
    rs = 1 / np.sqrt((d * d).mean(-1, keepdims=True) + (LAYER_NORM_EPS if layer else RMS_NORM_EPS))
    xh = d * rs
    exh = k_stat * (np.abs(xh) + (np.abs(x).mean(-1, keepdims=True) * rs if layer else 0.0))
    y = xh * g + b
    ey = exh * np.abs(g) + k_prod * (np.abs(xh * g) + np.abs(b))
    G = dy * g
    m1 = G.mean(-1, keepdims=True) if layer else 0.0
    a1 = np.abs(G).mean(-1, keepdims=True) if layer else 0.0
    m2 = (G * xh).mean(-1, keepdims=True)
    a2 = np.abs(G * xh).mean(-1, keepdims=True)
    ae = (np.abs(G) * exh).mean(-1, keepdims=True)
    dx = rs * (G - m1 - xh * m2)
    edx = rs * (k_sum(C + 4) * (np.abs(G) + a1 + np.abs(xh) * a2) + exh * a2 + np.abs(xh) * ae) \
        + k_stat * np.abs(dx)
    rows = x.size // C if C else 0
    lead = tuple(range(x.ndim - 1))
    dgam = (dy * xh).sum(lead)
    egam = k_sum(rows + 2) * np.abs(dy * xh).sum(lead) + (np.abs(dy) * exh).sum(lead)
    dbet = dy.sum(lead)
    ebet = k_sum(rows + 1) * np.abs(dy).sum(lead)
    return (y, ey), [(dx, edx), (dgam, egam), (dbet, ebet)]


def glu_refs64(x, dy, swi, k, saved_u, erf_cancels=False):
    """float64 y and dx of SwiGlu (swi) or GeGlu (erf form) over the last dim with bounds: the
    activation and its derivative within k of their magnitude forms (k = 8 fp32 ulps for opgrad's
    kernels), and GeGlu's dA = dy * gelu(B) with gelu saved rounded to x's dtype (saved_u).
    erf_cancels: gelu is computed as 0.5 b (1 + erf(b / sqrt 2)) (MindSpore's own), whose 1 + erf
    cancels for b << 0: its error is k relative to the terms' magnitude 0.5 |b| (1 + |erf|), not to
    |gelu(b)| (measured: 3e-4 relative at gelu(b) = 7.8e-5); likewise its derivative's cdf."""
    H = x.shape[-1] // 2
    a, b = x[..., :H], x[..., H:]
    if swi:
        s = 1 / (1 + np.exp(-a))
        y = a * s * b
        da, eda = dy * b * s * (1 + a * (1 - s)), k * np.abs(dy * b) * s * (1 + np.abs(a) * (1 - s))
        db = dy * a * s
        edb = k * np.abs(db)
    else:
        gel, _ = gelu64(b, "none")
        from math import erfc
        cdf = 0.5 * np.vectorize(erfc, otypes=[np.float64])(-b / np.sqrt(2))
        pdf = np.exp(-0.5 * b * b) / np.sqrt(2 * np.pi)
        y = a * gel
        gmag = np.abs(gel) + (np.abs(b) if erf_cancels else 0.0)
        da, eda = dy * gel, (k + saved_u) * np.abs(dy) * gmag
        db = dy * a * (cdf + b * pdf)
        # the derivative's cdf = 0.5 (1 + erf) cancels the same way: magnitude 0.5 (1 + |erf|) <= 1
        edb = k * np.abs(dy * a) * ((1.0 if erf_cancels else cdf) + np.abs(b) * pdf)
    return (y, k * np.abs(y)), (np.concatenate([da, db], -1), np.concatenate([eda, edb], -1))


def bounded(ref, err, dtype):
    """err (the computation's bound) plus one rounding to the dtype."""
    return err + U[dtype] * (np.abs(ref) + err) + DENORM[dtype]


AOT_NORM_K = (2.0 ** -21, 2.0 ** -22, lambda n: 2.0 ** -22 * n)


def native_norm_k(C):
    """MindSpore's composition in float32: the mean and the variance are sums of C terms, so
    x_hat is within about (C + 4) u; products 2 u; a sum of n terms (n + 2) u (Higham). A first-
    order bound, doubled for the second-order terms."""
    u = U["float32"]
    return 2 * (C + 4) * u, 4 * u, lambda n: 2 * (n + 2) * u


NORM_SHAPES = [(6, 8), (2, 3, 16), (10,)]
GLU_SHAPES = [(6, 8), (2, 3, 10), (4,)]


def check_norm(lib, rng, name, dtypes_fwd=("float32", "float16", "bfloat16"),
               dtypes_grad=("float32", "bfloat16"), mode_label=""):
    layer = name == "LayerNorm"
    op = norm_ops(lib, name)
    net = Apply(op)
    eps = LAYER_NORM_EPS if layer else RMS_NORM_EPS

    def native(x, g, b):
        if layer:
            x = x - x.mean(-1, keep_dims=True)
        return x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + eps) * g + b

    if layer:
        def loss_aot(x, g, b, w):
            return (op(x, g, b) * w).sum()

        def loss_native(x, g, b, w):
            return (native(x, g, b) * w).sum()
        positions = (0, 1, 2)
    else:
        def loss_aot(x, g, w):
            return (op(x, g) * w).sum()

        def loss_native(x, g, w):
            return (native(x, g, 0.0) * w).sum()
        positions = (0, 1)
    g_aot = ms.grad(loss_aot, grad_position=positions)
    g_native = ms.grad(loss_native, grad_position=positions)
    for shape in NORM_SHAPES:
        C = shape[-1]
        tag = f"{mode_label}opgrad_{name} x{list(shape)}"
        for dtype in (() if mode_label else dtypes_fwd):
            (x, x64), (g, g64), (b, b64) = (to_ms(rng.uniform(lo, hi, s), dtype) for lo, hi, s in
                                            ((-1, 2, shape), (-1.5, 1.5, (C,)), (-1, 1, (C,))))
            b64 = b64 if layer else 0.0
            (ref, err), _ = norm_refs64(x64, g64, b64, np.zeros(shape), layer, *AOT_NORM_K)
            y = net(x, g, b) if layer else net(x, g)
            check_close(f"{tag} forward {dtype} vs float64", as64(y), ref,
                        bounded(ref, err, dtype))
        for dtype in dtypes_grad:
            (x, x64), (g, g64), (b, b64), (w, w64) = (
                to_ms(rng.uniform(lo, hi, s), dtype) for lo, hi, s in
                ((-1, 2, shape), (-1.5, 1.5, (C,)), (-1, 1, (C,)), (-1, 1, shape)))
            args = (x, g, b, w) if layer else (x, g, w)
            ga = g_aot(*args)
            _, refs = norm_refs64(x64, g64, b64 if layer else 0.0, w64, layer, *AOT_NORM_K)
            _, nrefs = norm_refs64(x64, g64, b64 if layer else 0.0, w64, layer, *native_norm_k(C))
            gn = g_native(*args) if dtype == "float32" else None
            for k, gname in enumerate(("dx", "dgamma", "dbeta")[:len(positions)]):
                ref, err = refs[k]
                tol_a = bounded(ref, err, dtype)
                check_close(f"{tag} {gname} {dtype}: aot bprop vs float64", as64(ga[k]), ref,
                            tol_a)
                if gn is not None:
                    tol_n = bounded(ref, nrefs[k][1], dtype)
                    check_close(f"{tag} {gname} {dtype}: native vs float64", as64(gn[k]), ref,
                                tol_n)
                    check_close(f"{tag} {gname} {dtype}: aot bprop vs native", as64(ga[k]),
                                as64(gn[k]), tol_a + tol_n)


def check_glu(lib, rng, name, dtypes_fwd=("float32", "float16", "bfloat16"),
              dtypes_grad=("float32", "bfloat16"), mode_label=""):
    swi = name == "SwiGlu"
    op = glu_ops(lib, name)
    net = Apply(op)

    def native(x):
        a, b = ops.chunk(x, 2, -1)
        return a * ops.sigmoid(a) * b if swi else a * ops.gelu(b, approximate="none")

    def loss_aot(x, w):
        return (op(x) * w).sum()

    def loss_native(x, w):
        return (native(x) * w).sum()

    g_aot = ms.grad(loss_aot, grad_position=0)
    g_native = ms.grad(loss_native, grad_position=0)
    k_aot = 2.0 ** -20  # 8 fp32 ulps (docs/ops/activation.md's 4-ulp kernels, doubled)
    # MindSpore's own a * sigmoid(a) * b and a * gelu(b) differentiated in float32: measured
    # (200000 points of [-4, 4], in the magnitude forms of glu_refs64) up to 40 ulps for SwiGlu's
    # gradient, 11 for GeGlu's; 64 allowed (16 was a guess that a later draw of inputs exceeded)
    k_native = 2.0 ** -18
    for shape in GLU_SHAPES:
        yshape = shape[:-1] + (shape[-1] // 2,)
        tag = f"{mode_label}opgrad_{name} x{list(shape)}"
        for dtype in (() if mode_label else dtypes_fwd):
            x, x64 = to_ms(rng.uniform(-4, 4, shape), dtype)
            (ref, err), _ = glu_refs64(x64, np.zeros(yshape), swi, k_aot, 0.0)
            check_close(f"{tag} forward {dtype} vs float64", as64(net(x)), ref,
                        bounded(ref, err, dtype))
        for dtype in dtypes_grad:
            (x, x64), (w, w64) = to_ms(rng.uniform(-4, 4, shape), dtype), \
                to_ms(rng.uniform(-1, 1, yshape), dtype)
            saved_u = 0.0 if dtype == "float32" else U[dtype]
            _, (ref, err) = glu_refs64(x64, w64, swi, k_aot, saved_u)
            tol_a = bounded(ref, err, dtype)
            ga = g_aot(x, w)
            check_close(f"{tag} dx {dtype}: aot bprop vs float64", as64(ga), ref, tol_a)
            if dtype == "float32":
                _, (_, nerr) = glu_refs64(x64, w64, swi, k_native, 0.0, erf_cancels=True)
                tol_n = bounded(ref, nerr, dtype)
                gn = g_native(x, w)
                check_close(f"{tag} dx {dtype}: native vs float64", as64(gn), ref, tol_n)
                check_close(f"{tag} dx {dtype}: aot bprop vs native", as64(ga), as64(gn),
                            tol_a + tol_n)


# ------------------------------------------------------------------------------------------------

# ------------------------------------------------------------------------------------------------
# F. attributes: MindSpore's AotExtra read by opgrad's entry points (src/aot/aot_extra.cpp)

def sigmoid64(z):
    return 0.5 * (1 + np.tanh(0.5 * z))


def act_ops(lib, name, attrs, reg=False):
    """opgrad_<name> with its bprop (x, y, dy -> dx), both Customs carrying `attrs`: with
    add_prim_attr, or (reg=True) CustomRegOp().attr(name, "required", "float", value=...), the
    two ways MindSpore documents."""
    def make(sym, nin, bprop=None):
        kw = {}
        if reg:
            r = CustomRegOp(f"opgrad_attr_test_{len(REG_NAMES)}_{sym}")
            REG_NAMES.append(sym)
            for i in range(nin):
                r = r.input(i, f"i{i}")
            r = r.output(0, "o")
            for k, v in attrs.items():
                r = r.attr(k, "required", "float", value=float(v))
            kw["reg_info"] = r.dtype_format(*([DataType.None_None] * (nin + 1))) \
                .target("CPU").get_op_info()
        shape = (lambda x: x) if nin == 1 else (lambda x, y, dy: x)
        op = ops.Custom(func=f"{lib}:{sym}", out_shape=shape, out_dtype=shape, func_type="aot",
                        bprop=bprop, **kw)
        if not reg:
            for k, v in attrs.items():
                op.add_prim_attr(k, v)
        return op

    bwd = make(f"opgrad_{name}Backward", 3)

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    return make(f"opgrad_{name}", 1, bprop)


REG_NAMES = []


def act_refs64(name, x, dy, a):
    """float64 y, dx and their bounds' magnitudes (|y|-like, |dx|-like) of the activation."""
    if name == "Softplus":
        b, t = a.get("beta", 1.0), a.get("threshold", 20.0)
        bx = b * x
        y = np.where(bx > t, x, np.logaddexp(0, bx) / b)
        g = np.where(bx > t, 1.0, sigmoid64(bx))
        return y, dy * g, np.abs(y), np.abs(dy * g)
    if name == "LeakyRelu":
        s = a.get("negative_slope", a.get("negativeSlope", 0.01))
        return np.where(x > 0, x, s * x), dy * np.where(x > 0, 1.0, s), np.abs(x), np.abs(dy)
    if name == "Elu":
        al = a.get("alpha", 1.0)
        y = np.where(x > 0, x, al * np.expm1(np.minimum(x, 0)))
        g = np.where(x > 0, 1.0, al * np.exp(np.minimum(x, 0)))
        return y, dy * g, np.abs(y) + al * np.exp(np.minimum(x, 0)), np.abs(dy * g)
    raise ValueError(name)


def check_act_attrs(lib, name, attrs, rng, reg=False, mode_label=""):
    """Forward and gradient of opgrad_<name> with attrs against float64 (8 fp32 ulps of the
    magnitude: the kernels are within a few, docs/ops/piecewise.md / activation.md) and, where
    MindSpore has the op with those attributes, against the native op."""
    op = act_ops(lib, name, attrs, reg)
    x64 = rng.uniform(-6, 6, (7, 33))
    x64[0, :5] = [0.0, -0.0, 2.5, 2.5000001, -1e-3]  # threshold 5 / beta 2: bx = 5 at x = 2.5
    x, x64 = to_ms(x64, "float32")
    dy, dy64 = to_ms(rng.uniform(-1, 1, x64.shape), "float32")
    y64, dx64, my, mdx = act_refs64(name, x64, dy64, attrs)
    u = U["float32"]
    tag = f"{mode_label}{name} {attrs or 'defaults'}{' (reg_info)' if reg else ''}"
    check_close(f"{tag} forward vs float64", as64(Apply(op)(x)), y64, 8 * u * my + DENORM["float32"])

    def loss(x, dy):
        return (op(x) * dy).sum()

    dx = ms.grad(loss, grad_position=0)(x, dy)
    # near the threshold the two sides differ by up to sigmoid(t)'s distance from 1: skip the
    # points within the kernel's rounding of bx = t
    ok = np.ones(x64.shape, bool)
    if name == "Softplus":
        b, t = attrs.get("beta", 1.0), attrs.get("threshold", 20.0)
        ok = np.abs(b * x64 - t) > 8 * u * abs(t)
    check_close(f"{tag} grad vs float64", np.where(ok, as64(dx), dx64), dx64,
                8 * u * mdx + DENORM["float32"])
    native = None
    if name == "Softplus":
        native = lambda v: ops.softplus(v, attrs.get("beta", 1.0), attrs.get("threshold", 20.0))
    elif name == "LeakyRelu":
        native = lambda v: ops.leaky_relu(v, attrs.get("negative_slope", 0.01))
    if native is not None:
        ok &= x64 != 0  # the kink: each side picks its own derivative at 0

        def loss_n(x, dy):
            return (native(x) * dy).sum()
        dxn = ms.grad(loss_n, grad_position=0)(x, dy)
        # MindSpore's own softplus is far less accurate than one rounding (measured ~400 u near
        # x = -4 with beta 2): an agreement check at 1e-4 relative, not a bound
        check_close(f"{tag} grad vs native", np.where(ok, as64(dx), as64(dxn)), as64(dxn),
                    1e-4 * np.abs(as64(dxn)) + 1e-7)


def check_norm_eps(lib, rng, name, eps, mode_label=""):
    """opgrad_LayerNorm / opgrad_RmsNorm with the attribute eps (and MindSpore's spelling
    epsilon): forward and every gradient against float64 with that eps, and against the same
    entry point without the attribute (the default eps) to show it changed something."""
    attr = "epsilon" if name == "RmsNorm" else "eps"
    op = norm_ops(lib, name, {attr: eps})
    x64 = rng.uniform(-0.05, 0.05, (6, 16))  # small |x|: eps matters (var ~ 1e-3)
    x, x64 = to_ms(x64, "float32")
    g, g64 = to_ms(rng.uniform(0.5, 1.5, (16,)), "float32")
    b, b64 = to_ms(rng.uniform(-1, 1, (16,)), "float32")
    w, w64 = to_ms(rng.uniform(-1, 1, x64.shape), "float32")
    eps32 = float(np.float32(eps))
    layer = name == "LayerNorm"
    mean = x64.mean(-1, keepdims=True) if layer else 0.0
    xc = x64 - mean
    r = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps32)
    xh = xc * r
    y64 = xh * g64 + (b64 if layer else 0)
    dxh = w64 * g64
    if layer:
        dx64 = r * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    else:
        dx64 = r * (dxh - xh * (dxh * xh).mean(-1, keepdims=True))
    dg64 = (w64 * xh).sum(0)
    args = (x, g, b) if layer else (x, g)
    y = Apply(op)(*args)
    tag = f"{mode_label}{name} {attr}={eps}"
    c = 16 * 2.0 ** -22  # x_hat and the products in fp32 (tests/api/test_aot_norm.c's bounds)
    check_close(f"{tag} forward vs float64", as64(y), y64,
                c * (np.abs(xh) + 1) * np.abs(g64) + c * np.abs(y64) + 1e-7)

    def loss(*a):
        return (op(*a[:-1]) * a[-1]).sum()

    grads = ms.grad(loss, grad_position=(0, 1))(*args, w)
    scale = np.abs(r) * (np.abs(dxh) + np.abs(dxh).mean(-1, keepdims=True) * 2)
    check_close(f"{tag} dx vs float64", as64(grads[0]), dx64, 64 * 2.0 ** -22 * scale + 1e-7)
    check_close(f"{tag} dgamma vs float64", as64(grads[1]), dg64,
                64 * 2.0 ** -22 * (np.abs(w64) * (np.abs(xh) + 1)).sum(0) + 1e-7)
    y_def = as64(Apply(norm_ops(lib, name))(*args))
    moved = np.abs(y_def - as64(y)).max()
    record(f"{tag} differs from the default eps", moved > 1e-3,
           f"max |y(eps) - y(default)| = {moved:.3g}")


def check_attr_errors(lib):
    """A string where a number belongs, and a GLU dim out of range: 161002, the message on
    stderr (MindSpore shows only the code)."""
    x = Tensor(np.ones((2, 4), np.float32))
    op = ops.Custom(func=f"{lib}:opgrad_Softplus", out_shape=lambda x: x, out_dtype=lambda x: x,
                    func_type="aot")
    op.add_prim_attr("beta", "two")
    try:
        Apply(op)(x)
        record("Softplus beta='two' is refused", False, "it ran")
    except RuntimeError as e:
        record("Softplus beta='two' is refused", "161002" in str(e),
               str(e).splitlines()[0][:160])
    glu = glu_ops(lib, "SwiGlu")
    glu.add_prim_attr("dim", 5)
    try:
        Apply(glu)(x)
        record("SwiGlu dim=5 on a 2-d x is refused", False, "it ran")
    except Exception as e:  # noqa: BLE001 - out_shape or the kernel: either refuses
        record("SwiGlu dim=5 on a 2-d x is refused", True, f"{type(e).__name__}")


def check_glu_dim(lib, rng):
    """opgrad_SwiGlu with the attribute dim=0: x [8, 5] split along dim 0, vs float64."""
    bwd = ops.Custom(func=f"{lib}:opgrad_SwiGluBackward", out_shape=lambda x, y, dy: x,
                     out_dtype=lambda x, y, dy: x, func_type="aot")
    bwd.add_prim_attr("dim", 0)

    def bprop(x, out, dout):
        return (bwd(x, out, dout),)

    op = ops.Custom(func=f"{lib}:opgrad_SwiGlu", out_shape=lambda x: [x[0] // 2] + list(x[1:]),
                    out_dtype=lambda x: x, func_type="aot", bprop=bprop)
    op.add_prim_attr("dim", 0)
    x, x64 = to_ms(rng.uniform(-3, 3, (8, 5)), "float32")
    w, w64 = to_ms(rng.uniform(-1, 1, (4, 5)), "float32")
    a, b = x64[:4], x64[4:]
    s = sigmoid64(a)
    y64 = a * s * b
    da = w64 * b * (s + a * s * (1 - s))
    db = w64 * a * s
    u = U["float32"]
    check_close("SwiGlu dim=0 forward vs float64", as64(Apply(op)(x)), y64,
                16 * u * (np.abs(a * s) + 1) * np.abs(b) + 1e-30)

    def loss(x, w):
        return (op(x) * w).sum()

    dx = ms.grad(loss, grad_position=0)(x, w)
    check_close("SwiGlu dim=0 grad vs float64", as64(dx), np.concatenate([da, db]),
                16 * u * np.concatenate([np.abs(w64 * b) * (1 + np.abs(a)), np.abs(w64 * a)]) +
                1e-30)


# ------------------------------------------------------------------------------------------------
# H. float64 through the built-ins: MindSpore's own gradient check on opgrad's operators

FD_STEP = 1e-6


def loss_of(op, nin):
    """sum(op(inputs) * w) as a def of nin inputs and w (GRAPH_MODE parses no *args)."""
    if nin == 1:
        def loss(a, w):
            return (op(a) * w).sum()
    elif nin == 2:
        def loss(a, b, w):
            return (op(a, b) * w).sum()
    else:
        def loss(a, b, c, w):
            return (op(a, b, c) * w).sum()
    return loss


def fd_gradcheck(tag, op, xs, names, rng, expect_ok=True):
    """ms.grad of L = sum(op(xs) * w) in float64 against central differences of L along two
    random directions v per input: |<dL/dx, v> - (L(x + h v) - L(x - h v)) / 2h| <= 1e-8
    sum|dL/dx v| + 1e-9 sum|y w|; the difference's truncation (about h^2 L''') and rounding
    (about 2^-53 sum|y w| / h) stay below that (measured: at most 0.014 of the tolerance). With
    expect_ok False the check must fail (a backward scaled by 1.001 moves <dL/dx, v> by 1e-3 of
    itself). Returns whether it passed."""
    net = Apply(op)
    ts = [Tensor(x) for x in xs]
    y0 = net(*ts).asnumpy()
    w = rng.uniform(-1, 1, y0.shape)
    grads = ms.grad(loss_of(op, len(xs)), grad_position=tuple(range(len(xs))))(*ts, Tensor(w))
    grads = grads if isinstance(grads, tuple) else (grads,)
    level = np.abs(y0 * w).sum()
    all_ok = True
    for k, (x, g) in enumerate(zip(xs, grads)):
        g = as64(g)
        worst, ok = 0.0, True
        for _ in range(2):
            v = rng.uniform(-1, 1, x.shape)
            plus = [Tensor(x + FD_STEP * v) if j == k else t for j, t in enumerate(ts)]
            minus = [Tensor(x - FD_STEP * v) if j == k else t for j, t in enumerate(ts)]
            num = ((net(*plus).asnumpy() * w).sum()
                   - (net(*minus).asnumpy() * w).sum()) / (2 * FD_STEP)
            ana = (g * v).sum()
            tol = 1e-8 * np.abs(g * v).sum() + 1e-9 * level
            worst = max(worst, abs(num - ana) / tol)
            ok = ok and abs(num - ana) <= tol
        all_ok = all_ok and ok
        if expect_ok:
            record(f"{tag} d{names[k]} float64: ms.grad vs central differences", ok,
                   f"max err/tol={worst:.3g}")
    return all_ok


def check_float64(lib, rng, pynative=False):
    """Part H: the forward of each built-in in float64 against NumPy float64, then fd_gradcheck
    (GRAPH_MODE; PYNATIVE: LinearGeluErf's check only)."""
    x_m = rng.uniform(-4, 4, (16, 9))
    a, b = rng.uniform(-1, 1, (2, 5, 7)), rng.uniform(-1, 1, (7, 6))
    xl, wl, bl = rng.uniform(-1, 1, (6, 8)), rng.uniform(-1, 1, (5, 8)), rng.uniform(-1, 1, 5)
    xn, gn, bn = rng.uniform(-2, 3, (4, 16)), rng.uniform(-1.5, 1.5, 16), rng.uniform(-1, 1, 16)
    xs = rng.uniform(-3, 3, (4, 12))
    zl = xl @ wl.T + bl
    cases = [  # name, op, inputs, their names, float64 y, its magnitude scale
        ("Mish", mish_ops(lib), [x_m], ["x"], mish64(x_m)[0], np.abs(x_m)),
        ("Matmul", matmul_ops(lib), [a, b], ["a", "b"], np.matmul(a, b),
         np.matmul(np.abs(a), np.abs(b))),
        ("LinearGeluErf", linear_ops(lib, "LinearGeluErf"), [xl, wl, bl], ["x", "w", "b"],
         gelu64(zl, "none")[0], np.abs(xl) @ np.abs(wl.T) + np.abs(bl)),
        ("LayerNorm", norm_ops(lib, "LayerNorm"), [xn, gn, bn], ["x", "gamma", "beta"],
         norm_refs64(xn, gn, bn, np.zeros_like(xn), True, 0, 0, lambda n: 0)[0][0],
         np.abs(gn) * (1 + np.abs(xn)) + np.abs(bn)),
        ("SwiGlu", glu_ops(lib, "SwiGlu"), [xs], ["x"],
         glu_refs64(xs, np.zeros((4, 6)), True, 0, 0)[0][0], 1 + np.abs(xs[:, :6] * xs[:, 6:])),
    ]
    mode = "PYNATIVE " if pynative else ""
    for name, op, inputs, names, ref, scale in cases:
        if pynative and name != "LinearGeluErf":
            continue
        tag = f"{mode}opgrad_{name}"
        if not pynative:
            y = Apply(op)(*[Tensor(x) for x in inputs])
            if y.dtype != ms.float64:
                record(f"{tag} float64 forward keeps float64", False, f"got {y.dtype}")
                continue
            check_close(f"{tag} forward float64 vs NumPy float64", as64(y), ref,
                        2.0 ** -40 * (np.abs(ref) + scale))
        fd_gradcheck(tag, op, inputs, names, rng)
    # the check has teeth: a backward 0.1 % off fails it
    wrong = [("Mish", mish_ops(lib, dx_factor=1.001), [x_m], ["x"]),
             ("LinearGeluErf", linear_ops(lib, "LinearGeluErf", grad_factor=1.001), [xl, wl, bl],
              ["x", "w", "b"])]
    for name, op, inputs, names in wrong:
        if pynative and name != "LinearGeluErf":
            continue
        passed = fd_gradcheck(name, op, inputs, names, rng, expect_ok=False)
        record(f"{mode}opgrad_{name} with its backward scaled by 1.001: the float64 gradient "
               f"check fails", not passed)


# ------------------------------------------------------------------------------------------------
# I. second order: opgrad.mindspore.builtin (the backward Customs have bprops of their own)

HV_STEP = 1e-5


def _as_tuple(g):
    return g if isinstance(g, tuple) else (g,)


def grad_fns(op, nin):
    """(g1, g2): g1(xs..., w) = ms.grad of L = sum(op(xs) * w) at every input; g2(xs..., w, vs...)
    = ms.grad of sum_k <g1_k, v_k>, a Hessian-vector product (ms.grad of ms.grad)."""
    g1 = ms.grad(loss_of(op, nin), grad_position=tuple(range(nin)))
    if nin == 1:
        def inner(a, w, v):
            return (g1(a, w) * v).sum()
    elif nin == 2:
        def inner(a, b, w, v1, v2):
            ga, gb = g1(a, b, w)
            return (ga * v1).sum() + (gb * v2).sum()
    else:
        def inner(a, b, c, w, v1, v2, v3):
            ga, gb, gc = g1(a, b, c, w)
            return (ga * v1).sum() + (gb * v2).sum() + (gc * v3).sum()
    return g1, ms.grad(inner, grad_position=tuple(range(nin)))


def check_hvp(tag, op, xs, rng, expect_ok=True):
    """The Hessian-vector product through the nested bprops against central differences of the
    first-order gradient along v (h = 1e-5): elementwise within 1e-7 max|fd| + 1e-9 (the
    difference's truncation, h^2 f'''' / 6, and rounding, 2^-53 |g| / h, are below 3e-11 here).
    Returns whether it passed; records the result when expect_ok."""
    n = len(xs)
    w = Tensor(rng.uniform(-1, 1, Apply(op)(*[Tensor(x) for x in xs]).shape))
    g1, g2 = grad_fns(op, n)
    vs = [rng.uniform(-1, 1, x.shape) for x in xs]
    hv = _as_tuple(g2(*[Tensor(x) for x in xs], w, *[Tensor(v) for v in vs]))

    def grads(shift):
        return [as64(t) for t in
                _as_tuple(g1(*[Tensor(x + shift * v) for x, v in zip(xs, vs)], w))]

    gp, gm = grads(HV_STEP), grads(-HV_STEP)
    ok_all = True
    for k in range(n):
        fd = (gp[k] - gm[k]) / (2 * HV_STEP)
        tol = 1e-7 * np.abs(fd).max() + 1e-9
        if expect_ok:
            ok_all &= check_close(f"{tag} H.v, input {k}: nested bprop vs central differences "
                                  f"of ms.grad", as64(hv[k]), fd, tol)
        else:
            ok_all &= bool((np.abs(as64(hv[k]) - fd) <= tol).all())
    return ok_all


def check_third_order(tag, op, x, rng):
    """d/dx of <H(x) v, u> (ms.grad three deep) against central differences of H v along u."""
    w = Tensor(rng.uniform(-1, 1, x.shape))
    v, u = Tensor(rng.uniform(-1, 1, x.shape)), rng.uniform(-1, 1, x.shape)
    _, g2 = grad_fns(op, 1)

    def third(a, w, v, u):
        return (g2(a, w, v) * u).sum()

    t = ms.grad(third)(Tensor(x), w, v, Tensor(u))
    fd = (as64(g2(Tensor(x + HV_STEP * u), w, v)) - as64(g2(Tensor(x - HV_STEP * u), w, v))) / \
        (2 * HV_STEP)
    check_close(f"{tag} third order: ms.grad of <H v, u> vs central differences of H v",
                as64(t), fd, 1e-7 * np.abs(fd).max() + 1e-9)


def check_gradient_penalty(lib):
    """The issue's example: x = [0.5, -1], L = sum(mish(x)) + sum(g^2), g = dL0/dx: dL/dx =
    f'(x) + 2 f'(x) f''(x) = [1.7162, 0.1006] (PyTorch's), against float64."""
    mish = builtin_op(lib, "Mish")

    def l0(x):
        return mish(x).sum()

    g = ms.grad(l0)

    def penalty(x):
        gx = g(x)
        return mish(x).sum() + (gx * gx).sum()

    x64 = np.array([0.5, -1.0])
    got = as64(ms.grad(penalty)(Tensor(x64)))
    d1, _ = mish_grad64(x64)
    s = 1 / (1 + np.exp(-x64))
    t = np.tanh(np.logaddexp(0.0, x64))
    d2 = s * (1 - t * t) * (2 + x64 * (1 - s) - 2 * x64 * s * t)
    check_close("gradient penalty through builtin('Mish'), float64 vs f' + 2 f' f''", got,
                d1 + 2 * d1 * d2, 1e-14)
    check_close("gradient penalty: PyTorch's [1.7162, 0.1006] (4 digits)", got,
                np.array([1.7162, 0.1006]), 5e-5)


def opgrad_package(lib):
    """opgrad.mindspore of this checkout (python/), on the library under test."""
    os.environ["OPGRAD_LIBRARY"] = lib
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    if path not in sys.path:
        sys.path.insert(0, path)
    import opgrad.mindspore
    return opgrad.mindspore


def builtin_op(lib, name, **attrs):
    return opgrad_package(lib).builtin(name, library=lib, **attrs)


def check_second_order(lib, rng, pynative=False):
    """Part I: H.v of every opgrad.mindspore.builtin operator in float64 (GRAPH_MODE; PYNATIVE:
    Mish, Softmax, Matmul, LayerNorm, LinearGelu), attributes included; third order for Mish, Softplus and Softmax; the
    gradient penalty; a wrong f'' (Mish's scaled by 1.001) must fail; unsupported names are
    refused."""
    om = opgrad_package(lib)
    import opgrad._ms_builtin as msb
    mode = "PYNATIVE " if pynative else ""
    x = rng.uniform(-3, 3, (4, 5))
    unary = [(n, {}) for n in msb._ACTS] + [("Softmax", {}), ("LogSoftmax", {"dim": 0}),
                                            ("Softplus", {"beta": 2.0, "threshold": 5.0}),
                                            ("Elu", {"alpha": 0.7, "scale": 1.5}),
                                            ("LeakyRelu", {"negative_slope": 0.3})]
    unary += [("SwiGlu", {}), ("SwiGlu", {"dim": 0}), ("GeGlu", {}), ("GeGlu", {"approximate": 1})]
    lin = [(6, 8), (5, 8), (5,)]
    binary = [("Mul", [(3, 4), (4,)]), ("Add", [(3, 4), (4,)]), ("Add", [(3, 4), (4,)], 0.5),
              ("Matmul", [(2, 3, 4), (4, 5)]), ("Matmul", [(4,), (3, 4, 2)]),
              ("FusedAddScale", [(3, 5), (5,), (1,)]),
              ("LayerNorm", [(3, 7), (7,), (7,)]), ("LayerNorm", [(3, 7), (7,), (7,)], 1e-2),
              ("RmsNorm", [(2, 3, 7), (7,)]),
              ("Conv2d", [(2, 4, 5, 5), (3, 4, 3, 3), (3,)]),
              ("Conv2dNoBias", [(2, 4, 5, 6), (4, 2, 3, 2)]),  # groups 2, an even kernel dim
              ("Linear", [(2, 3, 8), (5, 8), (5,)]), ("LinearRelu", lin), ("LinearGelu", lin),
              ("LinearGeluErf", lin)]
    if pynative:
        unary = [u for u in unary if u[0] in ("Mish", "Softmax")]
        binary = [next(b for b in binary if b[0] == n) for n in ("Matmul", "LayerNorm",
                                                                 "LinearGelu")]
    for name, attrs in unary:
        xin = x if name not in ("Relu", "LeakyRelu", "Hardswish", "Hardsigmoid") else \
            np.where(np.abs(x) < 0.1, 0.5, x)  # away from the kinks (f'' is 0 on each side)
        xin = np.where(np.abs(np.abs(xin) - 3) < 0.1, 2.5, xin) if name == "Hardswish" else xin
        if name in ("SwiGlu", "GeGlu") and attrs.get("dim", -1) == -1:
            xin = rng.uniform(-3, 3, (4, 6))  # halves of the last dim
        check_hvp(f"{mode}builtin({name!r}{', ' if attrs else ''}"
                  f"{', '.join(f'{k}={v}' for k, v in attrs.items())})",
                  builtin_op(lib, name, **attrs), [xin], rng)
    for entry in binary:
        name, shapes = entry[0], entry[1]
        attrs = {} if len(entry) < 3 else {"eps" if "Norm" in name else "alpha": entry[2]}
        xs = [rng.uniform(-1, 1, s) for s in shapes]
        if name == "FusedAddScale":
            xs[2] = rng.uniform(0.5, 2, shapes[2])
        if name == "LinearRelu":  # z away from relu's kink (f'' is 0 on each side)
            xs[2] = np.where(np.abs(xs[2]) < 0.2, 0.6, xs[2])
        check_hvp(f"{mode}builtin({name!r}) {[list(s) for s in shapes]}{attrs or ''}",
                  builtin_op(lib, name, **attrs), xs, rng)
    if pynative:
        return
    for name in ("Mish", "Softplus", "Softmax"):
        check_third_order(f"builtin({name!r})", builtin_op(lib, name), x, rng)
    check_gradient_penalty(lib)
    # teeth: Mish's f'' 0.1 % off fails the H.v check
    orig = msb._ACTS["Mish"]

    def d2_off(ops, h, v, a):  # a def: GRAPH_MODE parses no lambda inside a tuple
        return orig[0](ops, h, v, a) * 1.001

    msb._ACTS["Mish"] = (d2_off, False)
    try:
        wrong = builtin_op(lib, "Mish")
    finally:
        msb._ACTS["Mish"] = orig
    record("builtin('Mish') with f'' scaled by 1.001: the H.v check fails",
           not check_hvp("wrong", wrong, [x], rng, expect_ok=False))
    for bad, want in ((lambda: om.builtin("BatchNorm", library=lib), "is not one of"),
                      (lambda: om.builtin("Softplus", library=lib, gamma=1.0),
                       "unknown attribute(s) gamma")):
        try:
            bad()
            record(f"refused: {want}", False, "no error")
        except ValueError as e:
            record(f"refused: {want}", want in str(e), str(e))


# ------------------------------------------------------------------------------------------------
# G. a broken custom kernel: opgrad check --custom, opgrad.mindspore.custom(spec, debug=True)

def bias_spec(lib, backward, grads=None):
    s = {"name": "BiasAdd", "library": lib, "forward": "BiasAdd", "backward": backward,
         "dtypes": ["float32", "float64"],
         "inputs": [{"name": "x", "shape": ["N", "C"]}, {"name": "bias", "shape": ["C"]}],
         "outputs": [{"name": "y", "shape": ["N", "C"]}],
         "sizes": [{"N": 8, "C": 16}, {"N": 5, "C": 3}],
         "reference": "x + bias"}
    if grads is not None:
        s["gradients"] = grads
    return s


def write_spec(directory, fname, spec):
    import json
    path = os.path.join(directory, fname)
    with open(path, "w") as f:
        json.dump(spec, f, indent=1)
    return path


def check_cli(cli, spec_path, want_ok, needles, label):
    """`opgrad check --custom SPEC`: exit 0 (want_ok) or 1, and the report names every needle."""
    import subprocess
    t = time.time()
    p = subprocess.run([cli, "check", "--custom", spec_path], capture_output=True, text=True,
                       timeout=300)
    out = p.stdout + p.stderr
    ok = (p.returncode == 0) == want_ok and p.returncode in (0, 1)
    missing = [n for n in needles if n not in out]
    lines = [ln.strip() for ln in out.splitlines()
             if ln.strip().startswith("->") and all(n in ln for n in needles)]
    record(label, ok and not missing,
           f"exit {p.returncode} in {time.time() - t:.1f} s"
           + (f"; report lacks {missing}" if missing else "")
           + (f"; e.g. {lines[0][:220]!r}" if lines else ""))
    if not ok or missing:
        print("\n".join("      | " + ln for ln in out.splitlines()[-25:]))


class BiasNet(nn.Cell):
    """Dense(8, 16, no bias) -> BiasAdd(bias [16]) (the custom op, or native x + bias)."""

    def __init__(self, w, b, op=None):
        super().__init__()
        self.w = ms.Parameter(Tensor(w), name="w")
        self.b = ms.Parameter(Tensor(b), name="b")
        self.op = op

    def construct(self, x):
        h = ops.matmul(x, self.w.T)
        if self.op is None:
            return h + self.b
        return self.op(h, self.b)


def bias_train(op, w, b, X, Y, steps, lr=0.1):
    net = BiasNet(w, b, op)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(),
                                                                          learning_rate=lr))
    step.set_train()
    return [float(step(Tensor(X), Tensor(Y)).asnumpy()) for _ in range(steps)]


def bias_train64(w, b, X, Y, steps, lr=0.1):
    w, b, out = w.astype(np.float64), b.astype(np.float64), []
    X, Y = X.astype(np.float64), Y.astype(np.float64)
    for _ in range(steps):
        y = X @ w.T + b
        out.append(((y - Y) ** 2).mean())
        dy = 2 * (y - Y) / y.size
        w, b = w - lr * dy.T @ X, b - lr * dy.sum(0)
    return out


def check_guarded(opgrad_lib, bias_lib, cli, workdir, steps, rtol):
    oms = opgrad_package(opgrad_lib)
    import opgrad
    from opgrad import _lib
    record("opgrad.mindspore imports", True, f"opgrad {opgrad.version()} from {_lib.library_path}")
    good = write_spec(workdir, "bias_add.json", bias_spec(bias_lib, "BiasAddGrad"))
    broken = write_spec(workdir, "bias_add_broken.json", bias_spec(bias_lib, "BiasAddGradNoReduce"))
    broken_nc = write_spec(workdir, "bias_add_broken_nc.json", bias_spec(
        bias_lib, "BiasAddGradNoReduce", grads=[{"shape": ["N", "C"]}, {"shape": ["N", "C"]}]))
    if cli:
        check_cli(cli, good, True, [], "opgrad check --custom bias_add.json passes")
        check_cli(cli, broken, False, ["'bias'", "reduce over dim 0"],
                  "opgrad check --custom bias_add_broken.json fails naming the reduction")
        check_cli(cli, broken_nc, False, ["'bias'", "reduce over dim 0"],
                  "opgrad check --custom bias_add_broken_nc.json ([N, C] declared) fails naming "
                  "the reduction")
    else:
        record("opgrad check --custom", False, "no --opgrad-cli given")

    rng = np.random.default_rng(11)
    w = rng.uniform(-0.5, 0.5, (16, 8)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (16,)).astype(np.float32)
    X = rng.uniform(-1, 1, (8, 8)).astype(np.float32)
    Y = rng.uniform(-1, 1, (8, 16)).astype(np.float32)

    # the [N, C] declaration is refused when the op is built, in either mode
    for debug in (False, True):
        try:
            oms.custom(broken_nc, debug=debug)
            record(f"custom(broken_nc, debug={debug}) refuses the [N, C] gradient", False, "built")
        except ValueError as e:
            m = str(e)
            record(f"custom(broken_nc, debug={debug}) refuses the [N, C] gradient",
                   "'bias'" in m and "['N', 'C']" in m and "['C']" in m, m[:200])

    # the broken backward inside a training step, debug=True: raises naming dbias
    try:
        bias_train(oms.custom(broken, debug=True), w, b, X, Y, 1)
        record("debug=True: the broken backward raises in a training step", False, "it trained")
    except Exception as e:  # noqa: BLE001
        m = str(e)
        ok = ("'dbias'" in m and "declared [16]" in m and "128 elements" in m
              and "'dy'" in m and "summed over the broadcast dims" in m)
        record("debug=True: the broken backward raises in a training step", ok,
               f"{type(e).__name__}: {m.splitlines()[0][:400]}")

    # the correct kernel trains: aot (no debug) and debug, against native x + bias and float64
    ref64 = bias_train64(w, b, X, Y, steps)
    native = bias_train(None, w, b, X, Y, steps)
    for debug in (False, True):
        curve = bias_train(oms.custom(good, debug=debug), w, b, X, Y, steps)
        dn = max(abs(c - n) / abs(n) for c, n in zip(curve, native))
        d64 = max(abs(c - r) / abs(r) for c, r in zip(curve, ref64))
        record(f"custom(bias_add.json, debug={debug}) trains {steps} steps like native x + bias",
               dn <= rtol and d64 <= rtol,
               f"loss {curve[0]:.9g} -> {curve[-1]:.9g}; max rel diff vs native {dn:.2g}, vs "
               f"float64 {d64:.2g} (rtol {rtol})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fused-lib", required=True, help="absolute path of libfused_add_scale.so")
    ap.add_argument("--opgrad-lib", required=True, help="absolute path of libopgrad.so")
    ap.add_argument("--bias-add-lib", default=None,
                    help="absolute path of libbias_add.so (tests/mindspore/bias_add.c; part G)")
    ap.add_argument("--opgrad-cli", default=None, help="the `opgrad` tool (part G)")
    ap.add_argument("--workdir", default=None, help="where part G writes its specs (default: cwd)")
    ap.add_argument("--steps", type=int, default=10, help="SGD steps of the training check")
    ap.add_argument("--loss-rtol", type=float, default=1e-5,
                    help="relative tolerance per step between the loss curves")
    args = ap.parse_args()

    for opt, path in (("--fused-lib", args.fused_lib), ("--opgrad-lib", args.opgrad_lib)):
        if not os.path.isabs(path):
            print(f"{opt} {path}: give an absolute path (MindSpore resolves a relative one "
                  f"against the working directory at kernel init)", flush=True)
            return 2
        if not os.path.isfile(path):
            print(f"{opt} {path}: no such file", flush=True)
            return 2
    fused_missing = missing_symbols(args.fused_lib, ["FusedAddScale", "FusedAddScaleGrad"])
    if fused_missing:
        print(f"{args.fused_lib} does not export {', '.join(fused_missing)}", flush=True)
        return 2
    mish_missing = missing_symbols(args.opgrad_lib, ["opgrad_Mish", "opgrad_MishBackward"])

    print(f"MindSpore {ms.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}")
    print(f"fused-lib  {args.fused_lib}\nopgrad-lib {args.opgrad_lib}")
    if int(np.__version__.split(".")[0]) >= 2:
        print("NOTE: NumPy >= 2. The MindSpore 2.10.0 wheels are built against NumPy 1.x: "
              "with NumPy 2 the first Tensor operation in PYNATIVE_MODE raises (\"A module "
              "that was compiled using NumPy 1.x cannot be run in NumPy 2...\") and bfloat16 "
              "constants fail to fold in graphs. run.sh installs numpy<2.", flush=True)
    print(f"MS_CUSTOM_AOT_WHITE_LIST={os.environ.get('MS_CUSTOM_AOT_WHITE_LIST', '(unset)')}")
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    t_all = time.time()
    rng = np.random.default_rng(7)

    section("A1. FusedAddScale forward (aot, GRAPH_MODE) vs NumPy float64")
    fwd = fused_ops(args.fused_lib)
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        run_check(f"forward {dtype}", lambda: check_fas_forward(fwd, dtype, rng))

    section("A2. ms.grad(grad_position=(0, 1, 2)) through the aot bprop vs float64 and native ops")
    for dtype in ("float32", "float16"):
        run_check(f"grad {dtype}", lambda: check_fas_grad(fwd, dtype, rng))

    section("A3. each grad_position alone (float32, x[5,37])")
    run_check("single positions", lambda: check_fas_single_positions(fwd, rng))

    if mish_missing:
        section("B. opgrad's built-in Mish through aot")
        record(f"libopgrad exports {', '.join(mish_missing)}", False,
               f"{args.opgrad_lib} does not export {', '.join(mish_missing)} (the aot built-ins, "
               f"src/aot/aot_builtins.c): parts B and C.2 cannot run")
    else:
        section("B1. opgrad_Mish / opgrad_MishBackward (aot, GRAPH_MODE) vs float64 and ops.mish")
        mish = mish_ops(args.opgrad_lib)
        run_check("mish forward", lambda: check_mish_forward(mish, rng))
        run_check("mish grad", lambda: check_mish_grad(mish, rng))
        section(f"B2. training Dense(8,16) -> Mish -> Dense(16,3), {args.steps} SGD steps, "
                f"aot Mish vs native")
        run_check("training", lambda: check_training(args.opgrad_lib, args.steps, args.loss_rtol))

    mm_missing = missing_symbols(args.opgrad_lib, MATMUL_SYMBOLS)
    if mm_missing:
        section("D. the matmul family through aot")
        record(f"libopgrad exports {', '.join(mm_missing)}", False,
               f"{args.opgrad_lib} does not export {', '.join(mm_missing)} (src/aot/aot_matmul.c)")
    else:
        section("D1. opgrad_Matmul / opgrad_MatmulBackward (aot, GRAPH_MODE) vs float64 and "
                "ops.matmul")
        run_check("matmul", lambda: check_matmul(matmul_ops(args.opgrad_lib), rng))
        section("D2. opgrad_Linear, LinearRelu, LinearGelu, LinearGeluErf and their backwards")
        run_check("linear", lambda: check_linear(args.opgrad_lib, rng))
        section(f"D3. training LinearGelu(8,16) -> Linear(16,3), {args.steps} SGD steps, aot vs "
                f"nn.Dense")
        run_check("linear training",
                  lambda: check_linear_training(args.opgrad_lib, args.steps, args.loss_rtol))

    norm_missing = missing_symbols(args.opgrad_lib, NORM_SYMBOLS)
    if norm_missing:
        section("E. the norms and GLUs through aot")
        record(f"libopgrad exports {', '.join(norm_missing)}", False,
               f"{args.opgrad_lib} does not export {', '.join(norm_missing)} (src/aot/aot_norm.c)")
    else:
        section("E1. opgrad_LayerNorm / opgrad_RmsNorm and their backwards (aot, GRAPH_MODE) vs "
                "float64 and native compositions")
        for name in ("LayerNorm", "RmsNorm"):
            run_check(name, lambda: check_norm(args.opgrad_lib, rng, name))
        section("E2. opgrad_SwiGlu / opgrad_GeGlu (erf) and their backwards vs float64 and "
                "native compositions")
        for name in ("SwiGlu", "GeGlu"):
            run_check(name, lambda: check_glu(args.opgrad_lib, rng, name))

    attrs_ok = bool(getattr(ctypes.CDLL(args.opgrad_lib), "opgrad_aot_attributes_supported",
                            lambda: 0)())
    section("F1. attributes through MindSpore's AotExtra: Softplus, LeakyRelu, Elu (aot, "
            "GRAPH_MODE) vs float64 and native ops")
    if not attrs_ok:
        record("libopgrad reads aot attributes", False,
               "opgrad_aot_attributes_supported() is 0: built without a C++ compiler")
    else:
        for name, attrs in (("Softplus", {}), ("Softplus", {"beta": 2.0, "threshold": 5.0}),
                            ("LeakyRelu", {}), ("LeakyRelu", {"negative_slope": 0.3}),
                            ("Elu", {}), ("Elu", {"alpha": 0.7})):
            run_check(f"{name} {attrs}", lambda: check_act_attrs(args.opgrad_lib, name, attrs, rng))
        run_check("Softplus reg_info", lambda: check_act_attrs(
            args.opgrad_lib, "Softplus", {"beta": 2.0, "threshold": 5.0}, rng, reg=True))
        section("F2. norm and GLU attributes: LayerNorm eps, RmsNorm epsilon, SwiGlu dim")
        run_check("LayerNorm eps", lambda: check_norm_eps(args.opgrad_lib, rng, "LayerNorm", 1e-2))
        run_check("RmsNorm epsilon", lambda: check_norm_eps(args.opgrad_lib, rng, "RmsNorm", 1e-2))
        run_check("SwiGlu dim", lambda: check_glu_dim(args.opgrad_lib, rng))
        section("F3. bad attributes are refused")
        run_check("attribute errors", lambda: check_attr_errors(args.opgrad_lib))

    if not (mish_missing or mm_missing or norm_missing):
        section("H. float64 through the built-ins: forward vs NumPy float64, ms.grad vs central "
                "differences")
        run_check("float64", lambda: check_float64(args.opgrad_lib, rng))

    if not (mish_missing or mm_missing):
        section("I. second order: opgrad.mindspore.builtin, ms.grad of ms.grad (float64) vs "
                "central differences")
        run_check("second order", lambda: check_second_order(args.opgrad_lib, rng))

    section("G. a backward that does not reduce its broadcast gradient: opgrad check --custom, "
            "opgrad.mindspore.custom(spec, debug=True), and the correct kernel training")
    if not args.bias_add_lib:
        record("part G", False, "no --bias-add-lib given")
    else:
        run_check("guarded", lambda: check_guarded(
            args.opgrad_lib, args.bias_add_lib, args.opgrad_cli, args.workdir or os.getcwd(),
            args.steps, args.loss_rtol))

    section("C. PYNATIVE_MODE: the same gradients, eagerly")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    fwd_py = fused_ops(args.fused_lib)
    run_check("pynative fused grad", lambda: check_fas_grad(fwd_py, "float32", rng, "PYNATIVE "))
    if not mish_missing:
        mish_py = mish_ops(args.opgrad_lib)
        run_check("pynative mish grad", lambda: check_mish_grad(mish_py, rng, "PYNATIVE "))
    if not mm_missing:
        run_check("pynative matmul grad",
                  lambda: check_matmul(matmul_ops(args.opgrad_lib), rng, dtypes_grad=("float32",),
                                       mode_label="PYNATIVE "))
        run_check("pynative linear grad",
                  lambda: check_linear(args.opgrad_lib, rng, names=("Linear", "LinearGelu"),
                                       mode_label="PYNATIVE "))

    if not norm_missing:
        run_check("pynative layer norm grad",
                  lambda: check_norm(args.opgrad_lib, rng, "LayerNorm", dtypes_grad=("float32",),
                                     mode_label="PYNATIVE "))
        run_check("pynative swiglu grad",
                  lambda: check_glu(args.opgrad_lib, rng, "SwiGlu", dtypes_grad=("float32",),
                                    mode_label="PYNATIVE "))

    if not (mish_missing or mm_missing or norm_missing):
        run_check("pynative float64", lambda: check_float64(args.opgrad_lib, rng, pynative=True))

    if not (mish_missing or mm_missing):
        run_check("pynative second order",
                  lambda: check_second_order(args.opgrad_lib, rng, pynative=True))

    if attrs_ok:
        run_check("pynative softplus attrs", lambda: check_act_attrs(
            args.opgrad_lib, "Softplus", {"beta": 2.0, "threshold": 5.0}, rng,
            mode_label="PYNATIVE "))

    failed = [r for r in RESULTS if not r[1]]
    print(f"\n{len(RESULTS) - len(failed)} of {len(RESULTS)} checks passed "
          f"({time.time() - t_all:.1f} s)")
    for label, _, detail in failed:
        print(f"FAILED: {label}  {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
