"""An internal error of the CPU lowering (a ``LoweringBug``, or any exception from inside it)
must not stop a user's compile when ``fallback=True``: the op responsible runs through
torch, the report lists it as an internal error, and a warning is logged.  With
``fallback=False`` it is an ``InternalLoweringError`` (a ``ZigguratError``) naming the op,
never a raw ``AssertionError``.

The bugs are planted: a lowering that raises while it is lowered, one whose element
function breaks only when its consumer's kernel traces it, and a kernel emitter that breaks
while the schedule is emitted."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import torch

import ziggurat
from tests.support.opinfo import OpModule
from ziggurat.backends.cpu.lowering import registry
from ziggurat.backends.cpu.lowering.driver import InternalLoweringError
from ziggurat.backends.cpu.lowering.registry import Lowering
from ziggurat.backends.cpu.lowering.values import Load, LoweringBug
from ziggurat.ir.errors import ZigguratError


def _model(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(torch.relu(x * 2.0) + 1.0).sum(-1)


def _replace(key: str, fn: Any) -> AbstractContextManager[Lowering]:
    """``fn`` lowers ``key`` while the ``with`` block runs (every family loaded first)."""
    return registry.lowerings().override(key, fn)


@pytest.fixture
def x() -> torch.Tensor:
    return torch.randn(3, 37, generator=torch.Generator().manual_seed(0))


@pytest.fixture
def relu_raises() -> Iterator[None]:
    def broken(ctx: Any, args: Any) -> Any:
        raise LoweringBug("planted: relu's lowering breaks")

    with _replace("aten::relu", broken):
        yield


def _compile(model: Any, x: torch.Tensor, **options: Any) -> Any:
    return ziggurat.compile(OpModule(model), (x,), backend="cpu", frontend="torchscript", **options)


def test_lowering_bug_falls_back(relu_raises: None, x: torch.Tensor, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        compiled = _compile(_model, x)
    torch.testing.assert_close(compiled(x), _model(x), rtol=1e-5, atol=1e-5)
    reasons = compiled.report.fallback_ops["aten::relu"]
    assert reasons == ["internal error: LoweringBug: planted: relu's lowering breaks"]
    assert any("internal error" in r.reason and r.op == "aten::relu" for r in compiled.report.unsupported)
    assert "aten::sigmoid" in compiled.report.native_ops  # the rest stays native
    assert any("internal error lowering aten::relu" in m for m in caplog.messages)


def test_lowering_bug_without_fallback_names_the_op(relu_raises: None, x: torch.Tensor) -> None:
    with pytest.raises(InternalLoweringError) as info:
        _compile(_model, x, fallback=False)
    assert isinstance(info.value, ZigguratError) and not isinstance(info.value, AssertionError)
    assert info.value.op == "aten::relu"
    assert "internal error: LoweringBug: planted" in str(info.value)
    assert info.value.location and "test_internal_errors.py" in info.value.location


def test_bug_in_an_element_function_blames_its_producer(x: torch.Tensor) -> None:
    """relu's element function breaks only when traced (by sigmoid's kernel, at emission):
    the producer, relu, is sent to torch, and the consumer stays native."""
    from ziggurat.backends.cpu.lowering.pointwise import pointwise

    def lazy_broken(ctx: Any, args: Any) -> Any:
        t = args.tensor("self")
        out = pointwise(ctx, [t], args.out_shape, args.out_dtype, lambda v: v)
        calls = {"n": 0}
        inner = out.fn

        def fn(idx: Any) -> Any:
            calls["n"] += 1
            if calls["n"] > 1:  # the lowering's own size estimate passes, the kernel does not
                return Load(t.buffer, list(idx) + [0]) if t.buffer is not None else inner(idx)
            return inner(idx)

        out.fn = fn
        return out

    with _replace("aten::relu", lazy_broken):
        compiled = _compile(lambda t: torch.sigmoid(torch.relu(t)), x)
    torch.testing.assert_close(compiled(x), torch.sigmoid(torch.relu(x)), rtol=1e-6, atol=1e-6)
    assert compiled.report.fallback_ops["aten::relu"][0].startswith("internal error: LoweringBug")
    assert "aten::sigmoid" in compiled.report.native_ops


def test_bug_while_emitting_a_kernel(monkeypatch: pytest.MonkeyPatch, x: torch.Tensor) -> None:
    from ziggurat.backends.cpu.loopgen import function

    real = function.emit_compute

    def emit(node: Any, *args: Any, **kwargs: Any) -> Any:
        if "sigmoid" in node.origins:
            raise AssertionError("planted: the sigmoid kernel does not emit")
        return real(node, *args, **kwargs)

    monkeypatch.setattr(function, "emit_compute", emit)
    compiled = _compile(_model, x)
    torch.testing.assert_close(compiled(x), _model(x), rtol=1e-5, atol=1e-5)
    internal = {k: v for k, v in compiled.report.fallback_ops.items() if any("internal error" in r for r in v)}
    assert internal, compiled.report.fallback_ops
    assert all(r.startswith("internal error: AssertionError: planted") for v in internal.values() for r in v)


def test_any_exception_inside_a_lowering_is_internal(x: torch.Tensor) -> None:
    def broken(ctx: Any, args: Any) -> Any:
        return {}["no such key"]

    with _replace("aten::sigmoid", broken):
        compiled = _compile(_model, x)
        torch.testing.assert_close(compiled(x), _model(x), rtol=1e-5, atol=1e-5)
        assert compiled.report.fallback_ops["aten::sigmoid"] == ["internal error: KeyError: 'no such key'"]
        with pytest.raises(InternalLoweringError, match="KeyError"):
            _compile(_model, x, fallback=False)
