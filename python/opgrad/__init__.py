"""opgrad: Python bindings to libopgrad, the CPU implementation of the Ascend aclnn operator API.

    import opgrad.torch          # the PyTorch operators (torch.ops.opgrad.*), see docs/torch.md

This package itself needs no framework. libopgrad.so is found through OPGRAD_LIBRARY, next to
the package, in a source checkout's build tree, or by the system loader (opgrad/_lib.py).
"""
from ._lib import OpgradError, OpgradIndexError, Status, library_path, opgrad_version

# one version number: the library's (OPGRAD_VERSION_STRING in include/opgrad/opgrad.h), which the
# wheel's metadata reads too
__version__ = opgrad_version().decode()


def version() -> str:
    """The version string of the loaded libopgrad."""
    from ._lib import opgrad_version
    return opgrad_version().decode()


def set_num_threads(n: int) -> None:
    """Threads per operator (opgrad_set_num_threads). Executors that opgrad.torch cached under
    the old count are re-planned."""
    import sys
    from ._lib import opgrad_set_num_threads
    if opgrad_set_num_threads(int(n)) != 0:
        raise ValueError("opgrad.set_num_threads: n must be >= 1, got %r" % (n,))
    kernels = sys.modules.get("opgrad.torch._kernels")
    if kernels is not None:
        kernels.clear_plans()


class profile:
    """Records every opgrad operator launch inside the block (opgrad_profile_start / _stop):

        with opgrad.profile("trace.json") as prof:
            loss = model(x); loss.backward()
        prof.events          # the trace's events (dicts: name, ts, dur, args: io, bytes, GB/s,
                             # bw_fraction, GFLOP/s, peak_fraction, plan_us, threads, stream)
        prof.machine         # the probe the fractions refer to: {"probe_GB/s", "probe_GFLOP/s", ...}
        prof.table()         # {operator: {"calls", "total_us", "bytes", "flops"}}

    The file is Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev); a per-operator
    summary is printed on stderr when the block ends. One recording at a time per process."""

    def __init__(self, path: str = "opgrad_trace.json") -> None:
        self.path = str(path)
        self.events = []
        self.machine = {}

    def __enter__(self):
        from ._lib import opgrad_profile_start
        if opgrad_profile_start(self.path.encode()) != 0:
            raise RuntimeError("opgrad.profile: a recording is already running (or the path is "
                               "empty)")
        return self

    def __exit__(self, *exc):
        import json
        from ._lib import opgrad_profile_stop
        if opgrad_profile_stop() < 0:
            raise RuntimeError("opgrad.profile: could not write %s" % self.path)
        with open(self.path) as f:
            trace = json.load(f)
        self.events = trace["traceEvents"]
        self.machine = trace.get("otherData", {})
        return False

    def table(self) -> dict:
        out = {}
        for e in self.events:
            t = out.setdefault(e["name"], {"calls": 0, "total_us": 0.0, "bytes": 0.0,
                                           "flops": 0.0})
            t["calls"] += 1
            t["total_us"] += e["dur"]
            t["bytes"] += e["args"].get("bytes", 0.0)
            t["flops"] += e["args"].get("flops", 0.0)
        return out


def get_num_threads() -> int:
    from ._lib import opgrad_get_num_threads
    return opgrad_get_num_threads()


__all__ = ["OpgradError", "OpgradIndexError", "Status", "library_path", "version", "set_num_threads",
           "get_num_threads", "profile"]
