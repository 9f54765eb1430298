"""opgrad.torch.ddp: DistributedDataParallel communication hooks that compress gradients with
opgrad's kernels (include/aclnnop/aclnn_grad_compress.h) and communicate with torch.distributed
(gloo on CPU: any backend whose all_gather moves uint8 tensors).

    import opgrad.torch.ddp as od
    model = torch.nn.parallel.DistributedDataParallel(net)
    state = od.TopKState(fraction=0.01)          # or CastState, SignState, PowerSGDState
    model.register_comm_hook(state, od.topk_hook)
    ...
    state.bytes_per_step(), state.compression()  # what this worker sent

Hooks (PyTorch 1.13 and >= 2.x: torch.distributed.GradBucket, torch.futures.Future):

* cast_hook (CastState(dtype=torch.float16 | torch.bfloat16, stochastic=False)): each worker
  sends its bucket rounded to 16 bits (aclnnGradCompressCast; stochastic rounding keyed by a
  per-worker seed and a counter that advances every call), with error feedback by default;
  2x fewer bytes.
* topk_hook (TopKState(fraction=0.01)): the k = ceil(fraction n) entries of largest |g + r|
  (aclnnGradCompressTopK), sent as fp32 values + int32 indices, error feedback; the gathered
  entries of all workers are summed by aclnnGradDecompressTopK. 1 %: 50x fewer bytes.
* sign_hook (SignState()): 1-bit SGD / EF-signSGD: the packed signs of g + r and one fp32 scale
  mean |g + r| (aclnnGradCompressSign), error feedback; aclnnGradDecompressSign sums the workers'
  +-scale. About 32x fewer bytes.
* powersgd_hook (PowerSGDState(rank=2)): PowerSGD (Vogels et al. 2019) as PyTorch's own hook
  does it: each gradient of two or more dims as a matrix M [dim 0, rest]: P = M Q (aclnnMm),
  all_reduce P, orthonormalise P (aclnnGradOrthonormalize), Q = M^T P (aclnnMm), all_reduce Q,
  M~ = P Q^T / W, residual = M - M~; Q is kept across steps (warm start); biases are averaged
  whole. Synchronous (the future is complete when the hook returns).

Every state counts the bytes this worker puts into the collectives (its payload: the message of
an all_gather, the tensor of an all_reduce) and the fp32 bytes uncompressed DDP would send for the
same buckets. The result every worker writes into the bucket is identical on all workers: the
gathered messages are decoded in rank order with fixed-order sums.
"""
import math

import torch
import torch.distributed as dist

from . import _compress as C

__all__ = ["CompressionState", "CastState", "TopKState", "SignState", "PowerSGDState",
           "cast_hook", "topk_hook", "sign_hook", "powersgd_hook", "allreduce_hook",
           "encode", "decode"]


class CompressionState:
    """What every hook keeps: the process group, the error-feedback residuals (one fp32 tensor per
    bucket index) and the byte counters. bytes_sent / dense_bytes: totals over the calls; steps:
    how many times the last bucket of an iteration went through the hook."""

    kind = "allreduce"

    def __init__(self, process_group=None, error_feedback=True):
        self.process_group = process_group
        self.error_feedback = error_feedback
        self.residuals = {}
        self.bytes_sent = 0
        self.dense_bytes = 0
        self.steps = 0

    def group(self):
        return self.process_group if self.process_group is not None else dist.group.WORLD

    def world(self):
        return dist.get_world_size(self.process_group)

    def rank(self):
        return dist.get_rank(self.process_group)

    def residual(self, key, n):
        """The residual of bucket `key` (zeros at first, and when the bucket changed size)."""
        if not self.error_feedback:
            return None
        r = self.residuals.get(key)
        if r is None or r.numel() != n:
            r = self.residuals[key] = torch.zeros(n, dtype=torch.float32)
        return r

    def bytes_per_step(self):
        return self.bytes_sent / max(self.steps, 1)

    def compression(self):
        """Uncompressed (fp32) bytes / bytes sent."""
        return self.dense_bytes / max(self.bytes_sent, 1)


