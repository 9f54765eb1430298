"""nn.Module wrappers of opgrad.torch's activations, drop-in for their torch.nn namesakes
(same constructor arguments; `inplace=True` is not supported and raises ValueError)."""
import torch

from . import (elu, gelu, gelu_v2, hardswish, leaky_relu, linear, linear_type, mish, relu,
               sigmoid, silu, softplus, tanh)

__all__ = ["Mish", "GELU", "SiLU", "Sigmoid", "Tanh", "Softplus", "ReLU", "LeakyReLU",
           "Hardswish", "ELU", "Linear"]


def _no_inplace(cls, inplace):
    if inplace:
        raise ValueError("opgrad.torch.nn.%s: inplace=True is not supported (opgrad's autograd "
                         "wrappers always return a new tensor)" % cls)


class _Activation(torch.nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        _no_inplace(type(self).__name__, inplace)
        self.inplace = False


class Mish(_Activation):
    def forward(self, x):
        return mish(x)


class SiLU(_Activation):
    def forward(self, x):
        return silu(x)


class Hardswish(_Activation):
    def forward(self, x):
        return hardswish(x)


class ReLU(_Activation):
    def forward(self, x):
        return relu(x)


class Sigmoid(torch.nn.Module):
    def forward(self, x):
        return sigmoid(x)


class Tanh(torch.nn.Module):
    def forward(self, x):
        return tanh(x)


class GELU(torch.nn.Module):
    """approximate 'none' (default, as torch.nn.GELU) or 'tanh'."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError("opgrad.torch.nn.GELU: approximate must be 'none' or 'tanh', got %r"
                             % (approximate,))
        self.approximate = approximate

    def forward(self, x):
        return gelu(x) if self.approximate == "tanh" else gelu_v2(x, "none")

    def extra_repr(self):
        return "approximate=%r" % self.approximate


class Softplus(torch.nn.Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = float(beta), float(threshold)

    def forward(self, x):
        return softplus(x, self.beta, self.threshold)

    def extra_repr(self):
        return "beta=%g, threshold=%g" % (self.beta, self.threshold)


class LeakyReLU(torch.nn.Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        _no_inplace("LeakyReLU", inplace)
        self.negative_slope, self.inplace = float(negative_slope), False

    def forward(self, x):
        return leaky_relu(x, self.negative_slope)

    def extra_repr(self):
        return "negative_slope=%g" % self.negative_slope


class ELU(torch.nn.Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        _no_inplace("ELU", inplace)
        self.alpha, self.inplace = float(alpha), False

    def forward(self, x):
        return elu(x, self.alpha)

    def extra_repr(self):
        return "alpha=%g" % self.alpha


class Linear(torch.nn.Linear):
    """torch.nn.Linear on opgrad.torch.linear (aclnnFusedMatmul / aclnnFusedMatmulBackward), with
    an optional fused activation: None, 'relu', 'gelu' (erf) or 'gelu_tanh'.

    A subclass of torch.nn.Linear: the same parameters (weight [out_features, in_features], bias
    [out_features]), the same initialisation (torch.nn.Linear.reset_parameters), the same
    state_dict keys, so it loads torch.nn.Linear checkpoints and isinstance(m, torch.nn.Linear)
    holds. Linear.from_torch(linear) wraps an existing torch.nn.Linear's parameters (the same
    Parameter objects, not copies)."""

    def __init__(self, in_features, out_features, bias=True, activation=None, device=None,
                 dtype=None):
        linear_type(activation)  # ValueError before any parameter is made
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        self.activation = activation

    def forward(self, x):
        return linear(x, self.weight, self.bias, self.activation)

    def extra_repr(self):
        s = super().extra_repr()
        return s if self.activation is None else "%s, activation=%r" % (s, self.activation)

    @classmethod
    def from_torch(cls, linear, activation=None):
        """An opgrad Linear sharing `linear`'s weight and bias (the same Parameters: training
        either one trains both). Nothing is allocated or initialised."""
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError("opgrad.torch.nn.Linear.from_torch: expected a torch.nn.Linear, got "
                            "%s" % type(linear).__name__)
        m = cls(linear.in_features, linear.out_features, bias=linear.bias is not None,
                activation=activation, device="meta", dtype=linear.weight.dtype)
        m.weight = linear.weight
        m.bias = linear.bias
        m.train(linear.training)
        return m


# Modules of the list's other standard operators (opgrad.torch._kernels.LIST_PAIRS), named as their
# aclnn operator (Softmax, LogSoftmax), taking the operator's attributes as keyword arguments.
def _list_module(op_name, fn_name, pair):
    from . import __dict__ as _functions  # noqa: F401
    import opgrad.torch as _ot
    f = getattr(_ot, fn_name)
    names = [n for _, n, _ in pair.attrs]
    defaults = dict((n, v) for _, n, v in pair.attrs)

    def __init__(self, **attrs):
        torch.nn.Module.__init__(self)
        for k in attrs:
            if k not in defaults:
                raise TypeError("opgrad.torch.nn.%s: unexpected argument '%s'" % (op_name, k))
        for k, v in defaults.items():
            setattr(self, k, attrs.get(k, v))

    def forward(self, x):
        return f(x, *(getattr(self, n) for n in names))

    return type(op_name, (torch.nn.Module,), {"__init__": __init__, "forward": forward,
                                              "__doc__": f.__doc__})


def _add_list_modules():
    from ._kernels import LIST_PAIRS
    taken = {n.lower() for n in __all__}
    for fn_name, pair in LIST_PAIRS.items():
        if pair.fwd.name.lower() in taken or fn_name.replace("_", "") in taken:
            continue
        globals()[pair.fwd.name] = _list_module(pair.fwd.name, fn_name, pair)
        __all__.append(pair.fwd.name)


_add_list_modules()


# ---- glu (issue 14)
from ._glu import GeGLU, SwiGLU  # noqa: E402,F401

__all__ += ["SwiGLU", "GeGLU"]

# ---- norm (issue 14)
from ._norm import LayerNorm, RMSNorm  # noqa: E402

__all__ += ["LayerNorm", "RMSNorm"]

# ---- batch_norm (issue 14)
from ._batch_norm import batch_norm as _batch_norm, group_norm as _group_norm  # noqa: E402


class _BatchNormMixin:
    """forward of torch.nn's _BatchNorm (running statistics, num_batches_tracked, momentum None =
    cumulative average, track_running_stats False = batch statistics in eval too) on
    opgrad.torch.batch_norm."""

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return _batch_norm(input, self.running_mean if use_running else None,
                           self.running_var if use_running else None, self.weight, self.bias,
                           bn_training, momentum, self.eps)


class BatchNorm1d(_BatchNormMixin, torch.nn.BatchNorm1d):
    pass


class BatchNorm2d(_BatchNormMixin, torch.nn.BatchNorm2d):
    pass


class BatchNorm3d(_BatchNormMixin, torch.nn.BatchNorm3d):
    pass


class GroupNorm(torch.nn.GroupNorm):
    def forward(self, input):  # noqa: A002
        return _group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


__all__ += ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm"]

# ---- loss (issue 14)
from . import _loss as _loss_mod  # noqa: E402
for _n in _loss_mod.MODULES:
    globals()[_n] = getattr(_loss_mod, _n)
    __all__.append(_n)

# ---- cross_entropy (issue 14)
from ._cross_entropy import CrossEntropyLoss, NLLLoss  # noqa: E402

__all__ += ["CrossEntropyLoss", "NLLLoss"]

# ---- dropout (issue 14)
from ._dropout import dropout as _dropout  # noqa: E402


class Dropout(torch.nn.Module):
    """torch.nn.Dropout on aclnnDropout (inplace=True is not supported)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError("dropout probability has to be between 0 and 1, but got %r" % (p,))
        _no_inplace("Dropout", inplace)
        self.p, self.inplace = p, False

    def forward(self, x):
        return _dropout(x, self.p, self.training)


