"""opgrad.mindspore.custom: a custom operator (a shared library in MindSpore's aot ABI, described by
the JSON spec of `opgrad check --custom`: docs/custom-ops.md) as a MindSpore operator with its
backward, built from the spec alone (docs/mindspore.md).

    import opgrad.mindspore
    op = opgrad.mindspore.custom("/abs/build/examples/custom/fused_add_scale.json")
    y = op(x, bias, scale)                 # an ops.Custom(func_type="aot") with its bprop
    op = opgrad.mindspore.custom(spec, debug=True)   # the same, every call checked

* The forward is `ops.Custom(func="<library>:<forward>", func_type="aot")`, its bprop a second
  Custom on the backward symbol (the bprop convention: x..., y..., dy... -> one gradient per
  input). `out_shape` and `out_dtype` come from the spec's declared outputs, with every dim name
  bound from the input shapes (a mismatch raises ValueError naming the input, the dim and the
  binding): the shapes MindSpore allocates are the declared ones.
* The gradients must be declared with their inputs' shapes and dtypes (the spec's default); a
  spec whose "gradients" declare anything else is refused here, because MindSpore would pass
  that shape on as the input's gradient without a word.
* MindSpore itself checks neither what a kernel writes nor where: a backward that forgets to sum
  a broadcast gradient ([N, C] into a [C] bias gradient) writes past MindSpore's buffer. Run
  `opgrad check --custom SPEC` first; inside training, `debug=True` runs both kernels through
  libopgrad's opgrad_custom_call_guarded (outputs in buffers of the declared shape followed by
  canary bytes, inputs compared after the call, unwritten elements found, gradients logged by the
  OPGRAD_DEBUG_GRADS monitor under the spec's names) as `func_type="pyfunc"` Customs: the first
  mistake raises OpgradError naming the kernel, the param, its declared shape and what it wrote.
  Debug runs on NumPy arrays (float32, float16, float64: NumPy has no bfloat16) and is slower.
* Inputs marked "differentiable": false get a zero gradient.
"""
import ctypes
import json
import os
import sys

import numpy as np

from . import _lib as L
from ._lib import OpgradError
from ._ms_builtin import builtin

__all__ = ["builtin", "custom", "load_spec"]

_MAX_INPUTS = 8


def _ms():
    import mindspore  # the real one: this module is opgrad.mindspore
    return mindspore


def _dtype_names():
    ms = _ms()
    return {ms.float32: "float32", ms.float16: "float16", ms.bfloat16: "bfloat16",
            ms.float64: "float64", ms.int32: "int32", ms.int64: "int64", ms.int16: "int16",
            ms.int8: "int8", ms.uint8: "uint8", ms.bool_: "bool"}


def load_spec(spec):
    """The spec as a dict: `spec` is a path to the JSON file or an already parsed dict."""
    if isinstance(spec, dict):
        return dict(spec), "<spec>"
    path = os.fspath(spec)
    with open(path) as f:
        return json.load(f), path


