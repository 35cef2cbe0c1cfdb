"""The one op registry (``dialects/torch/op_registry.py``) both backends' tables are: keys
checked against torch's schemas, dialect op names, priorities, duplicates, selection with the
reasons of declining entries, temporary overrides; and the shared op_key / schema_text /
type_problem helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from xdsl.dialects.builtin import TensorType, f32, i64
from xdsl.ir import Attribute, Block

from ziggurat.dialects.torch import aten_op_class
from ziggurat.dialects.torch.op_registry import (
    OpRegistrationError,
    OpRegistry,
    op_key,
    schema_text,
    type_problem,
)

Impl = Callable[[], str]


def _registry() -> OpRegistry[Impl, int]:
    return OpRegistry("test registry", missing="nothing does {key}")


def _a() -> str:
    return "a"


def _b() -> str:
    return "b"


def test_keys_are_canonical_and_checked_at_registration() -> None:
    registry = _registry()
    assert registry.register("aten::relu", _a).key == "aten::relu"
    assert registry.register("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> (Tensor)",
                             _a).key == "aten::add.Tensor"
    assert registry.register("fused.conv2d", _a).key == "fused.conv2d"
    assert registry.keys() == ["aten::add.Tensor", "aten::relu", "fused.conv2d"]
    with pytest.raises(OpRegistrationError, match="no torch schema aten::reluu; did you mean aten::relu") as info:
        registry.register("aten::reluu", _a)
    assert info.value.op == "test registry"
    with pytest.raises(OpRegistrationError, match="does not match torch's"):
        registry.register("aten::relu(Tensor input) -> Tensor", _a)
    with pytest.raises(OpRegistrationError, match="not a dialect op name"):
        registry.register_op("aten::relu", _a)


def test_one_entry_per_key_and_priority() -> None:
    registry = _registry()
    registry.register("aten::relu", _a)
    with pytest.raises(OpRegistrationError, match=r"aten::relu is registered twice at priority 0 \(.*_a, .*_b\)"):
        registry.register("aten::relu", _b)
    high = registry.register("aten::relu", _b, priority=2)
    assert [e.fn for e in registry.entries("aten::relu")] == [_b, _a] and registry.entries("aten::relu")[0] is high


def test_select_takes_the_first_entry_that_accepts_and_says_why_others_declined() -> None:
    registry = _registry()

    def small_only(n: int) -> str | None:
        return None if n < 10 else f"{n} is too big"

    def crashes(n: int) -> str | None:
        raise ValueError("boom")

    registry.register("aten::relu", _a)
    registry.register("aten::relu", _b, validator=small_only, priority=1)
    entry, reasons = registry.select("aten::relu", 3)
    assert entry is not None and entry.fn is _b and reasons == []
    entry, reasons = registry.select("aten::relu", 30)
    assert entry is not None and entry.fn is _a and reasons == ["30 is too big"]
    registry.register("aten::relu", _a, validator=crashes, priority=5)
    entry, reasons = registry.select("aten::relu", 30)
    assert entry is not None and entry.fn is _a and entry.priority == 0
    assert reasons[0].startswith("validator ") and reasons[0].endswith("_a failed: boom")
    assert registry.select("aten::gelu", 3) == (None, ["nothing does aten::gelu"])


def test_override_wins_while_it_lasts() -> None:
    registry = _registry()
    base = registry.register("aten::relu", _a, priority=3)
    with registry.override("aten::relu", _b) as planted:
        assert planted.priority == 4 and registry.select("aten::relu", 0)[0] is planted
    assert registry.entries("aten::relu") == [base]
    with pytest.raises(OpRegistrationError, match="is not registered for aten::relu"):
        registry.unregister(planted)


def _values(*types: Attribute) -> list[Any]:
    return list(Block(arg_types=list(types)).args)


def test_op_key_schema_text_and_type_problem() -> None:
    x, w = _values(TensorType(f32, [2, 3]), TensorType(i64, [3]))
    relu_cls = aten_op_class("aten::relu")
    add_cls = aten_op_class("aten::add.Tensor")
    assert relu_cls is not None and add_cls is not None
    relu = relu_cls.from_arguments({"self": x}, [TensorType(f32, [2, 3])])
    add = add_cls.from_arguments({"self": x, "other": w, "alpha": 1}, [TensorType(f32, [2, 3])])
    assert op_key(relu) == "aten::relu" and op_key(add) == "aten::add.Tensor"
    assert schema_text(relu) == "aten::relu(Tensor self) -> Tensor"

    def not_i64(role: str, index: int, ty: Attribute) -> str | None:
        return f"{role} #{index} is i64" if isinstance(ty, TensorType) and ty.get_element_type() == i64 else None

    assert type_problem(relu, not_i64) is None
    assert type_problem(add, not_i64) == "operand #1 is i64"
