"""Regression tests for import-level wrong answers (issue 14, classes 1-4): input identity,
data-dependent control flow and shapes, constant index lists, and mutation through views.

Each compiled module is checked on inputs *other* than the example inputs, on every backend
that runs here, against eager; what cannot be compiled must be a clear ``ModelImportError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import ModelImportError, InputError

BACKENDS = ["reference", "cpu", "tensorrt-reference"]
FRONTENDS = ["torchscript", "export"]


class Fn(torch.nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


def _flat(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _check(model: torch.nn.Module, examples: tuple[torch.Tensor, ...], calls: list[tuple[torch.Tensor, ...]],
           backend: str, frontend: str) -> None:
    compiled = ziggurat.compile(model, examples, backend=backend, frontend=frontend)
    for args in calls:
        eager_args = [a.clone() for a in args]
        ours_args = [a.clone() for a in args]
        expected, got = _flat(model(*eager_args)), _flat(compiled(*ours_args))
        assert len(expected) == len(got)
        for e, g in zip(expected, got, strict=True):
            torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
        for e, g in zip(eager_args, ours_args, strict=True):  # writes to inputs, as eager made them
            torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.softmax(q @ k.transpose(-1, -2), -1) @ v


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", [*FRONTENDS, "auto"])
def test_aliased_example_inputs_do_not_leak_into_the_graph(backend: str, frontend: str) -> None:
    x = torch.randn(4, 5)
    _check(Fn(torch.sub), (x, x), [(torch.randn(4, 5), torch.randn(4, 5))], backend, frontend)
    q = torch.randn(2, 4, 8)
    _check(Fn(_attention), (q, q, q), [tuple(torch.randn(2, 4, 8) for _ in range(3))], backend, frontend)


class DataBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return -x


class DataInt(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * int(x.max())


class DataBranchDeep(torch.nn.Module):
    """A longer chain to the input: the guard's walk lost it (it keyed graph values by the id()
    of their short-lived Python wrappers, which are reused), and tracing specialized silently."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.sum() * 2 + 1) > 0:
            return x * 2
        return -x


