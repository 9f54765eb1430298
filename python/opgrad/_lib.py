"""ctypes binding to libopgrad.so (no dependency on any framework).

The library is found, in this order:
  1. the environment variable OPGRAD_LIBRARY (a path to libopgrad.so),
  2. next to this package (python/opgrad/libopgrad.so or python/opgrad/lib/libopgrad.so),
  3. the build tree of a source checkout (<repo>/build/libopgrad.so, then <repo>/build-*/
     libopgrad.so, newest first, skipping sanitizer builds, which cannot be dlopen()ed into an
     uninstrumented Python),
  4. the system loader (ctypes.util.find_library("opgrad"), then "libopgrad.so.0").

Every function is declared once (argtypes / restype), at import. Pointer arguments are declared
as c_void_p and passed as Python ints. The one exception is the per-call path of opgrad.torch:
executor_run_gil / executor_run_nogil (opgrad_executor_run without argtypes, called with
prebuilt ctypes objects; see below). ctypes.CDLL releases
the GIL during each call; the C library is thread-safe and keeps its last error per thread, so
a status is turned into an exception with the message of the same thread.
"""
import ctypes
import ctypes.util
import glob
import os
import re

__all__ = ["OpgradError", "lib", "library_path", "check", "error_message", "Status", "i64_array",
           "OPS", "Op", "Param", "parse_params"]


class Status:
    SUCCESS = 0
    PARAM_NULLPTR = 161001
    PARAM_INVALID = 161002
    RUNTIME_ERROR = 361001
    INNER = 561000


# aclnn's message for a dim argument outside [-rank, rank - 1] ("dim = 5 is out of range",
# "dims[0] = 4 is out of range"): PyTorch raises IndexError for it
_DIM_RANGE = re.compile(r"\bdims?(\[\d+\])? = -?\d+ is out of range")


class OpgradError(RuntimeError):
    """A non-zero aclnn status. `status` is the code (161001 NULL pointer, 161002 invalid
    parameter, ...), `message` is aclGetRecentErrMsg() of the calling thread, `function` the C
    function that failed. Where PyTorch raises another type for the same mistake, the error is
    also an instance of it: an out-of-range dim is an OpgradIndexError (an IndexError)."""

    def __new__(cls, status, message="", function=None):
        if cls is OpgradError and _DIM_RANGE.search(message or ""):
            cls = OpgradIndexError
        return super().__new__(cls, status, message, function)

    def __init__(self, status, message, function=None):
        self.status = int(status)
        self.message = message
        self.function = function
        where = (function + ": ") if function and not message.startswith(function) else ""
        super().__init__("opgrad status %d: %s%s" % (self.status, where, message))


class OpgradIndexError(OpgradError, IndexError):
    """An out-of-range dim (PyTorch's IndexError), still an OpgradError with its status."""


# aclDataType values (include/acl/acl_base.h)
ACL_FLOAT = 0
ACL_FLOAT16 = 1
ACL_INT32 = 3
ACL_INT64 = 9
ACL_DOUBLE = 11
ACL_BF16 = 27
ACL_FORMAT_ND = 2


def _candidates():
    env = os.environ.get("OPGRAD_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libopgrad.so"), os.path.join(here, "lib", "libopgrad.so")]
    root = os.path.dirname(os.path.dirname(here))  # python/opgrad -> python -> repo
    if os.path.exists(os.path.join(root, "include", "opgrad", "opgrad.h")):
        out.append(os.path.join(root, "build", "libopgrad.so"))
        others = [p for p in glob.glob(os.path.join(root, "build-*", "libopgrad.so"))
                  if not any(s in os.path.basename(os.path.dirname(p)) for s in ("asan", "tsan", "san"))]
        others.sort(key=lambda p: os.path.getmtime(p), reverse=True)
        out += others
    return out, False


