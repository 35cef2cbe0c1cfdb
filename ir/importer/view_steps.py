"""How a view was made from its base, so that it can be replayed on a new base and, when it
covers a provable set of the base's elements, a new value of the view can be scattered back.

This is the knowledge torch's functionalization keeps per view (its ``ViewMeta``): the
TorchScript importer records one :class:`ViewStep` per view op (see :mod:`aliasing`), and
after an in-place write through a view it rebuilds the base with the inverse op of each
step, from the innermost view out:

=============================================  ==============================================
view op                                        inverse (new base from the old one and ``src``)
=============================================  ==============================================
``slice``, ``narrow``, a ``split``/``chunk``   ``slice_scatter``
piece
``select``, an ``unbind`` piece                ``select_scatter``
``diagonal``                                   ``diagonal_scatter``
``transpose``/``t``/``permute``/``movedim``    ``permute`` by the inverse permutation
/``swapaxes``/``mT``
``view``/``reshape``/``flatten``/``unflatten``  ``reshape`` to the base's shape (row-major
/``squeeze``/``unsqueeze``/``view_as`` ...     reinterpretation; ``reshape`` and ``flatten``
                                               only where they are a view for *every* layout)
``alias``/``detach``                           ``src`` itself
``as_strided`` of a contiguous fresh root,     ``as_strided_scatter``
non-overlapping
``expand``, ``unfold``, overlapping            none: a write through them is refused (several
``as_strided``                                 view elements are one base element)
=============================================  ==============================================

Every step is checked against torch on the example: applying it to the base's example must
give a tensor with the view's exact size, strides and offset in the same storage, else the
op is treated as an alias whose relation to its base is unknown.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from ziggurat.dialects.torch.schema import OpSchema, parse_schema, registered_schemas, torch_overload
from ziggurat.ir.importer.values import Dynamic, is_static


class Inverse(enum.Enum):
    SLICE = "slice_scatter"
    SELECT = "select_scatter"
    DIAGONAL = "diagonal_scatter"
    PERMUTE = "permute"
    RESHAPE = "reshape"
    IDENTITY = "identity"
    AS_STRIDED = "as_strided_scatter"
    NONE = "none"


@dataclass(frozen=True)
class ViewStep:
    """One view op applied to a base: ``schema`` with the static ``args`` (every argument but
    the base, lists frozen to tuples), and how to scatter a new view value back."""

    schema: OpSchema
    args: tuple[tuple[str, Any], ...]
    inverse: Inverse
    #: the scatter op's static arguments (dim/start/end/step, the inverse permutation, ...)
    inverse_args: tuple[tuple[str, Any], ...] = ()
    #: why a write through this view cannot be functionalized (``inverse`` is NONE)
    refuse: str = ""

    @property
    def op(self) -> str:
        return self.schema.key

    def call_args(self, base: Any) -> dict[str, Any]:
        """The op's arguments by name, with ``base`` for the tensor it views."""
        args = {self.schema.args[0].name: base}
        args.update((name, _thaw(value)) for name, value in self.args)
        return args

    def apply(self, base: torch.Tensor) -> torch.Tensor:
        """The view of an example tensor, as torch makes it."""
        if self.inverse is Inverse.IDENTITY:
            return base
        return call(self.schema, self.call_args(base))


#: Emits one op (schema, arguments by name, the result's example) at the importer's insertion
#: point and returns its result.
Emit = Callable[[OpSchema, Mapping[str, Any], torch.Tensor], Dynamic]


def replay(step: ViewStep, base: Dynamic, emit: Emit) -> Dynamic:
    """The view ``step`` makes of ``base`` (a new op, or ``base`` for an identity)."""
    if step.inverse is Inverse.IDENTITY:
        return base
    return emit(step.schema, step.call_args(base), step.apply(base.example))


def scatter(step: ViewStep, base: Dynamic, src: Dynamic, example: torch.Tensor, emit: Emit) -> Dynamic:
    """The new value of ``base`` when its view ``step`` now holds ``src`` (``example``: the
    new base's example)."""
    inverse_args = {name: _thaw(value) for name, value in step.inverse_args}
    if step.inverse is Inverse.IDENTITY:
        return src
    if step.inverse is Inverse.PERMUTE:
        return emit(schema_of("aten::permute"), {"self": src, **inverse_args}, example)
    if step.inverse is Inverse.RESHAPE:
        return emit(schema_of("aten::reshape"), {"self": src, "shape": list(base.example.shape)}, example)
    if step.inverse is Inverse.NONE:
        raise AssertionError(f"no inverse for {step.op}: {step.refuse}")
    return emit(schema_of(f"aten::{step.inverse.value}"), {"self": base, "src": src, **inverse_args}, example)


