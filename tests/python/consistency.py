#!/usr/bin/python3
"""Cross-framework consistency: opgrad.torch against PyTorch, both measured against float64.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/consistency.py \
        [--out table.md] [--ops mish,gelu,...] [--dtypes float32,float16,bfloat16] [--n 128 --m 96]

For every operator PyTorch also has, every dtype (float32, float16, bfloat16) and layout
(contiguous, transposed, expanded = a stride-0 input, and broadcast for binary operators), the
same quantized inputs x and grad_output g (uniform in the operator's domain, resp. [-2, 2],
drawn in float64 and rounded to the dtype) go to
  * opgrad:  y = opgrad.torch.<op>(x) in the dtype, gradients by autograd (opgrad's backward ops);
  * PyTorch: its own operator in the dtype when PyTorch 1.13's CPU build has the kernel
             ("native"); otherwise the way a user would write it, f(x.float()).to(dtype), with
             autograd through the casts ("upcast");
  * truth:   PyTorch's operator in float64 on the same quantized x and g (not rounded).
Gradients are those of the operator's own inputs (for the expanded layout: of the stride-0 view,
before PyTorch's ExpandBackward sums it, which is the same code for both and only adds
cancellation noise; for the broadcast layout the [m] input's gradient is opgrad's own reduction).
Per result tensor (the forward output, and each input's gradient), with err = |r - truth| and
rel = err / max(|truth|, tiny) (tiny = the dtype's smallest normal, so that results that
underflow in the dtype do not divide by zero):
  MARE = max rel,  MERE = mean rel,  RMSE = sqrt(mean err^2),
and the ratio opgrad / PyTorch of each, guarded: ratio = max(opgrad, floor) / max(PyTorch, floor)
with floor = u (half an ulp, relative: 2^-24, 2^-11, 2^-8) for MARE and MERE and u * RMS(truth)
for RMSE. Two results within half an ulp of the truth therefore compare as 1, and an exact
PyTorch result (0 error) is compared with half an ulp instead of with 0.
Requirement: ratio <= 1.2 for MERE and RMSE and <= 2 for MARE. A failing row prints the worst
element (its index, inputs, both results and the truth). Exit status 1 if any row fails.

With --jax PYTHON (tests/python/jax.sh), the same quantized inputs and grad_output of every case
also go to JAX: they are written to an exchange folder (--jax-dir, default a temporary one),
tests/python/jax_side.py runs under PYTHON (a venv with jax) and computes JAX's forward and
jax.vjp gradients in the dtype, and its results are measured here against the same float64 truth,
so opgrad and PyTorch run once. The table then has, per metric, the JAX error and the ratio
opgrad / JAX beside opgrad / PyTorch, under the same floors and limits (a failing opgrad / JAX
ratio fails the run as an opgrad / PyTorch one does), and a column "JAX vs PyTorch" that names,
where those two differ beyond the limits in either direction, the one closer to float64.
Operators without a JAX counterpart are listed as such.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from optable import CASES, DTYPES, MATMUL_CASES, TRAINING_CASES, make_inputs, magnitudes  # noqa: E402

import torch  # noqa: E402

import opgrad  # noqa: E402

U = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
LIMITS = {"MARE": 2.0, "MERE": 1.2, "RMSE": 1.2}
SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def metrics(got, truth, dtype, mag=None):
    got = got.detach().double().flatten()
    truth = truth.detach().double().flatten()
    err = (got - truth).abs()
    if torch.isnan(got).any() and not torch.isnan(truth).any():
        return {"MARE": math.inf, "MERE": math.inf, "RMSE": math.inf}, err, None
    denom = truth.abs()
    if mag is not None:  # a sum of products: relative to the sum of |terms| where it cancels
        denom = torch.maximum(denom, mag.detach().double().flatten())
    rel = err / denom.clamp_min(torch.finfo(dtype).tiny)
    if err.numel() == 0:
        return {"MARE": 0.0, "MERE": 0.0, "RMSE": 0.0}, err, rel
    return {"MARE": rel.max().item(), "MERE": rel.mean().item(),
            "RMSE": err.pow(2).mean().sqrt().item()}, err, rel


def ratios(mo, mp, truth, dtype):
    u = U[dtype]
    rms = truth.detach().double().pow(2).mean().sqrt().item() if truth.numel() else 0.0
    floors = {"MARE": u, "MERE": u, "RMSE": max(u * rms, 1e-300)}
    return {k: max(mo[k], floors[k]) / max(mp[k], floors[k]) for k in mo}


def op_inputs(leaves, views, dtype=None):
    """The tensors handed to the operator (views of fresh leaves), with their .grad kept: the
    gradients measured are those of the operator's own inputs."""
    ls = [(l.double() if dtype is torch.float64 else l.clone()).requires_grad_() for l in leaves]
    xs = [v(l) for v, l in zip(views, ls)]
    for x in xs:
        if not x.is_leaf:
            x.retain_grad()
    return xs


