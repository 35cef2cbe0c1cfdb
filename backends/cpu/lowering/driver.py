"""Lowering one torch-level function to the loop level (the body of ``convert-torch-to-loop``).

Walk the ops in order; each op with a native lowering becomes lazy values, buffers or
schedule nodes, every other op a :class:`FallbackNode` (run through torch between
native segments) - or, with ``fallback=False``, an :class:`OpReport`, all of them
raised together as one :class:`UnsupportedOpsError`.  A lazy value read more than once
(or too big to inline) is realized where it is defined; graph outputs are realized
into output buffers.  The schedule is then emitted as loop IR.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.cpu.loopgen.function import FunctionBuilder, new_function
from ziggurat.backends.cpu.loopgen.kernel import KernelOptions
from ziggurat.backends.cpu.loopgen.types import HALF_FLOATS, LOOP_DTYPES, memref
from ziggurat.backends.cpu.lowering.args import LoweringArgs, RuntimeScalar
from ziggurat.backends.cpu.lowering.context import MAX_INLINE_NODES, LoweringContext, LoweringOptions
from ziggurat.backends.cpu.lowering.constants import literal_value
from ziggurat.backends.cpu.lowering.layout import realize_channels_last, realize_preferred
from ziggurat.backends.cpu.lowering.nodes import FallbackNode, GemmNode, Node, RuntimeOperand, StaticOperand
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowerings
from ziggurat.backends.cpu.lowering.storage import check_storage_fallback
from ziggurat.backends.cpu.lowering.tensors import (
    BufferValue,
    LazyValue,
    ReductionValue,
    TensorValue,
    schedule_horizon,
)
from ziggurat.backends.cpu.lowering.values import Buffer
from ziggurat.dialects.fused.layouts import INT8_LAYOUTS
from ziggurat.dialects.fused import MatmulOp
from ziggurat.backends.cpu.lowering.conv_native import native_depthwise
from ziggurat.dialects.torch import AtenOp, LiteralOp
from ziggurat.dialects.torch.checked_scalars import overflowing_scalar
from ziggurat.dialects.torch.op_registry import op_key, reasons_text, schema_text, type_problem
from ziggurat.ir.errors import OpReport, UnsupportedOpsError, ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.rewriting import declined_reason
from ziggurat.ir.signature import enclosing_function
from ziggurat.passes.annotate_symbolic_shapes import SHAPES_ATTR
from ziggurat.ir.symbolic_shapes import declared_symbols
from ziggurat.ir.types import DATA_DEPENDENT_SHAPE, dtype_of, shape_of, torch_only_reason

log = logging.getLogger("ziggurat")

#: A lazy value reading a reduction over at least this many elements is realized where defined.
REALIZED_WINDOW = 8

#: Element types the CPU backend computes natively (every other dtype runs through torch).
CLAIMED_DTYPES = (torch.float32, torch.int64, torch.int32, torch.bool)


@dataclass
class LoweringResult:
    function: func.FuncOp
    native: Counter[str] = field(default_factory=Counter[str])
    fallback: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    reports: list[OpReport] = field(default_factory=list[OpReport])


def _torch_only_problem(op: Operation) -> str | None:
    """Why ``op`` must run through torch whatever its lowering: an operand or result of a
    dtype only torch computes (complex, float8, quantized), a number eager raises on
    (``checked_scalars``), or a run-time size: data-dependent,
    or a declared shape symbol (the CPU backend builds static sizes; ``compile`` specializes)."""
    problem = type_problem(op, lambda _role, _index, ty: torch_only_reason(ty)) or overflowing_scalar(op)
    if problem is None or DATA_DEPENDENT_SHAPE not in problem:
        return problem
    fn = enclosing_function(op)
    if fn is None or declared_symbols(fn) is None:
        return problem
    shapes = op.attributes.get(SHAPES_ATTR)
    if shapes is not None and _UNBACKED.search(str(shapes)):
        return problem
    what = "a size declared dynamic (a shape symbol)" if shapes is not None else \
        "a run-time size (a shape symbol, or data-dependent)"
    return f"{what}: the CPU backend lowers static sizes only (compile(dynamic_shapes=...) builds one per size)"


#: an unbacked (data-dependent) size in a symbolic shape: ``u0``
_UNBACKED = re.compile(r"\bu\d+\b")


def _native_dtype_problem(_role: str, _index: int, ty: Attribute) -> str | None:
    """Why a value of type ``ty`` keeps its op from being lowered natively (None: it does not)."""
    if isinstance(ty, TensorType):
        try:
            dt = dtype_of(ty)
        except TypeError:
            return f"element type {ty.get_element_type()} is not supported natively"
        if dt not in CLAIMED_DTYPES:
            return f"dtype {dt} is not computed natively (native dtypes: float32, int64, int32, bool)"
    return None


#: Casts that convert between float32 and bfloat16 or float16 natively: a 16-bit float is
#: stored (its bits) and converted, never computed in (``codegen/bf16.py``, ``codegen/f16.py``;
#: ``widen_half_floats`` computes their ops in float32).
HALF_FLOAT_CASTS = frozenset({"aten::_to_copy", "aten::to.dtype", "aten::to.dtype_layout", "aten::type_as"})


def is_half_float_cast(op: Operation) -> bool:
    """A cast between float32 and bfloat16 or float16 (either way), or of one of those to itself
    (a copy: Bart's ``to(dtype_layout)`` of a bf16 tensor to bf16)."""
    if op_key(op) not in HALF_FLOAT_CASTS:
        return False
    types = [v.type for v in (*op.operands, *op.results)]
    if not types or not all(isinstance(t, TensorType) for t in types):
        return False
    dtypes = {dtype_of(t) for t in types}
    return any(dtypes in ({torch.float32, half}, {half}) for half in HALF_FLOATS)  # {half}: a copy


#: GEMMs the bf16 kernels compute (``lowering/gemm_bf16.py``) when every operand is bf16.
BF16_GEMMS = frozenset({"fused.linear", "fused.matmul", "fused.conv2d", "aten::linear", "aten::matmul", "aten::mm"})


def is_bf16_gemm(op: Operation) -> bool:
    """A GEMM whose tensors are all bf16 (the lowering may still decline it: a computed weight),
    or a ``fused.matmul`` of bf16 operands with a float32 result (``widen-half-floats``' bf16
    products of widened operands)."""
    if op_key(op) not in BF16_GEMMS:
        return False
    if isinstance(op, MatmulOp) and op.bf16_products_in_float32():
        return True
    types = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
    return bool(types) and all(dtype_of(t) == torch.bfloat16 for t in types)


def is_int8_gemm(op: Operation) -> bool:
    """A ``fused.linear`` or 1x1 ``fused.conv2d`` whose weight ``prepack-weights`` packed as
    int8 (``KN32n4k``): its int8 operand is read by the int8 kernel only
    (``lowering/gemm_int8.py``)."""
    layout = op.properties.get("weight_layout")
    return op.name in ("fused.linear", "fused.conv2d") and isinstance(layout, StringAttr) and layout.data in INT8_LAYOUTS


#: Ops that only move elements (views, layout changes, copies, concatenation): a bf16 or float16
#: element is copied as its 16 bits, bit for bit, with no arithmetic.
HALF_FLOAT_MOVES = frozenset({
    "aten::view", "aten::reshape", "aten::_unsafe_view", "aten::transpose.int", "aten::permute",
    "aten::select.int", "aten::slice.Tensor", "aten::squeeze.dim", "aten::squeeze", "aten::unsqueeze",
    "aten::expand", "aten::clone", "aten::contiguous", "aten::t", "aten::flatten.using_ints",
    "aten::cat", "aten::alias", "aten::narrow", "aten::movedim.int", "aten::unflatten.int",
    "aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar",
    "aten::masked_fill.Scalar", "aten::masked_fill.Tensor", "aten::unbind.int", "aten::split.Tensor",
    "aten::split_with_sizes", "aten::chunk", "aten::stack", "aten::flip", "aten::roll",
    "aten::repeat", "aten::constant_pad_nd", "aten::pad",
    "aten::tril", "aten::triu", "aten::pixel_shuffle", "aten::pixel_unshuffle", "aten::diagonal", "aten::diag", "aten::im2col",
    "aten::diag_embed", "aten::unfold", "aten::fliplr", "aten::flipud", "aten::expand_as", "aten::movedim.intlist",
    "aten::broadcast_tensors", "aten::meshgrid.indexing", "aten::meshgrid", "aten::select_scatter",
    "aten::slice_scatter", "aten::diagonal_scatter", "aten::zeros_like", "aten::ones_like", "aten::full_like",
    "aten::repeat_interleave.self_int", "aten::tile",
    # storage-addressing views: index arithmetic on the storage root (``storage.py``)
    "aten::as_strided", "aten::as_strided_copy", "aten::_reshape_alias",
})
#: Moves that read integer indices besides their 16-bit operands.
HALF_FLOAT_INDEXED_MOVES = frozenset({
    "aten::gather", "aten::take_along_dim", "aten::index_select", "aten::embedding", "aten::scatter.src",
    "aten::index_put", "aten::index.Tensor", "aten::narrow.Tensor",
})


def is_half_float_move(op: Operation) -> bool:
    """An element-moving op whose tensors are all bf16, or all float16 (a condition or mask may
    be bool; a constant it writes, as ``masked_fill``'s, is rounded as eager rounds it)."""
    key = op_key(op)
    if key not in HALF_FLOAT_MOVES | HALF_FLOAT_INDEXED_MOVES:
        return False
    results = [v.type for v in op.results if isinstance(v.type, TensorType)]
    operands = [v.type for v in op.operands if isinstance(v.type, TensorType)]
    if not results:
        return False
    dtype = dtype_of(results[0])
    if dtype not in HALF_FLOATS or not all(dtype_of(t) == dtype for t in results):
        return False
    if key == "aten::index_put" and (not isinstance(op, AtenOp) or op.static_value("accumulate") is not False):
        return False  # accumulating adds in the 16-bit type
    allowed = (dtype, torch.bool, torch.int64, torch.int32) if key in HALF_FLOAT_INDEXED_MOVES else (dtype, torch.bool)
    return all(dtype_of(t) in allowed for t in operands)


#: On an ``aten::to.dtype`` float32 -> uint8 whose operand is an integer of ``[0, 255]`` (or 0):
#: ``fuse-requantize`` writes it for a quantized pair's integers, which it proved so.
QUANTIZED_INTEGERS_ATTR = "ziggurat.quantized_integers"


def is_quantized_integers_cast(op: Operation) -> bool:
    """A float32 -> uint8 cast of proven integers of ``[0, 255]`` (exact: no rounding, no wrap)."""
    if op_key(op) != "aten::to.dtype" or QUANTIZED_INTEGERS_ATTR not in op.attributes:
        return False
    types = [v.type for v in (op.operands[0], *op.results)]
    return all(isinstance(t, TensorType) for t in types) and [dtype_of(t) for t in types] == [torch.float32, torch.uint8]


def unlowerable_reason(op: Operation) -> str | None:
    """Why ``op`` has no native lowering whatever its arguments: a value of a dtype the backend
    does not compute, or no lowering registered (None: its lowering may still decline one
    instance, which then runs through torch)."""
    native_half = is_half_float_cast(op) or is_bf16_gemm(op) or is_half_float_move(op) or is_quantized_integers_cast(op)
    quantized = is_int8_gemm(op) or native_depthwise(op)  # ui8 operands hold quantized integers (fused verifier)
    problem = None if native_half or quantized else type_problem(op, _native_dtype_problem)
    if problem is None and not lowerings().has(op_key(op)):
        problem = lowerings().missing.format(key=op_key(op))
    return problem


def static_fallback_reason(op: Operation) -> str | None:
    """Why ``op`` runs through torch whatever its arguments (a torch-only dtype first)."""
    return _torch_only_problem(op) or unlowerable_reason(op)


class InternalLoweringError(ZigguratError):
    """The CPU lowering broke one of its own invariants (a ``LoweringBug``, or any other
    exception from inside it) on an op: a bug of Ziggurat, never of the model.  ``culprit``
    is the op to run through torch instead (None when none can be named)."""

    def __init__(self, culprit: Operation | None, cause: BaseException) -> None:
        first = (str(cause).strip().splitlines() or [""])[0]
        self.culprit = culprit
        self.cause_text = f"{type(cause).__name__}: {first}" if first else type(cause).__name__
        super().__init__(f"internal error: {self.cause_text}", op=op_key(culprit) if culprit else "cpu lowering",
                         schema=schema_text(culprit) if culprit else None,
                         location=op_location(culprit) if culprit else None)


#: Realization reasons of the kernel level that ask nothing of the value's definition.
REALIZED_ELSEWHERE = ("", "unused", "written by a library call", "written by torch", "written by a scan",
                      "feeds a library call", "feeds torch")

#: How many ops one function may send to torch for internal errors before the compile gives up.
MAX_INTERNAL_FALLBACKS = 32


class FunctionLowering:
    def __init__(self, fn: func.FuncOp, options: LoweringOptions,
                 forced: dict[Operation, str] | None = None,
                 realize: dict[SSAValue, str] | None = None,
                 layouts: dict[SSAValue, str] | None = None) -> None:
        self.fn = fn
        #: the kernel level's decisions (``kernel-fuse``): per op result, why it is realized
        #: ("" = its reader computes it); None: decide here by the same rules on lazy values
        self.realize = realize
        #: with ``realize``, the order each realized value is stored in (``kernel-layout``);
        #: contiguous where absent
        self.layouts = layouts or {}
        self.options = options
        self.ctx = LoweringContext(options)
        self.env: dict[SSAValue, Any] = {}
        #: the emitted function's arguments: a buffer per input, or (for a tensor of a dtype
        #: only torch computes) the argument itself, passed as a torch tensor
        self.inputs: list[Buffer | SSAValue] = []
        self.result = LoweringResult(fn)
        #: ops that run through torch whatever their lowering says (internal errors), with the reason
        self.forced = forced or {}
        #: the op being lowered when each schedule node was added
        self._node_op: dict[int, Operation] = {}

    # -- ops -----------------------------------------------------------------------------
    def run(self) -> LoweringResult:
        for i, arg in enumerate(self.fn.args):
            if isinstance(arg.type, TensorType) and torch_only_reason(arg.type) is not None:
                self.inputs.append(arg)
                self.env[arg] = RuntimeScalar(arg)
            elif isinstance(arg.type, TensorType):
                buf = self.ctx.new_buffer(shape_of(arg.type), dtype_of(arg.type), "in", role="input", index=i)
                buf.name = arg.name_hint or buf.name
                self.inputs.append(buf)
                self.env[arg] = BufferValue(buf)
            else:
                self.env[arg] = RuntimeScalar(arg)
        returned: list[SSAValue] = []
        for op in self.fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned = list(op.arguments)
                break
            self.lower(op)
        self.result.function = self.emit(returned)
        return self.result

    def lower(self, op: Operation) -> None:
        start = len(self.ctx.nodes)
        try:
            self._lower(op)
        except (ZigguratError, NotLowerable):
            raise
        except Exception as e:  # a LoweringBug, or any error from inside a lowering
            raise InternalLoweringError(op, e) from e
        finally:
            for node in self.ctx.nodes[start:]:
                self._node_op.setdefault(id(node), op)

    def _lower(self, op: Operation) -> None:
        if op in self.forced:
            self._fallback(op, self.forced[op])
            return
        torch_only = _torch_only_problem(op)
        if torch_only is not None:
            self._fallback(op, torch_only)
            return
        if isinstance(op, LiteralOp):
            self.env[op.result] = literal_value(self.ctx, op)
            return
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, IntegerAttr):
                width = value.type.width.data  # pyright: ignore
                self.env[op.result] = bool(value.value.data) if width == 1 else int(value.value.data)  # pyright: ignore
            elif isinstance(value, FloatAttr):
                self.env[op.result] = float(value.value.data)  # pyright: ignore
            else:
                self._fallback(op, "a non-scalar arith.constant")
            return
        key = op_key(op)
        registry = lowerings()
        problem = unlowerable_reason(op)
        if problem is not None:
            declined = declined_reason(op)
            self._fallback(op, problem + (f" ({declined})" if declined else ""))
            return
        try:
            args = LoweringArgs(op, self.env)
            lowering, refusals = registry.select(key, args)
            if lowering is None:
                raise NotLowerable(reasons_text(refusals))
            self.ctx.current_op = op
            self.ctx.current_origin = args.name
            outs = lowering.fn(self.ctx, args)
        except NotLowerable as e:
            self._fallback(op, str(e))
            return
        finally:
            self.ctx.current_op = None
            self.ctx.current_origin = ""
        values = list(outs) if isinstance(outs, list | tuple) else [outs]
        if len(values) != len(op.results):
            raise NotImplementedError(f"lowering of {key} gave {len(values)} values for {len(op.results)} results")
        for res, value in zip(op.results, values, strict=True):
            self.env[res] = value
            if isinstance(value, TensorValue):
                self._check_result(op, res, value)
                self.env[res] = self._maybe_realize(res, value)
        self.result.native[key] += 1

    def _check_result(self, op: Operation, res: SSAValue, value: TensorValue) -> None:
        if isinstance(res.type, TensorType):
            shape, dtype = shape_of(res.type), dtype_of(res.type)
            if value.shape != shape or value.dtype != dtype:
                from ziggurat.backends.cpu.lowering.values import LoweringBug

                raise LoweringBug(f"lowering of {op_key(op)} produced {value.shape} {value.dtype}, "
                                  f"the IR declares {shape} {dtype}")

    def _maybe_realize(self, res: SSAValue, value: TensorValue) -> TensorValue:
        """``value`` or, when it is realized, what later ops read (the storage order is
        ``kernel-layout``'s, or without the kernel level ``layout.realize_preferred``'s:
        channels-last activations stay channels-last)."""
        if value.buffer is not None:
            return value
        uses = len(list(res.uses))
        if self.realize is not None:
            return self._realize_as_decided(res, value, uses)
        if isinstance(value, ReductionValue):
            if uses > 1:
                return realize_preferred(self.ctx, value, "red")
            return value
        if isinstance(value, LazyValue):
            size, window = value.compute_size()
            # an op whose elements each combine a window (convolution, softmax, a norm) is a
            # kernel of its own: inlined into a reading reduction it would be recomputed per pass
            if (uses > 1 and size > 0) or size > MAX_INLINE_NODES or window >= REALIZED_WINDOW:
                return realize_preferred(self.ctx, value)
        return value

    def _realize_as_decided(self, res: SSAValue, value: TensorValue, uses: int) -> TensorValue:
        """``value`` realized where the kernel level said so, in the order ``layout`` says.  A value in memory already
        (written by a library call, a scan or torch) or one that only its reader lays out (it
        feeds a GEMM, a convolution or torch) is left to that writer or reader; a graph output
        is written straight into its output buffer unless something else reads it too."""
        assert self.realize is not None
        reason = self.realize.get(res, "")
        if reason in REALIZED_ELSEWHERE or (reason == "graph output" and uses <= 1):
            return value
        if isinstance(value, LazyValue) and value.compute_size()[0] == 0:
            return value  # a view of memory: index arithmetic for every reader
        hint = "red" if isinstance(value, ReductionValue) else "buf"
        if self.layouts.get(res) == "channels_last":
            return realize_channels_last(self.ctx, value.shape, value.dtype, value.load, [value], hint)
        self.ctx.realize(value, hint)
        return value

    def _fallback(self, op: Operation, reason: str) -> None:
        key = op_key(op)
        check_storage_fallback(self.ctx, op, key)
        self.result.fallback.setdefault(key, []).append(reason)
        self.result.reports.append(OpReport(key, reason, schema_text(op), op_location(op)))
        operands: list[Buffer | StaticOperand | RuntimeOperand] = []
        for v in op.operands:
            value = self.env.get(v)
            if isinstance(value, TensorValue):
                operands.append(self._realize_of(v, value))
            elif isinstance(value, RuntimeScalar) or value is None:
                operands.append(RuntimeOperand(v))
            else:
                operands.append(StaticOperand(value, v.type))
        results: list[Buffer | None] = []
        for res in op.results:
            if isinstance(res.type, TensorType) and torch_only_reason(res.type) is None:
                buf = self.ctx.new_buffer(shape_of(res.type), dtype_of(res.type), "torch")
                results.append(buf)
                self.env[res] = BufferValue(buf)
            else:  # a non-tensor, or a tensor only torch computes: held by the runtime
                results.append(None)
                self.env[res] = RuntimeScalar(res)
        self.ctx.nodes.append(FallbackNode(op, operands, results, reason))

    def _realize_of(self, v: SSAValue, value: TensorValue, output: int | None = None) -> Buffer:
        """The buffer holding ``v``'s value (realized now if lazy); an internal error while
        realizing it is blamed on the op that produced ``v``."""
        try:
            if output is not None:
                return self.ctx.realize_output(value, output)
            return self.ctx.realize(value)
        except (ZigguratError, NotLowerable):
            raise
        except Exception as e:
            raise InternalLoweringError(v.owner if isinstance(v.owner, Operation) else None, e) from e

    def _node_culprit(self, node: Node) -> Operation | None:
        """The op to blame for a schedule node that fails to emit: the producer of the value it
        computes, else the op being lowered when it was added."""
        if isinstance(node, FallbackNode):
            return node.op
        out = node.c.buffer if isinstance(node, GemmNode) else node.out
        for res, value in self.env.items():
            if isinstance(value, TensorValue) and (value.buffer is out or getattr(value, "realized", None) is out):
                if isinstance(res.owner, Operation):
                    return res.owner
        return self._node_op.get(id(node))

    # -- emission ------------------------------------------------------------------------
    def emit(self, returned: list[SSAValue]) -> func.FuncOp:
        outputs: list[tuple[str, Any]] = []
        for k, v in enumerate(returned):
            value = self.env.get(v)
            if isinstance(value, TensorValue):
                outputs.append(("tensor", self._realize_of(v, value, output=k)))
            elif isinstance(value, RuntimeScalar):
                outputs.append(("runtime", v))
            else:
                outputs.append(("static", (value, v.type)))
        in_types = [memref(b.shape, b.dtype) if isinstance(b, Buffer) else _caller_memref(b) for b in self.inputs]
        out_types: list[Attribute] = []
        for kind, item in outputs:
            out_types.append(memref(item.shape, item.dtype) if kind == "tensor"
                             else (item[1] if kind == "static" else item.type))
        fn = new_function(self.fn.sym_name.data, in_types, out_types)
        for arg, buf in zip(fn.args, self.inputs, strict=True):
            arg.name_hint = _clean(buf.name) if isinstance(buf, Buffer) else buf.name_hint
        kopts = KernelOptions(self.options.isa.value, self.options.vector_width, self.options.threads,
                              self.options.range_schedule)
        builder = FunctionBuilder(fn.body.block, self.inputs, kopts)
        for position, node in enumerate(self.ctx.nodes):
            try:
                with schedule_horizon(position):
                    builder.add(node)
            except (ZigguratError, NotLowerable):
                raise
            except Exception as e:
                raise InternalLoweringError(self._node_culprit(node), e) from e
        results: list[SSAValue] = []
        for kind, item in outputs:
            if kind == "tensor":
                results.append(builder.target(item))
            elif kind == "runtime":
                results.append(builder.runtime[item])
            else:
                results.append(builder.static_result(item[0], item[1]))
        fn.body.block.add_op(func.ReturnOp(*results))
        for name, attr in self.fn.attributes.items():
            if name.startswith("ziggurat."):
                fn.attributes[name] = attr
        fn.attributes["loop.isa"] = StringAttr(self.options.isa.value)
        fn.attributes["loop.threads"] = IntegerAttr(self.options.threads, i64)
        fn.attributes["loop.error_sites"] = ArrayAttr([StringAttr(m) for m in self.ctx.error_sites])
        if self.ctx.storage_inputs:
            fn.attributes["loop.storage_inputs"] = ArrayAttr(
                [IntegerAttr(i, i64) for i in sorted(self.ctx.storage_inputs)])
        fn.attributes["loop.native_ops"] = DictionaryAttr(
            {k: IntegerAttr(n, i64) for k, n in sorted(self.result.native.items())})
        fn.attributes["loop.fallback_ops"] = DictionaryAttr(
            {k: ArrayAttr([StringAttr(r) for r in rs]) for k, rs in sorted(self.result.fallback.items())})
        return fn