# -- describing a view op -------------------------------------------------------------------
def describe(schema: OpSchema, args: Mapping[str, Any], base: torch.Tensor,
             outputs: Sequence[torch.Tensor], fixed_layout: bool = False) -> list[ViewStep] | None:
    """One step per output of a view op of ``base`` (``outputs``: the op's example results),
    or None when the op is not a view this module knows, an argument is not static, or the
    step does not reproduce torch's view of the example. ``fixed_layout``: the base's strides
    are the example's whatever the caller's layouts (a view of a fresh contiguous tensor), so
    an op that is a view only for some strides (``reshape``) is one when the example's is."""
    if schema.key in _SIZE_OF_OTHER and outputs and isinstance(outputs[0], torch.Tensor):
        # view_as(other) is view(other's size): only the size of ``other`` is used
        schema, size_name = schema_of(_SIZE_OF_OTHER[schema.key][0]), _SIZE_OF_OTHER[schema.key][1]
        args = {size_name: list(outputs[0].shape)}
    builder = _DESCRIBERS.get(schema.key)
    static = tuple((spec.name, _freeze(args.get(spec.name, spec.default))) for spec in schema.args[1:])
    if builder is None or not is_static([v for _, v in static]):
        return None
    if any(not isinstance(out, torch.Tensor) for out in outputs):
        return None
    try:
        steps = builder(schema, static, base, list(outputs), fixed_layout)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return None
    if steps is None or len(steps) != len(outputs):
        return None
    for step, out in zip(steps, outputs, strict=True):
        if not same_view(step.apply(base), out):
            return None
    return steps


