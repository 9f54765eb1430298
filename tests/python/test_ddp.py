#!/usr/bin/env python3
"""opgrad.torch.ddp on torch.distributed (gloo, 127.0.0.1): 2 processes (torch.multiprocessing
spawn, a free port).

1. Codecs: every worker compresses its own random tensor (plus a residual) with each compressor,
   all_gathers the messages and decodes them; the result must equal a float64 model of the
   compressor computed from every worker's inputs (regenerated from their seeds), and the
   residual identities must hold (top-k, cast: sent + residual = x + old residual exactly in
   fp32; sign: to one fp32 rounding).
2. Training: the digits MLP (64 -> 128 -> 64 -> 10, PyTorch's own layers: the hooks are what is
   under test) trained with DistributedDataParallel uncompressed and with each hook, same initial
   weights and data order; final test accuracy, bytes per step and step time per compressor.
   Asserted: top-k 1 % and sign within ACC_PP percentage points of uncompressed (the issue's
   bound, 1 %), fp16/bf16 cast and PowerSGD within ACC_PP_OTHER, >= 10x fewer bytes for top-k,
   sign and PowerSGD, 2x for the casts.

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_ddp.py
"""
import json
import os
import socket
import sys
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

WORLD = int(os.environ.get("OPGRAD_DDP_WORLD", "2"))
EPOCHS = int(os.environ.get("OPGRAD_DDP_EPOCHS", "30"))
# The target for top-k 1 % and sign: within 1 % (1 point: 3.6 of the 360 test samples)
# of uncompressed. Measured (2 workers, 30 epochs, this seed): uncompressed 97.22, top-k 97.22,
# sign 96.67, fp16 / bf16-sr / PowerSGD r2 97.22. At 12 epochs top-k and sign are still 2.5
# points behind (93.89 vs 96.39): the compressed runs converge more slowly, so the test trains 30.
ACC_PP = 1.0
ACC_PP_OTHER = 1.0  # the casts and PowerSGD are held to the same bound
SEED = 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- 1. codecs against float64 models -------------------------------------------------------
def inputs_of(rank, n):
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(n, generator=g)
    r = 0.1 * torch.randn(n, generator=g)
    return x, r


def model_sent(kind, y, frac=None, dtype=None):
    """float64 model of what one worker sends, from y = fl32(x + r) (a float64 numpy array)."""
    if kind == "cast":
        return torch.from_numpy(y).float().to(dtype).double().numpy()
    if kind == "topk":
        n = y.size
        k = min(n, max(1, int(np.ceil(frac * n))))
        order = np.argsort(-np.abs(y), kind="stable")[:k]  # ties: lower index first
        out = np.zeros(n)
        out[order] = y[order]
        return out
    if kind == "sign":
        s = np.abs(y).mean()
        return np.where(y >= 0, s, -s)
    raise ValueError(kind)


def codec_checks(rank, world):
    import opgrad.torch.ddp as od
    fails = []
    n = 10007
    cases = [("cast fp16", od.CastState(torch.float16), dict(dtype=torch.float16)),
             ("cast bf16", od.CastState(torch.bfloat16), dict(dtype=torch.bfloat16)),
             ("topk 1%", od.TopKState(0.01), dict(frac=0.01)),
             ("topk 10%", od.TopKState(0.1), dict(frac=0.1)),
             ("sign", od.SignState(), {})]
    for name, state, kw in cases:
        x, r0 = inputs_of(rank, n)
        state.residuals[0] = r0.clone()
        msg = od.encode(state, 0, x)
        outs = [torch.empty_like(msg) for _ in range(world)]
        dist.all_gather(outs, msg)
        got = od.decode(state, outs, n).double().numpy()
        want = np.zeros(n)
        for w in range(world):
            xw, rw = inputs_of(w, n)
            yw = (xw + rw).double().numpy()  # fl32(x + r), widened exactly
            want += model_sent(state.kind, yw, **kw)
        want /= world
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        if err > 2e-7:
            fails.append("%s: decoded average differs from the float64 model by %.3g (rel)"
                         % (name, err))
        # the residual identity of this worker
        y = (x + r0).double().numpy()
        sent = model_sent(state.kind, y, **kw)
        r1 = state.residuals[0].double().numpy()
        if state.kind in ("cast", "topk"):
            if not np.array_equal(sent + r1, y):
                fails.append("%s: sent + residual != x + old residual (exact)" % name)
        else:
            s32 = float(np.float32(np.abs(y).mean()))
            sent32 = np.where(y >= 0, s32, -s32)
            if np.abs(sent32 + r1 - y).max() > np.spacing(np.float32(np.abs(y).max() + s32)):
                fails.append("%s: sent + residual != x + old residual (to one fp32 rounding)"
                             % name)
    # stochastic rounding: the two neighbours only, identity exact, unbiased on average
    st = od.CastState(torch.bfloat16, stochastic=True, seed=3)
    x, r0 = inputs_of(rank, n)
    st.residuals[0] = r0.clone()
    c = od.encode(st, 0, x).view(torch.bfloat16).double().numpy()
    y = (x + r0).double().numpy()
    if not np.array_equal(c + st.residuals[0].double().numpy(), y):
        fails.append("cast bf16 stochastic: sent + residual != x + old residual (exact)")
    # y's neighbours in bf16: its fp32 bits truncated (toward zero) and the next magnitude up
    yb = (x + r0).view(torch.int32)
    lo = (yb & -65536).view(torch.float32).double().numpy()
    hi = ((yb & -65536) + 65536).view(torch.float32).double().numpy()
    up = (c == hi) & (hi != lo)
    if not np.all((c == lo) | (c == hi)) or not 0.3 < up.mean() < 0.7:
        fails.append("cast bf16 stochastic: not a rounding to a neighbour (%.3f up)" % up.mean())
    return fails


