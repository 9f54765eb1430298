"""opgrad.torch.load_custom: a custom operator (a shared library in MindSpore's aot ABI, described
by a JSON spec: docs/custom-ops.md, include/opgrad/custom_op.h) as a PyTorch operator with
autograd.

    op = opgrad.torch.load_custom("/abs/build/examples/custom/fused_add_scale.json")
    y = op(x, bias, scale)                                  # or torch.ops.opgrad_custom.FusedAddScale
    y.sum().backward()                                      # runs the spec's backward symbol

* Outputs are allocated from the spec's declared shapes, with every dim name bound from the
  actual input shapes (a mismatch raises ValueError naming the input, the dim and the binding).
  The dtype of the inputs without a fixed "dtype" is "the case's dtype": they must share it and it
  must be listed in the spec's "dtypes" (default float32); outputs without a fixed dtype get it.
* The aot ABI is dense row-major: inputs are made contiguous (a copy only when they are not).
* Forward: Name(n + m, [x_1..x_n, y_1..y_m], ...); backward (bprop convention):
  Grad(2n + 2m, [x.., y.., dy.., dx..], ...), one gradient per input with the input's shape and
  dtype (or the spec's "gradients" declaration, which must then match the inputs). Inputs marked
  "differentiable": false get no gradient.
* Calls go through libopgrad's opgrad_custom_open / opgrad_custom_call (which reload a library
  rebuilt on disk and feed the OPGRAD_DEBUG_GRADS monitor). A libopgrad without those symbols
  falls back to calling the library's symbols directly with ctypes.
* Registered as torch.ops.opgrad_custom.<name> (PyTorch 1.13: Library("opgrad_custom", "DEF") +
  an Autograd kernel; PyTorch >= 2.4: custom_op + register_fake + register_autograd). Loading a
  spec with the same name again re-points that operator at the new spec and library.
"""
import ctypes
import json
import re
import threading

import torch

from .. import _lib as L
from .._lib import OpgradError
from . import _ops

__all__ = ["load_custom", "CustomOp"]

_AOT_DTYPE = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
              torch.float64: "float64", torch.int32: "int32", torch.int64: "int64",
              torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8", torch.bool: "bool"}
_TORCH_DTYPE = {v: k for k, v in _AOT_DTYPE.items()}
_TORCH_DTYPE["float"] = torch.float32

_LOCK = threading.Lock()
_REGISTRY = {}          # op name -> CustomOp currently behind torch.ops.opgrad_custom.<name>
_REGISTERED = set()     # names registered with the dispatcher
_LIBRARY = None         # the 1.13 Library("opgrad_custom", "DEF"), kept for the process


class _Lib(L.CustomHandle):
    """One custom-operator library, through libopgrad or (fallback) ctypes."""

    def __init__(self, path):
        self.path = path
        self.direct = None
        if L.opgrad_custom_open is not None and L.opgrad_custom_call is not None:
            self.open_handle(path)
        else:  # libopgrad without the loader: call the symbols directly
            self.direct = ctypes.CDLL(path)

    def has(self, symbol):
        if self.handle is not None:
            st = L.opgrad_custom_has_symbol(self.handle, symbol.encode())
            if st:
                raise OpgradError(st, L.error_message(), "opgrad_custom_has_symbol")
        elif not hasattr(self.direct, symbol):
            raise OpgradError(L.Status.PARAM_INVALID, "symbol '%s' not found in '%s'"
                              % (symbol, self.path), "load_custom")

    def name_grads(self, symbol, op, names):
        """The gradient monitor's names for symbol's gradients: the spec's input names."""
        if self.handle is None or L.opgrad_custom_set_grad_names is None:
            return
        arr = (ctypes.c_char_p * len(names))(*[str(n).encode() for n in names])
        st = L.opgrad_custom_set_grad_names(self.handle, symbol.encode(), op.encode(), len(names),
                                            ctypes.addressof(arr))
        if st:
            raise OpgradError(st, L.error_message(), "opgrad_custom_set_grad_names")

    def call(self, symbol, tensors, ngrads):
        n = len(tensors)
        params = (ctypes.c_void_p * n)(*[t.data_ptr() for t in tensors])
        ndims = (ctypes.c_int * n)(*[t.dim() for t in tensors])
        shape_arrays = [(ctypes.c_int64 * max(t.dim(), 1))(*t.shape) for t in tensors]
        shapes = (ctypes.POINTER(ctypes.c_int64) * n)(
            *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int64)) for a in shape_arrays])
        dtypes = (ctypes.c_char_p * n)(*[_AOT_DTYPE[t.dtype].encode() for t in tensors])
        if self.handle is not None:
            st = L.opgrad_custom_call(self.handle, symbol.encode(), n, ctypes.addressof(params),
                                      ctypes.addressof(ndims), ctypes.addressof(shapes),
                                      ctypes.addressof(dtypes), ngrads)
            if st:
                raise OpgradError(st, L.error_message(), "opgrad_custom_call")
        else:
            fn = getattr(self.direct, symbol)
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 6
            rc = fn(n, ctypes.addressof(params), ctypes.addressof(ndims),
                    ctypes.addressof(shapes), ctypes.addressof(dtypes), None, None)
            if rc:
                raise OpgradError(L.Status.INNER, "'%s' in '%s' returned %d"
                                  % (symbol, self.path, rc), symbol)