def torch_run(case, leaves, views, g, dtype, upcast):
    xs = op_inputs(leaves, views)
    if upcast:
        y = case.pt(*[x.float() for x in xs]).to(dtype)
    else:
        y = case.pt(*xs)
    y.backward(g)
    return y, [x.grad for x in xs]


def run(case, dname, layout, n, m, seed, keep=None):
    """The rows of one case. keep: a list that gets, for --jax, the case's operator inputs,
    grad_output, rows and per row the truth, magnitude and both results."""
    dtype = DTYPES[dname]
    gen = torch.Generator().manual_seed(seed)
    leaves, views = make_inputs(case, dtype, layout, n, m, gen)
    # opgrad
    xo = op_inputs(leaves, views)
    yo = case.og(*xo)
    g = (torch.rand(yo.shape, generator=gen, dtype=torch.float64) * 4 - 2).to(dtype)
    yo.backward(g)
    # truth
    xt = op_inputs(leaves, views, torch.float64)
    yt = case.truth(*xt)
    yt.backward(g.double())
    mags = magnitudes(case, xt, g) or [None] * (1 + len(xt))
    # PyTorch, native if it can
    path = "native"
    try:
        yp, gp = torch_run(case, leaves, views, g, dtype, upcast=False)
    except RuntimeError:
        path = "upcast"
        yp, gp = torch_run(case, leaves, views, g, dtype, upcast=True)
    results = [("fwd", yo.detach(), yp.detach(), yt.detach(), mags[0])]
    for i, x in enumerate(xt):
        tag = "bwd" if case.nin == 1 else "bwd[%d]" % i
        results.append((tag, xo[i].grad, gp[i], x.grad, mags[1 + i]))
    rows = []
    for tag, ro, rp, tr, mag in results:
        mo, erro, relo = metrics(ro, tr, dtype, mag)
        mp, _, _ = metrics(rp, tr, dtype, mag)
        r = ratios(mo, mp, tr, dtype)
        fails = [k for k in LIMITS if not r[k] <= LIMITS[k]]
        worst = None
        if fails and relo is not None and relo.numel():
            k = int(relo.argmax().item()) if "RMSE" not in fails else int(erro.argmax().item())
            worst = {"index": k, "opgrad": ro.double().flatten()[k].item(),
                     "torch": rp.double().flatten()[k].item(),
                     "truth": tr.double().flatten()[k].item(),
                     "inputs": _inputs_at(case, xo, tag, k, yo.shape, g, ro.shape)}
        rows.append({"op": case.name, "dtype": dname, "layout": layout, "result": tag,
                     "path": path, "og": mo, "pt": mp, "ratio": r, "fails": fails,
                     "worst": worst})
    if keep is not None:
        keep.append({"case": case, "dtype": dname, "layout": layout, "g": g,
                     "xs": [x.detach() for x in xo], "out_shape": tuple(yo.shape), "rows": rows,
                     "tensors": [(tr, mag, ro, rp) for _, ro, rp, tr, mag in results]})
    return rows


def _inputs_at(case, xs, tag, k, out_shape, g, shape):
    """The operator inputs and grad_output behind flat element k of a result of `shape`."""
    if tuple(shape) != tuple(out_shape) or case.name.startswith("reduce_sum") or case.k:
        return "element %d of a result of shape %s (a reduction)" % (k, list(shape))
    vals = ["x%d=%r" % (i, x.detach().expand(out_shape).flatten()[k].item())
            for i, x in enumerate(xs)]
    if tag != "fwd":
        vals.append("g=%r" % g.flatten()[k].item())
    return ", ".join(vals)


