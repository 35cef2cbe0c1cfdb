"""Turning a :class:`Program` into a module and inputs, and running it in eager."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from tests.fuzz.hidden_rounding import hidden_intermediates, hidden_magnitude
from tests.fuzz.materialize import from_literal, make_const, make_input
from tests.fuzz.program import Program, TensorSpec, module_source

#: seed offset of the call-time inputs (k-th fresh set), far from every example seed
FRESH_SEED = 1_000_003


def namespace() -> dict[str, Any]:
    return {"torch": torch, "F": torch.nn.functional, "make_const": make_const, "make_input": make_input,
            "from_literal": from_literal}


def source_float64(source: str) -> str:
    """The same program computing in float64 (the reference run that sizes tolerances)."""
    return source.replace("torch.float32", "torch.float64")


@contextlib.contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def build_module(program: Program, float64: bool = False) -> torch.nn.Module:
    source = module_source(program)
    if "quantized_decomposed" in source:  # a PT2E pattern (ops_quantized.py): register its ops
        import torch.ao.quantization.fx._decomposed  # noqa: F401
    ns = namespace()
    exec(compile(source if not float64 else source_float64(source), f"<fuzz {program.name}>", "exec"), ns)
    module: torch.nn.Module = ns["Model"]().eval()
    return module.double() if float64 else module


def example_inputs(program: Program) -> tuple[torch.Tensor, ...]:
    """The compile-time inputs; an input with ``alias`` gets the very tensor of its target."""
    made: dict[str, torch.Tensor] = {}
    for spec in program.inputs:
        if spec.alias is not None and spec.alias in made:
            made[spec.name] = made[spec.alias]
        else:
            made[spec.name] = _input(spec, 0)
    return tuple(made[s.name] for s in program.inputs)


def _input(spec: TensorSpec, k: int) -> torch.Tensor:
    if spec.literal is not None:
        return from_literal(spec.literal, spec.shape, spec.torch_dtype, spec.layout, k * FRESH_SEED)
    return make_input(spec.shape, spec.torch_dtype, spec.domain, spec.layout, spec.seed + k * FRESH_SEED)


def fresh_inputs(program: Program, k: int = 1) -> tuple[torch.Tensor, ...]:
    """Call-time inputs: same shapes, dtypes and layouts, other values, never aliased."""
    return tuple(_input(s, k) for s in program.inputs)


def clone_inputs(inputs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """Copies that keep each input's strides and storage offset, and the aliasing between them."""
    copies: dict[int, torch.Tensor] = {}
    out: list[torch.Tensor] = []
    for t in inputs:
        key = id(t)
        if key not in copies:
            copy = torch.empty(0, dtype=t.dtype)
            copy.set_(t.untyped_storage().clone(), t.storage_offset(), t.shape, t.stride())  # pyright: ignore
            copies[key] = copy
        out.append(copies[key])
    return tuple(out)


def flatten_outputs(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in flatten_outputs(v)]  # pyright: ignore[reportUnknownVariableType]
    return [value]