class DataAllclose(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if torch.allclose(x, torch.ones_like(x)) else x * 3


class DataEqualMethod(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.equal(torch.ones_like(x)) else x * 3


class DataIsNonzero(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if torch.is_nonzero(x.sum()) else x * 3


@pytest.mark.parametrize("model", [DataBranch(), DataInt(), DataBranchDeep(), DataAllclose(), DataEqualMethod(),
                                   DataIsNonzero()],
                         ids=["if-sum", "int-max", "if-deep", "allclose", "equal-method", "is-nonzero"])
@pytest.mark.parametrize("frontend", ["torchscript", "auto"])
def test_data_dependent_python_values_are_refused_with_the_line(model: torch.nn.Module, frontend: str) -> None:
    with pytest.raises(ModelImportError) as info:
        ziggurat.compile(model, (torch.ones(3),), backend="reference", frontend=frontend)
    text = str(info.value)
    assert "test_no_silent_specialization.py:" in text and "values of its inputs" in text
    assert "torch.jit.script" in text and "torch.cond" in text


class ShapeChecks(torch.nn.Module):
    """Shapes become Python values while traced (MultiheadAttention compares sizes): static,
    so not a specialization."""

    def __init__(self) -> None:
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        n = int(q.shape[1])
        return self.mha(q, q, q)[0] * n


def test_shape_conversions_while_tracing_are_not_refused() -> None:
    torch.manual_seed(0)
    model = ShapeChecks().eval()
    _check(model, (torch.randn(1, 4, 16),), [(torch.randn(1, 4, 16),)], "reference", "torchscript")


class ConstantIndex(torch.nn.Module):
    idx: torch.Tensor
    mask: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("idx", torch.tensor([-1, 0, -3, 2]))
        self.register_buffer("mask", torch.tensor([True, False, True, True, False]))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x[self.idx] + 1, x[:, self.idx[:3]], x[self.mask] * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", ["torchscript", "auto"])
def test_constant_index_tensors_with_negative_entries(backend: str, frontend: str) -> None:
    x = torch.randn(5, 3)
    _check(ConstantIndex(), (x,), [(torch.randn(5, 3),)], backend, frontend)


def _slice_assign(x: torch.Tensor) -> torch.Tensor:
    y = x * 1.0
    y[2:] = 2.5
    return y


def _fill_copy_views(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, 1].fill_(3.0)
    y[0].copy_(x[1])
    return y


def _index_put(x: torch.Tensor) -> torch.Tensor:
    y = torch.zeros(4, 3)
    y.index_put_((torch.tensor([0, -1]),), x[:2])
    return y


def _view_read_after_base_write(x: torch.Tensor) -> torch.Tensor:
    y = x * 1
    v = y[1]
    y.add_(1)
    return v + 0


def _write_through_reshape(x: torch.Tensor) -> torch.Tensor:
    y = x * 1
    y.view(12).mul_(2)
    return y


def _write_input(x: torch.Tensor) -> torch.Tensor:
    x.add_(1)
    return x * 2


def _write_input_slice(x: torch.Tensor) -> torch.Tensor:
    x[1:].mul_(3)
    return x.sum(0)


MUTATIONS = {
    "slice-assign": _slice_assign, "fill-copy-views": _fill_copy_views, "index-put": _index_put,
    "view-read-after-base-write": _view_read_after_base_write,
    "write-through-reshape": _write_through_reshape, "write-input": _write_input,
    "write-input-slice": _write_input_slice,
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_is_functionalized_on_the_export_path(name: str, backend: str) -> None:
    x = torch.randn(4, 3)
    _check(Fn(MUTATIONS[name]), (x,), [(torch.randn(4, 3),), (torch.randn(4, 3),)], backend, "export")


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_on_the_torchscript_path_is_right_or_refused(name: str) -> None:
    x = torch.randn(4, 3)
    try:
        compiled = ziggurat.compile(Fn(MUTATIONS[name]), (x,), backend="reference", frontend="torchscript")
    except ModelImportError as e:
        assert "in-place" in str(e) and "frontend='export'" in str(e)
        return
    args = torch.randn(4, 3)
    eager_x, our_x = args.clone(), args.clone()
    torch.testing.assert_close(compiled(our_x), MUTATIONS[name](eager_x))
    torch.testing.assert_close(our_x, eager_x)


@pytest.mark.parametrize("backend", ["reference", "cpu"])
@pytest.mark.parametrize("name", ["slice-assign", "fill-copy-views", "view-read-after-base-write",
                                  "write-through-reshape", "write-input-slice"])
def test_writes_through_views_are_functionalized_by_the_torchscript_frontend(name: str, backend: str) -> None:
    """They were refused; the importer now rebuilds the base with scatters (see
    tests/importer/test_view_writes.py)."""
    x = torch.randn(4, 3)
    _check(Fn(MUTATIONS[name]), (x,), [(torch.randn(4, 3),), (torch.randn(4, 3),)], backend, "torchscript")


def test_a_module_writing_its_input_refuses_aliased_call_inputs() -> None:
    compiled = ziggurat.compile(Fn(lambda x, y: (x.add_(1), x + y)[1]), (torch.randn(3), torch.randn(3)),
                                backend="reference", frontend="export")
    x = torch.randn(3)
    with pytest.raises(InputError, match="share memory"):
        compiled(x, x)


def test_torchscript_ir_operands_of_the_wrong_kind_name_the_node_and_line() -> None:
    text = ("graph(%x : Float(4, 8)):\n"
            "  %none : NoneType = prim::Constant()\n"
            "  %y : Tensor = aten::sum(%none, %x)\n"
            "  return (%y)\n")
    with pytest.raises(ModelImportError) as info:
        ziggurat.compile(text, (torch.randn(4, 8),), backend="reference")
    text_error = str(info.value)
    assert "<torchscript-ir>:3" in text_error and "aten::sum" in text_error and "no schema" in text_error


@pytest.mark.parametrize("backend", BACKENDS)
def test_input_writes_survive_save_and_load(backend: str, tmp_path: Any) -> None:
    compiled = ziggurat.compile(Fn(_write_input_slice), (torch.randn(4, 3),), backend=backend, frontend="export")
    compiled.save(tmp_path / "m.zig")
    loaded = ziggurat.load(tmp_path / "m.zig")
    x = torch.randn(4, 3)
    eager_x, our_x = x.clone(), x.clone()
    torch.testing.assert_close(loaded(our_x), _write_input_slice(eager_x))
    torch.testing.assert_close(our_x, eager_x)


class WrappedNumbers(torch.nn.Module):
    """Python numbers promote by category only: a 0-d int32 plus 3 stays int32."""

    def forward(self, i: torch.Tensor, f: torch.Tensor, b: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (i + 3, i * 2.5, i > 1, f + 2, b + 1, b * 1.5, i.sum() + 1, v + 2**40, f + 1e300,
                f * 0.1, torch.where(b, i, 7))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", FRONTENDS)
def test_numbers_in_tensor_positions_promote_as_wrapped_numbers(backend: str, frontend: str) -> None:
    args = (torch.tensor(5, dtype=torch.int32), torch.tensor(1.5), torch.tensor(True),
            torch.tensor([1, 2], dtype=torch.int32))
    compiled = ziggurat.compile(WrappedNumbers(), args, backend=backend, frontend=frontend)
    for got, want in zip(compiled(*args), WrappedNumbers()(*args), strict=True):
        assert got.dtype == want.dtype and torch.equal(got, want), (got, want)


def test_tensor_metadata_asserts_of_to_device_import_as_nothing() -> None:
    model = Fn(lambda x, y: (x + y.to(x.device)).to(x.dtype))
    x, y = torch.randn(3), torch.randn(3)
    _check(model, (x, y), [(torch.randn(3), torch.randn(3))], "cpu", "export")


class ResizedClone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.resize_(2, 2)
        return y * 2


def test_a_value_tracing_cuts_off_is_refused_with_the_line() -> None:
    """torch.jit.trace cannot represent resize_: it warns and records the resized tensor as a
    constant, so the traced module returned the example's values for every input (found by
    the view-write fuzzing). That warning is now an error naming the line."""
    with pytest.raises(ModelImportError, match=r"test_no_silent_specialization.py:\d+: ResizedClone: tracing lost the data flow here \(resize_"):
        ziggurat.compile(ResizedClone(), (torch.randn(4, 4),), backend="cpu", frontend="torchscript")
