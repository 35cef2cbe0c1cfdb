"""The converter registry: exact schemas normalized and checked, validators, priorities, coverage."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ziggurat.backends.tensorrt.converter_args import ConverterArgs, ConverterArgumentError
from ziggurat.backends.tensorrt.registry import REGISTRY, ConverterRegistry, converter, op_converter, register_patterns
from ziggurat.dialects.torch.op_registry import OpRegistrationError, normalize_schema
from ziggurat.dialects.torch.schema import ArgKind, parse_schema, registered_schemas
from ziggurat.ir.importer import import_model

SUITE = Path("/work/shared/ops/trt-converter-suite.txt")


def _noop(ctx, args):  # noqa: ANN001, ANN202
    raise AssertionError("not called")


def _other(ctx, args):  # noqa: ANN001, ANN202
    raise AssertionError("not called")


def test_schema_text_is_normalized() -> None:
    a = normalize_schema("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> (Tensor)")
    b = normalize_schema("aten::hardtanh(Tensor self,   Scalar min_val=-1, Scalar max_val=1) -> Tensor")
    assert a == b and a.key == "aten::hardtanh"
    # Torch-TensorRT's int[] spelling of today's SymInt[]
    conv = normalize_schema("aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
                            "int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor")
    assert conv.key == "aten::conv2d"


def test_unknown_or_mismatched_schemas_fail_at_registration() -> None:
    registry = ConverterRegistry()
    with pytest.raises(OpRegistrationError, match="matches no torch operator.*did you mean aten::hardtanh"):
        registry.register("aten::hardtanhh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", _noop)
    with pytest.raises(OpRegistrationError, match="does not match torch's"):
        registry.register("aten::hardtanh(Tensor input, Scalar min_val=-1, Scalar max_val=1) -> Tensor", _noop)
    with pytest.raises(OpRegistrationError, match="cannot parse schema"):
        registry.register("aten::relu(Tensor self -> Tensor", _noop)
    with pytest.raises(OpRegistrationError, match="not a dialect op name"):
        registry.register_op("aten::relu", _noop)
    assert registry.keys() == []


def test_chainable_patterns_priority_and_validators() -> None:
    registry = ConverterRegistry()
    chain = register_patterns(registry).pattern("aten::relu(Tensor self) -> Tensor", _noop).pattern(
        "aten::relu_(Tensor(a!) self) -> Tensor(a!)", _noop)
    assert [e.key for e in chain.registered] == ["aten::relu", "aten::relu_"]
    converter("aten::relu(Tensor self) -> Tensor", priority=5, registry=registry,
              validator=lambda args: None if args.rank("self") == 2 else "only 2-D")(_other)
    module = import_model(torch.nn.ReLU(), [torch.randn(2, 3, 4)], frontend="torchscript")
    relu = next(op for op in module.walk() if op.name == "torch.aten.relu")
    args = ConverterArgs(relu)
    entry, reasons = registry.select("aten::relu", args)
    assert entry is not None and entry.fn is _noop and reasons == ["only 2-D"]
    assert registry.entries("aten::relu")[0].priority == 5
    none, why = registry.select("aten::gelu", args)
    assert none is None and why == ["no TensorRT converter is registered for aten::gelu"]
    op_converter("fused.conv2d", registry=registry)(_noop)
    assert registry.has("fused.conv2d")


def test_unregister_restores_the_previous_choice() -> None:
    registry = ConverterRegistry()
    base = registry.register("aten::relu(Tensor self) -> Tensor", _noop)
    override = registry.register("aten::relu(Tensor self) -> Tensor", _other, priority=10)
    assert registry.entries("aten::relu")[0] is override
    registry.unregister(override)
    assert registry.entries("aten::relu") == [base]
    with pytest.raises(OpRegistrationError, match="is not registered for aten::relu"):
        registry.unregister(override)
    registry.unregister(base)
    assert not registry.has("aten::relu")


def test_arguments_are_bound_by_name_with_clear_errors() -> None:
    module = import_model(torch.nn.Hardtanh(-2.0, 3.0), [torch.randn(2, 3)], frontend="torchscript")
    op = next(op for op in module.walk() if op.name == "torch.aten.hardtanh")
    args = ConverterArgs(op)
    assert args.get_float("min_val") == -2.0 and args.get_float("max_val") == 3.0
    assert args.shape("self") == (2, 3) and args.dtype("self") == torch.float32
    with pytest.raises(ConverterArgumentError, match="argument 'self' must be known at compile time"):
        args.get_int("self")
    with pytest.raises(ConverterArgumentError, match="has no argument 'alpha'"):
        args.get_float("alpha")
    assert not args.has("alpha") and args.get("alpha") is None and args.get_float("alpha", 1.0) == 1.0
    with pytest.raises(ConverterArgumentError, match="must be a static int, got float -2.0") as info:
        args.get_int("min_val")
    assert info.value.op == "aten::hardtanh" and info.value.schema and "Scalar min_val" in info.value.schema
    assert info.value.location  # the source line of the op


def _suite_overloads() -> dict[str, list[str]]:
    names = [ln.strip() for ln in SUITE.read_text().splitlines() if ln.startswith("aten::")]
    result: dict[str, list[str]] = {}
    for name in names:
        keys = []
        for key, text in registered_schemas().items():
            if key != name and not key.startswith(name + "."):
                continue
            schema = parse_schema(text)
            returns_tensor = any(r.kind in (ArgKind.TENSOR, ArgKind.TENSOR_LIST) for r in schema.returns)
            takes_tensor = any(a.kind.is_tensor for a in schema.args) or name in ("aten::zeros", "aten::ones",
                                                                                   "aten::full", "aten::tensor")
            if not schema.is_out_variant and returns_tensor and takes_tensor:
                keys.append(key)
        result[name] = keys
    return result


@pytest.mark.skipif(not SUITE.exists(), reason="the converter suite list is not on this machine")
def test_converter_suite_coverage() -> None:
    import ziggurat.backends.tensorrt.converters  # noqa: F401

    suite = _suite_overloads()
    uncovered = sorted(name for name, keys in suite.items() if not any(REGISTRY.has(k) for k in keys))
    # aten::size returns an int, which the importer folds (shapes are static); it is no layer.
    assert uncovered == ["aten::size"]
    overloads = [k for keys in suite.values() for k in keys]
    covered = [k for k in overloads if REGISTRY.has(k)]
    assert len(covered) >= 227, sorted(set(overloads) - set(covered))