__all__.append("Dropout")

# ---- embedding (issue 14)
from ._embedding import embedding as _embedding  # noqa: E402


class Embedding(torch.nn.Embedding):
    """torch.nn.Embedding (its parameters and initialisation) on aclnnEmbedding and its dense
    backward; max_norm and sparse are not supported."""

    def forward(self, x):
        return _embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                          self.scale_grad_by_freq, self.sparse)


__all__.append("Embedding")

# ---- pool (issue 13)
from ._pool import adaptive_avg_pool2d as _adaptive_avg_pool2d  # noqa: E402
from ._pool import avg_pool2d as _avg_pool2d  # noqa: E402
from ._pool import max_pool2d as _max_pool2d  # noqa: E402


class MaxPool2d(torch.nn.MaxPool2d):
    """torch.nn.MaxPool2d on aclnnMaxPool2dWithIndices and its backward."""

    def forward(self, x):
        return _max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                           self.ceil_mode, self.return_indices)


class AvgPool2d(torch.nn.AvgPool2d):
    """torch.nn.AvgPool2d on aclnnAvgPool2d and its backward."""

    def forward(self, x):
        return _avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                           self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(torch.nn.AdaptiveAvgPool2d):
    """torch.nn.AdaptiveAvgPool2d on aclnnAdaptiveAvgPool2d and its backward."""

    def forward(self, x):
        return _adaptive_avg_pool2d(x, self.output_size)


