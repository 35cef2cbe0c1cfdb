"""Build a TensorRT engine from a ``trt`` function through the real TensorRT Python API.

    engine_bytes = build_engine(func_op, BuilderOptions(workspace_size=1 << 28))

:func:`plan_network` walks the function into a :class:`NetworkPlan` (pure
Python, see ``layer_calls.py``); :func:`populate_network` replays it on an
explicit-batch ``INetworkDefinition`` (every layer named after its op's
``name``, every tensor after its SSA name); :func:`build_engine` configures the
builder and returns the serialized engine.  ``tensorrt`` is imported only
inside these functions; without it they raise ``TensorRTUnavailableError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from xdsl.dialects.func import FuncOp, ReturnOp

from ziggurat.backends.tensorrt.availability import import_tensorrt
from ziggurat.backends.tensorrt.layer_calls import EMITTERS, PlanBuilder, PlanError
from ziggurat.backends.tensorrt.network_plan import (
    DataTypeRef,
    EnumRef,
    LayerCall,
    NetworkInput,
    NetworkPlan,
    ProfileShapes,
    TensorRef,
    Weights,
)
from ziggurat.backends.tensorrt.profiles import read_profile
from ziggurat.dialects.trt import TrtLayerOp
from ziggurat.dialects.trt.base import shape_of as trt_shape_of
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.types import dtype_of


class EngineBuildError(ZigguratError):
    """TensorRT refused a layer or failed to build the engine."""


@dataclass(frozen=True)
class BuilderOptions:
    """IBuilderConfig settings."""

    workspace_size: int = 1 << 30
    #: refused: TensorRT 11 builds strongly typed networks only (no BuilderFlag.FP16/INT8);
    #: an engine computes in the types of its tensors
    fp16: bool = False
    int8: bool = False
    #: ``trt.Logger.Severity`` member name
    log_severity: str = "WARNING"


def plan_network(func_op: FuncOp) -> NetworkPlan:
    """The TensorRT API calls that build ``func_op``'s network."""
    builder = PlanBuilder()
    body = func_op.body.blocks.first
    if body is None:
        raise PlanError(f"@{func_op.sym_name.data} has no body")
    profile = read_profile(func_op)
    for i, arg in enumerate(body.args):
        name = builder.unique_tensor_name(arg.name_hint or f"input_{i}")
        builder.bind(arg, name)
        builder.plan.inputs.append(NetworkInput(name, DataTypeRef.of(dtype_of(arg.type)), trt_shape_of(arg)))
        if profile is not None and profile[i].dynamic:
            p = profile[i]
            builder.plan.profile.append(ProfileShapes(name, p.min, p.opt, p.max))
    if any(d < 0 for inp in builder.plan.inputs for d in inp.shape) and len(builder.plan.profile) == 0:
        raise PlanError(f"@{func_op.sym_name.data} has dynamic inputs and no optimization profile")
    for op in body.ops:
        if isinstance(op, ReturnOp):
            _mark_outputs(builder, op)
            return builder.plan
        emit = EMITTERS.get(type(op))
        if emit is None or not isinstance(op, TrtLayerOp):
            raise PlanError(f"only trt ops can be emitted to TensorRT, got {op.name}")
        emit(builder, op)
    raise PlanError(f"@{func_op.sym_name.data} does not end with func.return")


def _mark_outputs(builder: PlanBuilder, ret: ReturnOp) -> None:
    """Mark returned tensors; inputs or repeated values get an identity layer (TensorRT needs distinct outputs)."""
    marked: set[str] = set()
    input_names = {i.name for i in builder.plan.inputs}
    for i, value in enumerate(ret.arguments):
        ref = builder.tensor(value)
        if ref.name in marked or ref.name in input_names:
            name = builder.unique_layer_name(f"output_{i} (copy)")
            out = builder.unique_tensor_name(f"output_{i}")
            builder.plan.layers.append(LayerCall("add_identity", (ref,), name, (out,), source_op="func.return"))
            ref = TensorRef(out)
        marked.add(ref.name)
        builder.plan.outputs.append(ref.name)


def _resolve(value: Any, trt: ModuleType, tensors: dict[str, Any]) -> Any:
    if isinstance(value, TensorRef):
        return tensors[value.name]
    if isinstance(value, EnumRef | DataTypeRef | Weights):
        return value.resolve(trt)
    if isinstance(value, list):
        return [_resolve(v, trt, tensors) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def populate_network(plan: NetworkPlan, trt: ModuleType, network: Any) -> dict[str, Any]:
    """Replay ``plan`` on ``network``; returns the ITensors by name."""
    tensors: dict[str, Any] = {}
    for inp in plan.inputs:
        tensors[inp.name] = network.add_input(inp.name, inp.dtype.resolve(trt), tuple(inp.shape))
    for call in plan.layers:
        where = f"{call.method} for {call.source_op} '{call.name}'"
        try:
            layer = getattr(network, call.method)(*(_resolve(a, trt, tensors) for a in call.args))
        except (TypeError, AttributeError, RuntimeError, ValueError) as e:
            raise EngineBuildError(f"TensorRT rejected {where}: {e}", op=call.name) from e
        if layer is None:
            raise EngineBuildError(f"TensorRT returned no layer for {where} (see the TensorRT log)", op=call.name)
        layer.name = call.name
        for key, value in call.attributes:
            try:
                setattr(layer, key, _resolve(value, trt, tensors))
            except (TypeError, AttributeError, ValueError) as e:
                raise EngineBuildError(f"cannot set {key} of {where}: {e}", op=call.name) from e
        for index, ref in call.set_inputs:
            layer.set_input(index, tensors[ref.name])
        for i, name in enumerate(call.outputs):
            tensor = layer.get_output(i)
            tensor.name = name
            tensors[name] = tensor
    for name in plan.outputs:
        network.mark_output(tensors[name])
    return tensors


def _configure(trt: ModuleType, builder: Any, options: BuilderOptions) -> Any:
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, options.workspace_size)
    return config


def build_engine(func_op: FuncOp, options: BuilderOptions | None = None) -> bytes:
    """Serialized TensorRT engine of a ``trt`` function (needs TensorRT and a GPU)."""
    options = options or BuilderOptions()
    if options.fp16 or options.int8:
        raise EngineBuildError(
            "TensorRT 11 builds strongly typed networks only (BuilderFlag.FP16 and INT8 are gone): an engine "
            "computes in its tensors' types, so compile a model converted to that precision instead",
            op=f"@{func_op.sym_name.data}",
        )
    plan = plan_network(func_op)
    trt = import_tensorrt()
    logger = trt.Logger(getattr(trt.Logger, options.log_severity))
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # explicit batch is the only mode since TensorRT 10
    populate_network(plan, trt, network)
    config = _configure(trt, builder, options)
    if plan.profile:
        profile = builder.create_optimization_profile()
        for shapes in plan.profile:
            profile.set_shape(shapes.input, shapes.min, shapes.opt, shapes.max)
        config.add_optimization_profile(profile)
    # ``plan`` (and the weights arrays it owns) stays referenced until the build returns.
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise EngineBuildError(
            f"TensorRT could not build an engine for @{func_op.sym_name.data} (see the TensorRT log above)",
            op=f"@{func_op.sym_name.data}",
        )
    del plan
    return bytes(serialized)
