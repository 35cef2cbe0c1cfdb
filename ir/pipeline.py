"""Running a pass pipeline with verification, timing, IR dumps and progress logging."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from ziggurat.ir.context import make_context
from ziggurat.ir import statistics
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.resources import elided_resources

log = logging.getLogger("ziggurat")

#: Called after each pass with (pass, module).
PassHook = Callable[[ModulePass, ModuleOp], None]


def print_module(module: ModuleOp, *, elide: bool = True) -> str:
    import io

    from xdsl.dialects import get_all_dialects  # noqa: F401

    out = io.StringIO()
    with elided_resources(elide):
        printer = Printer(stream=out)
        printer.print_op(module)
        printer.print_metadata(make_context().loaded_dialects)
    return out.getvalue()


def expand_pipeline(passes: Sequence[ModulePass], parents: tuple[ModulePass, ...] = ()
                    ) -> list[tuple[tuple[ModulePass, ...], ModulePass]]:
    """Pipelines (passes with ``expand()``, like ``graph-opt``) -> the passes they run, each
    with the pipelines it belongs to (outermost first)."""
    result: list[tuple[tuple[ModulePass, ...], ModulePass]] = []
    for p in passes:
        sub = getattr(p, "expand", None)
        result += expand_pipeline(sub(), (*parents, p)) if sub is not None else [(parents, p)]
    return result


def verifier_message(e: DiagnosticException) -> str:
    """The verifier's complaint without the IR dump xDSL wraps around it: the line that says
    what does not verify and the reason under it (``f32 should be of base attribute vector``)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if "does not verify" in ln or "error" in ln.lower():
            reason = ln.rstrip(":")
            if ln.endswith(":") and i + 1 < len(lines):
                reason += ": " + lines[i + 1]
            return reason
    return lines[0] if lines else type(e).__name__


def run_pipeline(
    module: ModuleOp,
    passes: list[ModulePass],
    *,
    ctx: Context | None = None,
    dump_dir: str | Path | None = None,
    hooks: list[PassHook] | None = None,
    stats: statistics.Statistics | None = None,
) -> list[tuple[str, float]]:
    """Apply ``passes`` in order, verifying after each; returns (pass name, seconds) pairs.
    Pass counters go to ``stats`` when given."""
    ctx = ctx or make_context()
    times: list[tuple[str, float]] = []
    dump = Path(dump_dir) if dump_dir is not None else None
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / "00-import.mlir").write_text(print_module(module, elide=False))
    for index, p in enumerate(passes, start=1):
        start = time.perf_counter()
        try:
            with statistics.collect(stats):
                p.apply(ctx, module)
            module.verify()
        except ZigguratError:
            raise
        except DiagnosticException as e:
            raise ZigguratError(f"the IR does not verify after pass '{p.name}': {verifier_message(e)}",
                                op=p.name) from None
        elapsed = time.perf_counter() - start
        times.append((p.name, elapsed))
        log.info("pass %-28s %8.1f ms", p.name, elapsed * 1e3)
        if dump is not None:
            (dump / f"{index:02d}-{p.name}.mlir").write_text(print_module(module, elide=False))
        for hook in hooks or []:
            hook(p, module)
    return times
