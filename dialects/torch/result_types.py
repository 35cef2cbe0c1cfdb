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
from xdsl.dialects.builtin import DictionaryAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.torch.meta_eval import (CPU_CONFIRM_ELEMENTS, CannotTell, Verdict, cached, check_static, evaluate, meta_only,
                                               evaluate_on_cpu, numel, tensors)
from ziggurat.dialects.torch.ops_base import TorchOp, flat_results
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec, OpSchema, torch_overload
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import is_quantized_element, tensor_type_of


def _static_tensor_type(ty: Attribute) -> TensorType[Attribute] | None:
    return ty if isinstance(ty, TensorType) else None  # pyright: ignore[reportUnknownVariableType]


def _run(op: TorchOp, schema: OpSchema, device: str) -> list[Any]:
    """Torch's overload of ``op`` on tensors of its operand types on ``device``."""
    overload = torch_overload(schema)
    if overload is None:
        raise CannotTell
    try:
        bound = op.arguments()
    except Exception as e:  # noqa: BLE001 - a property that does not decode
        raise VerifyException(f"{op.name}: its static arguments do not decode: {e} "
                              f"(schema: {schema.text})") from None
    tensor_types: list[TensorType[Attribute]] = []
    for v in op.operands:
        ty = _static_tensor_type(v.type)
        if ty is None:
            raise CannotTell  # a run-time scalar operand (torch.operator)
        tensor_types.append(ty)
    values: dict[SSAValue, torch.Tensor] = dict(zip(op.operands, tensors(tensor_types, device), strict=True))

    def resolve(spec: ArgSpec, value: Any) -> Any:
        if spec.kind == ArgKind.DEVICE:
            return torch.device(device)  # factory ops allocate on the device under test
        if spec.kind == ArgKind.OTHER and value is not None:
            raise CannotTell  # an argument torch.operator keeps as a raw attribute
        if isinstance(value, SSAValue):
            return values[value]
        if isinstance(value, list) and any(isinstance(v, SSAValue) for v in value):  # pyright: ignore
            return [values[v] if isinstance(v, SSAValue) else v for v in value]  # pyright: ignore
        return value

    positional, keywords = bound.call_arguments(resolve)
    with torch.no_grad():
        return flat_results(overload(*positional, **keywords))


def _quantized_attr(attr: Attribute) -> bool:
    if isinstance(attr, DictionaryAttr):  # torch.operator's static arguments
        return any(_quantized_attr(a) for a in attr.data.values())
    return is_quantized_element(attr)


def involves_quantized(op: TorchOp) -> bool:
    """Whether ``op`` reads or writes a quantized tensor, or is asked for a quantized dtype:
    torch has no meta form of quantized tensors, and its meta kernels type such results as
    float (``quantize_per_tensor`` on meta gives float32), so only a CPU run types them."""
    return (any(is_quantized_element(v.type) for v in (*op.operands, *op.results))
            or any(_quantized_attr(a) for a in op.properties.values()))


def _infer(op: TorchOp) -> Verdict:
    schema = op.op_schema
    if schema.is_vararg:
        return None, None
    run = lambda device: _run(op, schema, device)  # noqa: E731
    if involves_quantized(op):
        return evaluate_on_cpu(run, [v.type for v in op.operands])
    return evaluate(run, [v.type for v in op.operands], [r.type for r in op.results], cpu_runs=not meta_only(op.name, [v.type for v in op.operands]))


def cpu_result_types(op: TorchOp) -> tuple[Attribute | None, ...]:
    """The result types of ``op`` run by torch on the CPU on example tensors of its operand
    types (quantized ones per-tensor quantized), whatever their size (None for a non-tensor
    result); raises what torch raises."""
    return tuple(tensor_type_of(t) if isinstance(t, torch.Tensor) else None
                 for t in _run(op, op.op_schema, "cpu"))