class _Spec:
    """What custom() needs from a spec, validated, and the dim binding of a call."""

    def __init__(self, spec, where, library):
        self.where = where
        self.name, self.library = L.spec_name_and_library(spec, where, library)
        self.forward = spec["forward"]
        self.backward = spec.get("backward")
        self.inputs = list(spec["inputs"])
        self.outputs = list(spec["outputs"])
        if not self.inputs or len(self.inputs) > _MAX_INPUTS:
            raise ValueError("%s: %d inputs; opgrad.mindspore takes 1 to %d"
                             % (where, len(self.inputs), _MAX_INPUTS))
        if not self.outputs:
            raise ValueError("%s: the spec declares no outputs" % where)
        self.in_names = [str(i.get("name", "x%d" % k)) for k, i in enumerate(self.inputs)]
        self.out_names = [str(o.get("name", "y%d" % k)) for k, o in enumerate(self.outputs)]
        self.dtypes = list(spec.get("dtypes", ["float32"]))
        self.differentiable = tuple(bool(i.get("differentiable", True)) for i in self.inputs)
        grads = spec.get("gradients")
        if grads is not None:
            if len(grads) != len(self.inputs):
                raise ValueError(
                    "%s: 'gradients' declares %d gradients for %d inputs (%s); the backward "
                    "returns exactly one gradient per input" % (
                        where, len(grads), len(self.inputs), ", ".join(self.in_names)))
            for g, i, n in zip(grads, self.inputs, self.in_names):
                if g.get("shape") != i.get("shape"):
                    raise ValueError(
                        "%s: the gradient of '%s' is declared with shape %s but input '%s' has "
                        "shape %s. MindSpore would hand that %s tensor on as the gradient of '%s' "
                        "(a wrong-shaped gradient, no error): a gradient has its input's shape, so "
                        "the backward must sum it over the broadcast dims (opgrad check --custom "
                        "names them)" % (where, n, g.get("shape"), n, i.get("shape"),
                                         g.get("shape"), n))
                if g.get("dtype") != i.get("dtype"):
                    raise ValueError("%s: the gradient of '%s' is declared with dtype %s but the "
                                     "input's is %s: a gradient has its input's dtype"
                                     % (where, n, g.get("dtype"), i.get("dtype")))

    def bind(self, shapes):
        """Dim name -> size from the input shapes (lists of ints); raises on a mismatch."""
        if len(shapes) != len(self.inputs):
            raise TypeError("%s takes %d inputs (%s), got %d" % (
                self.name, len(self.inputs), ", ".join(self.in_names), len(shapes)))
        dims = {}
        for k, (shape, decl) in enumerate(zip(shapes, self.inputs)):
            L.bind_spec_dims(self.name, self.in_names[k], decl["shape"], shape, dims)
        return {k: v[0] for k, v in dims.items()}

    def out_shapes(self, shapes):
        dims = self.bind(shapes)
        out = []
        for o, oname in zip(self.outputs, self.out_names):
            s = []
            for w in o["shape"]:
                if isinstance(w, str):
                    if w not in dims and not any(x < 0 for sh in shapes for x in sh):
                        raise ValueError("%s: output '%s' uses dim %s, which no input binds"
                                         % (self.name, oname, w))
                    s.append(dims.get(w, -1))
                else:
                    s.append(int(w))
            out.append(s)
        return out

    def case_dtype(self, names):
        """The case's dtype (the inputs without a fixed one share it) as an aot name."""
        case = None
        for k, (n, decl) in enumerate(zip(names, self.inputs)):
            fixed = decl.get("dtype")
            if fixed is not None:
                if n != fixed:
                    raise TypeError("%s: input '%s' has dtype %s, the spec fixes %s"
                                    % (self.name, self.in_names[k], n, fixed))
            elif case is None:
                case = n
            elif n != case:
                raise TypeError("%s: input '%s' has dtype %s but the other inputs have %s"
                                % (self.name, self.in_names[k], n, case))
        if case is not None and case not in self.dtypes:
            raise TypeError("%s: dtype %s is not one of the spec's dtypes %s"
                            % (self.name, case, self.dtypes))
        return case or "float32"

    def out_dtypes(self, names):
        case = self.case_dtype(names)
        return [o.get("dtype", case) for o in self.outputs]


def _one(values):
    return values[0] if len(values) == 1 else tuple(values)


# ---- debug: the kernels through opgrad_custom_call_guarded ------------------------------------

_guarded = getattr(L.lib, "opgrad_custom_call_guarded", None)
if _guarded is not None:
    _guarded.restype = ctypes.c_int32
    _guarded.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int] + \
        [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]

_NP_AOT = {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16",
           np.dtype(np.float64): "float64", np.dtype(np.int32): "int32",
           np.dtype(np.int64): "int64", np.dtype(np.int16): "int16", np.dtype(np.int8): "int8",
           np.dtype(np.uint8): "uint8", np.dtype(np.bool_): "bool"}
_AOT_NP = {v: k for k, v in _NP_AOT.items()}


class _Library(L.CustomHandle):
    """The custom library opened through libopgrad (a private copy, reloaded when rebuilt)."""

    def __init__(self, path):
        if L.opgrad_custom_open is None:
            raise RuntimeError("this libopgrad (%s) has no opgrad_custom_open" % L.library_path)
        self.open_handle(path)
        self.path = path

    def has(self, symbol):
        st = L.opgrad_custom_has_symbol(self.handle, symbol.encode())
        if st:
            raise OpgradError(st, L.error_message(), "opgrad_custom_has_symbol")

    def name_grads(self, symbol, op, names):
        arr = (ctypes.c_char_p * len(names))(*[n.encode() for n in names])
        st = L.opgrad_custom_set_grad_names(self.handle, symbol.encode(), op.encode(), len(names),
                                            ctypes.addressof(arr))
        if st:
            raise OpgradError(st, L.error_message(), "opgrad_custom_set_grad_names")

    def call_guarded(self, symbol, arrays, noutputs, ngrads, names):
        n = len(arrays)
        params = (ctypes.c_void_p * n)(*[a.ctypes.data for a in arrays])
        ndims = (ctypes.c_int * n)(*[a.ndim for a in arrays])
        keep = [(ctypes.c_int64 * max(a.ndim, 1))(*a.shape) for a in arrays]
        shapes = (ctypes.POINTER(ctypes.c_int64) * n)(
            *[ctypes.cast(k, ctypes.POINTER(ctypes.c_int64)) for k in keep])
        dtypes = (ctypes.c_char_p * n)(*[_NP_AOT[a.dtype].encode() for a in arrays])
        cnames = (ctypes.c_char_p * n)(*[s.encode() for s in names])
        st = _guarded(self.handle, symbol.encode(), n, ctypes.addressof(params),
                      ctypes.addressof(ndims), ctypes.addressof(shapes), ctypes.addressof(dtypes),
                      noutputs, ngrads, ctypes.addressof(cnames))
        if st:
            raise OpgradError(st, L.error_message(), "opgrad_custom_call_guarded")


