"""Options of ``ziggurat.compile`` (documented in its docstring and in README)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.importer.autocast import check_precision


class UnknownOptionError(ZigguratError, TypeError):
    """A keyword of ``ziggurat.compile`` (``explain``, ``bisect``) that no option has."""


@dataclass(frozen=True)
class CompileOptions:
    backend: str = "cpu"
    #: Pass pipeline override (``"graph-opt,prepack-weights"`` or a list of pass specs).
    passes: str | None = None
    #: Prepack constant weights into blocked layouts (trades memory for speed).
    prepack: bool = True
    #: "auto" | "avx512" | "avx2" | "scalar" (CPU backend).
    isa: str = "auto"
    #: Worker threads of native code; None = ``torch.get_num_threads()`` at each call (code
    #: planned for all available cores).
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
    #: torch.export's ``dynamic_shapes`` (``Dim``s per input dim, by argument name or position):
    #: the compiled module takes every size in the declared ranges.
    dynamic_shapes: Any = None
    #: "fp32" | "bf16" | "fp16": the model as it runs under ``torch.autocast`` at that dtype
    #: (``ir/importer/autocast.py``); "fp32" compiles it as it is.
    precision: str = "fp32"
    #: Backend-specific extras (e.g. ``min_block_size`` for TensorRT).
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def from_kwargs(backend: str, kwargs: dict[str, Any]) -> CompileOptions:
        """Options from ``compile``'s keywords; one that neither ``CompileOptions`` nor the
        backend (its ``extra_options``) knows is an :class:`UnknownOptionError`."""
        known = {f.name for f in fields(CompileOptions)} - {"extra", "backend"}
        direct = {k: v for k, v in kwargs.items() if k in known}
        extra = {k: v for k, v in kwargs.items() if k not in known}
        _check_extra(backend, extra)
        options = CompileOptions(backend=backend, extra=extra, **direct)
        if options.frontend not in ("auto", "torchscript", "export"):
            raise ZigguratError(
                f"unknown frontend '{options.frontend}'; use 'auto', 'torchscript' or 'export'",
                op="compile",
            )
        check_precision(options.precision)
        if backend == "cpu":  # before the import and the passes, which lower for any ISA
            from ziggurat.backends.cpu.isa import host_run_isa

            host_run_isa(options.isa)
        return options


def _check_extra(backend: str, extra: dict[str, Any]) -> None:
    if not extra:
        return
    from ziggurat.backends.registry import backend_names, extra_options

    own = extra_options(backend)
    unknown = [k for k in extra if k not in own]
    if not unknown:
        return
    common = [f.name for f in fields(CompileOptions) if f.name != "extra"] + ["example_kwargs"]
    takes = common + list(own)
    name = unknown[0]
    others = [b for b in backend_names() if b != backend and name in _options_of(b)]
    if others:
        why = f"'{name}' is an option of the {', '.join(others)} backend{'s' if len(others) > 1 else ''}, not of {backend}"
    else:
        close = difflib.get_close_matches(name, takes + [o for b in backend_names() for o in _options_of(b)], n=1)
        why = f"unknown option '{name}'" + (f" (did you mean '{close[0]}'?)" if close else "")
    raise UnknownOptionError(f"{why}; the {backend} backend takes: {', '.join(takes)}", op="compile")


def _options_of(backend: str) -> tuple[str, ...]:
    from ziggurat.backends.registry import extra_options

    try:
        return extra_options(backend)
    except Exception:  # noqa: BLE001 - a backend that cannot even be imported takes nothing here
        return ()
