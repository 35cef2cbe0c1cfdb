"""Options of ``ziggurat.compile`` (documented in its docstring and in README)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ziggurat.ir.errors import ZigguratError


@dataclass(frozen=True)
class CompileOptions:
    backend: str = "cpu"
    #: Pass pipeline override (``"graph-opt,prepack-weights"`` or a list of pass specs).
    passes: str | None = None
    #: Prepack constant weights into blocked layouts (trades memory for speed).
    prepack: bool = True
    #: "auto" | "avx512" | "avx2" | "scalar" (CPU backend).
    isa: str = "auto"
    #: Worker threads of native code; None = all available cores.
    threads: int | None = None
    #: Run ops a backend cannot take through torch instead of failing.
    fallback: bool = True
    #: Object-code / engine cache directory; None = ~/.cache/ziggurat.
    cache_dir: str | Path | None = None
    #: Directory receiving the IR after every pass as numbered .mlir files.
    dump_ir: str | Path | None = None
    #: Log progress (pass names and times) at INFO level.
    verbose: bool = False
    #: "auto" | "torchscript" | "export": how a plain nn.Module is imported.
    frontend: str = "auto"
    #: Backend-specific extras (e.g. ``min_block_size`` for TensorRT).
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def from_kwargs(backend: str, kwargs: dict[str, Any]) -> CompileOptions:
        known = {f.name for f in fields(CompileOptions)} - {"extra", "backend"}
        direct = {k: v for k, v in kwargs.items() if k in known}
        extra = {k: v for k, v in kwargs.items() if k not in known}
        options = CompileOptions(backend=backend, extra=extra, **direct)
        if options.frontend not in ("auto", "torchscript", "export"):
            raise ZigguratError(
                f"unknown frontend '{options.frontend}'; use 'auto', 'torchscript' or 'export'",
                op="compile",
            )
        return options
