"""Partial conversion of a torch-level function into TensorRT segments.

Like Torch-TensorRT's partitioner: every op is checked (a converter for its
schema, its validator, TensorRT-compatible types, not in ``torch_executed_ops``),
runs of convertible ops form segments, segments smaller than ``min_block_size``
stay in torch, and each remaining segment becomes a private ``func.func`` of
``trt`` ops (attribute ``ziggurat.backend = "tensorrt"``) called with
``func.call`` from the torch-level function.  A converter that fails on an op,
or produces a wrongly typed or unverifiable layer, sends that op back to torch
and the partition is redone.  :class:`ConversionReport` lists every op left to
torch with its reason, schema and source line; the decisions are also kept in the
IR (``ziggurat.trt_fallback`` on the function, ``ziggurat.trt_ops`` on each
segment; see ``partition_report.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.half_float_widening import convert_widened, rounds_between, rounds_inside_in_eager
from ziggurat.backends.tensorrt.partition_report import (
    BACKEND_ATTR,
    FALLBACK_ATTR,
    SEGMENT_OPS_ATTR,
    ConversionReport,
    fallback_attr,
    segment_ops_attr,
)
from ziggurat.backends.tensorrt.profiles import (
    PROFILE_ATTR,
    InputProfile,
    ProfileError,
    input_profile,
    profile_attr,
)
from ziggurat.backends.tensorrt.registry import REGISTRY, ConverterEntry, ConverterRegistry
from ziggurat.dialects.torch import LiteralOp, OperatorOp, TorchOp
from ziggurat.dialects.torch.checked_scalars import overflowing_scalar
from ziggurat.dialects.torch.op_registry import op_key, reasons_text, schema_text, type_problem
from ziggurat.dialects.trt import TrtLayerOp
from ziggurat.dialects.trt.base import ELEMENT_TYPES
from ziggurat.dialects.trt.shapes import ShapeError
from ziggurat.ir.errors import OpReport, ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.rewriting import declined_reason
from ziggurat.ir.shape_symbols import example_sizes
from ziggurat.ir.symbolic_shapes import SymbolicShapes, declared_symbols, infer_symbolic_shapes
from ziggurat.ir.types import torch_only_reason



@dataclass(frozen=True)
class PartitionOptions:
    min_block_size: int = 3
    #: aten keys (``aten::add.Tensor``) or names (``aten::add``) that must stay in torch
    torch_executed_ops: tuple[str, ...] = ()


#: the reason given for a ``torch.operator`` whose schema torch does not know (as ``explain`` says)
UNKNOWN_OPERATOR = "unknown operator (no schema)"


def _trt_type_problem(role: str, i: int, ty: Attribute, dynamic: bool = False) -> str | None:
    """Why a value of type ``ty`` (operand or result #i) keeps its op out of TensorRT;
    ``dynamic``: the function declares shape symbols, so its ``?`` dims can be profiled."""
    if not isinstance(ty, TensorType):
        return f"{role} #{i} is a {ty}, TensorRT takes only tensors"
    if any(d < 0 for d in ty.get_shape()) and not dynamic:
        return f"{role} #{i} has a dynamic shape {ty} (a function without declared shape symbols)"
    torch_only = torch_only_reason(ty.get_element_type() if dynamic else ty)
    if torch_only is not None:
        return torch_only
    if ty.get_element_type() not in ELEMENT_TYPES:
        return f"{role} #{i} has element type {ty.get_element_type()}, which TensorRT does not take"
    return None


#: Ops that read their operand's storage (its eager memory layout), not its elements.
STORAGE_READERS = frozenset({"as_strided", "as_strided_copy", "_reshape_alias"})
#: Why the ops computing such an operand stay in torch.
STORAGE_REASON = ("its result reaches an as_strided, which reads eager's memory layout; TensorRT's outputs "
                  "are fresh row-major tensors")


def storage_producers(body: Block) -> set[Operation]:
    """Every op an ``as_strided`` operand depends on: run in torch, each sees the layouts eager
    gives (views of the same storage, pointwise results in their input's order), so the
    ``as_strided`` reads the storage it reads in eager."""
    marked: set[Operation] = set()
    work: list[Operation] = []
    for op in body.ops:
        if isinstance(op, TorchOp) and op.operands:
            try:
                name = op.op_schema.base_name
            except KeyError:
                continue
            if name in STORAGE_READERS:
                owner = op.operands[0].owner
                if isinstance(owner, Operation):
                    work.append(owner)
    while work:
        op = work.pop()
        if op in marked or isinstance(op, LiteralOp):
            continue
        marked.add(op)
        work.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
    return marked


class _Partitioner:
    def __init__(self, func: FuncOp, module: ModuleOp, options: PartitionOptions, registry: ConverterRegistry) -> None:
        self.func = func
        self.options = options
        self.registry = registry
        self.reasons: dict[Operation, str] = {}
        self.entries: dict[Operation, ConverterEntry] = {}
        body = func.body.blocks.first
        self.storage = storage_producers(body) if body is not None else set[Operation]()
        #: the shape symbols and each value's size expressions, for a function that declares them
        self.symbols = declared_symbols(func)
        self.example = example_sizes(func)
        self.sizes: SymbolicShapes | None = None
        self.sizes_problem: str | None = None
        if self.symbols is not None:
            try:
                self.sizes = infer_symbolic_shapes(module, func.sym_name.data)
            except ZigguratError as e:
                self.sizes_problem = e.message

    def size_exprs(self, value: SSAValue) -> tuple[str, ...] | None:
        return self.sizes.sizes.get(value) if self.sizes is not None else None

    def profiles(self, inputs: Sequence[SSAValue]) -> list[InputProfile] | str:
        """The segment inputs' optimization profile (empty: the function has no shape symbols,
        its sizes are static), or why there is none."""
        if self.symbols is None:
            return []
        try:
            return [input_profile(v, self.size_exprs(v), self.symbols, self.example) for v in inputs]
        except ProfileError as e:
            return f"no TensorRT optimization profile: {e}" + (
                f" (the symbolic shape analysis failed: {self.sizes_problem})" if self.sizes_problem else "")

    def classify(self, op: Operation) -> None:
        if not isinstance(op, TorchOp) and not self.registry.has(op.name):
            self.reasons[op] = f"{op.name} is not an op the TensorRT converters take"
            return
        if op in self.storage:
            self.reasons[op] = STORAGE_REASON
            return
        if isinstance(op, OperatorOp) and op.schema_text is None:
            self.reasons[op] = UNKNOWN_OPERATOR
            return
        key = op_key(op)
        executed = self.options.torch_executed_ops
        if key in executed or key.split(".")[0] in executed:
            self.reasons[op] = "listed in torch_executed_ops"
            return
        dynamic = self.symbols is not None
        sizes_ignored = dynamic and key in SIZES_FROM_RESULT
        problem = type_problem(op, lambda role, i, ty: None if sizes_ignored and role == "operand" and i > 0
                               and not isinstance(ty, TensorType) else _trt_type_problem(role, i, ty, dynamic))
        if problem is None:
            problem = overflowing_scalar(op)  # eager raises on the number: torch runs the op
        if problem is not None:
            self.reasons[op] = problem
            return
        try:
            args = ConverterArgs(op)
        except (ZigguratError, KeyError, TypeError, ValueError) as e:
            self.reasons[op] = f"cannot bind its arguments: {e}"
            return
        entry, refusals = self.registry.select(key, args)
        if entry is None:
            declined = declined_reason(op)  # a graph pass that would have rewritten it said why not
            self.reasons[op] = reasons_text(refusals) + (f" ({declined})" if declined else "")
        else:
            self.entries[op] = entry

    def runs(self, ops: Sequence[Operation]) -> list[list[Operation]]:
        """Maximal runs of convertible ops (literals do not break a run)."""
        runs: list[list[Operation]] = []
        current: list[Operation] = []
        for op in ops:
            if isinstance(op, LiteralOp):
                continue
            if op in self.entries:
                current.append(op)
            elif self.symbols is not None and _size_arithmetic(op, current):
                continue  # stays in torch, placed after the segment's call; its sizes are not read
            else:
                if current:
                    runs.append(current)
                current = []
        if current:
            runs.append(current)
        return runs


#: ops whose scalar operands are sizes (``view(x, [b, t, 4, 8])`` with run-time ``b``, ``t``): on
#: a function with shape symbols their converter takes the sizes from the result's type and size
#: expressions, so those operands stay in torch and do not enter the segment
SIZES_FROM_RESULT = frozenset({"aten::view", "aten::reshape", "aten::_unsafe_view"})


def _sizes_from_result(op: Operation) -> bool:
    try:
        return op_key(op) in SIZES_FROM_RESULT
    except KeyError:
        return False


def _size_arithmetic(op: Operation, run: Sequence[Operation]) -> bool:
    """A scalar op (``sym_size``, ``arith.muli``) that reads nothing ``run`` computes: it does not
    end the run, it stays in torch after the run's call."""
    if any(isinstance(r.type, TensorType) for r in op.results) or op.regions:
        return False
    inside = set(run)
    return not any(v.owner in inside for v in op.operands)


def _segment_io(segment: Sequence[Operation]) -> tuple[list[SSAValue], list[SSAValue]]:
    inside = set(segment)
    inputs: list[SSAValue] = []
    outputs: list[SSAValue] = []
    for op in segment:
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, LiteralOp) or owner in inside or v in inputs:
                continue
            if not isinstance(v.type, TensorType) and _sizes_from_result(op):
                continue  # a run-time size the converter takes from the result's size expressions
            inputs.append(v)
        for r in op.results:
            if any(use.operation not in inside for use in r.uses):
                outputs.append(r)
    return inputs, outputs


