"""opgrad.torch.optim: torch.optim.AdamW and SGD on opgrad's fused multi-tensor operators.

    opt = opgrad.torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    opt = opgrad.torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)

Same arguments, state names (step, exp_avg, exp_avg_sq, max_exp_avg_sq, momentum_buffer) and
update rules as PyTorch's (docs/ops/optim.md states them and the ulp bounds). One step is one
call of aclnnFusedAdamw / aclnnFusedSgd per parameter group and dtype: every parameter read and
written once. Parameters may be float32, float16 or bfloat16 (empty ones are left out of the kernels); a gradient of another dtype than
its parameter (fp16 gradients of fp32 master weights) is converted first.

AdamW.step takes `grad_scale` and `found_inf` (one-element float32 tensors), as PyTorch's fused
optimizers do: the gradients are divided by grad_scale, and a step whose found_inf is non-zero
changes nothing (parameters, moments, step counts) without the flag being read on the host:
opgrad.torch.amp.GradScaler passes it. SGD's kernel has no found_inf: the scaler checks the flag
before calling its step, as for any optimizer.
"""
import torch

from ._foreach import run

__all__ = ["AdamW", "SGD"]


def _grouped(items):
    """[(p, grad, state...)] split by the parameter's dtype (one kernel call per dtype)."""
    groups = {}
    for it in items:
        groups.setdefault(it[0].dtype, []).append(it)
    return groups.values()


def _grad_of(p, name):
    g = p.grad
    if g.is_sparse:
        raise RuntimeError("opgrad.torch.optim.%s does not support sparse gradients" % name)
    return g if g.dtype == p.dtype else g.to(p.dtype)


class AdamW(torch.optim.Optimizer):
    _opgrad_takes_found_inf = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        if not 0.0 <= lr or not 0.0 <= eps or not 0.0 <= weight_decay:
            raise ValueError("opgrad.torch.optim.AdamW: lr, eps and weight_decay must be >= 0")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError("opgrad.torch.optim.AdamW: betas must be in [0, 1)")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    @torch.no_grad()
    def step(self, closure=None, grad_scale=None, found_inf=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if grad_scale is not None:
            grad_scale = grad_scale.reshape(1).to(torch.float32)
        if found_inf is not None:
            found_inf = found_inf.reshape(1).to(torch.float32)
        for group in self.param_groups:
            items = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.zeros((), dtype=torch.float32)
                    st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    if group["amsgrad"]:
                        st["max_exp_avg_sq"] = torch.zeros_like(
                            p, memory_format=torch.preserve_format)
                items.append((p, _grad_of(p, "AdamW"), st))
            b1, b2 = group["betas"]
            for chunk in _grouped([it for it in items if it[0].numel()]):
                ps = [it[0] for it in chunk]
                run("FusedAdamw", ps, [it[1] for it in chunk],
                    [it[2]["exp_avg"] for it in chunk], [it[2]["exp_avg_sq"] for it in chunk],
                    [it[2]["max_exp_avg_sq"] for it in chunk] if group["amsgrad"] else None,
                    [it[2]["step"] for it in chunk], grad_scale, found_inf, float(group["lr"]),
                    float(b1), float(b2), float(group["weight_decay"]), float(group["eps"]),
                    bool(group["amsgrad"]), bool(group["maximize"]))
            for it in items:  # the kernel reads step + 1; a skipped step counts nothing
                if found_inf is None:
                    it[2]["step"] += 1
                else:
                    it[2]["step"] += 1 - found_inf[0]
        return loss


class SGD(torch.optim.Optimizer):
    _opgrad_takes_found_inf = False

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        if lr < 0.0 or momentum < 0.0 or weight_decay < 0.0:
            raise ValueError("opgrad.torch.optim.SGD: lr, momentum and weight_decay must be >= 0")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("opgrad.torch.optim.SGD: Nesterov momentum requires a momentum and "
                             "zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    @torch.no_grad()
    def step(self, closure=None, grad_scale=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if grad_scale is not None:
            grad_scale = grad_scale.reshape(1).to(torch.float32)
        for group in self.param_groups:
            items, momentum = [], group["momentum"] != 0
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                first = momentum and "momentum_buffer" not in st
                if first:
                    st["momentum_buffer"] = torch.empty_like(p,
                                                             memory_format=torch.preserve_format)
                # the kernel may write the gradient (it folds the weight decay in): a copy
                g = _grad_of(p, "SGD")
                items.append((p, g.clone() if g is p.grad else g, st, first))
            for chunk in _grouped([it for it in items if it[0].numel()]):  # (empty: no-op)
                for first in (True, False):  # isFirstStep is per call: new and old buffers apart
                    part = [it for it in chunk if it[3] == first]
                    if not part:
                        continue
                    run("FusedSgd", [it[0] for it in part], [it[1] for it in part],
                        [it[2]["momentum_buffer"] for it in part] if momentum else None,
                        grad_scale, float(group["weight_decay"]), float(group["momentum"]),
                        float(group["lr"]), float(group["dampening"]), bool(group["nesterov"]),
                        bool(group["maximize"]), first)
        return loss
