"""``precision="bf16"``/``"fp16"``: the model imported as eager runs it under ``torch.autocast``.

The precision policy is autocast's own, not a copy of its op lists: the example call runs inside
``torch.autocast("cpu", dtype=...)`` while ``torch.export`` traces it, and functionalizing the
program (``export.functional``) inlines the autocast region, so that every cast autocast makes
is an explicit ``aten._to_copy`` in the ``torch`` dialect: GEMMs, convolutions and attention
take low-precision operands (their weights' casts are folded at compile time), the ops autocast
keeps in float32 take float32 ones, the rest run in the dtype they are given. Floating outputs
come back in the model's dtype (a float32 model returns float32, as ``y.float()`` of the
autocast result); compiled code computes what eager computes under autocast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ziggurat.ir.errors import ZigguratError

#: ``precision=`` names and the dtype autocast lowers to (None: the model's own).
PRECISIONS: dict[str, torch.dtype | None] = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class Autocast:
    """Autocast to ``dtype`` around the model's call; floating outputs in ``dtype`` become
    ``model_dtype``."""

    dtype: torch.dtype
    model_dtype: torch.dtype

    def context(self) -> torch.autocast:
        return torch.autocast("cpu", dtype=self.dtype)

    def output(self, t: torch.Tensor) -> torch.Tensor:
        return t.to(self.model_dtype) if t.dtype == self.dtype and self.model_dtype != self.dtype else t


def cast_outputs(fn: Any, dtypes: Sequence[torch.dtype]) -> int:
    """Make each floating output of the imported ``fn`` the dtype eager autocast returned for it
    (``dtypes``, in return order); returns how many casts it added.

    The traced program can disagree: an op that torch.export keeps whole while autocast
    changes the dtype inside its decomposition (``F.pad(mode="reflect")``: autocast runs
    ``reflection_pad2d`` in float32) comes out of the inlined autocast region in the input's
    dtype (bf16), and the model's output with it (fuzz seed 27, program 83). The values are
    the same up to that rounding; the dtype must be eager's."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import TensorType

    from ziggurat.dialects.torch.aten_ops import Aten_ToCopy_Op
    from ziggurat.ir.types import dtype_of, element_type

    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    added = 0
    for i, (value, want) in enumerate(zip(ret.arguments, dtypes, strict=False)):
        ty = value.type
        if not isinstance(ty, TensorType) or not want.is_floating_point:
            continue
        got = dtype_of(ty)
        if got == want or not got.is_floating_point:
            continue
        cast = Aten_ToCopy_Op.from_arguments({"self": value, "dtype": want, "non_blocking": False},
                                             [TensorType(element_type(want), ty.get_shape())])
        fn.body.block.insert_op_before(cast, ret)
        ret.operands[i] = cast.results[0]  # pyright: ignore[reportIndexIssue]
        added += 1
    if added:
        from xdsl.dialects.builtin import FunctionType

        fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), [v.type for v in ret.arguments])
    return added


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ZigguratError(f"unknown precision '{precision}'; use {', '.join(repr(p) for p in PRECISIONS)}",
                            op="compile")


def model_dtype(model: torch.nn.Module) -> torch.dtype:
    """The dtype of the model's first floating parameter or buffer (float32 without any)."""
    for t in (*model.parameters(), *model.buffers()):
        if t.is_floating_point():
            return t.dtype
    return torch.float32


def autocast_for(model: object, precision: str, frontend: str) -> Autocast | None:
    """The autocast that ``precision`` asks for on ``model`` (None for ``"fp32"``); an error
    where it cannot be applied: autocast is traced by ``torch.export`` from a Python model."""
    check_precision(precision)
    dtype = PRECISIONS[precision]
    if dtype is None:
        return None
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        raise ZigguratError(f"precision='{precision}' takes a Python nn.Module (run under torch.autocast while "
                            f"torch.export traces it), not a {type(model).__name__}; export an ExportedProgram "
                            "inside torch.autocast yourself to compile it at that precision", op="compile")
    if frontend == "torchscript":
        raise ZigguratError(f"precision='{precision}' needs the torch.export frontend: a TorchScript trace "
                            "cannot record autocast's casts (use frontend='auto' or 'export')", op="compile")
    return Autocast(dtype, model_dtype(model))