def _load():
    cands, explicit = _candidates()
    errors = []
    for path in cands:
        if not os.path.exists(path):
            if explicit:
                raise OSError("OPGRAD_LIBRARY=%s: no such file" % path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            if explicit:
                raise
            errors.append("%s: %s" % (path, e))
    for name in (ctypes.util.find_library("opgrad"), "libopgrad.so.0", "libopgrad.so"):
        if not name:
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append("%s: %s" % (name, e))
    raise OSError("libopgrad.so not found: set OPGRAD_LIBRARY=/path/to/libopgrad.so, or build it "
                  "(cmake -S . -B build && ninja -C build opgrad), or install it. Tried: "
                  + "; ".join(errors or cands))


lib, library_path = _load()

P = ctypes.c_void_p
I64 = ctypes.c_int64
U64 = ctypes.c_uint64
I32 = ctypes.c_int32
INT = ctypes.c_int
BOOL = ctypes.c_bool
CHARP = ctypes.c_char_p


def _decl(name, restype, argtypes, required=True):
    f = getattr(lib, name, None)
    if f is None:
        if required:
            raise OSError("%s does not export %s (an older libopgrad?)" % (library_path, name))
        return None
    f.restype = restype
    f.argtypes = argtypes
    return f


# runtime / tensors
aclGetRecentErrMsg = _decl("aclGetRecentErrMsg", CHARP, [])
aclCreateTensor = _decl("aclCreateTensor", P, [P, U64, INT, P, I64, INT, P, U64, P])
aclInitTensor = _decl("aclInitTensor", I32, [P, P, U64, INT, P, I64, INT, P, U64, P])
aclDestroyTensor = _decl("aclDestroyTensor", I32, [P])
aclCreateScalar = _decl("aclCreateScalar", P, [P, INT])
aclDestroyScalar = _decl("aclDestroyScalar", I32, [P])
aclCreateIntArray = _decl("aclCreateIntArray", P, [P, U64])
aclDestroyIntArray = _decl("aclDestroyIntArray", I32, [P])
aclDestroyAclOpExecutor = _decl("aclDestroyAclOpExecutor", I32, [P])
aclSetAclOpExecutorRepeatable = _decl("aclSetAclOpExecutorRepeatable", I32, [P])
opgrad_version = _decl("opgrad_version", CHARP, [])
opgrad_set_num_threads = _decl("opgrad_set_num_threads", INT, [INT])
opgrad_profile_start = _decl("opgrad_profile_start", INT, [CHARP])
opgrad_profile_stop = _decl("opgrad_profile_stop", ctypes.c_long, [])
opgrad_get_num_threads = _decl("opgrad_get_num_threads", INT, [])

# Phase 2 of every operator has the same signature.
_PHASE2 = [P, U64, P, P]


class _OpInfo(ctypes.Structure):
    """opgrad_op_info (include/opgrad/opgrad.h)."""
    _fields_ = [("name", CHARP), ("family", CHARP), ("kind", CHARP), ("grad", CHARP),
                ("params", CHARP), ("aot", INT)]


class Param:
    """One phase-1 parameter of an operator: its kind letter (T input tensor, G incoming
    gradient, Y forward output, O output, R in-place tensor, S scalar, I int64, I8 int8, B bool,
    D double, C string, A int array, DT dtype), its aclnn name and its default ("" if none)."""
    __slots__ = ("kind", "name", "default")

    def __init__(self, kind, name, default):
        self.kind, self.name, self.default = kind, name, default

    def __repr__(self):
        return "%s(%s%s)" % (self.kind, self.name, ", " + self.default if self.default else "")


def parse_params(text):
    """The parameters of an operator list line, e.g. "(T(self), S(beta, 1), O(out))"."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    out, i = [], 0
    while i < len(text):
        while i < len(text) and text[i] in " ,":
            i += 1
        if i >= len(text):
            break
        open_ = text.index("(", i)
        kind = text[i:open_].strip()
        j, quoted = open_ + 1, False
        while quoted or text[j] != ")":
            quoted ^= text[j] == '"'
            j += 1
        body = text[open_ + 1:j]
        name, _, default = body.partition(",")
        out.append(Param(kind, name.strip(), default.strip().strip('"')))
        i = j + 1
    return out


def snake(name):
    """The Python spelling of an aclnn name: LeakyRelu -> leaky_relu, inputScale -> input_scale."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (name[i - 1].islower() or name[i - 1].isdigit()):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


class Op:
    """One operator of the library's list (src/ops/ops.inc), read at run time."""
    __slots__ = ("name", "family", "kind", "grad", "params", "aot")

    def __init__(self, info):
        self.name = info.name.decode()[len("aclnn"):]
        self.family = info.family.decode()
        self.kind = info.kind.decode()
        self.grad = info.grad.decode()
        self.params = parse_params(info.params.decode())
        self.aot = bool(info.aot)


def _read_ops():
    count = _decl("opgrad_op_count", INT, [])
    get = _decl("opgrad_op_get", INT, [INT, P])
    ops = {}
    for i in range(count()):
        info = _OpInfo()
        if get(i, ctypes.addressof(info)) == 0:
            op = Op(info)
            ops[op.name] = op
    return ops


#: every operator of the library, by name without the "aclnn" prefix ("Mish", "SoftmaxBackward")
OPS = _read_ops()

# The ctypes type of each parameter kind (the trailing workspaceSize / executor pointers added).
_CTYPE = {"T": P, "G": P, "Y": P, "O": P, "R": P, "S": P, "A": P, "I": I64,
          "I8": ctypes.c_int8, "B": BOOL, "D": ctypes.c_double, "C": CHARP, "DT": INT,
          "BA": P, "L": P, "LR": P, "LO": P, "F": ctypes.c_float}

phase1 = {}
phase2 = {}
phase2_gil = {}  # the same entry points called with the GIL held (for tiny tensors)
for _name, _op in OPS.items():
    phase1[_name] = _decl("aclnn%sGetWorkspaceSize" % _name, I32,
                          [_CTYPE[p.kind] for p in _op.params] + [P, P])
    phase2[_name] = _decl("aclnn%s" % _name, I32, _PHASE2)

# Re-pointing an executor, or running phase 2 on a tiny tensor, takes ~100 ns and never waits on
# anything that needs Python: those are called through a PyDLL view of the same library, which
# keeps the GIL (releasing and re-taking it would cost as much as the call). Everything else, and
# phase 2 of any operator with more than opgrad.torch's small-tensor bound, goes through CDLL,
# which releases the GIL, so that other Python threads run meanwhile.
_pylib = ctypes.PyDLL(library_path)
for _name in OPS:
    _f = getattr(_pylib, "aclnn%s" % _name)
    _f.restype = I32
    _f.argtypes = _PHASE2
    phase2_gil[_name] = _f
aclSetInputTensorAddr = getattr(_pylib, "aclSetInputTensorAddr")
aclSetOutputTensorAddr = getattr(_pylib, "aclSetOutputTensorAddr")
for _f in (aclSetInputTensorAddr, aclSetOutputTensorAddr):
    _f.restype = I32
    _f.argtypes = [P, ctypes.c_size_t, P, P]

# opgrad_executor_run (include/opgrad/opgrad.h): re-points a repeatable executor's io slots and
# runs its phase 2 in one call (the cached-plan path of opgrad.torch). Declared with argtypes for
# general use; the adapter's hot path instead calls the executor_run_gil / executor_run_nogil
# function objects below, which have no argtypes: converting each argument through argtypes
# (from_param) costs more than the C call itself, while prebuilt ctypes objects (c_void_p,
# c_size_t, c_uint64, a ctypes array for addrs, None for NULL) are passed without a Python-level
# conversion. Callers of those two must pass exactly such objects (a plain Python int would be
# passed as a C int).
opgrad_executor_run = _decl("opgrad_executor_run", I32,
                            [P, P, ctypes.c_size_t, P, U64, P])
executor_run_gil = _pylib["opgrad_executor_run"]   # keeps the GIL (tiny tensors)
executor_run_nogil = lib["opgrad_executor_run"]    # releases it (CDLL)
for _f in (executor_run_gil, executor_run_nogil):
    _f.restype = I32

# custom operators (include/opgrad/custom_op.h); optional: older libraries lack them
opgrad_custom_open = _decl("opgrad_custom_open", I32, [CHARP, P], required=False)
opgrad_custom_has_symbol = _decl("opgrad_custom_has_symbol", I32, [P, CHARP], required=False)
opgrad_custom_call = _decl("opgrad_custom_call", I32, [P, CHARP, INT, P, P, P, P, INT],
                           required=False)
opgrad_custom_close = _decl("opgrad_custom_close", None, [P], required=False)
opgrad_custom_set_grad_names = _decl("opgrad_custom_set_grad_names", I32,
                                     [P, CHARP, CHARP, INT, P], required=False)


def error_message():
    m = aclGetRecentErrMsg()
    return m.decode("utf-8", "replace") if m else ""


def check(status, function):
    if status:
        raise OpgradError(status, error_message(), function)


# ---- cached int64 arrays ----------------------------------------------------------------------
# Read-only once built, so one cache serves every thread. Bounded: past the bound a fresh array
# is built for the call (kept alive by the caller), never evicted while another thread uses it.
_CACHE_MAX = 8192
_i64_cache = {}
_ARR = [ctypes.c_int64 * n for n in range(33)]


def i64_array(values):
    """(address, keep-alive) of a read-only C int64 array holding `values` (a tuple)."""
    hit = _i64_cache.get(values)
    if hit is not None:
        return hit
    n = len(values)
    arr = (_ARR[n] if n < len(_ARR) else ctypes.c_int64 * n)(*values)
    entry = (ctypes.addressof(arr), arr)
    if len(_i64_cache) < _CACHE_MAX:
        entry = _i64_cache.setdefault(tuple(values), entry)
    return entry


def bind_spec_dims(op, iname, declared, shape, dims):
    """Binds the dim names of a custom operator's declared input shape (ints and names, the JSON
    spec of `opgrad check --custom`) to the sizes of `shape`, into dims {name: (size, input)};
    raises ValueError naming the input, the dim and the binding on a mismatch. A negative size
    (MindSpore's dynamic dim) is not bound."""
    shape = list(shape)
    if len(shape) != len(declared):
        raise ValueError("%s: input '%s' has shape %s, the spec declares rank %d (%s)"
                         % (op, iname, shape, len(declared), declared))
    for d, (want, got) in enumerate(zip(declared, shape)):
        if got < 0:
            continue
        if isinstance(want, str):
            bound = dims.setdefault(want, (got, iname))
            if bound[0] != got:
                raise ValueError("%s: input '%s' dim %d is %d but %s = %d (bound by input '%s')"
                                 % (op, iname, d, got, want, bound[0], bound[1]))
        elif want != got:
            raise ValueError("%s: input '%s' dim %d is %d, the spec declares %d"
                             % (op, iname, d, got, want))


def spec_name_and_library(spec, where, library=None):
    """(name, absolute library path) of a custom operator's JSON spec (`opgrad check --custom`'s,
    docs/custom-ops.md), after the checks both adapters need: the required keys, an identifier
    name, a library given (library overrides the spec's), absolute (a relative path resolves
    against the job's working directory) and present. Raises ValueError / FileNotFoundError
    naming `where` (the spec's path)."""
    for key in ("name", "forward", "inputs", "outputs"):
        if key not in spec:
            raise ValueError("%s: the spec has no '%s' (docs/custom-ops.md)" % (where, key))
    name = spec["name"]
    if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise ValueError("%s: name %r is not an identifier" % (where, name))
    path = library or spec.get("library")
    if not path:
        raise ValueError("%s: the spec has no 'library' and none was given" % where)
    if not os.path.isabs(path):
        raise ValueError("%s: library path %r is relative; the spec must give an absolute path "
                         "(a relative one resolves against the job's working directory)"
                         % (where, path))
    if not os.path.exists(path):
        raise FileNotFoundError("%s: library %s does not exist" % (where, path))
    return name, path


class CustomHandle:
    """Owns an opgrad_custom_lib handle of a custom-operator library (both adapters' library
    objects derive from it): opened by open_handle, closed when the object is collected."""
    handle = None

    def open_handle(self, path):
        h = ctypes.c_void_p()
        st = opgrad_custom_open(path.encode(), ctypes.addressof(h))
        if st:
            raise OpgradError(st, error_message(), "opgrad_custom_open")
        self.handle = h.value

    def __del__(self):
        try:
            if self.handle is not None and opgrad_custom_close is not None:
                opgrad_custom_close(self.handle)
        except Exception:
            pass
