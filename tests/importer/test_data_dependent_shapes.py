"""Ops whose result shape depends on the input values (``nonzero``, boolean-mask indexing,
``unique``, ``bincount``, ``masked_select``) compile on both frontends: their results are typed
with ``?`` sizes, run through torch with that reason, and what is computed from them does too,
while the rest of the graph stays native.  A size of such a tensor used by Python while
tracing (a branch) is refused; a rank that changes with the data is a run-time error.

Each compiled module runs on inputs other than the example, whose data-dependent sizes differ
from the example's, and is compared with eager."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from xdsl.utils.exceptions import VerifyException

import ziggurat
from tests.support.opinfo import OpModule as Fn
from ziggurat.ir.errors import ModelImportError, ZigguratError

BACKENDS = ["reference", "cpu", "tensorrt-reference"]
FRONTENDS = ["torchscript", "export"]


def _flat(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _check(fn: Callable[..., Any], make: Callable[[int], tuple[torch.Tensor, ...]], backend: str,
           frontend: str) -> Any:
    model = Fn(fn)
    compiled = ziggurat.compile(model, make(0), backend=backend, frontend=frontend)
    sizes: set[tuple[tuple[int, ...], ...]] = set()
    for k in range(1, 6):
        args = make(k)
        expected, got = _flat(model(*args)), _flat(compiled(*args))
        assert len(expected) == len(got)
        for e, g in zip(expected, got, strict=True):
            assert g.shape == e.shape and g.dtype == e.dtype
            torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
        sizes.add(tuple(tuple(e.shape) for e in expected))
    assert len(sizes) > 1, "the calls must exercise other data-dependent sizes than the example's"
    return compiled


def _randn(*shape: int) -> Callable[[int], tuple[torch.Tensor, ...]]:
    return lambda k: (torch.randn(*shape, generator=torch.Generator().manual_seed(k)),)


def _several(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    idx = torch.nonzero(x > 0)
    return idx * 2, (x > 0).sum(), torch.bincount(idx[:, 0]), x + 1, x[x > 0.5] * 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", FRONTENDS)
def test_data_dependent_results_match_eager(backend: str, frontend: str) -> None:
    compiled = _check(_several, _randn(5, 3), backend, frontend)
    if backend == "cpu":  # only what depends on the data-dependent sizes runs through torch
        report = compiled.report
        assert "aten::add.Tensor" in report.native_ops or "aten::add.Scalar" in report.native_ops, report
        assert any("data-dependent shape" in r for r in report.fallback_ops.get("aten::nonzero", [])), report


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", FRONTENDS)
def test_sizes_computed_from_data_dependent_shapes(backend: str, frontend: str) -> None:
    def fn(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
        rows = torch.nonzero(x > 0).flatten()
        picked = w.index_select(0, rows)
        return torch.zeros(rows.size(0)) + 1, picked.sum(0) + w[0], torch.unique(picked.round())

    def make(k: int) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(k)
        return torch.randn(7, generator=g), torch.randn(7, 3, generator=g)
    _check(fn, make, backend, frontend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_traced_branch_on_a_data_dependent_size_is_refused(backend: str) -> None:
    with pytest.raises(ModelImportError, match="becomes a Python bool"):
        ziggurat.compile(Fn(lambda x: x * 2 if torch.nonzero(x > 0).size(0) > 2 else x), _randn(6)(0),
                         backend=backend, frontend="torchscript")


@pytest.mark.parametrize("fn", [lambda x: x * 2 if torch.nonzero(x > 0, as_tuple=True)[0].size(0) > 2 else x,
                                lambda x: x * 2 if x.repeat_interleave((x > 0).long()).size(0) > 2 else x],
                         ids=["nonzero_as_tuple", "repeat_interleave"])
def test_a_traced_branch_on_an_untagged_data_dependent_size_is_refused(fn: Callable[..., Any]) -> None:
    with pytest.raises(ModelImportError, match="becomes a Python bool"):
        ziggurat.compile(Fn(fn), _randn(6)(0), backend="reference", frontend="torchscript")


def test_a_scripted_branch_on_a_data_dependent_size_is_refused() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor) -> torch.Tensor:
        if torch.nonzero(x > 0).size(0) > 2:
            return x * 2
        return x

    with pytest.raises(ModelImportError, match="prim::If: is control flow on a run-time value"):
        ziggurat.compile(fn, _randn(6)(0), backend="cpu")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rank_that_depends_on_the_data_is_a_run_time_error(backend: str) -> None:
    """``nonzero(x).squeeze()`` has rank 0 when one element is nonzero, else rank 1: the
    compiled module keeps the example's rank and refuses a call whose rank differs."""
    compiled = ziggurat.compile(Fn(lambda x: torch.nonzero(x).squeeze() + 1), (torch.tensor([0, 3, 0, 0]),),
                                backend=backend, frontend="torchscript")
    torch.testing.assert_close(compiled(torch.tensor([0, 0, 5, 0])), torch.tensor(3))
    with pytest.raises(ZigguratError, match="squeeze"):
        compiled(torch.tensor([1, 2, 0, 4]))


