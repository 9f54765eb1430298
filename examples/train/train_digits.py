#!/usr/bin/env python3
"""Train a small MLP on scikit-learn's digits data set with opgrad's operators and, from the same
initial weights and the same data order, with PyTorch's native ones; check that the two loss
curves agree epoch by epoch and that both reach the same test accuracy. A third run trains the
opgrad model in bfloat16 (fp32 master weights) and must land within a stated margin of fp32.

    OPGRAD_LIBRARY=build-train/libopgrad.so PYTHONPATH=python \\
        /usr/bin/python3 examples/train/train_digits.py [--quick] [--plot P] [--out J]

Model (64 -> 128 -> 64 -> 10):

    z1 = add(x @ W1^T, b1)                   opgrad: aclnnAdd (bias grad: aclnnReduceSum)
    h1 = mish(z1)                            opgrad: aclnnMish / aclnnMishBackward
    z2 = fused_add_scale(h1 @ W2^T, b2, s2)  opgrad: aclnnFusedAddScale(+Backward), (z+b)*s,
                                             s2 a learnable per-feature scale (init 1)
    h2 = gelu(z2)                            opgrad: aclnnGelu (tanh approximation) + backward
    logits = add(h2 @ W3^T, b3)              opgrad: aclnnAdd

The native twin is the same graph with `+`, `*`, F.mish and F.gelu(approximate='tanh'). The
matrix products (opgrad has no GEMM) and the softmax cross-entropy loss (opgrad has no exp/log
reduction) are torch's in every run. See docs/train.md for the tolerances and measured numbers.

Exit status: 0 when every check passes, 1 when one fails (each failure is printed), 2 on a
usage or set-up error.
"""
import argparse
import importlib
import json
import math
import os
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as F

    import opgrad
    import opgrad.torch as ot
    for _m in ("sklearn.datasets", "matplotlib"):  # fail here, not after the training
        importlib.import_module(_m)
except (ImportError, OSError) as _e:  # no torch / sklearn / matplotlib, or no libopgrad.so
    sys.stderr.write("train_digits.py: %s\n(needs /usr/bin/python3 with python3-torch, "
                     "python3-sklearn and python3-matplotlib; PYTHONPATH=<repo>/python; "
                     "OPGRAD_LIBRARY=<build>/libopgrad.so)\n" % _e)
    sys.exit(2)

BF16 = torch.bfloat16

# ---- tolerances (justified, with the measurements behind them, in docs/train.md) -------------
# opgrad fp32 vs torch fp32, epoch-mean training loss, every epoch: |L_o - L_t| <= LOSS_RTOL * L_t.
# The two runs differ only in the last bit or two of the activation / bias-add results (checked
# by the step-0 gradient check below); 690 momentum-SGD steps carry those differences along.
# Measured worst gap over 15 seeds (1 and 2 threads): 1.1e-6. The bound leaves ~10x headroom and
# still catches a formula-level difference: a twin with GELU's erf form instead of the tanh
# form (--twin-gelu none, max 5e-4 apart pointwise) reaches 7.7e-5 in epoch 2. A bound of 1e-3
# would let that through.
LOSS_RTOL = 1e-5
# Step-0 gradient check: at identical weights on the first batch, every parameter gradient of
# the opgrad graph vs the native graph, max |diff| / max |grad|. Measured <= 4e-7 (a few fp32
# ulp); the erf/tanh GELU mix-up gives 2.4e-4.
GRAD0_RTOL = 1e-5
# Final test accuracy, opgrad fp32 vs torch fp32: at most ACC_SAMPLES test samples apart
# (measured: the same count in 15/15 seeds).
ACC_SAMPLES = 1
# bf16 (fp32 master weights) vs opgrad fp32:
#  * final test accuracy within BF16_ACC_PP percentage points (measured <= 0.28 pp, 15 seeds);
#  * every epoch |L_bf16 - L_fp32| <= BF16_CURVE_RTOL * L_fp32 + BF16_CURVE_ATOL: the curve
#    follows fp32 throughout. The absolute term is about two training samples mispredicted at
#    ~7 nats (2 * 7 / 1437): once the mean loss is ~0.01, one sample's excursion (seed 1,
#    epochs 9-10: one sample at 6.3 nats, an SGD-momentum transient of the bf16 trajectory)
#    dominates the epoch mean. Measured worst 0.0074 (that transient), <= 0.0009 otherwise;
#  * final loss within BF16_FINAL_RTOL relative, for runs of >= BF16_FINAL_MIN_EPOCHS epochs
#    (measured -3.3% .. +0.4% at 30 epochs). Shorter runs end in the fast-descent phase where
#    such transients still happen (seed 1 at epoch 8: +17%); there it is reported, and the
#    curve bound above is the loss check.
BF16_ACC_PP = 2.0
BF16_CURVE_RTOL = 0.10
BF16_CURVE_ATOL = 0.01
BF16_FINAL_RTOL = 0.10
BF16_FINAL_MIN_EPOCHS = 20


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="CI mode: 8 epochs instead of 30 (same checks)")
    p.add_argument("--epochs", type=int, default=None, help="override the number of epochs")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0, help="weights, data order and split")
    p.add_argument("--threads", type=int, default=1,
                   help="torch and opgrad threads (default 1: bit-reproducible matmuls)")
    p.add_argument("--no-bf16", action="store_true", help="skip the bf16 run")
    p.add_argument("--twin-gelu", choices=("tanh", "none"), default="tanh",
                   help="GELU form of the native twin; 'none' (erf) is a negative control: "
                        "the twin then differs from opgrad's tanh-form aclnnGelu and the checks "
                        "must fail")
    p.add_argument("--plot", default=None,
                   help="PNG of the loss curves (default: %s)"
                        % os.path.join("$TMPDIR", "opgrad-train", "loss_curves.png"))
    p.add_argument("--out", default=None,
                   help="JSON with the curves and accuracies (default: next to the plot)")
    a = p.parse_args(argv)
    if a.epochs is None:
        a.epochs = 8 if a.quick else 30
    if a.epochs < 1 or a.batch < 1 or a.threads < 1:
        p.error("--epochs, --batch and --threads must be >= 1")
    outdir = os.path.join(tempfile.gettempdir(), "opgrad-train")
    if a.plot is None:
        a.plot = os.path.join(outdir, "loss_curves%s.png" % ("_quick" if a.quick else ""))
    if a.out is None:
        a.out = os.path.splitext(a.plot)[0] + ".json"
    return a