def fmt(v):
    if v == 0:
        return "0"
    if math.isinf(v):
        return "inf"
    return "%.2e" % v


# Gaps measured and not yet closed, by (op, dtype). Their rows are still computed and printed
# as FAIL; they do not fail the run, but a listed gap that no longer fails does (remove it).
KNOWN_GAPS = {
    # PyTorch's CPU batch norm accumulates its per-channel sums in double (acc_type<float> on the
    # CPU); opgrad's BatchNorm on a rank-2 input ([N, C], no spatial dims: the REDUCE path, see
    # docs/ops/batch_norm.md) sums dy (x - mean) in fp32 in the reduction engine's fixed order,
    # within its bound but about 2 ulps off at N = 128 where PyTorch's is correctly rounded:
    # gradWeight RMSE 1.5x PyTorch's (transposed layout; PyTorch 1.13 and 2.5.1). The row path
    # (rank >= 3) combines its statistics in double and has no such gap.
    ("batch_norm[train]", "float32"): "fp32 per-channel sums on the rank-2 path vs PyTorch's "
                                      "double accumulation",
}
if torch.backends.mkl.is_available():
    # PyTorch's pip wheels multiply float32 through MKL, whose sgemv sums each product of a short
    # K in several partial sums (across vector lanes); opgrad's GEMM engine sums K in slices of 256,
    # each one fp32 FMA chain in k order (bitwise the same on every ISA, blocking and thread
    # count: docs/ops/matmul.md), so a matrix-vector product with K = 96 is one chain of 96 and
    # carries sqrt-of-length more rounding: RMSE 1.65-2.1x MKL's (PyTorch 2.5.1, seed 2024).
    # Longer sums are sliced like MKL's K-blocked sgemm and match it (the batch-folded weight
    # gradient, K = 384, no longer differs). Debian's PyTorch 1.13 uses the reference BLAS (one
    # chain without FMA): opgrad is then as accurate or better.
    KNOWN_GAPS.update({
        ("matmul[vec]", "float32"): "one FMA chain over K = 96 vs MKL's sgemv partial sums",
    })


# opgrad / JAX rows that fail, by (op, dtype), as KNOWN_GAPS: measured with jax 0.10.2 (CPU,
# jit), seed 2024; their rows still print FAIL. All float32: in 16-bit dtypes opgrad computes in
# fp32 and rounds once, where JAX often computes in the dtype, and opgrad is ahead.
# XLA's CPU dot sums K with several partial sums; opgrad's GEMM engine in one fp32 FMA chain per
# K slice of 256 (as with MKL above): RMSE 1.25-1.57x JAX's at K = 128 (the gradients), 2.33x for
# the matrix-vector product (K = 96); PyTorch 1.13 (reference BLAS) is behind both.
_XLA_DOT = "fp32 dot: one FMA chain per K slice vs XLA's partial sums"
KNOWN_JAX_GAPS = {
    **{(op, "float32"): _XLA_DOT for op in (
        "matmul", "matmul[vec]", "matmul[batch]", "mm", "bmm", "addmm[b=0.5,a=2]",
        "baddbmm[b=0.5,a=1.5]", "linear", "linear[relu]", "linear[relu][nobias]")},
    # the weight / bias gradients are column sums over the 128 rows: RMSE 1.25-1.39x JAX's
    # (XLA's reduction keeps partial sums), 0.46-1.11x PyTorch 1.13's
    ("layer_norm", "float32"): "fp32 column sums of the weight / bias gradients vs XLA's",
    ("rms_norm", "float32"): "fp32 column sum of the weight gradient vs XLA's",
    # (softmax - onehot) g / N: MERE 1.84e-7, JAX 9.7e-8, PyTorch 1.89e-7; a plain fp32
    # exp / sum softmax of the logits gives 1.04e-7. aclnnCrossEntropyLossGrad takes the fp32
    # log-probabilities (ops-nn's signature), so e^lp carries lp's rounding, |lp| 2^-24, as
    # PyTorch's does: the logits are not an input of the backward
    ("cross_entropy", "float32"): "backward MERE 1.9x JAX's: e^lp from fp32 log-probabilities",
    # expanded layout: constant rows, so the gradient g - softmax sum(g) cancels: one element's
    # relative error 2.8e-4 vs JAX's 9.4e-5 (PyTorch 1.5e-4); MERE 1.19x
    ("log_softmax", "float32"): "MARE of a cancelling element (expanded layout), 2.9x JAX's",
    # one scalar, the sum of 12288 terms: opgrad 1.7 ulp off, JAX 0.7, PyTorch 10: one sample
    ("reduce_sum[all]", "float32"): "a single sum's rounding (expanded layout): 1.7 vs 0.7 ulp",
}


