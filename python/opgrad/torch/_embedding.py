"""opgrad.torch.embedding (aclnnEmbedding + aclnnEmbeddingDenseBackward).

embedding(input, weight, padding_idx=None, scale_grad_by_freq=False) is
torch.nn.functional.embedding's dense path: the lookup weight[input], and a weight gradient that
sums the rows of repeated indices (deterministically: position order), zero for padding_idx,
divided by each index's count with scale_grad_by_freq. max_norm and sparse are not supported.
Indices: int64 or int32; an index outside [0, num_embeddings) gives a zero row (PyTorch raises).
"""
import torch

from .. import _lib as L
from . import _kernels as K
from . import _ops
from ._dropout import EXTRA, _compiling, register_ops

_IDX = {torch.int64: L.ACL_INT64, torch.int32: 3}


def _idx_dtype(t, op):
    dt = _IDX.get(getattr(t, "dtype", None))
    if dt is None or not t.is_cpu:
        raise TypeError("opgrad.torch.%s: indices must be a CPU int64 or int32 tensor, got %s"
                        % (op, getattr(t, "dtype", type(t).__name__)))
    return dt


def _emb_p1(hi, ho, sc, w, e):
    return L.phase1["Embedding"](hi[0], hi[1], ho[0], w, e)


def embedding_kernel(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """weight[indices] (padding_idx and scale_grad_by_freq only matter to the backward)."""
    wd, idt = K.acl_dtype(weight, "embedding", "weight"), _idx_dtype(indices, "embedding")
    out = torch.empty(tuple(indices.shape) + (weight.shape[1],), dtype=weight.dtype)
    if out.numel():
        K._run("Embedding", "aclnnEmbedding", _emb_p1, (weight, indices), (wd, idt), (out,),
               (wd,))
    return out


def _bwd_p1(num_weights, padding_idx, scale):
    def phase1(hi, ho, sc, w, e):
        return L.phase1["EmbeddingDenseBackward"](hi[0], hi[1], num_weights, padding_idx, scale,
                                                  ho[0], w, e)
    return phase1


def embedding_dense_backward_kernel(grad, indices, num_weights, padding_idx=-1,
                                    scale_grad_by_freq=False):
    """aclnnEmbeddingDenseBackward: the [num_weights, D] gradient of the weight."""
    gd, idt = K.acl_dtype(grad, "embedding_dense_backward", "grad"), \
        _idx_dtype(indices, "embedding_dense_backward")
    num_weights, padding_idx = int(num_weights), int(padding_idx)
    out = torch.empty((num_weights, grad.shape[-1]), dtype=grad.dtype)
    if out.numel():
        attrs = (num_weights, padding_idx, bool(scale_grad_by_freq))
        K._run("EmbeddingDenseBackward", "aclnnEmbeddingDenseBackward", _bwd_p1(*attrs),
               (grad, indices), (gd, idt), (out,), (gd,), attrs=attrs)
    return out


def _fake_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    return weight.new_empty(tuple(indices.shape) + (weight.shape[1],))


def _fake_bwd(grad, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False):
    return grad.new_empty((num_weights, grad.shape[-1]))


def _setup(ctx, inputs, output):
    weight, indices = inputs[0], inputs[1]
    ctx.num_weights = weight.shape[0]
    ctx.padding_idx = inputs[2] if len(inputs) > 2 else -1
    ctx.scale = inputs[3] if len(inputs) > 3 else False
    ctx.nattrs = len(inputs) - 2
    ctx.save_for_backward(indices)


def _backward(ops, ctx, grad):
    (indices,) = ctx.saved_tensors
    gw = ops.embedding_dense_backward(grad.contiguous(), indices, ctx.num_weights,
                                      ctx.padding_idx, ctx.scale)
    return (gw, None) + (None,) * ctx.nattrs


# Second order: EmbeddingDenseBackward sums grad's rows into the weight rows their indices name
# (none into padding_idx), linear in grad: its derivative gathers those rows back, dgrad[i] =
# G[idx[i]] (0 where idx[i] is padding_idx); none in the indices. With scale_grad_by_freq the
# backward also divides by each index's count, D^-1, but that factor is not repeated here: the
# gradient then reaches the weight through the embedding's own (scaled) backward, which applies
# D^-1 once more, and d/dw of a penalty of the scaled gradient G^T D^-1 (...) has D^-1 once
# (PyTorch's embedding_dense_double_backward does the same; finite differences agree).
def _setup_bwd(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])
    ctx.padding_idx = inputs[3] if len(inputs) > 3 else -1
    ctx.nattrs = len(inputs) - 2


def _backward_bwd(ops, ctx, gg):
    (indices,) = ctx.saved_tensors
    rows = ops.embedding(gg.contiguous(), indices)
    if ctx.padding_idx < 0:
        return (rows, None) + (None,) * ctx.nattrs
    keep = (indices != ctx.padding_idx).unsqueeze(-1).to(rows.dtype)
    return (ops.mul(rows, keep), None) + (None,) * ctx.nattrs


_DEFS = [
    _ops.OpDef("embedding_dense_backward", "(Tensor grad, Tensor indices, int num_weights, "
               "int padding_idx=-1, bool scale_grad_by_freq=False) -> Tensor",
               embedding_dense_backward_kernel, (0, 1), _fake_bwd, _setup_bwd, _backward_bwd),
    _ops.OpDef("embedding", "(Tensor weight, Tensor indices, int padding_idx=-1, "
               "bool scale_grad_by_freq=False) -> Tensor", embedding_kernel, (0, 1),
               _fake_embedding, _setup, _backward),
]
for _d in _DEFS:
    _d.twice = True  # both formulas run on differentiable operators
register_ops(_DEFS)
K.embedding_dense_backward = embedding_dense_backward_kernel
K.embedding = embedding_kernel


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    """torch.nn.functional.embedding on aclnnEmbedding / aclnnEmbeddingDenseBackward."""
    if max_norm is not None or sparse:
        raise ValueError("opgrad.torch.embedding: max_norm and sparse are not supported")
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:  # PyTorch's rule: a negative padding_idx counts from the end
        padding_idx += weight.shape[0]
    d = EXTRA["embedding"]
    args = (weight, input, int(padding_idx), bool(scale_grad_by_freq))
    if _compiling():
        return d.op(*args)
    if (weight.requires_grad and torch.is_grad_enabled()) or K.forward_ad():
        return d.function.apply(*args)
    return embedding_kernel(*args)
