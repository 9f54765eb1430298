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
    # the matmul family (name -> list of argument tuples: several layouts / attributes each)
    a3 = torch.randn(2, 4, 5, requires_grad=True)
    w = torch.randn(3, 5, requires_grad=True)        # a Linear weight [out, in]
    wt = w.t()                                       # passed as its transposed view [in, out]
    bias = torch.randn(3, requires_grad=True)
    m2 = torch.randn(5, 3, requires_grad=True)
    xb, wb = x.detach().bfloat16().requires_grad_(), w.detach().bfloat16().requires_grad_()
    mm_cases = {
        "matmul": [(a3, m2), (x, torch.randn(5, requires_grad=True)), (a3, m2, torch.float32)],
        "mm": [(x, m2), (x, wt)],
        "bmm": [(a3, torch.randn(2, 5, 3, requires_grad=True)),
                (a3, torch.randn(1, 5, 3, requires_grad=True))],
        "addmm": [(bias, x, m2), (torch.randn(8, 1, requires_grad=True), x, wt, 0.5, 2.0)],
        "baddbmm": [(bias, a3, torch.randn(2, 5, 3, requires_grad=True), 0.5, 1.5)],
        "fused_matmul": [(x, wt, bias, None, "", 3), (a3, wt, bias, None, "relu", 3),
                         (xb, wb.t(), None, None, "gelu_erf", 0),
                         (xb, wb.t(), bias.detach().bfloat16(), None, "16cast32", 0),
                         (x, wt, None, torch.randn(8, 3, requires_grad=True), "mul", 3)],
        "fused_matmul_backward": [(torch.randn(8, 3), x.detach(), wt.detach(), bias.detach(),
                                   None, "relu", 3, [True, True, True, False])],
    }
    for name, arg_list in mm_cases.items():
        for i, args in enumerate(arg_list):
            cases["%s#%d" % (name, i)] = args
    failed = 0
    for name, args in cases.items():
        op = getattr(torch.ops.opgrad, name.split("#")[0]).default
        result = torch.library.opcheck(op, args, test_utils=UTILS, raise_exception=False)
        ok = all(v == "SUCCESS" for v in result.values())
        failed += not ok
        print("%-24s %s" % (name, "ok" if ok else result))
    print("opcheck: %d of %d operator calls pass (torch %s)" % (len(cases) - failed, len(cases),
                                                                torch.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
