"""Indices read from tensor data on the cpu backend, every ISA, both frontends: eager's values
for indices in range (negative ones where eager wraps them, duplicates where eager defines the
result), an ``InputError`` naming the op where eager raises.  Before, an out-of-range or
negative index of ``scatter*``/``index_put``/``one_hot`` was dropped silently, a ``narrow``
start of -1 wrapped twice, ``take_along_dim`` raised on indices eager takes modulo the size,
``bucketize`` put NaN in the first bucket, and an op sent to torch raised torch's bare error."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.index_cases import CASES, IndexCase, check_probes
from tests.support.opinfo import OpModule
from ziggurat.ir.errors import InputError

NATIVE = [c for c in CASES if c.cpu_native]
FALLBACK = [c for c in CASES if not c.cpu_native]


def _params(cases: list[IndexCase]) -> list[object]:
    return [pytest.param(c, f, id=f"{c.id}-{f}") for c in cases for f in c.frontends]


@pytest.mark.parametrize(("case", "frontend"), _params(NATIVE))
def test_native_indices_as_eager(case: IndexCase, frontend: str, isa: str) -> None:
    compiled = compile_cpu(OpModule(case.fn), (case.data, case.index), frontend=frontend, isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.format()
    check_probes(case, compiled)


@pytest.mark.parametrize(("case", "frontend"), _params(FALLBACK))
def test_fallback_indices_as_eager(case: IndexCase, frontend: str) -> None:
    """Ops that run through torch: torch's own error becomes an ``InputError`` naming the op."""
    compiled = compile_cpu(OpModule(case.fn), (case.data, case.index), frontend=frontend)
    assert compiled.report.fallback_ops, "expected this op to run through torch"
    check_probes(case, compiled)


def _wide_cases() -> dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], torch.Tensor, int]]:
    """op -> (fn, example index over 37 columns, the size its indices address)."""
    g = torch.Generator().manual_seed(0)
    src = torch.randint(-50, 50, (3, 37), generator=g)
    rows = torch.randint(0, 5, (3, 37), generator=g)
    return {
        "aten::gather": (lambda x, i: x.gather(0, i), rows, 5),
        "aten::scatter_add": (lambda x, i: x.scatter_add(0, i, src), rows, 5),
        "aten::scatter_reduce": (lambda x, i: x.scatter_reduce(0, i, src, "amax", include_self=False), rows, 5),
        "aten::scatter": (lambda x, i: x.scatter(0, i[:1], src), rows, 5),
        "aten::one_hot": (lambda x, i: F.one_hot(i, 5) * x[0, 0], rows, 5),
        "aten::index_put": (lambda x, i: x.index_put((i[0],), src[0].view(37, 1), accumulate=True), rows, 5),
        "aten::take_along_dim": (lambda x, i: torch.take_along_dim(x, i, 0), rows, 5),
    }


@pytest.mark.parametrize("op", sorted(_wide_cases()))
def test_out_of_range_index_in_any_vector_lane(op: str, isa: str) -> None:
    """A bad index in a full vector, the masked tail or the first or last lane is found (the
    checks run lane-wise in vector code); in-range random indices give eager's values."""
    fn, index, size = _wide_cases()[op]
    x = torch.randint(-100, 100, (5, 37))
    compiled = compile_cpu(OpModule(fn), (x, index), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.format()
    torch.testing.assert_close(compiled(x, index), fn(x, index), rtol=0, atol=0)
    for column in (0, 7, 15, 16, 31, 32, 36):
        for bad in (size, -size - 1, -1):
            probe = index.clone()
            probe[0, column] = bad
            try:
                expected = fn(x, probe)
            except (IndexError, RuntimeError):
                with pytest.raises(InputError, match=op):
                    compiled(x, probe)
                continue
            torch.testing.assert_close(compiled(x, probe), expected, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(6, 3, 6, 9), (6, 3, 6, 7)])
def test_scatter_index_check_reads_only_the_index_tensor(shape: tuple[int, ...], isa: str) -> None:
    """A [1,1,1,4] index scattered into [6,3,6,9]: the index tensor is read through a guarded
    (masked) load, and on avx2 LLVM read the half of an <8 x i64> whose mask was false, so
    valid indices were reported out of range (fuzz seed 5 with the mutation specs). The
    check now covers only the lanes inside the index tensor; a bad index is still caught."""
    x = torch.randn(shape)
    index = torch.tensor([[[[1, 2, 5, 0]]]])
    src = torch.randn(1, 1, 1, 4)
    compiled = compile_cpu(OpModule(lambda a, i, s: a.scatter_add(0, i, s)), (x, index, src), isa=isa)
    torch.testing.assert_close(compiled(x, index, src), x.scatter_add(0, index, src), rtol=0, atol=0)
    with pytest.raises(InputError, match="index out of range"):
        compiled(x, torch.tensor([[[[1, 2, 6, 0]]]]), src)
