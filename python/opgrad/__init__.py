"""opgrad: Python bindings to libopgrad, the CPU implementation of the Ascend aclnn operator API.

    import opgrad.torch          # the PyTorch operators (torch.ops.opgrad.*), see docs/torch.md

This package itself needs no framework. libopgrad.so is found through OPGRAD_LIBRARY, next to
the package, in a source checkout's build tree, or by the system loader (opgrad/_lib.py).
"""
from ._lib import OpgradError, OpgradIndexError, Status, library_path

__version__ = "0.1.0"


def version():
    """The version string of the loaded libopgrad."""
    from ._lib import opgrad_version
    return opgrad_version().decode()


def set_num_threads(n):
    """Threads per operator (opgrad_set_num_threads). Executors that opgrad.torch cached under
    the old count are re-planned."""
    import sys
    from ._lib import opgrad_set_num_threads
    if opgrad_set_num_threads(int(n)) != 0:
        raise ValueError("opgrad.set_num_threads: n must be >= 1, got %r" % (n,))
    kernels = sys.modules.get("opgrad.torch._kernels")
    if kernels is not None:
        kernels.clear_plans()


def get_num_threads():
    from ._lib import opgrad_get_num_threads
    return opgrad_get_num_threads()


__all__ = ["OpgradError", "OpgradIndexError", "Status", "library_path", "version", "set_num_threads",
           "get_num_threads"]
