"""The checks every float64 test of opgrad.torch runs (tests/python/test_torch_float64*.py):
torch.autograd.gradcheck and gradgradcheck with PyTorch's default tolerances, and the values,
gradients and second-order products against PyTorch's own float64 operators."""
import torch
from torch.autograd import gradcheck, gradgradcheck


def check_gradcheck(test, cases):
    """cases: name -> (f, make): gradcheck and gradgradcheck of f at the inputs make() returns."""
    for name, (f, make) in cases.items():
        with test.subTest(op=name):
            inputs = make()
            test.assertTrue(gradcheck(f, inputs))
            test.assertTrue(gradgradcheck(f, inputs))


def _close(test, got, want, tol, what):
    err = (got - want).abs().max().item()
    test.assertLess(err, tol * (want.abs().max().item() + 1), what)


def check_against_pytorch(test, f, ref, inputs, tol=(1e-14, 1e-13, 1e-13), second_order=True):
    """f(*inputs) against ref(*inputs) (PyTorch's float64), each within tol[k] of the largest
    element: the values (float64, the same shape), the gradients for a random upstream gradient
    w, and (second_order) the derivatives of <gradients, v> with respect to the inputs and to w:
    a Hessian-vector product and the backward's own backward (a Jacobian-vector product), which
    the double backward's kernels compute. A float32 computation would be ~1e-7 off."""
    y, y_ref = f(*inputs), ref(*inputs)
    test.assertEqual(y.dtype, torch.float64)
    test.assertEqual(y.shape, y_ref.shape)
    _close(test, y, y_ref, tol[0], "values")
    w = torch.randn_like(y_ref).requires_grad_(second_order)
    g = torch.autograd.grad((y * w).sum(), inputs, create_graph=second_order)
    g_ref = torch.autograd.grad((y_ref * w).sum(), inputs, create_graph=second_order)
    for a, b in zip(g, g_ref):
        test.assertEqual(a.dtype, torch.float64)
        _close(test, a, b, tol[1], "gradients")
    if not second_order:
        return
    v = [torch.randn_like(t) for t in g_ref]
    wrt = tuple(inputs) + (w,)
    h = [torch.autograd.grad(sum((a * u).sum() for a, u in zip(gs, v)), wrt, allow_unused=True)
         for gs in (g, g_ref)]
    for a, b, t in zip(h[0], h[1], wrt):  # (None: no dependence, e.g. a bias in no gradient)
        a = torch.zeros_like(t) if a is None else a
        b = torch.zeros_like(t) if b is None else b
        test.assertEqual(a.dtype, torch.float64)
        _close(test, a, b, tol[2], "second order")
