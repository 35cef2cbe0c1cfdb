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

    The traced program can disagree where inlining the autocast region loses a dtype autocast
    chose inside an op torch.export keeps whole; :func:`float32_inside_regions` restores the
    one case found (``F.pad(mode="reflect")``, fuzz seed 27, program 83) before inlining, and
    this keeps every output in eager's dtype whatever else re-tracing does."""
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


def float32_inside_regions(module: torch.fx.GraphModule) -> int:
    """Before an autocast region (``wrap_with_autocast``) is inlined: give an op that eager
    autocast ran in float32 inside its own decomposition float32 inputs (``aten._to_copy``),
    so that the inlined region computes it, and the ops after it, as eager does; returns how
    many ops it widened.

    torch.export keeps some ops whole (``aten.pad``) that dispatch to one on autocast's
    float32 list (``reflection_pad2d``, ``replication_pad2d``): the trace records their float32
    result, but inlining the region re-traces them whole, where autocast does not reach inside,
    and they come out in the low-precision dtype with every op after them (fuzz seed 27,
    program 83: a sum of a reflection-padded bf16 tensor, computed in bf16 where eager computes
    it in float32).  Such an op is one the trace recorded as float32 that, run on fake tensors
    of its traced inputs without autocast, returns the region's dtype: the float32 is
    autocast's, not the op's own promotion or cast."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    widened = 0
    for node in list(module.graph.nodes):
        if node.op != "call_function" or getattr(node.target, "__name__", "") != "wrap_with_autocast":
            continue
        device, dtype, enabled = node.args[0], node.args[1], node.args[2]
        body = node.args[4]
        if device != "cpu" or not enabled or not isinstance(dtype, torch.dtype) \
                or not isinstance(body, torch.fx.Node) or body.op != "get_attr":
            continue
        region = getattr(module, str(body.target))
        if not isinstance(region, torch.fx.GraphModule):
            continue
        count = _widen_region(region, dtype, FakeTensorMode(allow_non_fake_inputs=True))
        if count:
            region.recompile()
            widened += count
    return widened


def _widen_region(region: torch.fx.GraphModule, dtype: torch.dtype, mode: Any) -> int:
    widened = 0
    for node in list(region.graph.nodes):
        traced = node.meta.get("val")
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload) \
                or not isinstance(traced, torch.Tensor) or traced.dtype != torch.float32:  # pyright: ignore[reportPrivateUsage]
            continue
        low = [a for a in node.all_input_nodes
               if isinstance(a.meta.get("val"), torch.Tensor) and a.meta["val"].dtype == dtype]
        if not low or _plain_dtype(node, mode) != dtype:
            continue
        for arg in low:
            with region.graph.inserting_before(node):
                cast = region.graph.call_function(torch.ops.aten._to_copy.default, (arg,), {"dtype": torch.float32})
            cast.meta["val"] = arg.meta["val"].to(torch.float32)
            node.replace_input_with(arg, cast)
        widened += 1
    return widened


def _plain_dtype(node: torch.fx.Node, mode: Any) -> torch.dtype | None:
    """The dtype ``node``'s op returns on fake tensors of its traced inputs, without autocast
    (None where it cannot be run)."""
    from torch.fx.node import map_aggregate
    def fake(a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            val = a.meta.get("val")
            return mode.from_tensor(val) if isinstance(val, torch.Tensor) else val
        return a

    try:
        args = map_aggregate(node.args, fake)
        kwargs = map_aggregate(node.kwargs, fake)
        with mode, torch.autocast("cpu", enabled=False):
            out = node.target(*args, **kwargs)  # pyright: ignore[reportCallIssue]
    except Exception:  # noqa: BLE001 - an op fake tensors cannot run keeps the traced dtype
        return None
    return out.dtype if isinstance(out, torch.Tensor) else None