#: Results whose shapes torch's meta kernels and its CPU kernels give differently (the
#: importer types them from a CPU run): ``embedding_bag``'s offset2bag, bag_size and
#: max_indices, which its backward reads, depend on the mode and the device; an eval-mode
#: ``native_batch_norm``'s saved mean and invstd are empty on the CPU, one per channel on meta.
DEVICE_DEPENDENT_RESULTS: dict[str, tuple[int, ...]] = {
    "aten::embedding_bag": (1, 2, 3), "aten::_embedding_bag": (1, 2, 3),
    "aten::_embedding_bag_forward_only": (1, 2, 3), "aten::native_batch_norm": (1, 2),
}


def _cpu_result_types(op: TorchOp) -> tuple[Attribute | None, ...] | None:
    """The result types of ``op`` run on small zero-filled CPU tensors, where the meta
    kernel's differ from the declared ones (a meta kernel may type a result otherwise than
    the CPU kernel the importer ran); None when too large to run or when the CPU refuses."""
    if sum(numel(v.type) for v in op.operands) > CPU_CONFIRM_ELEMENTS:
        return None
    try:
        types = [tensor_type_of(t) if isinstance(t, torch.Tensor) else None
                 for t in _run(op, op.op_schema, "cpu")]
    except Exception:  # noqa: BLE001 - the CPU kernel refuses zeros (data-dependent checks)
        return None
    return tuple(types)


def _key(op: TorchOp) -> Any:
    return (op.name, tuple(v.type for v in op.operands), tuple(sorted(op.properties.items())))


def inferred_result_types(op: TorchOp) -> Verdict:
    """The result types torch gives ``op`` for its operand types and static arguments."""
    return cached(_key(op), lambda: _infer(op))


#: Ops whose result shape follows data that torch does not tag ``dynamic_output_shape``:
#: ``nonzero(x, as_tuple=True)`` and ``x.repeat_interleave(repeats_tensor)``.
UNTAGGED_DATA_DEPENDENT = frozenset({"aten::nonzero_numpy", "aten::repeat_interleave.self_Tensor"})


def makes_dynamic_shapes(schema: OpSchema) -> bool:
    """An op whose result shape may depend on its operands' values (torch's
    ``dynamic_output_shape`` tag: ``nonzero``, ``unique``, ``bincount``, boolean-mask ``index``...)."""
    if schema.key in UNTAGGED_DATA_DEPENDENT:
        return True  # not tagged by torch, though their shapes follow data
    overload = torch_overload(schema)
    if overload is None:
        return True  # an op torch does not know here: nothing to check it against
    return torch.Tag.dynamic_output_shape in overload.tags  # pyright: ignore[reportAttributeAccessIssue]


def verify_result_types(op: TorchOp) -> None:
    """Raise a VerifyException at ``op`` if torch refuses it or types its results otherwise."""
    try:
        schema = op.op_schema
    except KeyError:
        check_static(op, makes_dynamic_shapes=True)
        return  # a torch.operator of an op whose schema is unknown
    if check_static(op, makes_dynamic_shapes=makes_dynamic_shapes(schema)):
        return  # sizes known at run time only
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
    unchecked = DEVICE_DEPENDENT_RESULTS.get(schema.qualified_name, ())
    mismatched = [i for i, (result, expected) in enumerate(zip(op.results, types, strict=True))
                  if expected is not None and result.type != expected and i not in unchecked]
    if mismatched:
        on_cpu = cached((_key(op), "cpu"), lambda: (_cpu_result_types(op), None))[0]
        if on_cpu is not None and all(op.results[i].type == on_cpu[i] for i in mismatched):
            return
        i = mismatched[0]
        result, expected = op.results[i], types[i]
        raise VerifyException(f"{name}: result {i} is declared {result.type}, but torch computes "
                              f"{expected} for these operands and arguments (schema: {schema.text})")


__all__ = ["UNTAGGED_DATA_DEPENDENT", "cpu_result_types", "inferred_result_types", "involves_quantized",
           "makes_dynamic_shapes",
           "verify_result_types"]
