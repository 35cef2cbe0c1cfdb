"""The registry of reference layer implementations and the helpers they share.

A handler takes the ``trt`` op and its operand tensors and returns its result
tensors, computing what TensorRT documents for that layer.  Low-precision
floats are computed in f32 and rounded back, as TensorRT's kernels accumulate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

import torch
from xdsl.ir import Operation, SSAValue

from ziggurat.dialects.trt.base import shape_of
from ziggurat.ir.types import dtype_of

Handler = Callable[[Operation, Sequence[torch.Tensor]], list[torch.Tensor]]
OpT = TypeVar("OpT", bound=Operation)

HANDLERS: dict[type[Operation], Handler] = {}


class LayerExecutionError(RuntimeError):
    """A layer that cannot run on the given data (e.g. an index out of range)."""


def layer(op_type: type[OpT]) -> Callable[[Callable[[OpT, Sequence[torch.Tensor]], list[torch.Tensor]]], Handler]:
    """Register ``fn`` as the reference implementation of ``op_type``."""

    def register(fn: Callable[[OpT, Sequence[torch.Tensor]], list[torch.Tensor]]) -> Handler:
        HANDLERS[op_type] = fn  # pyright: ignore[reportArgumentType]
        return fn  # pyright: ignore[reportReturnType]

    return register


class LayerResultError(RuntimeError):
    """An implementation that computed other results than the op declares (a bug here, not in the IR)."""


class ResultTypes(NamedTuple):
    """The (shape, dtype) of each result of an op, and whether every one of them is empty."""

    types: list[tuple[tuple[int, ...], torch.dtype]]
    empty: bool


def result_types(op: Operation) -> ResultTypes:
    types = [(shape_of(r), dtype_of(r.type)) for r in op.results]
    return ResultTypes(types, bool(types) and all(0 in shape for shape, _ in types))


def execute_layer(op: Operation, args: Sequence[torch.Tensor], results: ResultTypes | None = None) -> list[torch.Tensor]:
    """Run ``op``'s reference implementation; layers whose results are all empty produce empty tensors.

    Any failure is a :class:`LayerExecutionError` (a layer must not crash the executor); results
    whose number, shape or dtype differ from the op's result types (``results``, computed when not
    given) are a :class:`LayerResultError`.
    """
    if results is None:
        results = result_types(op)
    if results.empty:
        return [torch.empty(shape, dtype=dtype) for shape, dtype in results.types]
    try:
        outputs = HANDLERS[type(op)](op, args)
    except LayerExecutionError:
        raise
    except Exception as e:  # noqa: BLE001
        raise LayerExecutionError(f"{type(e).__name__}: {e}") from e
    if len(outputs) != len(results.types):
        raise LayerResultError(f"internal error: produced {len(outputs)} tensors for {len(results.types)} results")
    for result, tensor, expected in zip(op.results, outputs, results.types, strict=True):
        if (tuple(tensor.shape), tensor.dtype) != expected:
            raise LayerResultError(
                f"internal error: computed {tensor.dtype}{list(tensor.shape)} for a result of type {result.type}")
    return outputs


def result_dtype(value: SSAValue) -> torch.dtype:
    return dtype_of(value.type)


def result_shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value)


def compute(x: torch.Tensor) -> torch.Tensor:
    """The tensor in its compute precision: f32 for floats, i64 for ints, bool stays."""
    if x.dtype.is_floating_point:
        return x.to(torch.float32)
    if x.dtype == torch.bool:
        return x
    return x.to(torch.int64)


def window_view(x: torch.Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int]) -> torch.Tensor:
    """[N, C, *spatial] -> [N, C, *out, *kernel]: every (dilated) window at every stride step."""
    for i, k in enumerate(kernel):
        extent = dilation[i] * (k - 1) + 1
        x = x.unfold(2 + i, extent, stride[i])[..., :: dilation[i]]
    return x


def spatial_pad(x: torch.Tensor, pre: Sequence[int], post: Sequence[int], value: float) -> torch.Tensor:
    """Pad the trailing len(pre) dims of x by pre/post (F.pad order: last dim first)."""
    pads: list[int] = []
    for p0, p1 in zip(reversed(pre), reversed(post), strict=True):
        pads += [int(p0), int(p1)]
    if not any(pads):
        return x
    return torch.nn.functional.pad(x, pads, value=value)
