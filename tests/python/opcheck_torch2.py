"""PyTorch >= 2.4 only: torch.library.opcheck on every opgrad operator (schema, autograd
registration, FakeTensor kernel). test_aot_dispatch_dynamic (torch.compile) is not run: it needs
Inductor's C++ toolchain setup, which is not part of this test. Exit status 1 on any failure."""
import sys

import torch

import opgrad.torch as ot  # registers torch.ops.opgrad

UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")


def main():
    x = torch.randn(8, 5, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    s = torch.rand(1, requires_grad=True) + 0.5
    # every standard pair of the operator list, plus the explicitly defined unary operators
    unary = set(ot._kernels.LIST_PAIRS) | {"sigmoid", "tanh", "relu"}
    cases = {name: (x,) for name in sorted(unary)}
    cases.update({"add": (x, b), "mul": (x, b), "fused_add_scale": (x, b, s)})
    failed = 0
    for name, args in cases.items():
        result = torch.library.opcheck(getattr(torch.ops.opgrad, name).default, args,
                                       test_utils=UTILS, raise_exception=False)
        ok = all(v == "SUCCESS" for v in result.values())
        failed += not ok
        print("%-16s %s" % (name, "ok" if ok else result))
    print("opcheck: %d of %d operators pass (torch %s)" % (len(cases) - failed, len(cases),
                                                           torch.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
