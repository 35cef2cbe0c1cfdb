"""``kernel-fuse``: producer/consumer fusion of ``kernel`` ops, and why each kept result is realized.

    ziggurat-opt model.mlir -p 'graph-opt,prepack-weights,convert-fused-to-kernel,kernel-fuse'

A kernel whose result is read by exactly one other kernel is merged into that reader: the
reader's body computes the producer's elements where it needs them, and the value is never
written to memory.  Each rule below can keep a value in memory instead ("realize" it); the
first that applies names the reason, which ``realize`` records on the producer:

==========================  ============================================================
reason                      when
==========================  ============================================================
graph output                the function returns it
draws random numbers        its producer draws from torch's generator: it keeps its place
written by a library call   its producer is a GEMM or a convolution (``written by torch``:
                            a fallback)
written by a scan           its producer is a scan (each element depends on the previous)
read twice                  it has more than one use (recomputing it would cost more)
combines a window of N      its producer combines N >= 8 elements per output element (a
                            reader would recompute the window for each element it reads),
                            unless the reader maps each element to the same index and reads
                            nothing else (a cast, an activation): it becomes the epilogue
feeds a library call        its reader is a GEMM or a convolution (``feeds torch``: a
                            fallback), which lays it out as it needs
too big to inline           the merged kernel would hold more than 64 ops
==========================  ============================================================

A view (a kernel that only re-indexes its input) is never realized for being read twice:
each reader gets its own copy, which is index arithmetic.  A reduction read once is merged
into its reader, which then computes the reduction and applies the rest as its epilogue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir.affine import AffineMap
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

import torch

from ziggurat.backends.cpu.convert_fused_to_kernel import replace_op
from ziggurat.dialects.torch import LiteralOp
from ziggurat.dialects.torch.ops_base import AtenOp
from ziggurat.dialects.torch.schema import torch_overload
from ziggurat.dialects.kernel import (
    CompositeOp,
    ConvOp,
    FallbackOp,
    GatherOp,
    GemmOp,
    KernelOp,
    PointwiseOp,
    ReductionOp,
    ScanOp,
    YieldOp,
)

#: A producer that combines at least this many elements per output element is realized.
REALIZED_WINDOW = 8
#: A merged kernel may hold at most this many ops.
MAX_FUSED_OPS = 64
#: Kernels whose results a library call (or torch) writes to memory.
LIBRARY_KERNELS = (GemmOp, ConvOp, FallbackOp)
#: Which kind a merged kernel has: the later in this list of its two parts.
KIND_ORDER: tuple[type[KernelOp], ...] = (PointwiseOp, GatherOp, ScanOp, ReductionOp, CompositeOp)


def window_of(kernel: KernelOp) -> int:
    """Elements combined per output element by ``kernel`` (1 when it combines none)."""
    window = getattr(kernel, "window", None)
    return window.value.data if isinstance(window, IntegerAttr) else 1


def is_view(kernel: KernelOp) -> bool:
    return isinstance(kernel, PointwiseOp) and kernel.view is not None and not draws_random_numbers(kernel)


# -- the realization rules: (producer, value, reader) -> reason or None ---------------------
Rule = Callable[[KernelOp, SSAValue, Operation], "str | None"]


def draws_random_numbers(kernel: KernelOp) -> bool:
    """Whether an op of ``kernel`` may draw from torch's generator (dropout in training, rrelu):
    such a kernel keeps its place among the others that do, and is never copied."""
    for op in kernel.computed_ops():
        overload = torch_overload(op.op_schema) if isinstance(op, AtenOp) else None
        if overload is not None and torch.Tag.nondeterministic_seeded in overload.tags:
            return True
    return False


def _draws_random_numbers(producer: KernelOp, _v: SSAValue, _r: Operation) -> str | None:
    # merging moves a producer's ops to its reader's place
    return "draws random numbers" if draws_random_numbers(producer) else None


def _graph_output(_p: KernelOp, value: SSAValue, _r: Operation) -> str | None:
    return "graph output" if any(isinstance(u.operation, func.ReturnOp) for u in value.uses) else None


def reads_of(value: SSAValue) -> int:
    """How many times ``value`` is read: a kernel reads it as often as its body reads the
    argument that stands for it."""
    count = 0
    for use in value.uses:
        reader = use.operation
        count += len(list(reader.block.args[use.index].uses)) if isinstance(reader, KernelOp) else 1
    return count


def _read_twice(producer: KernelOp, value: SSAValue, reader: Operation) -> str | None:
    readers = {u.operation for u in value.uses}
    if is_view(producer) and readers == {reader}:
        return None  # index arithmetic, recomputed where it is read
    return "read twice" if reads_of(value) > 1 else None


def _library_producer(producer: KernelOp, _v: SSAValue, _r: Operation) -> str | None:
    if isinstance(producer, FallbackOp):
        return "written by torch"
    return "written by a library call" if isinstance(producer, LIBRARY_KERNELS) else None


def _scan_producer(producer: KernelOp, _v: SSAValue, _r: Operation) -> str | None:
    return "written by a scan" if isinstance(producer, ScanOp) else None


def _lays_out_its_operand(value: SSAValue) -> bool:
    """Whether a convolution or a GEMM by constant weights reads ``value``: its lowering
    realizes an operand computed by an element-wise kernel in the layout its kernel reads best
    (an AMX linear's A in rows one cache line wider, ``gemm_bf16.bf16_row_stride``), which a
    window kernel's own output buffer does not have."""
    for use in value.uses:
        reader = use.operation
        if isinstance(reader, ConvOp):
            return True
        if isinstance(reader, GemmOp) and len(reader.inputs) > 1 and isinstance(reader.inputs[1].owner, LiteralOp):
            return True
    return False


def elementwise_epilogue(value: SSAValue, reader: Operation) -> bool:
    """Whether ``reader`` only maps each element of ``value`` to the element at the same index
    (a cast, an activation, an op with a 0-d tensor such as ``+ 3.0``): merged into the kernel
    that makes ``value``, it runs on each element where that kernel stores it (softmax's output
    cast to bf16 for attention's second matmul).  Not when a weighted GEMM or a convolution
    reads its result (its own layout)."""
    if not isinstance(reader, PointwiseOp) or reader.view is not None or draws_random_numbers(reader):
        return False
    maps = _maps_of(reader)
    tensors = [v for v in reader.inputs if isinstance(v.type, TensorType)]
    others = [v for v in tensors if v is not value]
    if maps is None or tensors.count(value) != 1 or any(v.type.get_shape() for v in others):  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        return False
    result = reader.outputs[0].type
    if not isinstance(value.type, TensorType) or not isinstance(result, TensorType):
        return False
    if _lays_out_its_operand(reader.outputs[0]):
        return False
    identity = AffineMap.identity(maps[value].num_dims)
    return (maps[value] == identity and maps[reader.outputs[0]] == identity
            and value.type.get_shape() == result.get_shape())


def _library_reader(_p: KernelOp, _v: SSAValue, reader: Operation) -> str | None:
    if isinstance(reader, FallbackOp):
        return "feeds torch"
    return "feeds a library call" if isinstance(reader, LIBRARY_KERNELS) else None


def _window(producer: KernelOp, value: SSAValue, reader: Operation) -> str | None:
    if isinstance(producer, ReductionOp) and len(producer.computed_ops()) == 1:
        return None  # a lone reduction: the reader computes it
    if elementwise_epilogue(value, reader):
        return None  # the reader's ops become the window's epilogue: each element computed once
    window = window_of(producer)
    return f"combines a window of {window}" if window >= REALIZED_WINDOW else None


def _too_big(producer: KernelOp, _v: SSAValue, reader: Operation) -> str | None:
    if isinstance(reader, KernelOp):
        ops = len(producer.computed_ops()) + len(reader.computed_ops())
        if ops > MAX_FUSED_OPS:
            return f"too big to inline ({ops} ops)"
    return None


RULES: tuple[Rule, ...] = (_graph_output, _draws_random_numbers, _library_producer, _scan_producer, _read_twice, _window,
                           _library_reader, _too_big)


def realize_reason(producer: KernelOp, value: SSAValue, reader: Operation) -> str | None:
    for rule in RULES:
        reason = rule(producer, value, reader)
        if reason is not None:
            return reason
    return None


# -- merging ----------------------------------------------------------------------------------
def _merged_class(a: KernelOp, b: KernelOp) -> type[KernelOp]:
    rank = {cls: i for i, cls in enumerate(KIND_ORDER)}
    return max(type(a), type(b), key=lambda c: rank.get(c, -1))


def _merged_properties(cls: type[KernelOp], producer: KernelOp, reader: KernelOp) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {}
    for part in (producer, reader):
        if type(part) is cls:
            props.update({k: v for k, v in part.properties.items() if k not in ("realize", "view", "indexing_maps")})
    if cls in (ReductionOp, CompositeOp):
        windows = [window_of(p) for p in (producer, reader)]
        if cls is ReductionOp or any(isinstance(getattr(p, "window", None), IntegerAttr) for p in (producer, reader)):
            props["window"] = IntegerAttr(max(windows), i64)
    return props


def _result_index(kernel: KernelOp, value: SSAValue) -> int:
    return next(i for i, r in enumerate(kernel.outputs) if r is value)


def merge(producer: KernelOp, value: SSAValue, reader: KernelOp) -> KernelOp:
    """One kernel computing ``reader`` with ``producer``'s body inlined for ``value``."""
    inputs: list[SSAValue] = []
    for v in [*reader.inputs, *producer.inputs]:
        if v is not value and v not in inputs:
            inputs.append(v)
    block = Block(arg_types=[v.type for v in inputs])
    outer: dict[SSAValue, SSAValue] = {}
    for arg, v in zip(block.args, inputs, strict=True):
        arg.name_hint = v.name_hint
        outer[v] = arg
    mapping: dict[SSAValue, SSAValue] = {a: outer[v] for a, v in zip(producer.block.args, producer.inputs, strict=True)}
    for op in producer.computed_ops():
        block.add_op(op.clone(value_mapper=mapping))
    produced = producer.yielded()[_result_index(producer, value)]
    mapping = {a: (mapping[produced] if v is value else outer[v])
               for a, v in zip(reader.block.args, reader.inputs, strict=True)}
    for op in reader.computed_ops():
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(YieldOp([mapping[v] for v in reader.yielded()]))
    cls = _merged_class(producer, reader)
    props = _merged_properties(cls, producer, reader)
    maps = composed_maps(producer, value, reader, inputs)
    if cls is PointwiseOp and maps is not None:
        props["indexing_maps"] = ArrayAttr([AffineMapAttr(m) for m in maps])
    merged = cls(inputs, [r.type for r in reader.outputs], Region(block), props)
    return merged


def _maps_of(kernel: KernelOp) -> dict[SSAValue, AffineMap] | None:
    """Each tensor input's index map, and the result's under the key of the kernel's first result."""
    if not isinstance(kernel, PointwiseOp) or kernel.indexing_maps is None or len(kernel.outputs) != 1:
        return None
    tensors = [v for v in kernel.inputs if isinstance(v.type, TensorType)]
    maps = [m.data for m in kernel.indexing_maps.data]
    out: dict[SSAValue, AffineMap] = dict(zip(tensors, maps, strict=False))
    out[kernel.outputs[0]] = maps[-1]
    return out


def composed_maps(producer: KernelOp, value: SSAValue, reader: KernelOp,
                  inputs: list[SSAValue]) -> list[AffineMap] | None:
    """The merged kernel's index maps: a producer input is read at its map composed with the
    reader's map of ``value`` (None when either kernel has none, the producer's result map is
    not the identity, or an input read by both is read at different indices)."""
    p_maps, r_maps = _maps_of(producer), _maps_of(reader)
    if p_maps is None or r_maps is None or value not in r_maps:
        return None
    p_out = p_maps[producer.outputs[0]]
    if p_out != AffineMap.identity(p_out.num_dims):
        return None
    through = r_maps[value]
    maps: list[AffineMap] = []
    for v in inputs:
        if not isinstance(v.type, TensorType):
            continue
        candidates = {r_maps[v]} if v in r_maps else set[AffineMap]()
        if v in p_maps:
            candidates.add(p_maps[v].compose(through))
        if len(candidates) != 1:
            return None
        maps.append(candidates.pop())
    maps.append(r_maps[reader.outputs[0]])
    return maps


def _split_view(producer: KernelOp, value: SSAValue, reader: Operation) -> None:
    """Give ``reader`` its own copy of the view ``producer``."""
    copy = producer.clone()
    assert producer.parent is not None
    producer.parent.insert_op_after(copy, producer)
    index = _result_index(producer, value)
    for use in list(value.uses):
        if use.operation is reader:
            reader.operands[use.index] = copy.outputs[index]


def _fuse_one(reader: KernelOp) -> KernelOp | None:
    """``reader`` merged with one of its producers (None: no producer can be merged)."""
    for value in reader.inputs:
        producer = value.owner
        if not isinstance(producer, KernelOp) or producer.parent is not reader.parent or len(producer.outputs) != 1:
            continue
        others = {u.operation for u in value.uses} - {reader}
        if is_view(producer) and others and not _graph_output(producer, value, reader):
            _split_view(producer, value, reader)
            return reader
        if realize_reason(producer, value, reader) is not None:
            continue
        merged = merge(producer, value, reader)
        replace_op(reader, merged)
        producer.detach()
        producer.erase()
        return merged
    return None


def fuse_function(fn: func.FuncOp) -> None:
    for op in list(fn.body.block.ops):
        if not isinstance(op, KernelOp) or op.parent is None:
            continue
        kernel: KernelOp | None = op
        while kernel is not None and not isinstance(kernel, LIBRARY_KERNELS):
            kernel = _fuse_one(kernel)
    annotate_realization(fn)


def annotate_realization(fn: func.FuncOp) -> None:
    """``realize`` on every kernel: the reason each result is kept in memory ("" for none)."""
    for op in fn.body.block.ops:
        if not isinstance(op, KernelOp):
            continue
        reasons: list[str] = []
        for value in op.outputs:
            readers = [u.operation for u in value.uses]
            reason = ""
            for reader in readers or [op]:
                reason = (realize_reason(op, value, reader) or "") if readers else "unused"
                if reason:
                    break
            reasons.append(reason)
        op.realize = ArrayAttr([StringAttr(r) for r in reasons])


@dataclass(frozen=True)
class KernelFuse(ModulePass):
    name = "kernel-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if "loop.isa" not in fn.attributes:
                fuse_function(fn)
                fn.attributes["kernel.level"] = StringAttr("fused")
