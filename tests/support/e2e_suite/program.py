"""One small program per op of the e2e suite, compiled on ``cpu`` and checked against eager.

A :class:`Program` is a Python callable and its example inputs. It is traced
(``torch.jit.trace``, the suite's own frontend) or scripted (``torch.jit.script``, for
TorchScript builtins on numbers, lists and strings); the TorchScript graph must contain
the op, so a program that stops exercising it fails. :func:`run` compiles it with
``backend="cpu"`` and compares the compiled module's outputs with eager: values for
deterministic ops (exactly for integers and booleans), shape, dtype and a value range
for random ones.
"""

from __future__ import annotations

import logging
import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

import ziggurat
from ziggurat.ir.errors import ZigguratError

Status = Literal["native", "fallback", "error"]


@dataclass(frozen=True)
class Random:
    """Outputs of a random op: compared by shape and dtype, and every value in ``[low, high]``."""

    low: float = float("-inf")
    high: float = float("inf")


@dataclass
class Program:
    op: str
    fn: Callable[..., Any]
    inputs: tuple[Any, ...]
    #: ``torch.jit.script`` the function (TorchScript builtins) instead of tracing it
    script: bool = False
    random: Random | None = None
    rtol: float = 1e-4
    atol: float = 1e-5
    #: where the program comes from (an OpInfo sample, or "hand-written")
    origin: str = "hand-written"


@dataclass
class Outcome:
    op: str
    status: Status
    #: fallback op -> reason (``status == "fallback"``), or the compile error (``"error"``)
    reasons: dict[str, str] = field(default_factory=dict)
    error: str = ""
    #: the op is in the imported IR (False: the importer folded it, as it folds ``len`` of a static list)
    imported: bool = False
    compiled: Any = None


class _Traced(torch.nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def graph_ops(graph: Any) -> set[str]:
    """Every node kind of a TorchScript graph, nested blocks included."""
    kinds: set[str] = set()
    for node in graph.nodes():
        kinds.add(node.kind())
        for block in node.blocks():
            kinds |= graph_ops(block)
    return kinds


def _clone(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in values)


def torchscript(program: Program) -> Any:
    """The program as TorchScript: what ``ziggurat.compile`` is given (scripted), or checked (traced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if program.script:
            return torch.jit.script(program.fn)
        return torch.jit.trace(_Traced(program.fn), _clone(program.inputs), check_trace=False)


def check_exercised(program: Program) -> Any:
    """The program's TorchScript; fails when its graph does not contain ``program.op``."""
    ts = torchscript(program)
    graph = ts.graph if program.script else ts.inlined_graph
    ops = graph_ops(graph)
    assert program.op in ops, f"the program for {program.op} does not exercise it: {sorted(o for o in ops if o.startswith('aten::'))}"
    return ts


def compile_program(program: Program, ts: Any) -> Outcome:
    """Compile on ``cpu`` (scripted programs as scripted, traced ones through the torchscript frontend)."""
    model = ts if program.script else _Traced(program.fn)
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        compiled = ziggurat.compile(model, _clone(program.inputs), backend="cpu", frontend="torchscript")
    except ZigguratError as e:  # the message without the source location (a path on this machine)
        return Outcome(program.op, "error", error=f"{e.op}: {e.message}" if e.op else e.message)
    except Exception as e:  # noqa: BLE001 - an internal error is an outcome too, reported as one
        text = str(e).strip().splitlines()
        return Outcome(program.op, "error", error=f"{type(e).__name__}: {text[0] if text else ''}")
    finally:
        logger.setLevel(level)
    fallback = {op: reasons[0] for op, reasons in compiled.report.fallback_ops.items()}
    ops = imported_ops(compiled.ir.get("torch", ""))
    imported = program.op in ops or program.op.removesuffix("_") in ops  # in-place ops import as functional ones
    return Outcome(program.op, "fallback" if fallback else "native", fallback, imported=imported, compiled=compiled)


def imported_ops(ir: str) -> set[str]:
    """The aten ops of an imported module's text: ``torch.aten.add.Tensor``, ``torch.operator "aten::foo"``."""
    return {f"aten::{m}" for m in re.findall(r"torch\.aten\.(\w+)", ir)} | set(re.findall(r'"(aten::\w+)', ir))


def _compare(actual: Any, expected: Any, program: Program, where: str = "output") -> None:
    """Values of deterministic ops (floats within the program's tolerance, integers and booleans
    exactly); shape, dtype and range only for random ones."""
    if isinstance(expected, list | tuple):
        assert isinstance(actual, list | tuple), f"{where}: {type(actual).__name__} for a {type(expected).__name__}"
        assert len(actual) == len(expected), f"{where}: {len(actual)} items for {len(expected)}"  # pyright: ignore
        for i, (a, e) in enumerate(zip(actual, expected)):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            _compare(a, e, program, f"{where}[{i}]")
        return
    if not isinstance(expected, torch.Tensor):
        assert type(actual) is type(expected), f"{where}: {actual!r} for {expected!r}"
        if isinstance(expected, float) and program.random is None:
            assert math.isclose(actual, expected, rel_tol=program.rtol, abs_tol=program.atol), f"{where}: {actual} vs {expected}"
        elif program.random is None:
            assert actual == expected, f"{where}: {actual!r} vs {expected!r}"
        return
    assert isinstance(actual, torch.Tensor), f"{where}: {type(actual).__name__} for a tensor"
    assert actual.shape == expected.shape, f"{where}: shape {list(actual.shape)} vs {list(expected.shape)}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} vs {expected.dtype}"
    if program.random is not None:
        low, high = program.random.low, program.random.high
        if actual.numel() and (low > -math.inf or high < math.inf):
            lo, hi = float(actual.min()), float(actual.max())
            assert low <= lo and hi <= high, f"{where}: values in [{lo}, {hi}], outside [{low}, {high}]"
    elif expected.is_floating_point() or expected.is_complex():
        torch.testing.assert_close(actual, expected, rtol=program.rtol, atol=program.atol, equal_nan=True,
                                   msg=lambda m: f"{program.op} {where}: {m}")
    else:
        assert torch.equal(actual, expected), f"{where}: {actual} vs {expected}"


def check_against_eager(program: Program, compiled: Any) -> None:
    with torch.no_grad():
        expected = program.fn(*_clone(program.inputs))
    actual = compiled(*_clone(program.inputs))
    _compare(actual, expected, program)


def run(program: Program) -> Outcome:
    """Check the program exercises its op, compile it, and compare with eager when it compiles."""
    ts = check_exercised(program)
    outcome = compile_program(program, ts)
    if outcome.compiled is not None:
        check_against_eager(program, outcome.compiled)
    return outcome