__all__ += ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]

# ---- conv (issue 13)
from . import _conv  # noqa: E402


def _conv_module(base, n, fn):
    """A subclass of torch.nn.Conv{n}d on opgrad.torch.conv{n}d: the same parameters,
    initialisation and state_dict keys; padding_mode other than 'zeros' pads with torch's F.pad
    first, as torch.nn does."""

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            input = torch.nn.functional.pad(input, self._reversed_padding_repeated_twice,
                                            mode=self.padding_mode)
            return fn(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    doc = ("torch.nn.%s on opgrad.torch.%s (aclnnConvolution / aclnnConvolutionBackward); a "
           "subclass of torch.nn.%s (same parameters, init, state_dict); from_torch(conv) shares "
           "a torch module's parameters."
           % (base.__name__, fn.__name__, base.__name__))
    return type(base.__name__, (base,), {"_conv_forward": _conv_forward, "__doc__": doc,
                                         "__module__": __name__,
                                         "from_torch": classmethod(_conv_from_torch)})


def _conv_transpose_module(base, n, fn):
    """A subclass of torch.nn.ConvTranspose{n}d on opgrad.torch.conv_transpose{n}d (forward takes
    output_size as torch.nn's does)."""

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError("Only `zeros` padding mode is supported for %s" % base.__name__)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, n, self.dilation)
        return fn(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                  self.groups, self.dilation)

    doc = ("torch.nn.%s on opgrad.torch.%s (aclnnConvolution transposed / "
           "aclnnConvolutionBackward); a subclass of torch.nn.%s." % (base.__name__, fn.__name__,
                                                                     base.__name__))
    return type(base.__name__, (base,), {"forward": forward, "__doc__": doc,
                                         "__module__": __name__,
                                         "from_torch": classmethod(_conv_from_torch)})


def _conv_from_torch(cls, conv):
    """An opgrad module sharing `conv`'s weight and bias (the same Parameters: training either one
    trains both). Nothing is allocated or initialised."""
    base = cls.__mro__[1]
    if not isinstance(conv, base):
        raise TypeError("opgrad.torch.nn.%s.from_torch: expected a torch.nn.%s, got %s"
                        % (cls.__name__, base.__name__, type(conv).__name__))
    kw = dict(stride=conv.stride, padding=conv.padding, dilation=conv.dilation,
              groups=conv.groups, bias=conv.bias is not None, padding_mode=conv.padding_mode,
              device="meta", dtype=conv.weight.dtype)
    if conv.transposed:
        kw["output_padding"] = conv.output_padding
    m = cls(conv.in_channels, conv.out_channels, conv.kernel_size, **kw)
    m.weight = conv.weight
    m.bias = conv.bias
    m.train(conv.training)
    return m


Conv1d = _conv_module(torch.nn.Conv1d, 1, _conv.conv1d)
Conv2d = _conv_module(torch.nn.Conv2d, 2, _conv.conv2d)
Conv3d = _conv_module(torch.nn.Conv3d, 3, _conv.conv3d)
ConvTranspose1d = _conv_transpose_module(torch.nn.ConvTranspose1d, 1, _conv.conv_transpose1d)
ConvTranspose2d = _conv_transpose_module(torch.nn.ConvTranspose2d, 2, _conv.conv_transpose2d)
ConvTranspose3d = _conv_transpose_module(torch.nn.ConvTranspose3d, 3, _conv.conv_transpose3d)
__all__ += ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
            "ConvTranspose3d"]
