"""``fuse-post-ops`` with the GEMM result on either side of ``add``/``sub`` and any ``alpha``.

``add(x, y, alpha)`` is ``x + alpha * y``; the binary post-op computes ``gemm + alpha * other``.
The pass fused ``add(other, gemm, alpha)`` as ``gemm + alpha * other``, scaling the residual
instead of the GEMM result (fuzz program s1_g1979: ``torch.add(x5, sigmoid(conv(x3)), alpha=2)``).
Every combination (add/sub, GEMM result first/second, alpha 1/2/-0.5, conv2d/linear/matmul,
with and without a unary post-op before the binary one, a full and a broadcast ``other``) runs
on the cpu backend and on tensorrt-reference, against eager; the forms the post-op expresses
must still fuse.  ``make test`` takes each GEMM kind, unary and ISA once on the cpu backend
(``tests/support/sweep.py``), ``-m slow`` every combination.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.cpu_backend.conftest import compile_cpu, host_isas
from tests.support.opinfo import OpModule
from tests.support.sweep import each_choice

#: (op, GEMM result first, alpha); a form the post-op cannot express is left unfused
FORMS = list(itertools.product(("add", "sub"), (True, False), (1, 2, -0.5)))


def _expressible(op: str, first: bool, alpha: float) -> bool:
    return first or (op == "add" and alpha == 1)


def _producer(kind: str, g: torch.Generator) -> tuple[Callable[[torch.Tensor, int], torch.Tensor], torch.Tensor,
                                                       tuple[int, ...], tuple[int, ...]]:
    """(gemm(x, i) with its own constant weight per form i, x, the output shape, a broadcast
    shape of ``other``): 19 output channels/columns, a vector tail on every ISA."""
    n = len(FORMS)
    if kind == "conv2d":
        w, b = torch.randn(n, 19, 5, 3, 3, generator=g), torch.randn(n, 19, generator=g)
        x = torch.randn(2, 5, 7, 9, generator=g)
        return lambda t, i: F.conv2d(t, w[i], b[i], padding=1), x, (2, 19, 7, 9), (19, 1, 1)
    if kind == "linear":
        w, b = torch.randn(n, 19, 37, generator=g), torch.randn(n, 19, generator=g)
        x = torch.randn(3, 5, 37, generator=g)
        return lambda t, i: F.linear(t, w[i], b[i]), x, (3, 5, 19), (5, 1)
    w = torch.randn(n, 37, 19, generator=g)
    x = torch.randn(3, 5, 37, generator=g)
    return lambda t, i: t @ w[i], x, (3, 5, 19), (1, 19)


def _model(kind: str, unary: bool, g: torch.Generator) -> tuple[OpModule, tuple[torch.Tensor, ...]]:
    gemm, x, shape, small = _producer(kind, g)
    full, broadcast = torch.randn(*shape, generator=g), torch.randn(*small, generator=g)

    def fn(t: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> list[torch.Tensor]:
        outs = []
        for i, (op, first, alpha) in enumerate(FORMS):
            p = gemm(t, i)
            p = torch.sigmoid(p) if unary else p
            other = y if i % 2 == 0 else z
            combine = torch.add if op == "add" else torch.sub
            outs.append(combine(p, other, alpha=alpha) if first else combine(other, p, alpha=alpha))
        return outs

    return OpModule(fn), (x, full, broadcast)


def _check(compiled: Any, model: OpModule, inputs: tuple[torch.Tensor, ...], unary: bool,
           kind: str) -> None:
    with torch.no_grad():
        expected = model(*inputs)
    for (op, first, alpha), got, want in zip(FORMS, compiled(*inputs), expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=lambda m: f"{op} first={first} alpha={alpha}: {m}")
    fusions: dict[str, int] = compiled.report.pass_stats["fuse-post-ops"]
    base = {"conv2d": "conv", "linear": "linear", "matmul": "matmul"}[kind]
    with_binary = sum(v for k, v in fusions.items() if k.startswith(base) and ("+add" in k or "+sub" in k))
    assert with_binary == sum(_expressible(*form) for form in FORMS), fusions
    if unary:
        assert sum(v for k, v in fusions.items() if "+sigmoid" in k) == len(FORMS), fusions


# The widest vector ISA of the host and the scalar code: the operand order is decided in the IR,
# and these are the two shapes its code takes (the middle ISAs' GEMMs are tested in cpu_backend).
@each_choice("kind, unary, isa", ["conv2d", "linear", "matmul"], [False, True],
             tuple(dict.fromkeys((host_isas()[0], "scalar"))), ids=[None, ["gemm", "gemm_sigmoid"], None])
def test_cpu(kind: str, unary: bool, isa: str) -> None:
    model, inputs = _model(kind, unary, torch.Generator().manual_seed(11))
    _check(compile_cpu(model, inputs, isa=isa, frontend="torchscript"), model, inputs, unary, kind)


@pytest.mark.parametrize("unary", [False, True], ids=["gemm", "gemm_sigmoid"])
@pytest.mark.parametrize("kind", ["conv2d", "linear", "matmul"])
def test_tensorrt_reference(kind: str, unary: bool) -> None:
    """Through the export frontend (the cpu tests take TorchScript's)."""
    model, inputs = _model(kind, unary, torch.Generator().manual_seed(12))
    compiled = ziggurat.compile(model, inputs, backend="tensorrt-reference", frontend="export")
    _check(compiled, model, inputs, unary, kind)