def _debug_kernels(spec):
    """The forward and backward as Python functions of NumPy arrays, each call guarded."""
    if _guarded is None:
        raise RuntimeError("debug=True needs opgrad_custom_call_guarded, which this libopgrad (%s) "
                           "lacks: rebuild it" % L.library_path)
    lib = _Library(spec.library)
    lib.has(spec.forward)
    if spec.backward:
        lib.has(spec.backward)
        lib.name_grads(spec.backward, spec.name, spec.in_names)
    n, m = len(spec.inputs), len(spec.outputs)

    def arrays(xs, what):
        out = []
        for k, x in enumerate(xs):
            x = np.ascontiguousarray(x)
            if x.dtype not in _NP_AOT:
                raise TypeError("%s (debug): %s %d has dtype %s; debug mode takes NumPy's float32, "
                                "float16, float64 and integer dtypes" % (spec.name, what, k,
                                                                         x.dtype))
            out.append(x)
        return out

    def forward(*xs):
        xs = arrays(xs, "input")
        shapes = spec.out_shapes([list(x.shape) for x in xs])
        dts = spec.out_dtypes([_NP_AOT[x.dtype] for x in xs])
        ys = [np.empty(s, dtype=_AOT_NP[d]) for s, d in zip(shapes, dts)]
        lib.call_guarded(spec.forward, xs + ys, m, 0, spec.in_names + spec.out_names)
        return _one(ys)

    def backward(*args):
        args = arrays(args, "argument")
        xs, ys, dys = args[:n], args[n:n + m], args[n + m:]
        shapes = spec.out_shapes([list(x.shape) for x in xs])
        for y, s, yn in zip(ys, shapes, spec.out_names):
            if list(y.shape) != s:
                raise ValueError("%s (debug): output '%s' has shape %s, the spec declares %s"
                                 % (spec.name, yn, list(y.shape), s))
        for dy, y, yn in zip(dys, ys, spec.out_names):
            if dy.shape != y.shape:
                raise ValueError("%s (debug): the gradient of output '%s' has shape %s, the "
                                 "output %s" % (spec.name, yn, list(dy.shape), list(y.shape)))
        gs = [np.empty(x.shape, dtype=x.dtype) for x in xs]  # declared: the inputs' shapes
        names = spec.in_names + spec.out_names + ["d" + s for s in spec.out_names] + \
            ["d" + s for s in spec.in_names]
        lib.call_guarded(spec.backward, xs + ys + dys + gs, n, n, names)
        return _one(gs)

    return forward, backward, lib


# ---- the bprop: MindSpore wants its parameters spelt out (inputs..., out, dout), and a pyfunc
# Custom refuses the tuple that `bwd(*xs, out, dout)` passes. So each (n, m, differentiable) gets
# a bprop written out as source, in a file: MindSpore's graph parser reads a function's source
# from its file (it refuses one that has none). The files live in a directory private to the user
# (created 0700 and checked: owned by the user, writable by nobody else) and are imported from
# there.

_BPROPS = {}


def _bprop_dir():
    import stat
    import tempfile
    d = os.path.join(tempfile.gettempdir(), "opgrad-mindspore-bprop-%d" % os.getuid())
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise RuntimeError("%s is not a directory private to this user; remove it" % d)
    return d


