"""Result types of torch ops from torch's own shape functions: part of every op's verifier.

The importer types each op by running it with torch on the example values.  The verifier
derives the result types the same way, on *meta* tensors of the operand types (no data,
no compute), so an op whose declared result types disagree with torch, or that torch
refuses for its operand types and static arguments, is a verifier error at the op rather
than a crash deep in a later pass.  Shapes must be static (Ziggurat compiles static shapes).

Nothing is concluded where torch cannot say without the data: ops with data-dependent
result shapes (``nonzero``, boolean-mask ``index``, ``unique``, ``item``) and ops without a
meta implementation are left unchecked.  Where the meta implementation refuses the
operands, the op is run on real zero-filled tensors when they are small, so that a meta
kernel stricter than the CPU kernel (which the importer used) is never an error.

Verification runs after every pass, so results are cached by (op name, operand types,
properties).
"""

from __future__ import annotations

from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.torch.ops_base import TorchOp, flat_results
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec, OpSchema, torch_overload
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import UnsupportedTypeError, dtype_of, tensor_type_of

#: Operands at most this many elements in all are re-run on the CPU when the meta kernel
#: refuses them (to tell a stricter meta kernel from an invalid op).
CPU_CONFIRM_ELEMENTS = 1 << 16
_CACHE_LIMIT = 1 << 16

#: What torch says of an op: the result types (None for a non-tensor result), or why the op
#: is invalid, or nothing (cannot tell).
_Verdict = tuple[tuple[Attribute | None, ...] | None, str | None]
_cache: dict[Any, _Verdict] = {}


class _CannotTell(Exception):
    """torch cannot compute the result types without data (or at all)."""


def _static_tensor_type(ty: Attribute) -> TensorType[Attribute] | None:
    return ty if isinstance(ty, TensorType) else None  # pyright: ignore[reportUnknownVariableType]


def _check_static(op: TorchOp) -> None:
    for kind, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            ty = v.type
            if isinstance(ty, TensorType) and any(d < 0 for d in ty.get_shape()):  # pyright: ignore
                raise VerifyException(f"{op.name}: {kind} {i} has a dynamic dimension ({ty}); "
                                      f"Ziggurat compiles static shapes")


def _tensors(types: list[TensorType[Attribute]], device: str) -> list[torch.Tensor]:
    """Meta tensors, or (small) zero-filled CPU tensors, of ``types``."""
    make = torch.empty if device == "meta" else torch.zeros
    return [make(tuple(ty.get_shape()), dtype=dtype_of(ty), device=device) for ty in types]


def _run(op: TorchOp, schema: OpSchema, device: str) -> list[Any]:
    """Torch's overload of ``op`` on tensors of its operand types on ``device``."""
    overload = torch_overload(schema)
    if overload is None:
        raise _CannotTell
    try:
        bound = op.arguments()
    except Exception as e:  # noqa: BLE001 - a property that does not decode
        raise VerifyException(f"{op.name}: its static arguments do not decode: {e} "
                              f"(schema: {schema.text})") from None
    tensor_types: list[TensorType[Attribute]] = []
    for v in op.operands:
        ty = _static_tensor_type(v.type)
        if ty is None:
            raise _CannotTell  # a run-time scalar operand (torch.operator)
        tensor_types.append(ty)
    try:
        values: dict[SSAValue, torch.Tensor] = dict(zip(op.operands, _tensors(tensor_types, device), strict=True))
    except UnsupportedTypeError:
        raise _CannotTell from None

    def resolve(spec: ArgSpec, value: Any) -> Any:
        if spec.kind == ArgKind.DEVICE:
            return torch.device(device)  # factory ops allocate on the device under test
        if spec.kind == ArgKind.OTHER and value is not None:
            raise _CannotTell  # an argument torch.operator keeps as a raw attribute
        if isinstance(value, SSAValue):
            return values[value]
        if isinstance(value, list) and any(isinstance(v, SSAValue) for v in value):  # pyright: ignore
            return [values[v] if isinstance(v, SSAValue) else v for v in value]  # pyright: ignore
        return value

    positional, keywords = bound.call_arguments(resolve)
    with torch.no_grad():
        return flat_results(overload(*positional, **keywords))


def _infer(op: TorchOp) -> _Verdict:
    schema = op.op_schema
    if schema.is_vararg:
        return None, None
    try:
        results = _run(op, schema, "meta")
    except _CannotTell:
        return None, None
    except NotImplementedError:
        return None, None  # no meta kernel, or a data-dependent result shape
    except (RuntimeError, ValueError, TypeError, IndexError) as e:
        if "meta" in str(e).lower():
            return None, None  # e.g. Tensor.item() cannot be called on meta tensors
        small = sum(_numel(v.type) for v in op.operands) <= CPU_CONFIRM_ELEMENTS
        if not small:
            return None, _first_line(e)
        try:
            results = _run(op, schema, "cpu")
        except _CannotTell:
            return None, None
        except Exception as cpu_error:  # noqa: BLE001 - torch refuses the op: the IR is invalid
            return None, _first_line(cpu_error)
    types: list[Attribute | None] = []
    for value in results:
        try:
            types.append(tensor_type_of(value) if isinstance(value, torch.Tensor) else None)
        except UnsupportedTypeError:
            types.append(None)
    return tuple(types), None


def _numel(ty: Attribute) -> int:
    if not isinstance(ty, TensorType):
        return 0
    n = 1
    for d in ty.get_shape():  # pyright: ignore[reportUnknownVariableType]
        n *= max(int(d), 0)  # pyright: ignore[reportUnknownArgumentType]
    return n


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _key(op: TorchOp) -> Any:
    return (op.name, tuple(v.type for v in op.operands), tuple(sorted(op.properties.items())))


def inferred_result_types(op: TorchOp) -> _Verdict:
    """The result types torch gives ``op`` for its operand types and static arguments."""
    try:
        key = _key(op)
        hit = _cache.get(key)
    except TypeError:  # an unhashable property: no caching
        return _infer(op)
    if hit is None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        hit = _cache[key] = _infer(op)
    return hit


def verify_result_types(op: TorchOp) -> None:
    """Raise a VerifyException at ``op`` if torch refuses it or types its results otherwise."""
    _check_static(op)
    try:
        schema = op.op_schema
    except KeyError:
        return  # a torch.operator of an op whose schema is unknown
    types, error = inferred_result_types(op)
    location = op_location(op)
    name = f"{op.name} at {location}" if location else op.name
    if error is not None:
        raise VerifyException(f"{name}: torch refuses these operands and arguments: {error} "
                              f"(schema: {schema.text})")
    if types is None:
        return
    if len(types) != len(op.results):
        raise VerifyException(f"{name}: declares {len(op.results)} result(s), torch computes "
                              f"{len(types)} (schema: {schema.text})")
    for i, (result, expected) in enumerate(zip(op.results, types, strict=True)):
        if expected is not None and result.type != expected:
            raise VerifyException(f"{name}: result {i} is declared {result.type}, but torch computes "
                                  f"{expected} for these operands and arguments (schema: {schema.text})")


__all__ = ["inferred_result_types", "verify_result_types"]
