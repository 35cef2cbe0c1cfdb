"""Types from torch's own shape functions: a computation run on *meta* tensors of the
operand types (no data, no compute), shared by the verifiers of the ``torch`` dialect
(``result_types``) and of the ``fused`` dialect.

Where the meta implementation refuses the operands, the computation is run again on real
zero-filled CPU tensors when they are small, so that a meta kernel stricter than the CPU
kernel (which the importer used) is never an error.  Verification runs after every pass,
so verdicts are cached by a key the caller chooses (op name, operand types, properties).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation
from xdsl.utils.exceptions import VerifyException

from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR
from ziggurat.ir.types import UnsupportedTypeError, has_dynamic_dims, tensor_type_of, zeros_of

#: Operands at most this many elements in all are re-run on the CPU when the meta kernel
#: refuses them (to tell a stricter meta kernel from an invalid op).
CPU_CONFIRM_ELEMENTS = 1 << 16
_CACHE_LIMIT = 1 << 16
#: Operands and results of at most this many elements in all are run on the CPU first (see
#: ``evaluate``).
CPU_FIRST_ELEMENTS = 1 << 12

def meta_only(op_name: str, operand_types: Sequence[Attribute] = ()) -> bool:
    """Whether an op's types come from its meta kernel only, never from a run of its CPU kernel
    at compile time: convolutions with a 16-bit float operand, whose CPU kernels are oneDNN's
    AMX/AVX512-BF16 ones and can kill the process on valid operands (torch 2.13's bf16
    ``conv2d`` of a ``[1, 2, 1, 37]`` image, 3x3 weight, stride 2, padding (3, 0), dilation
    (2, 1) segfaults on an AMX host; eager autocast does too: fuzz seed 93, program 137).  Their
    meta kernels compute every result shape.  ``operand_types`` empty: any operand types."""
    name = op_name.rsplit(".", 1)[-1]
    if "conv" not in name and "mkldnn" not in name:
        return False
    return not operand_types or any(isinstance(t, TensorType) and isinstance(t.element_type, BFloat16Type | Float16Type)
                                    for t in operand_types)


#: What torch says of a computation: the result types (None for a non-tensor result), or
#: why it is invalid, or nothing (cannot tell).
Verdict = tuple[tuple[Attribute | None, ...] | None, str | None]
_cache: dict[Any, Verdict] = {}


class CannotTell(Exception):
    """torch cannot compute the result types without data (or at all)."""


def tensors(types: Sequence[TensorType[Attribute]], device: str) -> list[torch.Tensor]:
    """Meta tensors, or (small) zero-filled CPU tensors, of ``types`` (quantized tensors have
    no meta form: ``CannotTell`` on "meta")."""
    try:
        return [zeros_of(ty, device) for ty in types]
    except UnsupportedTypeError:
        raise CannotTell from None


def check_static(op: Operation, makes_dynamic_shapes: bool = False) -> bool:
    """Whether ``op`` involves a ``?`` size (a data-dependent shape, which only torch computes:
    nothing more can be checked without the data).  A ``?`` result needs a cause: an operand
    with a ``?`` size or a run-time scalar operand (``nonzero(x).size(0)``), or an op whose
    result shape depends on the values (``makes_dynamic_shapes``: ``nonzero``, ``unique``...);
    else it is an error, since Ziggurat compiles static shapes.  A function input may have ``?``
    sizes only in a function that declares its symbols (``ziggurat.shape_symbols``: a
    dynamic-shape compile's ``torch`` level)."""
    dynamic_operands = [(i, v) for i, v in enumerate(op.operands) if has_dynamic_dims(v.type)]
    for i, v in dynamic_operands:
        fn = v.owner.parent_op() if isinstance(v, BlockArgument) else None
        if isinstance(fn, FuncOp) and SHAPE_SYMBOLS_ATTR not in fn.attributes:
            raise VerifyException(f"{op.name}: operand {i} has a dynamic dimension ({v.type}); Ziggurat compiles "
                                  "static shapes (a function input has no data-dependent shape)")
    if dynamic_operands:
        return True
    dynamic = [i for i, v in enumerate(op.results) if has_dynamic_dims(v.type)]
    if not dynamic:
        return False
    if makes_dynamic_shapes or any(not isinstance(v.type, TensorType) for v in op.operands):
        return True
    raise VerifyException(f"{op.name}: result {dynamic[0]} has a dynamic dimension ({op.results[dynamic[0]].type}) "
                          "although its operands are static and its shape does not depend on their values; "
                          "Ziggurat compiles static shapes")


def numel(ty: Attribute) -> int:
    if not isinstance(ty, TensorType):
        return 0
    n = 1
    for d in ty.get_shape():  # pyright: ignore[reportUnknownVariableType]
        n *= max(int(d), 0)  # pyright: ignore[reportUnknownArgumentType]
    return n


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def evaluate(run: Callable[[str], list[Any]], operand_types: Sequence[Attribute],
             declared: Sequence[Attribute] | None = None, cpu_runs: bool = True) -> Verdict:
    """What torch says of ``run(device)``: called on ``"meta"``, then on ``"cpu"`` (operands
    of ``operand_types``, small) if the meta kernels refuse; ``run`` raises ``CannotTell``
    where torch cannot say.

    With the ``declared`` result types and small operands, a CPU run that agrees with them is
    taken first: some meta kernels are Python references whose first call imports
    ``torch._dynamo`` (2.4 s in every ``ziggurat-opt`` process), while the CPU kernels are
    C++. Only agreement is taken from it; a CPU run on zeros that disagrees (an op whose
    result shape follows the data) or fails goes the meta way.  With ``cpu_runs`` False
    (:func:`meta_only` ops) only the meta kernels are asked."""
    if cpu_runs and declared is not None and sum(numel(ty) for ty in (*operand_types, *declared)) <= CPU_FIRST_ELEMENTS:
        try:
            on_cpu = _result_types(run("cpu"))
        except Exception:  # noqa: BLE001 - CannotTell, or a CPU kernel refusing zeros: ask meta
            on_cpu = None
        if on_cpu is not None and len(on_cpu) == len(declared) and all(
                t is None or t == d for t, d in zip(on_cpu, declared, strict=True)):
            return on_cpu, None
    try:
        results = run("meta")
    except CannotTell:
        return None, None
    except NotImplementedError:
        return None, None  # no meta kernel, or a data-dependent result shape
    except (RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError) as e:
        if "meta" in str(e).lower():
            return None, None  # e.g. Tensor.item() cannot be called on meta tensors
        if not cpu_runs:  # the meta kernel's refusal is torch's (the CPU kernel is not asked)
            return None, first_line(e)
        if sum(numel(ty) for ty in operand_types) > CPU_CONFIRM_ELEMENTS:
            return None, first_line(e)
        try:
            results = run("cpu")
        except CannotTell:
            return None, None
        except Exception as cpu_error:  # noqa: BLE001 - torch refuses the op: the IR is invalid
            return None, first_line(cpu_error)
    types = _result_types(results)
    if declared is not None and not _agree(types, declared):
        fake = _fake_cpu_types(run)
        if fake is not None and _agree(fake, declared):
            return fake, None
    return types, None


def _agree(types: Sequence[Attribute | None], declared: Sequence[Attribute]) -> bool:
    return len(types) == len(declared) and all(t is None or t == d for t, d in zip(types, declared, strict=True))


def _fake_cpu_types(run: Callable[[str], list[Any]]) -> tuple[Attribute | None, ...] | None:
    """The result types of ``run("cpu")`` on fake CPU tensors (no data, any size): where a
    meta kernel disagrees with the CPU kernel torch.export traced
    (``_native_batch_norm_legit_no_training``: ``[C]`` on meta, ``[0]`` on the CPU and in the
    exported graph), the CPU's answer is the one the graph was made with.  None where fake
    tensors cannot run it."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with FakeTensorMode():
            return _result_types(run("cpu"))
    except Exception:  # noqa: BLE001 - no fake form: keep the meta answer
        return None


def _result_types(results: list[Any]) -> tuple[Attribute | None, ...]:
    """The tensor type of each result (None for a non-tensor or an unsupported dtype)."""
    types: list[Attribute | None] = []
    for value in results:
        try:
            types.append(tensor_type_of(value) if isinstance(value, torch.Tensor) else None)
        except UnsupportedTypeError:
            types.append(None)
    return tuple(types)


def evaluate_on_cpu(run: Callable[[str], list[Any]], operand_types: Sequence[Attribute]) -> Verdict:
    """What torch says of ``run("cpu")`` where meta kernels cannot be trusted (quantized
    tensors, which meta kernels type as float): the result types when the run succeeds on
    small zero-filled operands; nothing when it fails or the operands are large, since the
    operands' quantization parameters are made up."""
    if sum(numel(ty) for ty in operand_types) > CPU_CONFIRM_ELEMENTS:
        return None, None
    try:
        results = run("cpu")
    except Exception:  # noqa: BLE001 - CannotTell, or torch refusing made-up quantization parameters
        return None, None
    return _result_types(results), None


def cached(key: Hashable, compute: Callable[[], Verdict]) -> Verdict:
    """``compute()``, remembered under ``key`` (computed each time if ``key`` is unhashable)."""
    try:
        hit = _cache.get(key)
    except TypeError:  # an unhashable property: no caching
        return compute()
    if hit is None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        hit = _cache[key] = compute()
    return hit


__all__ = ["CPU_CONFIRM_ELEMENTS", "CannotTell", "Verdict", "cached", "check_static", "evaluate", "evaluate_on_cpu",
           "first_line", "numel", "tensors"]