def _module(n, m, diff):
    key = (n, m, tuple(diff))
    if key not in _BPROPS:
        import importlib.util
        xs = ["x%d" % i for i in range(n)]
        ys = ["out"] if m == 1 else ["out[%d]" % k for k in range(m)]
        dys = ["dout"] if m == 1 else ["dout[%d]" % k for k in range(m)]
        gs = ["g"] if n == 1 else ["g[%d]" % i for i in range(n)]
        ret = [gs[i] if diff[i] else "zeros(%s)" % xs[i] for i in range(n)]
        bargs = xs + ["y%d" % k for k in range(m)] + ["dy%d" % k for k in range(m)]
        src = ("# generated by opgrad.mindspore (python/opgrad/mindspore.py): a bprop for %d "
               "inputs, %d outputs\n"
               "def make(bwd, zeros):\n"
               "    def bprop(%s, out, dout):\n"
               "        g = bwd(%s)\n"
               "        return (%s,)\n"
               "    return bprop\n"
               "\n\n"
               "def wrap(forward, backward):  # debug: pyfunc kernels need their arity spelt out\n"
               "    def fwd(%s):\n"
               "        return forward(%s)\n"
               "\n"
               "    def bwd(%s):\n"
               "        return backward(%s)\n"
               "    return fwd, bwd\n") % (n, m, ", ".join(xs), ", ".join(xs + ys + dys),
                                          ", ".join(ret), ", ".join(xs), ", ".join(xs),
                                          ", ".join(bargs), ", ".join(bargs))
        name = "opgrad_ms_bprop_%d_%d_%s" % (n, m, "".join("1" if d else "0" for d in diff))
        path = os.path.join(_bprop_dir(), name + ".py")
        try:
            with open(path) as f:
                same = f.read() == src
        except OSError:
            same = False
        if not same:
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "w") as f:
                f.write(src)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # MindSpore's parser looks the module up by name
        spec.loader.exec_module(module)
        _BPROPS[key] = module
    return _BPROPS[key]


def _make_bprop(n, bwd, m, diff):
    return _module(n, m, diff).make(bwd, _ms().ops.zeros_like)


def custom(spec, debug=False, library=None):
    """The custom operator of `spec` (a JSON spec path or dict, docs/custom-ops.md) as a MindSpore
    ops.Custom with its bprop. `library` overrides the spec's "library" (absolute). With
    debug=True the kernels run through opgrad's guarded call (module docstring): a kernel that
    writes past a declared output, into an input, or leaves an output unwritten raises
    OpgradError naming it, inside the training step."""
    ms = _ms()
    ops = ms.ops
    raw, where = load_spec(spec)
    s = _Spec(raw, where, library)
    n, m = len(s.inputs), len(s.outputs)
    names = _dtype_names()

    def dtype_name(t):
        if hasattr(t, "element_type"):  # out_dtype gets Tensor[Float32]: its element type
            t = t.element_type()
        if t not in names:
            raise TypeError("%s: inputs of dtype %s are not supported" % (s.name, t))
        if debug and t == ms.bfloat16:
            raise TypeError("%s: debug=True runs the kernels on NumPy arrays, which have no "
                            "bfloat16; debug in float32 or float16" % s.name)
        return names[t]

    inv = {v: k for k, v in names.items()}

    def fwd_shape(*shapes):
        return _one(s.out_shapes(shapes))

    def fwd_dtype(*dts):
        return _one([inv[d] for d in s.out_dtypes([dtype_name(t) for t in dts])])

    def bwd_shape(*shapes):
        s.bind(shapes[:n])
        return _one([list(x) for x in shapes[:n]])

    def bwd_dtype(*dts):
        return _one(list(dts[:n]))

    if debug:
        fwd_fn, bwd_fn, lib = _debug_kernels(s)
        fwd_fn, bwd_fn = _module(n, m, s.differentiable).wrap(fwd_fn, bwd_fn)
        ftype = "pyfunc"
    else:
        check = _Library(s.library)  # the symbols are looked up now, not at the first launch
        check.has(s.forward)
        if s.backward:
            check.has(s.backward)
        del check
        lib = None
        fwd_fn = s.library + ":" + s.forward
        bwd_fn = s.library + ":" + s.backward if s.backward else None
        ftype = "aot"
    bprop = None
    if s.backward:
        bwd = ops.Custom(func=bwd_fn, out_shape=bwd_shape, out_dtype=bwd_dtype, func_type=ftype)
        bprop = _make_bprop(n, bwd, m, s.differentiable)
    op = ops.Custom(func=fwd_fn, out_shape=fwd_shape, out_dtype=fwd_dtype, func_type=ftype,
                    bprop=bprop)
    if lib is not None:
        _KEEP.append(lib)  # debug: the library stays open for the process (MindSpore keeps the op)
    return op


_KEEP = []