def _convert_segment(
    name: str, segment: Sequence[Operation], part: _Partitioner
) -> tuple[FuncOp, list[SSAValue], list[SSAValue]] | tuple[Operation, str]:
    """The segment as a trt function, or (the op that failed, why)."""
    entries = part.entries
    inputs, outputs = _segment_io(segment)
    profiles = part.profiles(inputs)
    if isinstance(profiles, str):
        first = next(op for op in segment if any(v in inputs for v in op.operands))
        return first, profiles
    block = Block(arg_types=[v.type for v in inputs])
    ctx = ConversionContext(Builder(InsertPoint.at_end(block)), part.size_exprs)
    for torch_value, arg in zip(inputs, block.args, strict=True):
        arg.name_hint = torch_value.name_hint
        ctx.map(torch_value, arg)
    for op in segment:
        before = len(block.ops)
        try:
            args = ctx.begin(op)
            produced = entries[op].fn(ctx, args)
            first = list(block.ops)[before:]
            if rounds_between(first):
                produced = convert_widened(ctx, op, first, entries[op].fn)
            inexact = rounds_inside_in_eager(op, list(block.ops)[before:])
            if inexact is not None:
                return op, inexact
        except (ZigguratError, ShapeError, VerifyException) as e:
            return op, f"converter {entries[op].origin} failed: {_one_line(e)}"
        except Exception as e:  # noqa: BLE001  (a converter bug must not abort the compile)
            return op, f"converter {entries[op].origin} crashed: {type(e).__name__}: {_one_line(e)}"
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        if len(results) != len(op.results):
            return op, f"converter {entries[op].origin} produced {len(results)} values for {len(op.results)} results"
        for i, (torch_result, trt_result) in enumerate(zip(op.results, results, strict=True)):
            if trt_result is None:  # a result the converter does not compute (allowed while unused)
                if torch_result.uses:
                    return op, f"result #{i} is used, and {entries[op].origin} does not compute it"
                continue
            if trt_result.type != torch_result.type:
                return op, (
                    f"converter {entries[op].origin} produced {trt_result.type} for result #{i} "
                    f"of type {torch_result.type}"
                )
            if trt_result.name_hint is None and trt_result not in block.args:
                trt_result.name_hint = torch_result.name_hint  # bisect compares values by name
            ctx.map(torch_result, trt_result)
        for new_op in list(block.ops)[before:]:
            foreign = [v for v in new_op.operands if not ctx.is_trt(v) and v not in block.args]
            if foreign:
                return op, f"converter {entries[op].origin} used the torch value {foreign[0]} in {new_op.name}"
            try:
                new_op.verify()
            except VerifyException as e:
                return op, f"converter {entries[op].origin} built an invalid layer: {_one_line(e)}"
    ret_values = [ctx.values[v] for v in outputs]
    block.add_op(ReturnOp(*ret_values))
    _erase_dead_layers(block)
    func = FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]), Region(block), visibility="private")
    func.attributes[BACKEND_ATTR] = StringAttr("tensorrt")
    func.attributes[SEGMENT_OPS_ATTR] = segment_ops_attr(Counter(op_key(op) for op in segment))
    if any(p.dynamic for p in profiles):
        func.attributes[PROFILE_ATTR] = profile_attr(profiles)
    return func, inputs, outputs


