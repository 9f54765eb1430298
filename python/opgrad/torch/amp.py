"""opgrad.torch.amp: dynamic loss scaling and gradient clipping on opgrad's operators.

    scaler = opgrad.torch.amp.GradScaler()          # torch.cuda.amp.GradScaler's interface
    loss = loss_fn(model16(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)                              # optional: before clipping
    opgrad.torch.amp.clip_grad_norm_(params, 1.0)
    scaler.step(opt)                                  # skipped when a gradient was inf / NaN
    scaler.update()

unscale_ runs aclnnForeachNonFiniteCheckAndUnscale over each dtype's gradients (one pass over
memory: every gradient times 1/scale, and the inf/NaN flag); update runs aclnnAmpUpdateScale
(backoff on overflow, growth after `growth_interval` clean steps, never past the dtype's range).
An optimizer whose step takes `found_inf` (opgrad.torch.optim.AdamW / SGD: aclnnFusedAdamw,
aclnnFusedSgd) skips the step inside the kernel, without reading the flag back; any other
optimizer's step is called when the flag is 0, as PyTorch's GradScaler does.
clip_grad_norm_ is torch.nn.utils.clip_grad_norm_ on aclnnForeachNorm and aclnnForeachMulScalar.
"""
import torch

from ._foreach import run

__all__ = ["GradScaler", "clip_grad_norm_", "foreach_norm", "foreach_mul_"]


def _by_dtype(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault(t.dtype, []).append(t)
    return groups


def foreach_norm(tensors, ord=2.0):  # noqa: A002  (torch._foreach_norm's name)
    """[||t||_ord for t in tensors] (one-element tensors of each t's dtype; aclnnForeachNorm)."""
    out = [None] * len(tensors)
    index = {id(t): i for i, t in enumerate(tensors)}
    for dt, group in _by_dtype(tensors).items():
        norms = [torch.empty((), dtype=dt) for _ in group]
        run("ForeachNorm", group, float(ord), norms)
        for t, n in zip(group, norms):
            out[index[id(t)]] = n
    return out


def foreach_mul_(tensors, scalar):
    """t *= scalar for every t, in place (aclnnForeachMulScalar; scalar a number or a
    one-element float32 tensor, read when the kernel runs)."""
    s = scalar if isinstance(scalar, torch.Tensor) else torch.tensor([float(scalar)])
    s = s.reshape(1).to(torch.float32)
    for group in _by_dtype(tensors).values():
        run("ForeachMulScalar", group, s, group)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """torch.nn.utils.clip_grad_norm_ (same result and return value): the total norm of the
    gradients (the norm of the per-tensor norms, in float32) and every gradient scaled by
    min(1, max_norm / (total + 1e-6)) in place, both on opgrad's foreach operators."""
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([n.float() for n in foreach_norm(grads, norm_type)])
    total = torch.linalg.vector_norm(norms, norm_type)
    if error_if_nonfinite and not torch.isfinite(total):
        raise RuntimeError("opgrad.torch.amp.clip_grad_norm_: the total norm of order %g of the "
                           "gradients is non-finite" % norm_type)
    coef = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0).reshape(1)
    foreach_mul_(grads, coef)
    return total


class GradScaler:
    """torch.cuda.amp.GradScaler's interface and update rule on the CPU, on opgrad's operators.
    The scale is a float32 [1] tensor, the growth tracker an int32 [1] tensor."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0 or growth_interval < 1:
            raise ValueError("opgrad.torch.amp.GradScaler: need growth_factor > 1, 0 < "
                             "backoff_factor < 1 and growth_interval >= 1")
        self._enabled = enabled
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._scale = torch.full((1,), self._init_scale, dtype=torch.float32)
        self._tracker = torch.zeros((1,), dtype=torch.int32)
        self._states = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": tensor, "stepped"}

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """outputs * scale (a tensor or nested lists / tuples of tensors)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, torch.Tensor):
            return outputs * self._scale.to(outputs.dtype if outputs.is_floating_point()
                                            else torch.float32)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("opgrad.torch.amp.GradScaler.scale: outputs must be a tensor or a "
                         "list / tuple of tensors")

    def _state(self, optimizer):
        return self._states.setdefault(
            id(optimizer), {"unscaled": False, "stepped": False,
                            "found_inf": torch.zeros((1,), dtype=torch.float32)})

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale in place and records whether one of
        them held an inf or a NaN (once per optimizer and step, as PyTorch)."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if st["stepped"]:
            raise RuntimeError("unscale_() is being called after step().")
        inv = (1.0 / self._scale.double()).float()
        pairs = [(p, p.grad) for g in optimizer.param_groups for p in g["params"]
                 if p.grad is not None]
        for _, g in pairs:
            if g.is_sparse:
                raise ValueError("opgrad.torch.amp.GradScaler: sparse gradients are not "
                                 "supported")
        found = st["found_inf"]
        found.zero_()
        groups = {}
        for p, g in pairs:
            groups.setdefault(g.dtype, []).append((p, g))
        for dt, group in groups.items():
            grads = [g for _, g in group]
            # the plan's key: a gradient has its parameter's shape, so the parameters and the
            # gradients' strides fix every layout (cheaper than each tensor's full layout)
            key = (dt, tuple(id(p) for p, _ in group), tuple(g.stride() for g in grads))
            run("ForeachNonFiniteCheckAndUnscale", grads, found, inv, key=key)
        st["unscaled"] = True

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless this step's gradients held an inf or a NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        st = self._state(optimizer)
        if st["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if not st["unscaled"]:
            self.unscale_(optimizer)
        st["stepped"] = True
        if getattr(optimizer, "_opgrad_takes_found_inf", False):  # skipped inside the kernel
            return optimizer.step(*args, found_inf=st["found_inf"], **kwargs)
        if float(st["found_inf"]) == 0.0:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        """The scale for the next step: backoff when any optimizer's gradients held an inf or a
        NaN, growth after growth_interval clean steps (aclnnAmpUpdateScale), or new_scale."""
        if not self._enabled:
            return
        if new_scale is not None:
            v = float(new_scale) if not isinstance(new_scale, torch.Tensor) else \
                float(new_scale.reshape(-1)[0])
            self._scale.fill_(v)
        else:
            found = torch.zeros((1,), dtype=torch.float32)
            for st in self._states.values():
                found += st["found_inf"]
            run("AmpUpdateScale", self._scale, self._tracker, found, self._growth_factor,
                self._backoff_factor, self._growth_interval, self._scale, self._tracker)
        self._states = {}

    def get_scale(self):
        return float(self._scale[0]) if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": int(self._tracker[0])}

    def load_state_dict(self, state):
        if not self._enabled:
            return
        if not state:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale.fill_(float(state["scale"]))
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._tracker.fill_(int(state["_growth_tracker"]))