class CastState(CompressionState):
    kind = "cast"

    def __init__(self, dtype=torch.float16, stochastic=False, seed=0, **kw):
        super().__init__(**kw)
        if dtype not in (torch.float16, torch.bfloat16):
            raise ValueError("CastState: dtype must be torch.float16 or torch.bfloat16")
        self.dtype, self.stochastic, self.seed = dtype, stochastic, seed
        self.offset = 0  # the stochastic rounding's counter: every call draws fresh numbers


class TopKState(CompressionState):
    kind = "topk"

    def __init__(self, fraction=0.01, **kw):
        super().__init__(**kw)
        if not 0 < fraction <= 1:
            raise ValueError("TopKState: fraction must be in (0, 1]")
        self.fraction = fraction


class SignState(CompressionState):
    kind = "sign"


class PowerSGDState(CompressionState):
    kind = "powersgd"

    def __init__(self, rank=2, seed=0, **kw):
        super().__init__(**kw)
        self.matrix_rank, self.seed = rank, seed
        self.qs = {}


# ---- encode / decode (the hooks' two halves, also tested on their own) ----------------------
def encode(state, key, x):
    """This worker's message (a 1-D uint8 tensor) for the flat fp32 tensor x of bucket `key`;
    updates the residual."""
    n = x.numel()
    r = state.residual(key, n)
    if state.kind == "cast":
        seed = state.seed * 1000003 + state.rank()  # independent draws on every worker
        c = C.compress_cast(x, r, state.dtype, state.stochastic, seed, state.offset)
        state.offset += n
        return c.view(torch.uint8)
    if state.kind == "topk":
        v, i = C.compress_topk(x, C.topk_count(n, state.fraction), r)
        return torch.cat([v.view(torch.uint8), i.to(torch.int32).view(torch.uint8)])
    if state.kind == "sign":
        bits, scale = C.compress_sign(x, r)
        return torch.cat([scale.view(torch.uint8), bits])  # the scale first: 4-byte aligned
    raise ValueError("encode: no message format for %r" % state.kind)


def decode(state, msgs, n):
    """The average over the workers of what their messages (in rank order) stand for, fp32 [n]."""
    w = len(msgs)
    if state.kind == "cast":
        acc = torch.zeros(n, dtype=torch.float32)
        for m in msgs:  # rank order: the same sum on every worker
            acc += m.view(state.dtype).float()
    elif state.kind == "topk":
        k = C.topk_count(n, state.fraction)
        vals = torch.cat([m[:4 * k].view(torch.float32) for m in msgs])
        idx = torch.cat([m[4 * k:].view(torch.int32) for m in msgs])
        acc = C.decompress_topk(vals, idx, n)
    elif state.kind == "sign":
        nb = (n + 7) // 8
        bits = torch.cat([m[4:4 + nb] for m in msgs])
        scales = torch.cat([m[:4].view(torch.float32) for m in msgs])
        acc = C.decompress_sign(bits, scales, n)
    else:
        raise ValueError("decode: no message format for %r" % state.kind)
    return acc.div_(w)


def _account(state, bucket, nbytes):
    state.bytes_sent += nbytes
    state.dense_bytes += bucket.buffer().numel() * 4
    if bucket.is_last():
        state.steps += 1


def _gather_hook(state, bucket):
    buf = bucket.buffer()
    if buf.dtype != torch.float32:
        raise TypeError("opgrad.torch.ddp: fp32 gradient buckets only, got %s" % buf.dtype)
    msg = encode(state, bucket.index(), buf.reshape(-1))
    _account(state, bucket, msg.numel())
    outs = [torch.empty_like(msg) for _ in range(state.world())]
    work = dist.all_gather(outs, msg, group=state.group(), async_op=True)

    def finish(fut):
        fut.wait()
        buf.copy_(decode(state, outs, buf.numel()).view_as(buf))
        return buf

    return work.get_future().then(finish)


def cast_hook(state, bucket):
    """16-bit cast (CastState)."""
    return _gather_hook(state, bucket)


def topk_hook(state, bucket):
    """Top-k with error feedback (TopKState)."""
    return _gather_hook(state, bucket)