# ---- data ---------------------------------------------------------------------------------------
def load_data(seed):
    """sklearn's digits (1797 8x8 images shipped inside the package: no download), stratified
    1437 / 360 split, features standardised with the training set's mean and std."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    d = load_digits()
    xtr, xte, ytr, yte = train_test_split(d.data, d.target, test_size=360, stratify=d.target,
                                          random_state=seed)
    sc = StandardScaler().fit(xtr)  # constant pixels: scale 1, so they stay 0
    f = lambda a: torch.from_numpy(np.ascontiguousarray(sc.transform(a), dtype=np.float32))
    g = lambda a: torch.from_numpy(a.astype(np.int64))
    return f(xtr), g(ytr), f(xte), g(yte)


# ---- model --------------------------------------------------------------------------------------
SIZES = (64, 128, 64, 10)
NAMES = ("W1", "b1", "W2", "b2", "s2", "W3", "b3")


def init_params(seed):
    """nn.Linear's default initialisation (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and
    biases) from a seeded generator; s2 = 1."""
    g = torch.Generator().manual_seed(seed)
    p = {}
    for i, (fi, fo) in enumerate(zip(SIZES[:-1], SIZES[1:]), 1):
        bound = 1.0 / math.sqrt(fi)
        p["W%d" % i] = (torch.rand(fo, fi, generator=g) * 2 - 1) * bound
        p["b%d" % i] = (torch.rand(fo, generator=g) * 2 - 1) * bound
    p["s2"] = torch.ones(SIZES[2])
    return {k: p[k] for k in NAMES}


def clone_params(p):
    return {k: v.clone().requires_grad_(True) for k, v in p.items()}


def mm_fp32(a, w):
    return a @ w.t()


def mm_bf16(a, w):
    """bf16 operands, fp32 accumulation, bf16 result (as a bf16 GEMM unit, e.g. Ascend's cube,
    does). The gradients flowing back through it are rounded to bf16 as well."""
    return (a.float() @ w.float().t()).to(BF16)


def forward_opgrad(p, x, dtype=torch.float32):
    """The model on opgrad's operators. dtype bf16: every opgrad operator sees bf16 tensors
    (the fp32 master weights are cast to bf16 copies in the graph, so their gradients come back
    to the fp32 masters); the logits are returned in fp32 for the loss."""
    if dtype == torch.float32:
        q, mm = p, mm_fp32
    else:
        q, mm, x = {k: v.to(dtype) for k, v in p.items()}, mm_bf16, x.to(dtype)
    h1 = ot.mish(ot.add(mm(x, q["W1"]), q["b1"]))
    h2 = ot.gelu(ot.fused_add_scale(mm(h1, q["W2"]), q["b2"], q["s2"]))
    return ot.add(mm(h2, q["W3"]), q["b3"]).float()


TWIN_GELU = "tanh"


def forward_torch(p, x):
    """The same model on PyTorch's native operators."""
    h1 = F.mish(x @ p["W1"].t() + p["b1"])
    h2 = F.gelu((h1 @ p["W2"].t() + p["b2"]) * p["s2"], approximate=TWIN_GELU)
    return h2 @ p["W3"].t() + p["b3"]