def _ident(name, i, prefix):
    return name if isinstance(name, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) \
        else "%s%d" % (prefix, i)


class CustomOp:
    """A loaded custom operator. Call it like a function of its input tensors."""

    def __init__(self, spec, spec_path, library=None):
        self.spec, self.spec_path = spec, spec_path
        self.name, path = L.spec_name_and_library(spec, spec_path, library)
        self.library_path = path
        self.lib = _Lib(path)
        self.forward_symbol = spec["forward"]
        self.backward_symbol = spec.get("backward")
        self.lib.has(self.forward_symbol)
        if self.backward_symbol:
            self.lib.has(self.backward_symbol)
            self.lib.name_grads(self.backward_symbol, self.name,
                                [i.get("name", "x%d" % k) for k, i in enumerate(spec["inputs"])])
        self.inputs = spec["inputs"]
        self.outputs = spec["outputs"]
        self.dtypes = [_TORCH_DTYPE[d] for d in spec.get("dtypes", ["float32"])]
        self.differentiable = [i.get("differentiable", True) for i in self.inputs]
        grads = spec.get("gradients")
        if grads is not None:
            if len(grads) != len(self.inputs) or any(
                    g.get("shape") != i.get("shape") or g.get("dtype") != i.get("dtype")
                    for g, i in zip(grads, self.inputs)):
                raise ValueError("%s: 'gradients' must declare one gradient per input with the "
                                 "input's shape and dtype (PyTorch's autograd needs exactly that)"
                                 % spec_path)
        names = [_ident(i.get("name"), k, "x") for k, i in enumerate(self.inputs)]
        outs = "Tensor" if len(self.outputs) == 1 else \
            "(" + ", ".join("Tensor" for _ in self.outputs) + ")"
        self.schema = "(" + ", ".join("Tensor " + n for n in names) + ") -> " + outs

    # ---- shapes and dtypes ----
    def bind(self, xs):
        if len(xs) != len(self.inputs):
            raise TypeError("%s takes %d tensors (%s), got %d" % (
                self.name, len(self.inputs), ", ".join(i.get("name", "?") for i in self.inputs),
                len(xs)))
        dims, case_dtype = {}, None
        for k, (x, decl) in enumerate(zip(xs, self.inputs)):
            iname = decl.get("name", "input %d" % k)
            if not isinstance(x, torch.Tensor):
                raise TypeError("%s: input '%s' must be a tensor" % (self.name, iname))
            if not x.is_cpu:
                raise TypeError("%s: input '%s' is on %s; custom operators run on the CPU"
                                % (self.name, iname, x.device))
            L.bind_spec_dims(self.name, iname, decl["shape"], x.shape, dims)
            fixed = decl.get("dtype")
            if fixed is not None:
                if x.dtype != _TORCH_DTYPE[fixed]:
                    raise TypeError("%s: input '%s' has dtype %s, the spec fixes %s"
                                    % (self.name, iname, x.dtype, fixed))
            elif case_dtype is None:
                case_dtype = x.dtype
            elif x.dtype != case_dtype:
                raise TypeError("%s: input '%s' has dtype %s but the other inputs have %s"
                                % (self.name, iname, x.dtype, case_dtype))
        if case_dtype is not None and case_dtype not in self.dtypes:
            raise TypeError("%s: dtype %s is not one of the spec's dtypes %s"
                            % (self.name, case_dtype, [_AOT_DTYPE[d] for d in self.dtypes]))
        return {k: v[0] for k, v in dims.items()}, case_dtype or torch.float32

    def _shape(self, decl, dims):
        out = []
        for s in decl["shape"]:
            if isinstance(s, str):
                if s not in dims:
                    raise ValueError("%s: output '%s' uses dim %s, which no input binds"
                                     % (self.name, decl.get("name", "?"), s))
                out.append(dims[s])
            else:
                out.append(int(s))
        return out

    def output_meta(self, xs):
        dims, dtype = self.bind(xs)
        return [(self._shape(o, dims), _TORCH_DTYPE[o["dtype"]] if "dtype" in o else dtype)
                for o in self.outputs]

    # ---- raw kernels (no autograd) ----
    def forward(self, *xs):
        meta = self.output_meta(xs)
        xs = [x.contiguous() for x in xs]
        ys = [torch.empty(s, dtype=d) for s, d in meta]
        self.lib.call(self.forward_symbol, xs + ys, 0)
        return ys[0] if len(ys) == 1 else tuple(ys)

    def backward(self, xs, ys, dys):
        if not self.backward_symbol:
            raise RuntimeError("%s: the spec declares no 'backward' symbol" % self.name)
        xs = [x.contiguous() for x in xs]
        ys = [y.contiguous() for y in ys]
        dys = [torch.zeros_like(y) if dy is None else dy.contiguous() for dy, y in zip(dys, ys)]
        dxs = [torch.empty(x.shape, dtype=x.dtype) for x in xs]
        self.lib.call(self.backward_symbol, xs + ys + dys + dxs, len(dxs))
        return tuple(dx if diff else None for dx, diff in zip(dxs, self.differentiable))

    # ---- autograd ----
    def __call__(self, *xs):
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad
                                           for x in xs):
            return _function(self.name).apply(*xs)
        return self.forward(*xs)

    @property
    def op(self):
        return getattr(torch.ops.opgrad_custom, self.name)

    def __repr__(self):
        return "<opgrad custom op %s%s from %s>" % (self.name, self.schema, self.library_path)