def sign_hook(state, bucket):
    """1-bit / sign with error feedback (SignState)."""
    return _gather_hook(state, bucket)


def allreduce_hook(state, bucket):
    """Uncompressed averaging (the baseline), counting bytes like the others."""
    buf = bucket.buffer()
    _account(state, bucket, buf.numel() * buf.element_size())
    work = dist.all_reduce(buf, group=state.group(), async_op=True)

    def finish(fut):
        fut.wait()
        return buf.div_(state.world())

    return work.get_future().then(finish)


# ---- PowerSGD -------------------------------------------------------------------------------
def orthonormalize(p, eps=1e-8):
    """Gram-Schmidt on the columns of p [n, r] in place (aclnnGradOrthonormalize: fp32, fixed
    order, deterministic); a column whose norm falls below eps becomes 0 instead of amplifying
    rounding noise."""
    return C.orthonormalize(p, eps)


def _mm(a, b):
    from . import mm  # opgrad.torch.mm: aclnnMm
    return mm(a.contiguous(), b.contiguous())


def powersgd_hook(state, bucket):
    """PowerSGD rank state.matrix_rank with error feedback (PowerSGDState); synchronous. As in
    PyTorch's own hook, each gradient of two or more dims is compressed as a matrix [dim 0, rest]
    when the rank is below both sides; the others (biases) are averaged uncompressed in one
    all_reduce."""
    buf = bucket.buffer()
    n, key, w, g = buf.numel(), bucket.index(), state.world(), state.group()
    flat = buf.reshape(-1)
    res = state.residual(key, n)
    if res is not None:
        flat += res  # y = g + r, in the bucket itself (the gradients are views of it)
    grads = bucket.gradients() if hasattr(bucket, "gradients") else [flat]
    mats, dense, at = [], [], 0
    for t in grads:
        k = t.numel()
        view = flat[at:at + k]
        rows = t.shape[0] if t.dim() > 1 else 1
        cols = k // max(rows, 1)
        r = state.matrix_rank
        if t.dim() > 1 and r < min(rows, cols):
            mats.append((at, view.view(rows, cols), r))
        else:
            dense.append(view)
        at += k
    ps = []
    for i, (off, m, r) in enumerate(mats):
        q = state.qs.get((key, i))
        if q is None or q.shape != (m.shape[1], r):
            gen = torch.Generator().manual_seed(state.seed + 7919 * key + i)  # same on every worker
            q = state.qs[(key, i)] = torch.randn(m.shape[1], r, generator=gen)
        ps.append(_mm(m, q))
    sent = 0
    if ps:
        pflat = torch.cat([p.reshape(-1) for p in ps])
        dist.all_reduce(pflat, group=g)
        sent += pflat.numel()
        at = 0
        for i, p in enumerate(ps):
            ps[i] = orthonormalize(pflat[at:at + p.numel()].view_as(p).clone())
            at += p.numel()
        qs = [_mm(m.t(), p) for (_, m, _), p in zip(mats, ps)]
        qflat = torch.cat([q.reshape(-1) for q in qs])
        dist.all_reduce(qflat, group=g)
        qflat.div_(w)
        sent += qflat.numel()
        at = 0
        for i, ((off, m, r), p) in enumerate(zip(mats, ps)):
            q = qflat[at:at + qs[i].numel()].view_as(qs[i]).clone()
            at += q.numel()
            state.qs[(key, i)] = q
            approx = _mm(p, q.t())
            if res is not None:
                res[off:off + m.numel()].copy_((m - approx).reshape(-1))
            m.copy_(approx)
    if dense:
        d = torch.cat(dense)
        dist.all_reduce(d, group=g)
        d.div_(w)
        sent += d.numel()
        at = 0
        for v in dense:
            v.copy_(d[at:at + v.numel()])
            at += v.numel()
    if res is not None:  # the dense parts were sent whole
        at = 0
        for t in grads:
            if not any(off == at for off, _, _ in mats):
                res[at:at + t.numel()].zero_()
            at += t.numel()
    _account(state, bucket, sent * 4)
    fut = torch.futures.Future()
    fut.set_result(buf)
    return fut