# ---- training -----------------------------------------------------------------------------------
class Run:
    def __init__(self, name, label, forward, params, args):
        self.name, self.label, self.forward = name, label, forward
        self.p = clone_params(params)
        self.opt = torch.optim.SGD(self.p.values(), lr=args.lr, momentum=args.momentum)
        self.loss, self.test_acc, self.test_correct, self.test_loss = [], [], [], []
        self.seconds = 0.0

    def epoch(self, x, y, order, batch):
        t0 = time.perf_counter()
        total, n = 0.0, 0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            xb, yb = x[idx], y[idx]
            self.opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(self.forward(self.p, xb), yb)
            loss.backward()
            self.opt.step()
            total += loss.item() * len(idx)  # sample-weighted: the last batch is smaller
            n += len(idx)
        self.loss.append(total / n)
        self.seconds += time.perf_counter() - t0

    @torch.no_grad()
    def evaluate(self, x, y):
        logits = self.forward(self.p, x)
        correct = int((logits.argmax(1) == y).sum())
        self.test_correct.append(correct)
        self.test_acc.append(100.0 * correct / len(y))
        self.test_loss.append(float(F.cross_entropy(logits, y)))


def grad_check(params, x, y):
    """At identical weights on one batch: max |g_opgrad - g_torch| / max |g_torch| for every
    parameter and the loss difference. Localises a wrong operator before any training."""
    out = {}
    losses = []
    grads = []
    for fwd in (forward_opgrad, forward_torch):
        p = clone_params(params)
        loss = F.cross_entropy(fwd(p, x), y)
        loss.backward()
        losses.append(float(loss))
        grads.append({k: v.grad for k, v in p.items()})
    for k in NAMES:
        ref = grads[1][k]
        out[k] = float((grads[0][k] - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
    return losses, out


# ---- output -------------------------------------------------------------------------------------
def plot(path, runs, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = np.arange(1, args.epochs + 1)
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4.6))
    styles = {"opgrad": dict(color="C0", lw=2.2, marker="o", ms=4),
              "torch": dict(color="C1", lw=1.2, ls="--", marker="x", ms=5),
              "opgrad_bf16": dict(color="C2", lw=1.2, ls=":", marker="s", ms=3)}
    for r in runs.values():
        a0.plot(ep, r.loss, label="%s (test acc %.2f%%)" % (r.label, r.test_acc[-1]),
                **styles[r.name])
    a0.set_yscale("log")
    a0.set_xlabel("epoch")
    a0.set_ylabel("training loss (epoch mean, cross-entropy)")
    a0.set_title("digits MLP 64-128-64-10 (Mish, GELU tanh, bias add, (z+b)*s)", fontsize=10)
    a0.grid(True, which="both", alpha=0.3)
    a0.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
    o, t = np.array(runs["opgrad"].loss), np.array(runs["torch"].loss)
    rel = np.abs(o - t) / t
    a1.semilogy(ep, np.maximum(rel, 1e-12), color="C0", marker="o", ms=4,
                label="|opgrad fp32 - torch fp32| / torch fp32")
    a1.axhline(LOSS_RTOL, color="C0", ls="--", lw=1,
               label="fp32 tolerance (relative) %.0e" % LOSS_RTOL)
    if "opgrad_bf16" in runs:
        b = np.array(runs["opgrad_bf16"].loss)
        a1.semilogy(ep, np.maximum(np.abs(b - o) / o, 1e-12), color="C2", ls=":", marker="s",
                    ms=3, label="|opgrad bf16 - opgrad fp32| / opgrad fp32")
        a1.axhline(BF16_FINAL_RTOL, color="C2", ls="--", lw=1,
                   label="bf16 margin (relative part) %.0f%%" % (100 * BF16_FINAL_RTOL))
    a1.set_xlabel("epoch")
    a1.set_ylabel("relative loss difference")
    a1.set_title("loss gap per epoch")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main(argv=None):
    global TWIN_GELU
    args = parse_args(argv)
    TWIN_GELU = args.twin_gelu
    t_start = time.perf_counter()
    torch.set_num_threads(args.threads)
    opgrad.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)

    xtr, ytr, xte, yte = load_data(args.seed)
    params = init_params(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    orders = [torch.randperm(len(ytr), generator=g) for _ in range(args.epochs)]
    print("opgrad %s (%s), torch %s, %d thread(s); digits: %d train / %d test, %d epochs, "
          "batch %d, SGD lr %g momentum %g, seed %d"
          % (opgrad.version(), opgrad.library_path, torch.__version__, args.threads, len(ytr),
             len(yte), args.epochs, args.batch, args.lr, args.momentum, args.seed))

    failures = []

    # Step 0: same weights, same batch, both graphs -> gradients must agree to a few ulp.
    losses0, g0 = grad_check(params, xtr[orders[0][:args.batch]], ytr[orders[0][:args.batch]])
    worst = max(g0.values())
    print("step-0 check (first batch, identical weights): loss opgrad %.9f torch %.9f; "
          "max rel grad diff %.2e (%s)" % (losses0[0], losses0[1], worst,
                                            ", ".join("%s %.1e" % kv for kv in g0.items())))
    if worst > GRAD0_RTOL:
        failures.append("step-0 gradients differ by %.2e > %.0e (worst: %s)"
                        % (worst, GRAD0_RTOL, max(g0, key=g0.get)))

    runs = {"opgrad": Run("opgrad", "opgrad fp32", forward_opgrad, params, args),
            "torch": Run("torch", "torch fp32", forward_torch, params, args)}
    if not args.no_bf16:
        runs["opgrad_bf16"] = Run("opgrad_bf16", "opgrad bf16 (fp32 master)",
                                  lambda p, x: forward_opgrad(p, x, BF16), params, args)

    hdr = "%5s  %12s %12s %9s  %8s %8s" % ("epoch", "loss opgrad", "loss torch", "rel diff",
                                         "acc og%", "acc pt%")
    if "opgrad_bf16" in runs:
        hdr += "  %12s %8s" % ("loss bf16", "acc bf%")
    print(hdr)
    for e in range(args.epochs):
        for r in runs.values():
            r.epoch(xtr, ytr, orders[e], args.batch)
            r.evaluate(xte, yte)
        lo, lt = runs["opgrad"].loss[-1], runs["torch"].loss[-1]
        rel = abs(lo - lt) / lt
        line = "%5d  %12.8f %12.8f %9.2e  %8.2f %8.2f" % (
            e + 1, lo, lt, rel, runs["opgrad"].test_acc[-1], runs["torch"].test_acc[-1])
        if "opgrad_bf16" in runs:
            line += "  %12.8f %8.2f" % (runs["opgrad_bf16"].loss[-1],
                                        runs["opgrad_bf16"].test_acc[-1])
        if abs(lo - lt) > LOSS_RTOL * lt:
            line += "   <-- exceeds %.0e" % LOSS_RTOL
            failures.append("epoch %d: loss opgrad %.8f vs torch %.8f (rel %.2e > %.0e)"
                            % (e + 1, lo, lt, rel, LOSS_RTOL))
        print(line, flush=True)

    o, t = runs["opgrad"], runs["torch"]
    rels = [abs(a - b) / b for a, b in zip(o.loss, t.loss)]
    pdiff = max(float((o.p[k] - t.p[k]).abs().max() / t.p[k].abs().max()) for k in NAMES)
    dsamp = abs(o.test_correct[-1] - t.test_correct[-1])
    print("fp32: max per-epoch rel loss diff %.2e (tolerance %.0e); final loss opgrad %.8f "
          "torch %.8f; test accuracy opgrad %.2f%% (%d/%d) torch %.2f%% (%d/%d), %d sample(s) "
          "apart; final weights max rel diff %.2e"
          % (max(rels), LOSS_RTOL, o.loss[-1], t.loss[-1], o.test_acc[-1], o.test_correct[-1],
             len(yte), t.test_acc[-1], t.test_correct[-1], len(yte), dsamp, pdiff))
    if dsamp > ACC_SAMPLES:
        failures.append("final test accuracy opgrad %d/%d vs torch %d/%d: more than %d sample "
                        "apart" % (o.test_correct[-1], len(yte), t.test_correct[-1], len(yte),
                                   ACC_SAMPLES))

    result = {
        "config": {k: getattr(args, k) for k in ("epochs", "batch", "lr", "momentum", "seed",
                                                   "threads", "quick", "twin_gelu")},
        "versions": {"opgrad": opgrad.version(), "torch": torch.__version__},
        "tolerances": {"loss_rtol": LOSS_RTOL, "grad0_rtol": GRAD0_RTOL,
                       "acc_samples": ACC_SAMPLES, "bf16_acc_pp": BF16_ACC_PP,
                       "bf16_curve_rtol": BF16_CURVE_RTOL, "bf16_curve_atol": BF16_CURVE_ATOL,
                       "bf16_final_rtol": BF16_FINAL_RTOL,
                       "bf16_final_min_epochs": BF16_FINAL_MIN_EPOCHS},
        "step0": {"loss_opgrad": losses0[0], "loss_torch": losses0[1], "grad_rel_diff": g0},
        "max_rel_loss_diff": max(rels),
        "final_weights_max_rel_diff": pdiff,
        "runs": {r.name: {"label": r.label, "train_loss": r.loss, "test_loss": r.test_loss,
                          "test_acc": r.test_acc, "test_correct": r.test_correct,
                          "n_test": len(yte), "seconds": r.seconds} for r in runs.values()},
    }

    if "opgrad_bf16" in runs:
        b = runs["opgrad_bf16"]
        dacc = b.test_acc[-1] - o.test_acc[-1]
        dloss = b.loss[-1] - o.loss[-1]
        gaps = [abs(x - y) for x, y in zip(b.loss, o.loss)]
        worst = max(range(len(gaps)), key=gaps.__getitem__)
        final_checked = args.epochs >= BF16_FINAL_MIN_EPOCHS
        print("bf16 (fp32 master weights): final loss %.6f vs fp32 %.6f (%+.1f%%, margin %.0f%%%s);"
              " test accuracy %.2f%% vs %.2f%% (%+.2f pp, margin %.1f pp); largest per-epoch loss "
              "gap %.4f at epoch %d (margin %.0f%% + %g)"
              % (b.loss[-1], o.loss[-1], 100 * dloss / o.loss[-1], 100 * BF16_FINAL_RTOL,
                 "" if final_checked else ", reported only: < %d epochs" % BF16_FINAL_MIN_EPOCHS,
                 b.test_acc[-1], o.test_acc[-1], dacc, BF16_ACC_PP, gaps[worst], worst + 1,
                 100 * BF16_CURVE_RTOL, BF16_CURVE_ATOL))
        result["bf16"] = {"final_loss_diff": dloss, "final_loss_rel_diff": dloss / o.loss[-1],
                          "final_acc_diff_pp": dacc, "max_epoch_loss_gap": gaps[worst],
                          "max_epoch_loss_gap_epoch": worst + 1,
                          "final_loss_checked": final_checked}
        if abs(dacc) > BF16_ACC_PP:
            failures.append("bf16 test accuracy %.2f%% vs fp32 %.2f%%: more than %.1f pp apart"
                            % (b.test_acc[-1], o.test_acc[-1], BF16_ACC_PP))
        for e, (lb, lf) in enumerate(zip(b.loss, o.loss)):
            if abs(lb - lf) > BF16_CURVE_RTOL * lf + BF16_CURVE_ATOL:
                failures.append("bf16 epoch %d: loss %.6f vs fp32 %.6f, beyond %.0f%% + %g"
                                % (e + 1, lb, lf, 100 * BF16_CURVE_RTOL, BF16_CURVE_ATOL))
        if final_checked and abs(dloss) > BF16_FINAL_RTOL * o.loss[-1]:
            failures.append("bf16 final loss %.6f vs fp32 %.6f: more than %.0f%% apart"
                            % (b.loss[-1], o.loss[-1], 100 * BF16_FINAL_RTOL))

    plot(args.plot, runs, args)
    result["failures"] = failures
    result["seconds_total"] = time.perf_counter() - t_start
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("time: %s; total %.1f s" % (", ".join("%s %.1f s" % (r.label, r.seconds)
                                               for r in runs.values()), result["seconds_total"]))
    print("plot: %s" % os.path.abspath(args.plot))
    print("json: %s" % os.path.abspath(args.out))
    if failures:
        print("FAILED (%d):" % len(failures))
        for m in failures:
            print("  " + m)
        return 1
    print("OK: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