_FUNCTIONS = {}


def _function(name):
    """The autograd.Function of custom op `name`; it looks the current CustomOp up at call time,
    so that reloading a spec re-points it."""
    f = _FUNCTIONS.get(name)
    if f is not None:
        return f

    def forward(ctx, *xs):
        op = _REGISTRY[name]
        ys = op.forward(*xs)
        out = ys if isinstance(ys, tuple) else (ys,)
        ctx.op = op
        ctx.save_for_backward(*xs, *out)
        ctx.n = len(xs)
        return ys

    def backward(ctx, *dys):
        saved = ctx.saved_tensors
        return ctx.op.backward(saved[:ctx.n], saved[ctx.n:], dys)

    f = type("OpgradCustom_" + name, (torch.autograd.Function,),
             {"forward": staticmethod(forward),
              "backward": staticmethod(_ops.first_order("opgrad custom op " + name)(backward))})
    _FUNCTIONS[name] = f
    return f


def _register(op):
    global _LIBRARY
    name = op.name
    if name in _REGISTERED:
        return
    if hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd"):
        qual = "opgrad_custom::" + name
        torch.library.custom_op(qual, lambda *xs: _REGISTRY[name].forward(*xs), mutates_args=(),
                                device_types="cpu", schema=op.schema)

        def fake(*xs):
            meta = _REGISTRY[name].output_meta(xs)
            ys = [xs[0].new_empty(s, dtype=d) for s, d in meta]
            return ys[0] if len(ys) == 1 else tuple(ys)

        def setup(ctx, inputs, output):
            out = output if isinstance(output, tuple) else (output,)
            ctx.save_for_backward(*inputs, *out)
            ctx.n = len(inputs)

        def bwd(ctx, *dys):
            saved = ctx.saved_tensors
            grads = getattr(torch.ops.opgrad_custom, name + "_backward")(
                list(saved[:ctx.n]), list(saved[ctx.n:]), list(dys))
            return tuple(g if diff else None
                         for g, diff in zip(grads, _REGISTRY[name].differentiable))

        torch.library.register_fake(qual, fake)
        if op.backward_symbol:
            n = len(op.inputs)
            bqual = qual + "_backward"
            torch.library.custom_op(
                bqual, lambda xs, ys, dys: tuple(
                    torch.zeros_like(x) if g is None else g
                    for x, g in zip(xs, _REGISTRY[name].backward(xs, ys, dys))),
                mutates_args=(), device_types="cpu",
                schema="(Tensor[] xs, Tensor[] ys, Tensor[] dys) -> (%s)"
                       % ", ".join("Tensor" for _ in range(n)))
            torch.library.register_fake(bqual, lambda xs, ys, dys: tuple(
                x.new_empty(x.shape) for x in xs))
            torch.library.register_autograd(qual, bwd, setup_context=setup)
    else:
        if _LIBRARY is None:
            _LIBRARY = torch.library.Library("opgrad_custom", "DEF")
        _LIBRARY.define(name + op.schema)
        _LIBRARY.impl(name, lambda *xs: _REGISTRY[name].forward(*xs), "CPU")
        _LIBRARY.impl(name, lambda *xs: _REGISTRY[name](*xs), "Autograd")
    _REGISTERED.add(name)


def load_custom(spec_path, library=None):
    """Loads the custom operator described by the JSON spec at `spec_path` (docs/custom-ops.md).
    `library` overrides the spec's "library" (an absolute path). Returns a CustomOp, callable on
    tensors, also registered as torch.ops.opgrad_custom.<name>."""
    with open(spec_path) as f:
        spec = json.load(f)
    op = CustomOp(spec, spec_path, library)
    with _LOCK:
        old = _REGISTRY.get(op.name)
        if old is not None and old.schema != op.schema:
            raise ValueError("%s: custom op %s is already registered with schema %s; a new schema "
                             "%s needs a new name" % (spec_path, op.name, old.schema, op.schema))
        _REGISTRY[op.name] = op
        _register(op)
    return op
