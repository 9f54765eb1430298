#!/usr/bin/python3
"""The operator profiler from Python (opgrad.profile, also opgrad.torch.profile; issue 17). Plain
unittest:

    OPGRAD_LIBRARY=build/libopgrad.so PYTHONPATH=python /usr/bin/python3 tests/python/test_torch_profile.py [-v]

A profiled training step of a small model (linear, mish, mse_loss and their backwards) gives one
trace event per launch, in launch order, with io shapes, bytes, GEMM FLOPs, positive durations;
the file is valid Chrome trace-event JSON; OPGRAD_PROFILE=path in a child process writes the trace
at exit and prints the per-operator summary; a second recording at once is refused.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

import opgrad.torch as ot  # noqa: E402


class Profile(unittest.TestCase):
    def test_training_step(self):
        x = torch.randn(64, 128)
        w = torch.randn(32, 128, requires_grad=True)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            with ot.profile(path) as prof:
                y = ot.mish(ot.linear(x, w))
                loss = ot.mse_loss(y, torch.zeros(64, 32))
                loss.backward()
            with open(path) as f:
                trace = json.load(f)
        names = [e["name"] for e in prof.events]
        self.assertEqual(names, [e["name"] for e in trace["traceEvents"]])
        self.assertIn("aclnnMish", names)
        self.assertIn("aclnnMishBackward", names)
        self.assertLess(names.index("aclnnMish"), names.index("aclnnMishBackward"))
        for e in prof.events:
            self.assertEqual(e["ph"], "X")
            self.assertGreaterEqual(e["dur"], 0)
        mish = [e for e in prof.events if e["name"] == "aclnnMish"][0]
        if "io" in mish["args"]:  # (a plan cached before the recording has no phase-1 facts)
            self.assertEqual(mish["args"]["io"], "float32[64,32] -> float32[64,32]")
            self.assertEqual(mish["args"]["bytes"], 2 * 64 * 32 * 4)
        table = prof.table()
        self.assertEqual(table["aclnnMish"]["calls"], 1)
        products = [e for e in prof.events if e["args"].get("flops")]
        self.assertTrue(products, "no GEMM event with FLOPs")
        # rates as fractions of the machine probe the trace carries
        self.assertGreater(prof.machine["probe_GB/s"], 0)
        self.assertGreater(prof.machine["probe_GFLOP/s"], 0)
        for e in products:
            if e["dur"] > 0:
                self.assertAlmostEqual(e["args"]["peak_fraction"],
                                       e["args"]["GFLOP/s"] / prof.machine["probe_GFLOP/s"],
                                       places=3)

    def test_one_recording_at_a_time(self):
        with tempfile.TemporaryDirectory() as d:
            with ot.profile(os.path.join(d, "a.json")):
                with self.assertRaises(RuntimeError):
                    with ot.profile(os.path.join(d, "b.json")):
                        pass

    def test_environment_variable_writes_at_exit(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "env.json")
            code = ("import sys; sys.path.insert(0, %r); import torch, opgrad.torch as ot; "
                    "ot.mish(torch.randn(1000)); ot.softmax(torch.randn(4, 5), 1)"
                    % os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "python"))
            env = dict(os.environ, OPGRAD_PROFILE=path)
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("opgrad profile: 2 launches", r.stderr)
            self.assertIn("aclnnSoftmax", r.stderr)
            with open(path) as f:
                events = json.load(f)["traceEvents"]
            self.assertEqual([e["name"] for e in events], ["aclnnMish", "aclnnSoftmax"])
            self.assertEqual(events[0]["args"]["io"], "float32[1000] -> float32[1000]")


if __name__ == "__main__":
    unittest.main()
