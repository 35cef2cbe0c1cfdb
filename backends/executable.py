"""What a backend produces: something that runs the compiled graph on flat inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from xdsl.dialects.builtin import ModuleOp


class Executable(Protocol):
    """The compiled graph: flat tensors in, flat values out."""

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
    stats: dict[str, Any] = field(default_factory=dict)

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
        for key, value in self.stats.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines)


class Backend(Protocol):
    name: str

    def default_pipeline(self, options: Any) -> str: ...

    def build(self, module: ModuleOp, options: Any, report: CompileReport) -> Executable: ...