def _flat_np(t):
    """A tensor's values as a contiguous float32 array (exact for fp32, fp16 and bf16)."""
    return t.detach().float().contiguous().numpy()


def jax_compare(keep, python, workdir=None):
    """Runs jax_side.py under `python` on the kept cases' inputs and adds to each row: "jax" (JAX's
    metrics, None where JAX has no counterpart), "jax_how" / "jax_what", "ratio_j" (opgrad / JAX),
    "fails_j", "vs" (JAX vs PyTorch, where they differ beyond the limits) and "worst_j". Returns
    jax_side's report (jax.json), or None if jax_side.py failed."""
    import numpy as np  # only the --jax path needs numpy

    d = workdir or tempfile.mkdtemp(prefix="opgrad-jax-")
    os.makedirs(d, exist_ok=True)
    try:
        index = []
        for i, rec in enumerate(keep):
            arrays = {"x%d" % k: _flat_np(x) for k, x in enumerate(rec["xs"])}
            np.savez(os.path.join(d, "in_%d.npz" % i), g=_flat_np(rec["g"]), **arrays)
            index.append({"id": i, "case": rec["case"].name, "dtype": rec["dtype"],
                          "layout": rec["layout"], "nin": len(rec["xs"])})
        with open(os.path.join(d, "cases.json"), "w") as f:
            json.dump(index, f)
        side = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_side.py")
        if subprocess.call([python, side, d]) != 0:
            print("jax_side.py failed (its error is above)")
            return None
        with open(os.path.join(d, "jax.json")) as f:
            report = json.load(f)
        for i, rec in enumerate(keep):
            entry = report["cases"][str(i)]
            out = None
            if entry["how"] and "error" not in entry:
                with np.load(os.path.join(d, "out_%d.npz" % i)) as z:
                    out = [z["y"]] + [z["g%d" % k] for k in range(len(rec["xs"]))]
            for k, (row, (tr, mag, ro, rp)) in enumerate(zip(rec["rows"], rec["tensors"])):
                _jax_row(row, entry, None if out is None else out[k], tr, mag, ro, rp, rec)
    finally:
        if workdir is None:
            shutil.rmtree(d, ignore_errors=True)
    return report


def _jax_row(row, entry, rj, tr, mag, ro, rp, rec):
    dtype = DTYPES[row["dtype"]]
    row.update(jax_how=entry["how"], jax_what=entry["what"], jax=None, ratio_j=None, fails_j=[],
               vs="", worst_j=None, jax_error=entry.get("error"))
    if entry.get("error"):
        row["fails_j"] = ["error"]
        return
    if rj is None:
        return
    rj = torch.from_numpy(rj).to(dtype)
    if tuple(rj.shape) != tuple(tr.shape):
        row["jax_error"] = "JAX result of shape %s, truth %s" % (list(rj.shape), list(tr.shape))
        row["fails_j"] = ["error"]
        return
    mo = row["og"]
    mj, _, _ = metrics(rj, tr, dtype, mag)
    r = ratios(mo, mj, tr, dtype)
    row.update(jax=mj, ratio_j=r, fails_j=[k for k in LIMITS if not r[k] <= LIMITS[k]])
    # JAX vs PyTorch, both directions, under the same floors and limits
    mp = row["pt"]
    pj, jp = ratios(mp, mj, tr, dtype), ratios(mj, mp, tr, dtype)
    notes = []
    for who, q in (("PyTorch", jp), ("JAX", pj)):
        ks = [k for k in LIMITS if q[k] > LIMITS[k]]
        if ks:
            notes.append("%s closer to float64 (jax vs pt: %s)" % (who, ", ".join(
                "%s %s vs %s" % (k, fmt(mj[k]), fmt(mp[k])) for k in ks)))
    row["vs"] = "; ".join(notes)
    if row["fails_j"]:
        _, erro, relo = metrics(ro, tr, dtype, mag)
        k = int(relo.argmax().item()) if "RMSE" not in row["fails_j"] else int(erro.argmax().item())
        row["worst_j"] = {"index": k, "opgrad": ro.double().flatten()[k].item(),
                          "jax": rj.double().flatten()[k].item(),
                          "torch": rp.double().flatten()[k].item(),
                          "truth": tr.double().flatten()[k].item(),
                          "inputs": _inputs_at(rec["case"], rec["xs"], row["result"], k,
                                               rec["out_shape"], rec["g"], ro.shape)}


