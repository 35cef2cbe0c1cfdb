"""Scans (cumsum, cumprod, logcumsumexp) whose input reads a reduction, and transposed
convolutions over a sweep of stride/padding/output_padding/dilation/groups (issue 14 item 11).

A scan kernel inlines its (lazy) source, but it has no loops in which to compute a
reduction: ``cumprod(x.sum(1))`` stopped the compile with ``LoweringBug: a reduction
outside a kernel that can compute it``.  The reductions a scan reads are now realized
first."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

SCANS = {"cumsum": torch.cumsum, "cumprod": torch.cumprod, "logcumsumexp": torch.logcumsumexp}


@pytest.mark.parametrize("op", sorted(SCANS))
def test_scan_of_reductions(isa: str, op: str) -> None:
    scan = SCANS[op]
    x = torch.rand(3, 4, 5, generator=torch.Generator().manual_seed(0)) + 0.5

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs: list[torch.Tensor] = []
        for d in range(3):
            outs.append(scan(t.sum(1), min(d, 1)))  # the input is a reduction
            outs.append(scan(t.sum(1, keepdim=True).expand(3, 4, 5), d))  # a broadcast of one
            outs.append(scan(t, d).sum(1))  # the output feeds one
            outs.append(scan(t.softmax(d), d))  # reductions read in the element function
            outs.append(scan(t - t.mean(d, keepdim=True), d))
            outs.append(scan(t.amax(-1, keepdim=True) * t, d).amax(d))
        return tuple(outs)

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    assert compiled.report.fallback_ops == {}
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def _transposed_cases() -> list[tuple[int, int, int, int, int, int]]:
    """(spatial dims, kernel, stride, padding, output_padding, dilation) combinations torch
    accepts, padding up to past the kernel's reach."""
    out = []
    for nd, k, s, d in itertools.product((1, 2), (1, 2, 3), (1, 2, 3), (1, 2)):
        for p in range(0, (k - 1) * d + 2):
            for op in range(max(s, d)):
                out.append((nd, k, s, p, op, d))
    return out


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_transpose_sample(groups: int) -> None:
    """Every 9th combination (the whole sweep is ``-m slow``)."""
    _conv_transpose_sweep(groups, 9)


@pytest.mark.slow
@pytest.mark.parametrize("groups", [1, 2])
def test_conv_transpose_sweep(groups: int) -> None:
    _conv_transpose_sweep(groups, 1)


def _conv_transpose_sweep(groups: int, every: int) -> None:
    g = torch.Generator().manual_seed(groups)
    x = torch.randn(2, 2 * groups, 5, 4, generator=g)
    cases = []
    for nd, k, s, p, op, d in _transposed_cases()[::every]:
        w = torch.randn(2 * groups, 3, *([k] * nd), generator=g)
        b = torch.randn(3 * groups, generator=g)
        conv_t = F.conv_transpose1d if nd == 1 else F.conv_transpose2d

        def case(t: torch.Tensor, conv_t=conv_t, w=w, b=b, s=s, p=p, op=op, d=d, nd=nd) -> torch.Tensor:
            t = t[..., 0] if nd == 1 else t
            return conv_t(t, w, b, stride=s, padding=p, output_padding=op, dilation=d, groups=groups)

        try:
            if case(x).numel():
                cases.append(case)
        except RuntimeError:  # an output size below 1, or output_padding torch refuses
            continue
    assert len(cases) > 100 // every
    for start in range(0, len(cases), 40):  # a few graphs of 40 convolutions each
        chunk = cases[start:start + 40]

        def graph(t: torch.Tensor, chunk=chunk) -> tuple[torch.Tensor, ...]:
            return tuple(c(t) for c in chunk)

        compiled = compile_cpu(OpModule(graph), (x,), frontend="torchscript")
        assert compiled.report.fallback_ops == {}
        for got, expected in zip(compiled(x), graph(x), strict=True):
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_conv_transpose_infinite_weights() -> None:
    """Fuzz program s99_g24: a tap that falls outside the input contributes nothing; it was
    0 * weight, NaN where the weight is infinite (eager's col2im never forms that product)."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(1, 4, 1, 1, generator=g)
    w = torch.randn(4, 2, 2, 4, generator=g)
    w.view(-1)[::5] = float("inf")
    w.view(-1)[3] = float("nan")

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (F.conv_transpose2d(t, w, None, stride=(1, 2), output_padding=(0, 1)),
                F.conv_transpose2d(t.expand(1, 4, 3, 2), w, None, stride=2, padding=1))

    compiled = compile_cpu(OpModule(fn), (x,), frontend="torchscript")
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