def _one_line(e: BaseException) -> str:
    text = e.message if isinstance(e, ZigguratError) else str(e)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in lines:
        if "does not verify" in ln:
            return ln.split("does not verify:", 1)[-1].strip()
    return lines[0] if lines else type(e).__name__


def convert_function(
    func: FuncOp,
    module: ModuleOp,
    options: PartitionOptions | None = None,
    registry: ConverterRegistry | None = None,
) -> ConversionReport:
    """Move the convertible parts of ``func`` into TensorRT segment functions of ``module``."""
    options = options or PartitionOptions()
    registry = registry or REGISTRY
    body = func.body.blocks.first
    report = ConversionReport(func.sym_name.data)
    if body is None:
        return report
    part = _Partitioner(func, module, options, registry)
    ops = [op for op in body.ops if not isinstance(op, ReturnOp | LiteralOp)]
    for op in ops:
        part.classify(op)
    taken = {str(op.sym_name.data) for op in module.ops if isinstance(op, FuncOp)}
    built: list[tuple[list[Operation], FuncOp, list[SSAValue], list[SSAValue]]] = []
    while True:
        built.clear()
        retry = False
        small: list[list[Operation]] = []
        for run in part.runs(list(body.ops)):
            if len(run) < options.min_block_size:
                small.append(run)
                continue
            name = _unique(f"{func.sym_name.data}_trt_{len(built)}", taken)
            outcome = _convert_segment(name, run, part)
            if len(outcome) == 3:  # (segment function, inputs, outputs)
                seg_func, inputs, outputs = outcome
                built.append((run, seg_func, inputs, outputs))
                continue
            failed, reason = outcome  # (the op that failed, why)
            part.entries.pop(failed)
            part.reasons[failed] = reason
            retry = True
            break
        if not retry:
            break
    for run in small:
        for op in run:
            part.entries.pop(op, None)
            part.reasons[op] = (
                f"its TensorRT block has {len(run)} op(s), fewer than min_block_size={options.min_block_size}"
            )
    anchor: Operation = func
    for run, seg_func, inputs, outputs in built:
        _splice(anchor, run, seg_func, inputs, outputs)
        anchor = seg_func
        ops_of_run = Counter(op_key(op) for op in run)
        report.segments.append(seg_func.sym_name.data)
        report.segment_ops[seg_func.sym_name.data] = ops_of_run
        report.converted.update(ops_of_run)
    _erase_dead_literals(body)
    for op in ops:
        if op in part.reasons:
            report.fallback.append(OpReport(op_key(op), part.reasons[op], schema_text(op), op_location(op)))
    if report.fallback:
        func.attributes[FALLBACK_ATTR] = fallback_attr(report.fallback)
    return report