# ---- 2. training ------------------------------------------------------------------------------
def digits():
    try:
        from sklearn.datasets import load_digits
        d = load_digits()
        data, target = d.data, d.target
    except ImportError:  # an interpreter without sklearn (the PyTorch 2 venv): Debian's copy of
        # the same file (64 pixel columns, then the label)
        raw = np.loadtxt("/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz",
                         delimiter=",")
        data, target = raw[:, :-1], raw[:, -1]
    x = torch.tensor(data, dtype=torch.float32) / 16.0
    y = torch.tensor(target, dtype=torch.int64)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(SEED))
    x, y = x[perm], y[perm]
    ntest = 360
    return x[ntest:], y[ntest:], x[:ntest], y[:ntest]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 128)
        self.l2 = torch.nn.Linear(128, 64)
        self.l3 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.l3(F.gelu(self.l2(F.mish(self.l1(x))), approximate="tanh"))


def make_hook(name):
    import opgrad.torch.ddp as od
    if name == "none":
        return od.CompressionState(), od.allreduce_hook
    if name == "fp16":
        return od.CastState(torch.float16), od.cast_hook
    if name == "bf16-sr":
        return od.CastState(torch.bfloat16, stochastic=True, seed=1), od.cast_hook
    if name == "topk1%":
        return od.TopKState(0.01), od.topk_hook
    if name == "sign":
        return od.SignState(), od.sign_hook
    if name == "powersgd-r2":
        return od.PowerSGDState(rank=2), od.powersgd_hook
    raise ValueError(name)


def train(rank, world, name, epochs, batch=32, lr=0.05, momentum=0.9):
    xtr, ytr, xte, yte = digits()
    torch.manual_seed(SEED)
    net = Net()
    model = torch.nn.parallel.DistributedDataParallel(net)
    state, hook = make_hook(name)
    model.register_comm_hook(state, hook)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    mine = torch.arange(rank, len(ytr), world)  # this worker's shard
    steps, t0 = 0, time.perf_counter()
    for ep in range(epochs):
        order = mine[torch.randperm(len(mine), generator=torch.Generator().manual_seed(ep))]
        nsteps = len(mine) // batch
        for s in range(nsteps):
            idx = order[s * batch:(s + 1) * batch]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    dt = (time.perf_counter() - t0) / max(steps, 1)
    with torch.no_grad():
        acc = (net(xte).argmax(1) == yte).float().mean().item() * 100
    return {"name": name, "acc": acc, "bytes_per_step": state.bytes_per_step(),
            "compression": state.compression(), "step_ms": dt * 1e3, "steps": steps}


def worker(rank, world, port, outdir, names, epochs):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    import opgrad
    opgrad.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    out = {"codec_fails": codec_checks(rank, world), "runs": []}
    for name in names:
        dist.barrier()
        out["runs"].append(train(rank, world, name, epochs))
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(outdir, "rank%d.json" % rank), "w") as f:
        json.dump(out, f)


NAMES = ["none", "fp16", "bf16-sr", "topk1%", "sign", "powersgd-r2"]


def run(world=WORLD, epochs=EPOCHS, names=NAMES):
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(world, free_port(), d, names, epochs), nprocs=world, join=True)
        return [json.load(open(os.path.join(d, "rank%d.json" % r))) for r in range(world)]


def main():
    t0 = time.time()
    res = run()
    fails = []
    for r, o in enumerate(res):
        fails += ["rank %d: %s" % (r, f) for f in o["codec_fails"]]
    runs = {x["name"]: x for x in res[0]["runs"]}
    # every worker ends with the same model: the same accuracy
    for r in range(1, len(res)):
        for x in res[r]["runs"]:
            if x["acc"] != runs[x["name"]]["acc"]:
                fails.append("%s: rank %d accuracy %.2f != rank 0 %.2f (replicas diverged)"
                             % (x["name"], r, x["acc"], runs[x["name"]]["acc"]))
    base = runs["none"]["acc"]
    print("%d workers, %d epochs" % (len(res), EPOCHS))
    print("%-12s %8s %14s %8s %9s" % ("compressor", "acc %", "bytes/step", "ratio", "step ms"))
    for name in NAMES:
        x = runs[name]
        print("%-12s %8.2f %14.0f %7.1fx %9.2f" % (name, x["acc"], x["bytes_per_step"],
                                                    x["compression"], x["step_ms"]))
        bound = ACC_PP if name in ("topk1%", "sign") else ACC_PP_OTHER
        if name != "none" and x["acc"] < base - bound:
            fails.append("%s: accuracy %.2f %% is more than %.1f points below uncompressed %.2f %%"
                         % (name, x["acc"], bound, base))
        need = 1.9 if name in ("fp16", "bf16-sr") else 10 if name != "none" else 0
        if x["compression"] < need:
            fails.append("%s: only %.1fx fewer bytes (want >= %.1fx)"
                         % (name, x["compression"], need))
    print("%.1f s" % (time.time() - t0))
    for f in fails:
        print("FAIL", f)
    print("test_ddp: %s" % ("FAILED" if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