def _caller_memref(arg: SSAValue) -> MemRefType:
    """The argument type of a tensor input only torch computes: the caller's memory, which
    torch ops read through ``loop.to_tensor`` (the loop level has no such element type, so
    no kernel can)."""
    ty = arg.type
    assert isinstance(ty, TensorType)
    return MemRefType(ty.get_element_type(), ty.get_shape())  # pyright: ignore[reportUnknownArgumentType]


def _clean(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "in" + out


def lower_function(fn: func.FuncOp, options: LoweringOptions,
                   realize: dict[SSAValue, str] | None = None,
                   layouts: dict[SSAValue, str] | None = None) -> LoweringResult:
    """Lower ``fn``.  With ``fallback`` on, an op on which the lowering breaks its own invariants
    runs through torch instead (the function is lowered again with that op sent to torch), is
    reported as an internal error and logged; without, that is an :class:`InternalLoweringError`
    naming the op."""
    forced: dict[Operation, str] = {}
    while True:
        try:
            try:
                result = FunctionLowering(fn, options, forced, realize, layouts).run()
                break
            except (ZigguratError, NotLowerable):
                raise
            except Exception as e:  # outside any op's lowering or kernel: no op to blame
                raise InternalLoweringError(None, e) from e
        except InternalLoweringError as e:
            culprit = e.culprit
            if not options.fallback or culprit is None or culprit in forced or isinstance(culprit, LiteralOp) \
                    or len(forced) >= MAX_INTERNAL_FALLBACKS:
                raise
            forced[culprit] = f"internal error: {e.cause_text}"
    # an error met while lowering a consumer may lie in a producer's element function; once
    # the producer runs in torch the consumer may lower after all: keep only the ops needed
    for op in list(forced)[:-1]:
        fewer = {k: v for k, v in forced.items() if k is not op}
        try:
            result = FunctionLowering(fn, options, fewer, realize, layouts).run()
            forced = fewer
        except Exception:
            continue
    for op, reason in forced.items():
        where = op_location(op)
        log.warning("cpu backend: internal error lowering %s%s (%s); it runs through torch",
                    op_key(op), f" at {where}" if where else "", reason.removeprefix("internal error: "))
    if not options.fallback and result.reports:
        raise UnsupportedOpsError("cpu", result.reports)
    if result.fallback:
        names = ", ".join(f"{k} x{len(v)}" for k, v in sorted(result.fallback.items()))
        log.warning("cpu backend: ops running through torch (no native lowering): %s", names)
    return result


__all__ = ["CLAIMED_DTYPES", "LOOP_DTYPES", "IntegerType", "InternalLoweringError", "LoweringResult", "lower_function"]