def same_view(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Both address the same elements of the same storage in the same order."""
    return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.dtype == b.dtype
            and a.shape == b.shape and a.stride() == b.stride() and a.storage_offset() == b.storage_offset())


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def is_overlapping(size: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether two elements of a strided view are one storage element."""
    if math.prod(size) <= 1:
        return False
    dims = sorted((st, sz) for sz, st in zip(size, stride, strict=True) if sz > 1)
    reach = 0  # the largest offset the dims so far can add
    for st, sz in dims:
        if st <= reach:
            return True
        reach += st * (sz - 1)
    return False


Static = tuple[tuple[str, Any], ...]
Describer = Callable[[OpSchema, Static, torch.Tensor, list[torch.Tensor], bool], list[ViewStep] | None]
#: ops that take another tensor only for its size, and the op taking the size
_SIZE_OF_OTHER = {"aten::view_as": ("aten::view", "size"), "aten::reshape_as": ("aten::reshape", "shape"),
                  "aten::expand_as": ("aten::expand", "size")}


def _slice(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    a = dict(static)
    inverse = (("dim", a["dim"]), ("start", a["start"]), ("end", a["end"]), ("step", a["step"]))
    return [ViewStep(schema, static, Inverse.SLICE, inverse)]


def _narrow(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    a = dict(static)
    dim = a["dim"] % base.dim()
    start = a["start"] + base.shape[dim] if a["start"] < 0 else a["start"]
    inverse = (("dim", dim), ("start", start), ("end", start + a["length"]), ("step", 1))
    return [ViewStep(schema, static, Inverse.SLICE, inverse)]


def _select(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    a = dict(static)
    return [ViewStep(schema, static, Inverse.SELECT, (("dim", a["dim"]), ("index", a["index"])))]


def _diagonal(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    return [ViewStep(schema, static, Inverse.DIAGONAL, static)]


def _permutation(schema: OpSchema, static: Static, base: torch.Tensor,
                 outs: list[torch.Tensor], fixed: bool) -> list[ViewStep] | None:
    """Any op that reorders dims: the permutation read off a probe whose sizes all differ."""
    if base.is_complex() and schema.base_name in ("adjoint", "mH"):
        return None  # a conjugate view
    probe = torch.empty(tuple(range(2, 2 + base.dim())), device="meta")
    out = call(schema, {schema.args[0].name: probe, **{n: _thaw(v) for n, v in static}})
    perm = [s - 2 for s in out.shape]
    if sorted(perm) != list(range(base.dim())):
        return None
    inverse = [perm.index(d) for d in range(base.dim())]
    return [ViewStep(schema, static, Inverse.PERMUTE, (("dims", tuple(inverse)),))]


def _reshape(schema: OpSchema, static: Static, base: torch.Tensor,
             outs: list[torch.Tensor], fixed: bool) -> list[ViewStep] | None:
    """Ops that reinterpret the base in row-major order; ``reshape``/``flatten``/``ravel``/
    ``reshape_as`` only where they are a view whatever the base's strides (they copy when the
    strides do not allow a view, so a decision taken on the example's layout would not hold
    for a caller's other layout)."""
    if schema.base_name in ("reshape", "flatten", "ravel") and not fixed:
        if not always_a_view(tuple(base.shape), tuple(outs[0].shape)):
            return None
    return [ViewStep(schema, static, Inverse.RESHAPE)]


def always_a_view(size: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether ``view(new)`` succeeds for every strides of a tensor of ``size``: it does for
    a probe with a gap between every pair of dims (no two dims can merge)."""
    strides: list[int] = []
    step = 1
    for s in reversed(size):
        strides.append(step)
        step *= 2 * max(s, 1)
    probe = torch.empty_strided(size, tuple(reversed(strides)), device="meta")
    try:
        probe.view(new)
    except RuntimeError:
        return False
    return True


def _identity(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    return [ViewStep(schema, static, Inverse.IDENTITY)]


def _as_strided(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    a = dict(static)
    size, stride = list(a["size"]), list(a["stride"])
    if is_overlapping(size, stride):
        return [ViewStep(schema, static, Inverse.NONE, refuse="as_strided makes several view elements "
                         "one element of the base, so the order of the writes decides")]
    offset = a["storage_offset"]
    return [ViewStep(schema, static, Inverse.AS_STRIDED,
                     (("size", tuple(size)), ("stride", tuple(stride)), ("storage_offset", offset)))]


def _overlapping(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    what = "expand" if schema.base_name.startswith("expand") else schema.base_name
    return [ViewStep(schema, static, Inverse.NONE,
                     refuse=f"{what} makes several view elements one element of the base")]


def _pieces(schema: OpSchema, static: Static, base: torch.Tensor,
            outs: list[torch.Tensor], fixed: bool) -> list[ViewStep] | None:
    """``split``/``chunk``/``tensor_split``/``hsplit``...: consecutive slices of one dim, each
    replayed as a ``slice`` of the base (and checked against torch's piece)."""
    if base.dim() == 0:
        return None
    dims = {d for out in outs for d in range(base.dim()) if out.dim() == base.dim() and out.shape[d] != base.shape[d]}
    a = dict(static)
    dim = a["dim"] % base.dim() if isinstance(a.get("dim"), int) else (min(dims) if dims else 0)
    if len(dims - {dim}) or any(out.dim() != base.dim() for out in outs):
        return None
    slice_schema = schema_of("aten::slice.Tensor")
    steps: list[ViewStep] = []
    start = 0
    for out in outs:
        end = start + out.shape[dim]
        args = (("dim", dim), ("start", start), ("end", end), ("step", 1))
        steps.append(ViewStep(slice_schema, args, Inverse.SLICE, args))
        start = end
    return steps


def _unbind(schema: OpSchema, static: Static, base: torch.Tensor, outs: list[torch.Tensor], fixed: bool) -> list[ViewStep]:
    dim = dict(static)["dim"] % base.dim()
    select = schema_of("aten::select.int")
    steps: list[ViewStep] = []
    for i in range(len(outs)):
        args = (("dim", dim), ("index", i))
        steps.append(ViewStep(select, args, Inverse.SELECT, args))
    return steps


_DESCRIBERS: dict[str, Describer] = {
    "aten::slice.Tensor": _slice,
    "aten::narrow": _narrow,
    "aten::select.int": _select,
    "aten::diagonal": _diagonal,
    **{k: _permutation for k in (
        "aten::transpose.int", "aten::t", "aten::permute", "aten::movedim.int", "aten::movedim.intlist",
        "aten::moveaxis.int", "aten::moveaxis.intlist", "aten::swapaxes", "aten::swapdims",
        "aten::numpy_T", "aten::mT", "aten::adjoint", "aten::mH")},
    **{k: _reshape for k in (
        "aten::view", "aten::_unsafe_view", "aten::reshape",
        "aten::flatten.using_ints", "aten::unflatten.int", "aten::unsqueeze", "aten::squeeze",
        "aten::squeeze.dim", "aten::squeeze.dims", "aten::ravel")},
    "aten::alias": _identity,
    "aten::detach": _identity,
    "aten::as_strided": _as_strided,
    "aten::expand": _overlapping,
    "aten::expand_as": _overlapping,
    "aten::unfold": _overlapping,
    **{k: _pieces for k in (
        "aten::split.Tensor", "aten::split.sizes", "aten::split", "aten::split_with_sizes", "aten::chunk",
        "aten::tensor_split.sections", "aten::tensor_split.indices", "aten::hsplit.int", "aten::vsplit.int",
        "aten::dsplit.int", "aten::hsplit.array", "aten::vsplit.array", "aten::dsplit.array",
        "aten::unsafe_split.Tensor", "aten::unsafe_split_with_sizes", "aten::unsafe_chunk")},
    "aten::unbind.int": _unbind,
}


def is_view_op(key: str) -> bool:
    """Whether :func:`describe` knows the op (also ops whose schema does not say they alias,
    as ``_unsafe_view``)."""
    return key in _DESCRIBERS or key in _SIZE_OF_OTHER


# -- helpers -----------------------------------------------------------------------------
@cache
def schema_of(key: str) -> OpSchema:
    return parse_schema(registered_schemas()[key])


def call(schema: OpSchema, args: Mapping[str, Any]) -> Any:
    """Run the op in torch with arguments bound by name."""
    fn = torch_overload(schema)
    if fn is None:
        raise RuntimeError(f"torch has no {schema.key}")
    positional = [args.get(s.name) for s in schema.args if not s.kwarg_only and s.name in args]
    keywords = {s.name: args[s.name] for s in schema.args if s.kwarg_only and s.name in args}
    with torch.no_grad():
        return fn(*positional, **keywords)


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value
