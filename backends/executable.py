"""What a backend produces: something that runs the compiled graph on flat inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from xdsl.dialects.builtin import ModuleOp

from ziggurat.ir.errors import OpReport


class Executable(Protocol):
    """The compiled graph: flat tensors in, flat values out.

    Backends whose executables can be saved also give ``serialize() -> bytes`` (and the
    backend ``load(payload, module, options) -> Executable``, which must not recompile).
    """

    def run(self, inputs: Sequence[Any]) -> list[Any]: ...


@dataclass
class CompileReport:
    """What a compile did: passes, times, ops that fell back, backend figures."""

    backend: str
    pass_times: list[tuple[str, float]] = field(default_factory=list)
    total_time: float = 0.0
    #: op name -> how many run natively on the backend
    native_ops: dict[str, int] = field(default_factory=dict)
    #: op name -> how many run through torch (fallback), with reasons
    fallback_ops: dict[str, list[str]] = field(default_factory=dict)
    #: every op instance the backend cannot take: name, reason, schema, source location
    unsupported: list[OpReport] = field(default_factory=list)
    #: pass name -> counters the pass recorded (fusions, folded bytes, packed bytes ...)
    pass_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the backend's own figures (vectorized share, memory plan, segments ...)
    stats: dict[str, Any] = field(default_factory=dict)

    def add_pass_stats(self, stats: Any) -> None:
        for (pass_name, key), value in stats.counters.items():
            self.pass_stats.setdefault(pass_name, {})[key] = value

    def format(self) -> str:
        lines = [f"backend: {self.backend}", f"compile time: {self.total_time:.3f} s"]
        for name, t in self.pass_times:
            lines.append(f"  {name:<28} {t * 1e3:9.1f} ms")
        if self.native_ops:
            n = sum(self.native_ops.values())
            lines.append(f"native ops: {n} ({', '.join(f'{k} x{v}' for k, v in sorted(self.native_ops.items()))})")
        if self.fallback_ops:
            n = sum(len(v) for v in self.fallback_ops.values())
            lines.append(f"ops falling back to torch: {n}")
            for op, reasons in sorted(self.fallback_ops.items()):
                lines.append(f"  {op} x{len(reasons)}: {reasons[0]}")
        for pass_name, counters in self.pass_stats.items():
            lines.append(f"{pass_name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counters.items())))
        for key, value in self.stats.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines)


    def add_unsupported(self, report: OpReport) -> None:
        self.unsupported.append(report)
        self.fallback_ops.setdefault(report.op, []).append(report.reason)


class Backend(Protocol):
    """A backend. Optional members: ``analyze(module, options, report)`` fills the report
    (unsupported ops, stats) without generating code, for ``ziggurat.explain``;
    ``load(payload, module, options)`` rebuilds a saved executable without recompiling."""

    name: str

    def default_pipeline(self, options: Any) -> str: ...

    def build(self, module: ModuleOp, options: Any, report: CompileReport) -> Executable: ...
