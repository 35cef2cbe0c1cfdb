"""State of lowering one graph: buffers, the schedule, realization and constants."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from xdsl.ir import Operation

from ziggurat.backends.cpu.isa import Isa, vector_width
from ziggurat.backends.cpu.lowering.index import flat_index, loop_vars
from ziggurat.backends.cpu.lowering.nodes import ComputeNode, Node, ScanNode
from ziggurat.backends.cpu.lowering.placement import misplaced_reductions
from ziggurat.backends.cpu.lowering.tensors import (
    BufferValue,
    ElementFn,
    LazyValue,
    Pieces,
    ReductionValue,
    TensorValue,
    begin_trace,
)
from ziggurat.backends.cpu.lowering.values import Buffer, Load, Reduction, ReduceRef, Value, walk

#: A lazy value whose element DAG grows past this many compute nodes is realized.
MAX_INLINE_NODES = 160


@dataclass(frozen=True)
class LoweringOptions:
    isa: Isa
    threads: int
    prepack: bool = True
    fallback: bool = True
    #: schedule loops as one build serves a range of sizes (``KernelOptions.range_schedule``)
    range_schedule: bool = False

    @property
    def vector_width(self) -> int:
        return vector_width(self.isa, 32)


class LoweringContext:
    """Everything the lowerings of one function share."""

    def __init__(self, options: LoweringOptions) -> None:
        self.options = options
        self.nodes: list[Node] = []
        self.buffers: list[Buffer] = []
        self.error_sites: list[str] = []
        self._names: Counter[str] = Counter()
        self._ids = itertools.count()
        self._reductions: dict[int, ReductionValue] = {}
        self.current_op: Operation | None = None
        self.current_origin: str = ""
        #: the eager layout of the function's values, computed when a storage op needs it
        self.eager_layouts: object = None
        #: positions of graph inputs whose storage an op addresses (the runtime checks their offset)
        self.storage_inputs: set[int] = set()

    # -- buffers -------------------------------------------------------------------
    def new_buffer(self, shape: Sequence[int], dtype: torch.dtype, hint: str = "buf", role: str = "temp",
                   index: int = -1) -> Buffer:
        buf = Buffer(f"{hint}{next(self._ids)}", tuple(int(s) for s in shape), dtype, role, index)
        self.buffers.append(buf)
        return buf

    def constant(self, tensor: torch.Tensor, hint: str, attr: object = None) -> Buffer:
        """A weight buffer holding ``tensor`` (contiguous)."""
        buf = Buffer(self.unique_name(hint or "weight").removesuffix("_0"), tuple(tensor.shape), tensor.dtype,
                     "constant")
        self.buffers.append(buf)
        buf.tensor = tensor.detach().contiguous()
        buf.value_attr = attr
        return buf

    def error_site(self, message: str) -> int:
        """A status code for a run-time check; the runtime raises ``message`` for it."""
        self.error_sites.append(message)
        return len(self.error_sites)

    def unique_name(self, base: str) -> str:
        base = _clean(base)[:48] or "kernel"
        n = self._names[base]
        self._names[base] += 1
        return f"{base}_{n}"

    # -- lazy values -----------------------------------------------------------------
    def lazy(self, shape: Sequence[int], dtype: torch.dtype, fn: ElementFn,
             inputs: Sequence[TensorValue] = ()) -> LazyValue:
        """A new element-wise value named after the op being lowered (and its fused inputs)."""
        origins: list[str] = []
        for t in inputs:
            if t.buffer is None:
                origins += [o for o in t.origins if o not in origins]
        if self.current_origin and self.current_origin not in origins:
            origins.append(self.current_origin)
        return LazyValue(shape, dtype, fn, origins)

    def reduction(self, kind: str, dtype: torch.dtype, out_shape: Sequence[int], red_shape: Sequence[int],
                  body: object, inputs: Sequence[TensorValue] = ()) -> ReductionValue:
        origins: list[str] = []
        for t in inputs:
            if t.buffer is None:
                origins += [o for o in t.origins if o not in origins]
        if self.current_origin and self.current_origin not in origins:
            origins.append(self.current_origin)
        red = Reduction(kind, dtype, tuple(out_shape), tuple(red_shape), body, tuple(origins))  # type: ignore[arg-type]
        box = ReductionValue(red)
        self._reductions[red.uid] = box
        return box

    # -- realization ---------------------------------------------------------------------
    def realize(self, tv: TensorValue, hint: str = "buf") -> Buffer:
        """The buffer holding ``tv``, adding the kernel that computes it if needed."""
        if tv.buffer is not None:
            return tv.buffer
        buf = self.new_buffer(tv.shape, tv.dtype, hint)
        self._compute_into(tv, buf)
        return buf

    def realize_output(self, tv: TensorValue, index: int) -> Buffer:
        """The buffer of graph output ``index``: ``tv`` computed there, or the intermediate
        buffer already holding it (promoted to an output), or a copy (inputs, weights, a
        buffer returned twice)."""
        src = tv.buffer
        if src is not None and src.role == "temp":
            src.role, src.index = "output", index
            return src
        out = self.new_buffer(tv.shape, tv.dtype, "out", role="output", index=index)
        if src is not None:
            self._add_compute(out, lambda idx: Load(src, idx), ("copy",))
        else:
            self._compute_into(tv, out)
        return out

    def _compute_into(self, tv: TensorValue, out: Buffer) -> None:
        if isinstance(tv, LazyValue):
            self._add_compute(out, tv.fn, tv.origins, tv.pieces)
            tv.realized, tv.realized_order = out, len(self.nodes) - 1
        elif isinstance(tv, ReductionValue):
            red = tv.reduction
            self._add_compute(out, lambda idx: ReduceRef(red, idx), red.origins)
            tv.realized, tv.realized_order = out, len(self.nodes) - 1
        else:  # pragma: no cover - every TensorValue kind is handled above
            raise TypeError(f"cannot realize {type(tv).__name__}")

    def _add_compute(self, out: Buffer, fn: ElementFn, origins: Sequence[str], pieces: Pieces | None = None) -> None:
        self._realize_misplaced(out.shape, fn)
        name = self.unique_name(kernel_base_name(origins))
        self.nodes.append(ComputeNode(name, out, fn, tuple(origins), pieces))

    def _realize_misplaced(self, shape: Sequence[int], fn: ElementFn) -> None:
        if any(n == 0 for n in shape):
            return
        for _ in range(64):
            begin_trace()
            vars_, index = loop_vars(shape, "v")
            root = fn(index)
            bad = sorted(misplaced_reductions(vars_, root), key=lambda r: r.reduction.uid)
            if not bad:
                return
            progress = False
            for ref in bad:
                box = self._reductions.get(ref.reduction.uid)
                if box is not None and box.realized is None:
                    self.realize(box, "red")
                    progress = True
            if not progress:
                raise RuntimeError("a reduction cannot be placed and has no box to realize")  # pragma: no cover
        raise RuntimeError("reduction placement did not converge")  # pragma: no cover

    def add_scan(self, src: TensorValue, dim: int, kind: str, dtype: torch.dtype) -> BufferValue:
        src = self._without_reductions(src)
        out = self.new_buffer(src.shape, dtype, "scan")
        origins = tuple(src.origins if src.buffer is None else ()) + (self.current_origin,)
        self.nodes.append(ScanNode(self.unique_name(kernel_base_name(origins)), out, src, dim, kind, origins))
        return BufferValue(out)

    def _without_reductions(self, tv: TensorValue) -> TensorValue:
        """``tv``, with every reduction its elements read realized first: a scan kernel inlines
        its source but has no loops to compute a reduction in (``cumprod(x.sum(1))``)."""
        if tv.buffer is not None or tv.numel == 0:
            return tv
        _, root = tv.trace()
        refs = [n for n in walk(root) if isinstance(n, ReduceRef)]
        boxes = [self._reductions.get(r.reduction.uid) for r in refs]
        if any(box is None for box in boxes):
            return BufferValue(self.realize(tv, "scan_src"))
        for box in boxes:
            if box is not None and box.buffer is None:
                self.realize(box, "red")
        if isinstance(tv, LazyValue):
            tv.clear_memo()
        return tv

    # -- views for library calls ---------------------------------------------------------
    def strided_view(self, tv: TensorValue) -> tuple[Buffer, int, tuple[int, ...]] | None:
        """``(buffer, offset, strides)`` when ``tv`` is an affine view of a buffer."""
        if tv.buffer is not None:
            return tv.buffer, 0, contiguous_strides(tv.shape)
        if tv.numel == 0:
            return None
        vars_, root = tv.trace()
        if not isinstance(root, Load) or root.guards:
            return None
        flat = flat_index(root.subs, root.buffer.shape)
        strides: list[int] = []
        for v in vars_:
            c = flat.coeff(v)
            if c is None:
                return None
            strides.append(c)
        rest = flat
        for v in vars_:
            rest = rest.without(v)
        if not rest.is_constant():
            return None
        return root.buffer, rest.const, tuple(strides)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides: list[int] = []
    s = 1
    for n in reversed(shape):
        strides.append(s)
        s *= n
    return tuple(reversed(strides))


def kernel_base_name(origins: Sequence[str]) -> str:
    names = [o for o in dict.fromkeys(origins) if o]
    if not names:
        return "kernel"
    if len(names) == 1:
        return names[0]
    return "fused_" + "_".join(names[:4])


def _clean(text: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_")


def scalar_value(value: Value) -> Value:
    return value
