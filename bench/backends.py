"""The benchmarked backends: how each one turns an eval-mode model into a callable.

A backend is prepared by compiling (if it compiles) and running it once on the example inputs;
compile time and peak memory cover exactly that. Failures never propagate: they become an
"n/a" result carrying the error's first line, so one broken backend cannot sink the run.
"""

from __future__ import annotations

import functools

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ziggurat.bench.accuracy import snapshot
from ziggurat.bench.memory import PeakRssDelta

Runner = Callable[..., Any]

EAGER = "eager"
INDUCTOR = "inductor"
INDUCTOR_FREEZE = "inductor-freeze"
ZIGGURAT = "ziggurat"
BACKEND_NAMES: tuple[str, ...] = (EAGER, INDUCTOR, INDUCTOR_FREEZE, ZIGGURAT)
INDUCTOR_BACKENDS: tuple[str, ...] = (INDUCTOR, INDUCTOR_FREEZE)


def error_line(exc: BaseException) -> str:
    """'ExcType: first non-empty line of the message', at most 200 characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# Dynamo caches compiled graphs on the *code object* of the top-level forward, and with inlined
# nn modules its guards do not pin the module instance. Two copies of one model compiled with
# and without freezing would therefore share a graph (the second silently reuses the first,
# unfrozen one). Each Inductor variant gets its own entry class, hence its own code object.
class InductorEntry(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *inputs: torch.Tensor) -> Any:
        return self.model(*inputs)


class InductorFreezeEntry(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *inputs: torch.Tensor) -> Any:
        return self.model(*inputs)


#: ``--precision``: the autocast dtype every column runs under (Ziggurat: ``precision=``).
AUTOCAST_DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16}


class AutocastEntry(nn.Module):
    """``model`` called under ``torch.autocast("cpu", dtype)``, outputs as eager autocast gives them."""

    def __init__(self, model: nn.Module, dtype: torch.dtype) -> None:
        super().__init__()
        self.model = model
        self.dtype = dtype

    def forward(self, *inputs: torch.Tensor) -> Any:
        with torch.autocast("cpu", dtype=self.dtype):
            return self.model(*inputs)


def _build_eager(model: nn.Module, inputs: tuple[torch.Tensor, ...], threads: int) -> Runner:
    return model


def _build_inductor(model: nn.Module, inputs: tuple[torch.Tensor, ...], threads: int) -> Runner:
    return torch.compile(InductorEntry(model))  # default mode; compiles on the first call


def _build_inductor_freeze(model: nn.Module, inputs: tuple[torch.Tensor, ...], threads: int) -> Runner:
    # torch.compile(options={"freezing": True}) does not freeze in torch 2.13; the global config
    # flag does, and it is read when compilation happens (the first call): see FreezingOn.
    return torch.compile(InductorFreezeEntry(model))


def _build_ziggurat(model: nn.Module, inputs: tuple[torch.Tensor, ...], threads: int,
                    precision: str = "fp32") -> Runner:
    import ziggurat

    compile_fn = getattr(ziggurat, "compile", None)
    if compile_fn is None:
        raise RuntimeError("ziggurat.compile is not available yet")
    compiled = compile_fn(model, inputs, backend="cpu", threads=threads, precision=precision)
    if not callable(compiled):
        raise TypeError(f"ziggurat.compile returned a non-callable {type(compiled).__name__}")
    return compiled


class FreezingOn:
    """Sets torch._inductor.config.freezing = True for the block and restores the old value."""

    def __enter__(self) -> None:
        import torch._inductor.config as inductor_config

        self._config = inductor_config
        self._old = inductor_config.freezing
        inductor_config.freezing = True

    def __exit__(self, *exc: object) -> None:
        self._config.freezing = self._old


class _NoContext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_BUILDERS: dict[str, Callable[[nn.Module, tuple[torch.Tensor, ...], int], Runner]] = {
    EAGER: _build_eager,
    INDUCTOR: _build_inductor,
    INDUCTOR_FREEZE: _build_inductor_freeze,
    ZIGGURAT: _build_ziggurat,
}


@dataclass
class PreparedBackend:
    name: str
    runner: Runner | None
    setup_s: float | None  # compile (where there is one) + the first call, wall clock
    peak_mem_bytes: int | None  # see ziggurat.bench.memory
    first_output: list[torch.Tensor] | None
    error: str | None
    details: dict[str, int] = field(default_factory=dict)  # e.g. Dynamo graph / graph-break counts

    @property
    def ok(self) -> bool:
        return self.error is None


def prepare_backend(name: str, model: nn.Module, inputs: tuple[torch.Tensor, ...], threads: int,
                    precision: str = "fp32") -> PreparedBackend:
    """Compile `model` with backend `name` and run it once; never raises for backend failures.

    ``precision`` ``"bf16"``/``"fp16"``: eager and Inductor run the model under autocast,
    Ziggurat compiles it with ``precision=``."""
    builder = _BUILDERS[name]
    if name == ZIGGURAT:  # int8: the model is already quantized (bench/quantize.py)
        builder = functools.partial(_build_ziggurat, precision="fp32" if precision == "int8" else precision)
    elif precision in AUTOCAST_DTYPES:
        model = AutocastEntry(model, AUTOCAST_DTYPES[precision])
    if name not in _BUILDERS:
        raise KeyError(f"unknown backend {name!r}; known: {', '.join(BACKEND_NAMES)}")
    gc.collect()
    dynamo_before = _dynamo_counts() if name in INDUCTOR_BACKENDS else {}
    context = FreezingOn() if name == INDUCTOR_FREEZE else _NoContext()
    memory = PeakRssDelta()
    try:
        with memory, context:
            start = time.perf_counter_ns()
            runner = builder(model, inputs, threads)
            output = runner(*inputs)
            setup_s = (time.perf_counter_ns() - start) / 1e9
        first_output = snapshot(output)
    except Exception as exc:  # any backend failure becomes an n/a column, never a crash
        return PreparedBackend(name, None, None, memory.delta_bytes, None, error_line(exc))
    details = {}
    if dynamo_before:
        after = _dynamo_counts()
        details = {key: after[key] - dynamo_before[key] for key in after}
    return PreparedBackend(name, runner, setup_s, memory.delta_bytes, first_output, None, details)


def _dynamo_counts() -> dict[str, int]:
    """Dynamo's running totals of compiled graphs and graph breaks (diffed around a compile)."""
    from torch._dynamo.utils import counters

    return {
        "dynamo_graphs": int(counters["stats"]["unique_graphs"]),
        "dynamo_graph_breaks": int(sum(counters["graph_break"].values())),
    }


def warm_up_inductor_toolchain() -> None:
    """Pay Inductor's one-time per-process costs (C++ toolchain probing, header precompilation)
    on a throwaway function, so the first model's compile time is comparable to the others."""
    import torch._dynamo

    def tiny(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * 2.0 + 1.0).sum(dim=1)

    with torch.no_grad():
        torch.compile(tiny)(torch.randn(4, 8))
    torch._dynamo.reset()


def reset_compiler_caches() -> None:
    """Drop Dynamo's compiled graphs (between models, so nothing is shared or kept alive)."""
    import torch._dynamo

    torch._dynamo.reset()