def run_eager(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flatten_outputs(module(*clone_inputs(inputs)))


class _InnerSteps(TorchDispatchMode):
    """Passes the float32 result of every functional aten op a node runs through
    ``step(result, operands)``: the values a composite op computes on its way
    (``F.tanhshrink(x)`` is ``x - tanh(x)``: another implementation's tanh, one ulp off,
    moves the difference by one ulp of tanh(x), 86 ulps of the result at x = 0.19).  The
    first result of a norm kernel is stepped within ``hidden_intermediates``, with the
    magnitude of the intermediates the kernel computes inside (``hidden_rounding``)."""

    def __init__(self, step: Callable[[torch.Tensor, list[torch.Tensor]], torch.Tensor]) -> None:
        super().__init__()
        self.step = step
        #: results already passed through ``step`` (kept alive so that ids stay unique)
        self.done: dict[int, torch.Tensor] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        tensors = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        schema = func._schema
        if schema.is_mutable or any(r.alias_info is not None for r in schema.returns):
            for t in tensors:  # written in place: its new value is not a stepped one
                self.done.pop(id(t), None)
            return out

        hidden = hidden_magnitude(func, args, out)

        def one(t: Any) -> Any:
            if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
                return t
            # a norm kernel's output also carries the rounding of its hidden intermediates
            with hidden_intermediates(hidden if hidden is not None and t is out[0] else None):
                stepped = self.step(t, tensors)
            self.done[id(stepped)] = stepped
            return stepped

        return tree_map(one, out)


def run_statements(program: Program, inputs: Sequence[torch.Tensor],
                   after: Callable[[torch.Tensor, list[torch.Tensor]], torch.Tensor],
                   inner: bool = False, constants: bool = False) -> list[Any]:
    """The program's statements run one node at a time in eager; every tensor a node makes
    is passed through ``after(tensor, operands)`` before later nodes read it (the
    rounding-noise runs); with ``inner``, so is every value made inside a node (each
    functional aten op's float32 result, see ``_InnerSteps``); with ``constants``, so is each
    float constant, once, before the first node.  Nodes never mutate their operands, so
    replacing a value does not change aliasing."""
    module = build_module(program)
    env = namespace()
    env.update({spec.name: t for spec, t in zip(program.inputs, clone_inputs(inputs))})
    env.update({c.name: getattr(module, c.name) for c in program.consts})
    if constants:
        env.update({c.name: after(env[c.name], []) for c in program.consts
                    if isinstance(env[c.name], torch.Tensor) and env[c.name].is_floating_point()})
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for node in program.nodes:
            operands = [env[u] for u in node.uses if isinstance(env.get(u), torch.Tensor)]
            mode = _InnerSteps(after) if inner else None
            with mode if mode is not None else contextlib.nullcontext():
                exec("\n".join(node.lines), env)
            for name in node.outs:
                value = env.get(name)
                if isinstance(value, torch.Tensor) and (mode is None or id(value) not in mode.done):
                    env[name] = after(value, operands)
    return [env[name] for name in program.outputs]


def to_float64(inputs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """Float inputs as float64 (aliasing kept); other dtypes unchanged."""
    done: dict[int, torch.Tensor] = {}
    for t in inputs:
        if id(t) not in done:
            done[id(t)] = t.double() if t.dtype == torch.float32 else t
    return tuple(done[id(t)] for t in inputs)


def run_eager64(program: Program, inputs: Sequence[torch.Tensor]) -> list[Any]:
    """The program in float64, its gelu computed without eager's cancellation (``exact64``)."""
    from tests.fuzz.exact64 import Exact64

    with default_dtype(torch.float64):
        module = build_module(program, float64=True)
        with Exact64():
            return run_eager(module, to_float64(inputs))


def _strided_copy(value: Any) -> Any:
    """``value``'s elements in a non-contiguous layout: a step-2 slice of a buffer twice as
    long along the last dim of size > 1 (so that dim is innermost and not unit-stride)."""
    if not isinstance(value, torch.Tensor) or value.numel() < 2 or value.is_sparse:
        return value
    dim = max(d for d in range(value.dim()) if value.shape[d] > 1)
    shape = list(value.shape)
    shape[dim] *= 2
    out = torch.empty(shape, dtype=value.dtype)[(slice(None),) * dim + (slice(None, None, 2),)]
    out.copy_(value)
    return out


class CopiedOperands(TorchDispatchMode):
    """Every op that neither mutates nor aliases reads ``copy`` of each of its tensors (another
    layout of the same elements): eager run again where its kernels choose by layout."""

    copy: Callable[[Any], Any]

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        schema = func._schema
        if not schema.is_mutable and all(r.alias_info is None for r in schema.returns):
            try:
                return func(*tree_map(self.copy, args), **tree_map(self.copy, kwargs))
            except Exception:
                pass
        return func(*args, **kwargs)


class ScalarLoops(CopiedOperands):
    """Every op that neither mutates nor aliases reads its tensors in a non-contiguous layout,
    so eager's element-wise kernels take their scalar loops instead of their vector ones.

    Eager's two loops disagree on some corners (gelu of +inf is NaN on the vector loop and
    inf on the scalar one; softshrink's zero is +0.0 in vector lanes and -0.0 in the
    scalar tail; hardtanh_backward of a NaN input): where this run and the plain one
    differ, the difference is eager's own and the oracle counts it as noise (``alternates``
    in ``tolerance.py``)."""

    copy = staticmethod(_strided_copy)


def run_eager_scalar_loops(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with ScalarLoops():
        return run_eager(module, inputs)


class NanSignsFlipped(TorchDispatchMode):
    """Every NaN's sign bit read the other way: ``signbit(NaN)`` and ``copysign(x, NaN)``.

    IEEE 754 leaves the sign of a NaN result unspecified, and eager's own kernels disagree
    about it (``sigmoid(nan)`` is -nan, ``maximum(-nan, 0.0)`` +nan, ``clamp`` keeps the sign,
    ``maximum(minimum(x, hi), lo)`` may not): an output that depends on a NaN's sign is
    noise, not an answer.  Where this run and the plain one differ, the oracle counts the
    difference as eager's own (``alternates`` in ``tolerance.py``)."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        packet = func.overloadpacket
        if packet is torch.ops.aten.signbit and args and isinstance(args[0], torch.Tensor) \
                and args[0].is_floating_point():
            x = args[0]
            return torch.logical_xor(func(*args, **kwargs), torch.isnan(x))
        if packet is torch.ops.aten.copysign and len(args) >= 2 and isinstance(args[1], torch.Tensor) \
                and args[1].is_floating_point():
            sign = args[1]
            return func(args[0], torch.where(torch.isnan(sign), torch.neg(sign), sign), *args[2:], **kwargs)
        return func(*args, **kwargs)


def run_eager_nan_signs_flipped(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with NanSignsFlipped():
        return run_eager(module, inputs)


class GemmZeroSignsFlipped(TorchDispatchMode):
    """Every zero a matrix product or convolution makes, with its sign the other way.

    The sign of a zero sum of products depends on where the sum starts: eager's ``mm`` of
    ``-3.75 * 0.0`` with K = 1 is -0.0, its ``mv`` of the same +0.0 (it accumulates from
    +0), and a compiled GEMM either.  An output that depends on it (``atan2(y, x)`` at
    ``x = +-0``, fuzz seed 42 program 114) is noise, not an answer; where this run and the
    plain one differ, the oracle counts the difference as eager's own (``alternates``)."""

    OPS = frozenset({"mm", "bmm", "addmm", "mv", "dot", "vdot", "baddbmm", "addmv", "addbmm", "addr",
                     "convolution", "_convolution", "_addmm_activation"})

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in self.OPS and isinstance(out, torch.Tensor) and out.is_floating_point():
            return torch.where(out == 0, torch.neg(out), out)
        return out


def run_eager_gemm_zero_signs_flipped(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with GemmZeroSignsFlipped():
        return run_eager(module, inputs)

