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
    # Per-call cost: the step counts of a group live in one float32 buffer (each state's "step"
    # a 0-d view of it), so counting a step is one addition, not one per parameter; and the
    # kernel's plan is found by the group's parameters and the gradients' strides instead of
    # every tensor's layout (the states are made like their parameters).

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        if not 0.0 <= lr or not 0.0 <= eps or not 0.0 <= weight_decay:
            raise ValueError("opgrad.torch.optim.AdamW: lr, eps and weight_decay must be >= 0")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError("opgrad.torch.optim.AdamW: betas must be in [0, 1)")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))
        self._flat_steps = {}
        self._epoch = 0

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._flat_steps = {}  # the loaded states are new tensors: plans and step buffers anew
        self._epoch += 1

    def _steps(self, group, items):
        """The step counts of `items` as views of one buffer per group (made or remade when the
        group's parameters or their step tensors are not the ones it holds)."""
        cached = self._flat_steps.get(id(group))
        if cached is None or len(cached[1]) != len(items) or any(
                it[2]["step"] is not v for it, v in zip(items, cached[1])):
            flat = torch.tensor([float(it[2]["step"]) for it in items], dtype=torch.float32)
            views = [flat[i] for i in range(len(items))]
            for it, v in zip(items, views):
                it[2]["step"] = v
            cached = self._flat_steps[id(group)] = (flat, views)
        return cached[0]

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
            if not items:
                continue
            flat = self._steps(group, items)
            b1, b2 = group["betas"]
            for chunk in _grouped([it for it in items if it[0].numel()]):
                ps = [it[0] for it in chunk]
                key = (id(self), self._epoch, id(group), tuple(id(it[0]) for it in chunk),
                       tuple(it[1].stride() for it in chunk), grad_scale is None,
                       found_inf is None, group["lr"], b1, b2, group["weight_decay"],
                       group["eps"], group["amsgrad"], group["maximize"])
                run("FusedAdamw", ps, [it[1] for it in chunk],
                    [it[2]["exp_avg"] for it in chunk], [it[2]["exp_avg_sq"] for it in chunk],
                    [it[2]["max_exp_avg_sq"] for it in chunk] if group["amsgrad"] else None,
                    [it[2]["step"] for it in chunk], grad_scale, found_inf, float(group["lr"]),
                    float(b1), float(b2), float(group["weight_decay"]), float(group["eps"]),
                    bool(group["amsgrad"]), bool(group["maximize"]), key=key)
            # the kernel reads step + 1; a skipped step counts nothing
            flat += 1 if found_inf is None else 1 - found_inf
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
        self._epoch = 0

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._epoch += 1  # new momentum buffers: plans anew

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
                # with grad_scale the kernel writes the unscaled gradient back: then a copy
                g = _grad_of(p, "SGD")
                if grad_scale is not None and g is p.grad:
                    g = g.clone()
                items.append((p, g, st, first))
            for chunk in _grouped([it for it in items if it[0].numel()]):  # (empty: no-op)
                for first in (True, False):  # isFirstStep is per call: new and old buffers apart
                    part = [it for it in chunk if it[3] == first]
                    if not part:
                        continue
                    key = (id(self), self._epoch, id(group), tuple(id(it[0]) for it in part),
                           tuple(it[1].stride() for it in part), grad_scale is None,
                           group["weight_decay"], group["momentum"], group["lr"],
                           group["dampening"], group["nesterov"], group["maximize"], first)
                    run("FusedSgd", [it[0] for it in part], [it[1] for it in part],
                        [it[2]["momentum_buffer"] for it in part] if momentum else None,
                        grad_scale, float(group["weight_decay"]), float(group["momentum"]),
                        float(group["lr"]), float(group["dampening"]), bool(group["nesterov"]),
                        bool(group["maximize"]), first, key=key)
        return loss