def test_a_dynamic_size_needs_a_cause() -> None:
    """The verifier accepts ``?`` sizes only from an op whose shape depends on data, or from
    operands that have them; a static op declaring one is an error at the op."""
    from xdsl.parser import Parser

    from ziggurat.ir.context import make_context

    def parse_module(text: str) -> Any:
        return Parser(make_context(), text).parse_module()

    ok = """
    func.func @f(%x: tensor<5xi1>) -> tensor<?x?xi64> {
      %0 = torch.operator "aten::nonzero"(%x) {args = {}, operand_names = ["self"], schema = "aten::nonzero(Tensor self) -> Tensor"} : (tensor<5xi1>) -> tensor<?x?xi64>
      %1 = torch.aten.neg %0 : (tensor<?x?xi64>) -> tensor<?x?xi64>
      func.return %1 : tensor<?x?xi64>
    }"""
    parse_module(ok).verify()
    bad = """
    func.func @f(%x: tensor<5xf32>) -> tensor<?xf32> {
      %0 = torch.aten.neg %x : (tensor<5xf32>) -> tensor<?xf32>
      func.return %0 : tensor<?xf32>
    }"""
    with pytest.raises(VerifyException, match="dynamic dimension"):
        parse_module(bad).verify()



@pytest.mark.parametrize("backend", BACKENDS)
def test_export_run_time_asserts_are_kept(backend: str) -> None:
    """torch.export turns a model's ``torch._check`` on a data-dependent size into run-time
    asserts (``_assert_scalar``, with its own bounds: ``u0 >= 4``, ``u0 <= 10``): the compiled
    module runs them, so a call that breaks the check fails as in eager."""
    def fn(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        y = torch.masked_select(x, m)
        torch._check(y.size(0) > 3)  # pyright: ignore[reportPrivateUsage]
        return y * 2

    def make(k: int) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(k)
        return torch.randn(10, generator=g), (torch.rand(10, generator=g) > 0.5) | (torch.arange(10) < 4)
    compiled = _check(fn, make, backend, "export")
    few = (torch.randn(10), torch.arange(10) < 2)
    with pytest.raises(RuntimeError):
        fn(*few)
    with pytest.raises(ZigguratError, match="_assert_scalar"):
        compiled(*few)


def test_a_data_derived_scalar_that_sets_values_only_keeps_shapes_static() -> None:
    """``x * int(t.sum())``: the int is known at run time only, but a ``Scalar`` operand sets
    values, not sizes; the product stays static and the matmul after it native. The same int as
    a size (``zeros(n)``) makes a ``?`` size."""
    @torch.jit.script
    def fn(x: torch.Tensor, t: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = int(t.sum())
        return (x * n) @ w, torch.zeros(n) + 1

    def make(k: int) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(k)
        return torch.randn(3, 4, generator=g), torch.randint(0, 4, (3,), generator=g), torch.randn(4, 5, generator=g)
    compiled = ziggurat.compile(fn, make(0), backend="cpu")
    for k in range(1, 4):
        args = make(k)
        for got, want in zip(compiled(*args), fn(*args), strict=True):
            assert got.shape == want.shape
            torch.testing.assert_close(got, want)
    assert "aten::zeros" in compiled.report.fallback_ops
    assert any(k.startswith(("aten::matmul", "aten::mm", "fused.")) for k in compiled.report.native_ops), \
        compiled.report.native_ops


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dependent_ops_torch_does_not_tag(backend: str) -> None:
    """``nonzero(x, as_tuple=True)`` (``aten::nonzero_numpy``) and ``x.repeat_interleave(r)``
    with a tensor of repeats have data-dependent shapes that torch does not tag as such."""
    def fn(x: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, ...]:
        rows, cols = torch.nonzero(x > 0, as_tuple=True)
        return rows + 1, cols * 2, x[0].repeat_interleave(r) + 1

    def make(k: int) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(k)
        return torch.randn(3, 4, generator=g), torch.randint(0, 3, (4,), generator=g)
    _check(fn, make, backend, "torchscript")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", FRONTENDS)
def test_a_data_dependent_size_in_tensor_arithmetic(backend: str, frontend: str) -> None:
    """``x / x[x > 0].shape[0]``: torch.export passes the run-time size ``u0`` for the
    ``Tensor`` argument of ``div.Tensor``; it takes ``div.Scalar`` (the import did not verify)."""
    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        picked = x[x > 0]
        n = picked.shape[0]
        return x / n, x * n, (x * 4).long() * n, picked - n

    _check(fn, _randn(6), backend, frontend)
