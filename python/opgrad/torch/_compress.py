"""Gradient compressors of opgrad (issue 15): the aclnnGradCompress* / aclnnGradDecompress*
extension operators (include/aclnnop/aclnn_grad_compress.h) called through ctypes.

These are not autograd operators (nothing about them is differentiable): plain functions on
torch CPU tensors, used by the DistributedDataParallel communication hooks of opgrad.torch.ddp.
Each call plans and runs one operator (phase 1, then phase 2 on the NULL stream); the residual
tensors are updated in place by the kernels (error feedback). Every output can be passed in
(out=, values= / indices=, bits= / scale=) to reuse buffers across steps."""
import ctypes
import math

import torch

from .. import _lib as L
from .._lib import OpgradError

_DT = {torch.float32: L.ACL_FLOAT, torch.float16: L.ACL_FLOAT16, torch.bfloat16: L.ACL_BF16,
       torch.uint8: 4, torch.int32: 3, torch.int64: L.ACL_INT64}


def _handle(t, fn):
    if t.device.type != "cpu":
        raise ValueError("%s: opgrad runs on CPU tensors, got %s" % (fn, t.device))
    if t.dtype not in _DT:
        raise TypeError("%s: unsupported dtype %s" % (fn, t.dtype))
    d = L.i64_array(tuple(t.shape))
    s = L.i64_array(tuple(t.stride()))
    h = L.aclCreateTensor(d[0], t.dim(), _DT[t.dtype], s[0], 0, L.ACL_FORMAT_ND, None, 0,
                          t.data_ptr() or None)
    if not h:
        raise OpgradError(L.Status.PARAM_INVALID, L.error_message(), fn)
    return h


def _run(name, *args):
    """Phase 1 and phase 2 of aclnn<name>; tensors (or None) become aclTensor handles."""
    fn = "aclnn" + name
    handles, cargs = [], []
    try:
        for a in args:
            if isinstance(a, torch.Tensor):
                handles.append(_handle(a, fn))
                cargs.append(handles[-1])
            else:
                cargs.append(a)
        ws, ex = ctypes.c_uint64(0), ctypes.c_void_p(0)
        L.check(L.phase1[name](*cargs, ctypes.addressof(ws), ctypes.addressof(ex)),
                fn + "GetWorkspaceSize")
        buf = torch.empty(max(ws.value, 1), dtype=torch.uint8)
        L.check(L.phase2[name](buf.data_ptr(), ws.value, ex.value, None), fn)
    finally:
        for h in handles:
            L.aclDestroyTensor(h)


def compress_cast(x, residual=None, dtype=torch.bfloat16, stochastic=False, seed=0, offset=0,
                  out=None):
    """x + residual rounded to `dtype` (float16 / bfloat16), to nearest even or stochastically
    (keyed by seed and offset + element index); residual <- (x + residual) - result."""
    if out is None:
        out = torch.empty(x.shape, dtype=dtype)
    _run("GradCompressCast", x, residual, bool(stochastic), int(seed), int(offset), out)
    return out


def topk_count(n, fraction):
    """k for a fraction of n elements: ceil(fraction * n), at least 1 when n > 0."""
    return min(n, max(1 if n else 0, int(math.ceil(fraction * n))))


def compress_topk(x, k, residual=None, values_dtype=torch.float32, values=None, indices=None):
    """The k entries of largest |x + residual| (ties: lower index), in index order:
    (values, int64 flat indices); residual <- (x + residual) with them zeroed."""
    if values is None:
        values = torch.empty(k, dtype=values_dtype)
    if indices is None:
        indices = torch.empty(k, dtype=torch.int64)
    _run("GradCompressTopK", x, residual, values, indices)
    return values, indices


def decompress_topk(values, indices, numel, dtype=torch.float32, out=None):
    """A dense tensor of numel elements: zeros, then out[indices[j]] += values[j] in order
    (several workers' concatenated entries sum)."""
    if out is None:
        out = torch.empty(numel, dtype=dtype)
    _run("GradDecompressTopK", values, indices, out)
    return out


def compress_sign(x, residual=None, bits=None, scale=None):
    """(bits, scale): packed sign bits (uint8, ceil(n / 8), 1 = non-negative, LSB first) of
    y = x + residual and scale = mean |y| (float32 [1]); residual <- y - scale * sign."""
    if bits is None:
        bits = torch.empty((x.numel() + 7) // 8, dtype=torch.uint8)
    if scale is None:
        scale = torch.empty(1, dtype=torch.float32)
    _run("GradCompressSign", x, residual, bits, scale)
    return bits, scale


def decompress_sign(bits, scales, numel, dtype=torch.float32, out=None):
    """The sum over W workers of +-scale[w] per element: bits of W * ceil(numel / 8) bytes (worker
    w's message at w * ceil(numel / 8)), scales float32 [W]."""
    if out is None:
        out = torch.empty(numel, dtype=dtype)
    _run("GradDecompressSign", bits, scales, out)
    return out


def orthonormalize(p, eps=1e-8):
    """PowerSGD's step: the columns of p (float32, 2-D [n, r], r <= n) made orthonormal in place,
    modified Gram-Schmidt in column order (aclnnGradOrthonormalize); a column whose remaining
    norm is <= eps becomes 0. Returns p."""
    _run("GradOrthonormalize", p, float(eps))
    return p