def _unexpected(failed, rows, gaps, what, closed_fails=True):
    """Failed rows not in `gaps` (a known gap that no longer fails counts as unexpected too, unless
    not closed_fails: JAX's gaps, whose size depends on the code XLA generates for this CPU)."""
    unexpected = [r for r in failed if (r["op"], r["dtype"]) not in gaps]
    for (op, dname), why in gaps.items():
        n = sum(1 for r in failed if (r["op"], r["dtype"]) == (op, dname))
        ran = any(r["op"] == op and r["dtype"] == dname for r in rows)
        if n:
            print("KNOWN GAP%s %s %s: %d row(s) above: %s" % (what, op, dname, n, why))
        elif ran and closed_fails:
            print("KNOWN GAP%s CLOSED %s %s: no row fails any more; remove it from KNOWN%s_GAPS"
                  % (what, op, dname, "_JAX" if what else ""))
            unexpected.append({"op": op})
        elif ran:
            print("KNOWN GAP%s %s %s: no row fails on this machine (XLA's code depends on the CPU)"
                  % (what, op, dname))
    return unexpected


def jax_main(args, rows, keep, ncases, t0):
    """--jax: the table with the JAX columns (printed, and to --out), exit status."""
    report = jax_compare(keep, args.jax, args.jax_dir)
    if report is None:
        return 1
    head = ("op", "dtype", "layout", "result", "torch", "jax")
    for k in LIMITS:
        head += ("%s og" % k, "%s pt" % k, "%s jax" % k, "og/pt", "og/jax")
    head += ("status", "JAX vs PyTorch")
    table = []
    for r in rows:
        cells = [r["op"], SHORT[r["dtype"]], r["layout"], r["result"], r["path"],
                 r["jax_how"] or "none"]
        for k in LIMITS:
            j = r["jax"]
            cells += [fmt(r["og"][k]), fmt(r["pt"][k]), fmt(j[k]) if j else "-",
                      "%.2f" % r["ratio"][k], "%.2f" % r["ratio_j"][k] if j else "-"]
        bad = ["pt:" + k for k in r["fails"]] + ["jax:" + k for k in r["fails_j"]]
        cells += ["FAIL(" + ",".join(bad) + ")" if bad else "ok", r["vs"]]
        table.append(cells)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    print(line(head))
    for t in table:
        print(line(t))

    failed = [r for r in rows if r["fails"]]
    failed_j = [r for r in rows if r["fails_j"]]
    compared = [r for r in rows if r["jax"]]
    worst = {k: max((r["ratio_j"][k] for r in compared), default=0.0) for k in LIMITS}
    pt_closer = sum(1 for r in compared if "PyTorch closer" in r["vs"])
    jax_closer = sum(1 for r in compared if "JAX closer" in r["vs"])
    lacks = {}  # how -> ops: JAX has no operator of its own for these
    for r in rows:
        if r["jax_how"] in (None, "composed"):
            lacks.setdefault(r["jax_how"], {})[r["op"]] = r["jax_what"]
    summary = ("%d rows (%d ops x dtypes x layouts x results), %d compared with JAX; failed: %d "
               "vs PyTorch, %d vs JAX; worst opgrad/JAX ratios: MARE %.2f (limit 2), MERE %.2f "
               "(limit 1.2), RMSE %.2f (limit 1.2); JAX and PyTorch differ beyond the limits on "
               "%d rows (PyTorch closer to float64 on %d, JAX on %d); torch %s, jax %s (%s), "
               "libopgrad %s, %.1f s" % (
                   len(rows), ncases, len(compared), len(failed), len(failed_j), worst["MARE"],
                   worst["MERE"], worst["RMSE"], sum(1 for r in compared if r["vs"]), pt_closer,
                   jax_closer, torch.__version__, report["jax"], report["backend"],
                   opgrad.version(), time.time() - t0))
    notes = []
    if lacks.get("composed"):
        notes.append("JAX has no operator for %s: compared with a composition of jax.nn / "
                     "jax.numpy (column jax = composed): %s" % (
                         ", ".join(sorted(lacks["composed"])),
                         "; ".join("%s = %s" % kv for kv in sorted(lacks["composed"].items()))))
    if lacks.get(None):
        notes.append("JAX lacks %s: not compared (column jax = none)"
                     % ", ".join(sorted(lacks[None])))
    for r in failed:
        w = r["worst"] or {}
        notes.append("FAIL vs PyTorch %s %s %s %s (%s): ratios %s; worst element %s: opgrad %r, "
                     "torch %r, truth %r (inputs: %s)" % (
                         r["op"], r["dtype"], r["layout"], r["result"], r["path"],
                         ", ".join("%s %.2f" % (k, r["ratio"][k]) for k in r["fails"]),
                         w.get("index"), w.get("opgrad"), w.get("torch"), w.get("truth"),
                         w.get("inputs")))
    for r in failed_j:
        if r["jax_error"]:
            notes.append("FAIL vs JAX %s %s %s %s: %s" % (r["op"], r["dtype"], r["layout"],
                                                          r["result"], r["jax_error"]))
            continue
        w = r["worst_j"]
        notes.append("FAIL vs JAX %s %s %s %s (%s): ratios %s; worst element %s: opgrad %r, "
                     "jax %r, torch %r, truth %r (inputs: %s)" % (
                         r["op"], r["dtype"], r["layout"], r["result"], r["jax_what"],
                         ", ".join("%s %.2f" % (k, r["ratio_j"][k]) for k in r["fails_j"]),
                         w["index"], w["opgrad"], w["jax"], w["torch"], w["truth"],
                         w["inputs"]))
    print()
    print(summary)
    for n in notes:
        print(n)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# opgrad.torch vs PyTorch vs JAX: error against float64\n\n")
            f.write("Inputs [%d, %d] (seed %d), the same quantized values and grad_output for "
                    "every framework. `torch`: native / upcast as in the PyTorch table. `jax`: "
                    "jax.nn = a jax.nn function, jnp = jax.numpy, composed = JAX has no such "
                    "operator, written from jax.nn / jax.numpy; run under jax.jit in the dtype "
                    "(JAX %s, CPU), gradients by jax.vjp; a layout is only the values JAX gets "
                    "(its arrays are dense). og/pt, og/jax = opgrad's error / the other's "
                    "(floors: half an ulp). Limits for both: MARE 2, MERE 1.2, RMSE 1.2. "
                    "`JAX vs PyTorch`: where their errors differ beyond those limits, the one "
                    "closer to float64.\n\n" % (args.n, args.m, args.seed, report["jax"]))
            f.write("| " + " | ".join(head) + " |\n")
            f.write("|" + "---|" * len(head) + "\n")
            for t in table:
                f.write("| " + " | ".join(str(c) for c in t) + " |\n")
            f.write("\n" + summary + "\n\n")
            for n in notes:
                f.write("- " + n + "\n")
    bad = _unexpected(failed, rows, KNOWN_GAPS, "")
    bad += _unexpected(failed_j, rows, KNOWN_JAX_GAPS, " (JAX)", closed_fails=False)
    bad += [r for r in failed_j if r["jax_error"]]  # a JAX error is never a known gap
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the table as markdown to this path")
    ap.add_argument("--ops", help="comma-separated case names (default: every op PyTorch has)")
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--layouts", default="contiguous,transposed,expanded,broadcast")
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--m", type=int, default=96)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--jax", metavar="PYTHON",
                    help="also compare with JAX: run jax_side.py under this interpreter")
    ap.add_argument("--jax-dir", help="--jax: keep the exchanged inputs / results here")
    args = ap.parse_args()

    everything = CASES + MATMUL_CASES + TRAINING_CASES
    cases = [c for c in everything if c.torch_has]
    if args.ops:
        want = args.ops.split(",")
        cases = [c for c in everything if c.name in want or c.op in want]
    layouts = args.layouts.split(",")
    t0 = time.time()
    rows = []
    keep = [] if args.jax else None
    for case in cases:
        for dname in args.dtypes.split(","):
            for layout in layouts:
                if layout == "broadcast" and case.nin != 2:
                    continue
                if case.k and layout not in case.layouts_or_all():
                    continue  # the matmul family: the layouts its operand shapes allow
                rows += run(case, dname, layout, args.n, args.m, args.seed, keep)
    if args.jax:
        return jax_main(args, rows, keep, len(cases), t0)

    head = ("op", "dtype", "layout", "result", "torch", "MARE og", "MARE pt", "ratio",
            "MERE og", "MERE pt", "ratio", "RMSE og", "RMSE pt", "ratio", "status")
    table = []
    for r in rows:
        o, p, q = r["og"], r["pt"], r["ratio"]
        table.append((r["op"], SHORT[r["dtype"]], r["layout"], r["result"], r["path"],
                      fmt(o["MARE"]), fmt(p["MARE"]), "%.2f" % q["MARE"],
                      fmt(o["MERE"]), fmt(p["MERE"]), "%.2f" % q["MERE"],
                      fmt(o["RMSE"]), fmt(p["RMSE"]), "%.2f" % q["RMSE"],
                      "FAIL(" + ",".join(r["fails"]) + ")" if r["fails"] else "ok"))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    print(line(head))
    for t in table:
        print(line(t))
    failed = [r for r in rows if r["fails"]]
    worst = {k: max((r["ratio"][k] for r in rows), default=0.0) for k in LIMITS}
    summary = ("%d rows (%d ops x dtypes x layouts x results), %d failed; worst ratios: MARE %.2f "
               "(limit 2), MERE %.2f (limit 1.2), RMSE %.2f (limit 1.2); torch %s, libopgrad %s, "
               "%.1f s" % (len(rows), len(cases), len(failed), worst["MARE"], worst["MERE"],
                           worst["RMSE"], torch.__version__, opgrad.version(), time.time() - t0))
    print()
    print(summary)
    for r in failed:
        w = r["worst"] or {}
        print("FAIL %s %s %s %s (%s): ratios %s; worst element %s: opgrad %r, torch %r, truth %r"
              " (inputs: %s)" % (r["op"], r["dtype"], r["layout"], r["result"], r["path"],
                                 ", ".join("%s %.2f" % (k, r["ratio"][k]) for k in r["fails"]),
                                 w.get("index"), w.get("opgrad"), w.get("torch"), w.get("truth"),
                                 w.get("inputs")))
    if args.out:
        with open(args.out, "w") as f:
            f.write("# opgrad.torch vs PyTorch: error against float64\n\n")
            f.write("Inputs [%d, %d] (seed %d). `torch` = native: PyTorch's kernel in the dtype; "
                    "upcast: f(x.float()).to(dtype) because PyTorch %s has no CPU kernel for the "
                    "dtype. ratio = opgrad / PyTorch (floors: half an ulp). Limits: MARE 2, "
                    "MERE 1.2, RMSE 1.2.\n\n" % (args.n, args.m, args.seed, torch.__version__))
            f.write("| " + " | ".join(head) + " |\n")
            f.write("|" + "---|" * len(head) + "\n")
            for t in table:
                f.write("| " + " | ".join(str(c) for c in t) + " |\n")
            f.write("\n" + summary + "\n")
            for r in failed:
                w = r["worst"] or {}
                f.write("\n- FAIL %s %s %s %s: worst element %s: opgrad %r, torch %r, truth %r "
                        "(%s)\n" % (r["op"], r["dtype"], r["layout"], r["result"], w.get("index"),
                                    w.get("opgrad"), w.get("torch"), w.get("truth"),
                                    w.get("inputs")))
    return 1 if _unexpected(failed, rows, KNOWN_GAPS, "") else 0


if __name__ == "__main__":
    sys.exit(main())
