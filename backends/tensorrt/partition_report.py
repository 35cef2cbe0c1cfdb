"""What ``convert-torch-to-trt`` decided, kept in the IR so that later steps can report it.

The conversion may run as a pass of the pipeline (``ziggurat-opt``, the backends' default
pipeline, ``ziggurat.bisect``), long before a backend builds anything, so its decisions
travel as attributes:

* each torch-level function with ops left to torch::

      ziggurat.trt_fallback = [{op = "aten::cumprod", reason = "no TensorRT converter ...",
                                schema = "aten::cumprod(Tensor self, ...) -> Tensor",
                                location = "model.py:12 [%y (block)]"}]

* each segment function: the torch ops it took, ``ziggurat.trt_ops = {"aten::relu" = 2 : i64}``.

:func:`conversion_reports` reads them back into :class:`ConversionReport` objects, and
:func:`fill_compile_report` turns those into a ``CompileReport`` (native ops, one
``OpReport`` per op left to torch, segment figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Attribute

from ziggurat.ir.errors import OpReport

BACKEND_ATTR = "ziggurat.backend"
FALLBACK_ATTR = "ziggurat.trt_fallback"
SEGMENT_OPS_ATTR = "ziggurat.trt_ops"


@dataclass
class ConversionReport:
    """What ``convert-torch-to-trt`` did to one function."""

    function: str
    segments: list[str] = field(default_factory=list[str])
    converted: Counter[str] = field(default_factory=Counter[str])
    fallback: list[OpReport] = field(default_factory=list[OpReport])
    #: segment name -> the torch ops it took
    segment_ops: dict[str, Counter[str]] = field(default_factory=dict[str, Counter[str]])

    def format(self) -> str:
        lines = [
            f"@{self.function}: {sum(self.converted.values())} op(s) in {len(self.segments)} TensorRT segment(s), "
            f"{len(self.fallback)} op(s) left to torch"
        ]
        lines += ["  " + r.format().replace("\n", "\n  ") for r in self.fallback]
        return "\n".join(lines)


# -- writing ------------------------------------------------------------------------------------
def fallback_attr(reports: Sequence[OpReport]) -> ArrayAttr[DictionaryAttr]:
    entries: list[DictionaryAttr] = []
    for r in reports:
        fields: dict[str, Attribute] = {"op": StringAttr(r.op), "reason": StringAttr(r.reason)}
        if r.schema is not None:
            fields["schema"] = StringAttr(r.schema)
        if r.location is not None:
            fields["location"] = StringAttr(r.location)
        entries.append(DictionaryAttr(fields))
    return ArrayAttr(entries)


def segment_ops_attr(ops: Counter[str]) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, 64) for k, v in sorted(ops.items())})


# -- reading ------------------------------------------------------------------------------------
def is_segment(op: Any) -> bool:
    return isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes


def segment_functions(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.ops if isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes]


def is_converted(module: ModuleOp) -> bool:
    """Whether ``convert-torch-to-trt`` already ran on ``module``."""
    return any(
        is_segment(op) or (isinstance(op, FuncOp) and FALLBACK_ATTR in op.attributes) for op in module.ops
    )


def _text(entry: DictionaryAttr, key: str) -> str | None:
    value = entry.data.get(key)
    return value.data if isinstance(value, StringAttr) else None


def _fallback(func: FuncOp) -> list[OpReport]:
    attr = func.attributes.get(FALLBACK_ATTR)
    if not isinstance(attr, ArrayAttr):
        return []
    reports: list[OpReport] = []
    for entry in attr.data:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(entry, DictionaryAttr):
            continue
        reports.append(OpReport(_text(entry, "op") or "?", _text(entry, "reason") or "?",
                                _text(entry, "schema"), _text(entry, "location")))
    return reports


def _segment_ops(func: FuncOp) -> Counter[str]:
    attr = func.attributes.get(SEGMENT_OPS_ATTR)
    ops: Counter[str] = Counter()
    if isinstance(attr, DictionaryAttr):
        for key, value in attr.data.items():
            if isinstance(value, IntegerAttr):
                ops[key] = value.value.data
    return ops


def conversion_reports(module: ModuleOp) -> list[ConversionReport]:
    """The conversion reports of every torch-level function, read back from the IR."""
    segments = {f.sym_name.data: f for f in segment_functions(module)}
    reports: list[ConversionReport] = []
    for func in module.ops:
        if not isinstance(func, FuncOp) or func.sym_name.data in segments:
            continue
        report = ConversionReport(func.sym_name.data, fallback=_fallback(func))
        for op in func.walk():
            if isinstance(op, CallOp) and op.callee.string_value() in segments:
                name = op.callee.string_value()
                ops = _segment_ops(segments[name])
                report.segments.append(name)
                report.segment_ops[name] = ops
                report.converted.update(ops)
        reports.append(report)
    return reports


# -- into a CompileReport -----------------------------------------------------------------------
def describe_segment(ops: Counter[str]) -> str:
    """``5 ops: aten::relu x2, fused.conv2d x3``."""
    total = sum(ops.values())
    return f"{total} op{'s' if total != 1 else ''}: " + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()))


def fill_compile_report(report: Any, reports: Sequence[ConversionReport]) -> None:
    """Native ops, every op left to torch (``report.add_unsupported``), segment figures."""
    report.stats["TensorRT segments"] = sum(len(rep.segments) for rep in reports)
    report.stats["ops left to torch"] = sum(len(rep.fallback) for rep in reports)
    for rep in reports:
        for op, n in rep.converted.items():
            report.native_ops[op] = report.native_ops.get(op, 0) + n
        for r in rep.fallback:
            report.add_unsupported(r)
        for name in rep.segments:
            report.stats[f"TensorRT segment @{name}"] = describe_segment(rep.segment_ops.get(name, Counter()))