def _unique(name: str, taken: set[str]) -> str:
    candidate = name
    n = 1
    while candidate in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _splice(
    anchor: Operation, run: Sequence[Operation], seg_func: FuncOp,
    inputs: Sequence[SSAValue], outputs: Sequence[SSAValue],
) -> None:
    """Replace ``run`` by a call of ``seg_func``, placed in the module after ``anchor``.

    The inputs are collected again: an earlier splice may have replaced some of them
    by call results (same positions, same types).
    """
    inputs, outputs = _segment_io(run)
    call = CallOp(seg_func.sym_name.data, list(inputs), [v.type for v in outputs])
    if [v.type for v in inputs] != list(seg_func.function_type.inputs.data):
        raise AssertionError(f"segment {seg_func.sym_name.data} inputs changed while splicing")
    Rewriter.insert_op(call, InsertPoint.before(run[0]))
    for old, new in zip(outputs, call.results, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for op in reversed(run):
        Rewriter.erase_op(op)
    Rewriter.insert_op(seg_func, InsertPoint.after(anchor))


def _erase_dead_layers(block: Block) -> None:
    """Layers nothing reads: ``trt.constant``s (a literal replaced by a rank-aligned copy), and the
    layers of ops a later converter went around (a quantize -> dequantize pair's float32 ops,
    which the Q/DQ layers replace)."""
    for op in reversed(list(block.ops)):
        if isinstance(op, TrtLayerOp) and op.results and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def _erase_dead_literals(body: Block) -> None:
    for op in list(body.ops):
        if isinstance(op, LiteralOp) and not op.result.uses:
            Rewriter.erase_op(op)
