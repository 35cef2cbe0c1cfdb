"""``ziggurat-opt``: Ziggurat's pass driver (xDSL's ``xdsl-opt`` with Ziggurat's levels).

    ziggurat-opt model.mlir -p graph-opt
    ziggurat-opt model.pt --frontend torchscript --input-types 'tensor<1x3x224x224xf32>' --emit=fused
    ziggurat-opt graph.ts --frontend torchscript-ir --elide-resources
    ziggurat-opt -f torchscript-ir graph.txt          # -f chooses the parser for any name and for stdin (-)

Bad input of any kind ends with a one-line diagnostic and exit status 1, never a traceback
(``ZIGGURAT_DEBUG=1`` shows the traceback of internal errors).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, cast

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.frontend import Frontend
from xdsl.xdsl_opt_main import xDSLOptMain

from ziggurat.ir.dim_ranges import declare_shape_symbols
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.mlir_text import check_string_literals
from ziggurat.ir.pipeline import expand_pipeline
from ziggurat.ir.resources import elided_resources
from ziggurat.ir.ssa_order import check_defined_before_use
from ziggurat.ir.statistics import collect
from ziggurat.tools.pass_timing import PassTimes
from ziggurat.tools.stages import available_stages


class ZigguratOptMain(xDSLOptMain):
    version_format = "ziggurat-opt (Ziggurat on xdsl {xdsl_version})"

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        stages = available_stages()
        arg_parser.add_argument(
            "--emit",
            choices=sorted(stages),
            default=None,
            help="lower to this level and print it (runs the stage's pipeline before -p)",
        )
        arg_parser.add_argument(
            "--input-types",
            default="",
            help="types of the graph inputs for the TorchScript frontends, "
            "e.g. 'tensor<1x3x224x224xf32>,tensor<5xi64>'",
        )
        arg_parser.add_argument(
            "--dim-ranges",
            default="",
            help="symbols and ranges for the ? input dims of the torch level, e.g. 'batch=1:64' or "
            "'batch=1:8,seq=1:384,x.0=batch,x.1=seq' (a .mlir input)",
        )
        arg_parser.add_argument(
            "--bisect",
            action="store_true",
            help="run the reference interpreter after every pass of -p on random inputs and "
            "report the first pass and op whose values diverge (exit status 1 if one does)",
        )
        arg_parser.add_argument(
            "--pass-statistics",
            action="store_true",
            help="print the counters the passes recorded (fusions, folded bytes, ...) to stderr",
        )
        arg_parser.add_argument(
            "--elide-resources",
            action="store_true",
            help="print dense_resource handles without their blob data",
        )

    def setup_pipeline(self) -> None:
        if self.args.emit:
            stage = available_stages()[self.args.emit]
            self.args.passes = ",".join(p for p in (",".join(stage.passes), self.args.passes) if p)
            if stage.target is not None:
                self.args.target = stage.target
        super().setup_pipeline()
        self._expanded = expand_pipeline(self.pipeline.passes)
        self._times: PassTimes | None = None
        self._ran = 0
        self._started = 0.0
        if self.args.print_between_passes or self.args.time_passes:
            # Pipelines (graph-opt) run as their passes: the IR and the time after each.
            self.pipeline = PassPipeline(tuple(p for _, p in self._expanded), self._between_passes)

    def _between_passes(self, previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None) -> None:
        """Called before the first pass, between passes and after the last (see ``PassPipeline``)."""
        now = time.perf_counter()
        if previous is not None:
            if self._times is not None:
                self._times.record(self._ran, now - self._started)
            self._ran += 1
        if not self.args.disable_verify:
            module.verify()
            if self._times is not None:
                self._times.record_verifier(time.perf_counter() - now)
        if previous is not None and next_ is not None and self.args.print_between_passes:
            parents, p = self._expanded[self._ran - 1]
            print(f"IR after {'/'.join([*(q.name for q in parents), p.name])}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        self._started = time.perf_counter()

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input (a file; stdin when there is none or it is ``-``) and the name of the
        frontend that reads it: ``-f`` whatever the file is called, else the file's
        extension (``mlir`` for stdin).  xDSL would check the extension even under ``-f``."""
        if self.args.input_file == "-":
            self.args.input_file = None
        stream, extension = super().get_input_stream()
        if self.args.frontend:
            return stream, parse_spec(self.args.frontend).name
        if extension not in self.available_frontends:
            stream.close()
            raise ZigguratError(
                f"cannot tell how to read '{self.get_input_name()}' from its extension "
                f"'{extension}'; name a frontend with -f (one of {', '.join(sorted(self.available_frontends))})",
                op="-f/--frontend")
        return stream, extension

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if (self.args.input_types or self.args.dim_ranges) and "{" not in (self.args.frontend or ""):
            frontend = parse_spec(self.args.frontend or file_extension).name
            if self._takes_input_types(frontend):
                ranges = f' dim-ranges="{self.args.dim_ranges}"' if self.args.dim_ranges else ""
                self.args.frontend = f'{frontend}{{input-types="{self.args.input_types}"{ranges}}}'
            elif self.args.input_types:
                raise ZigguratError(f"applies to the TorchScript frontends, not to "
                                    f"'{self.get_input_name()}' read as {frontend}", op="--input-types")
        if parse_spec(self.args.frontend or file_extension).name == "mlir":
            data = chunk.read()
            check_string_literals(data.decode(errors="replace"), self.get_input_name())
            chunk = io.BytesIO(data)
        module = super().parse_chunk(chunk, file_extension, start_offset)
        if module is not None:
            check_defined_before_use(module)
            frontend = parse_spec(self.args.frontend or file_extension).name
            if self.args.dim_ranges and not self._takes_input_types(frontend):  # else the frontend took them
                if frontend != "mlir":
                    raise ZigguratError("applies to .mlir input, and to the TorchScript frontends with "
                                        "--input-types", op="--dim-ranges")
                declare_shape_symbols(module, self.args.dim_ranges)
        return module

    def _takes_input_types(self, frontend: str) -> bool:
        factory = self.available_frontends.get(frontend)
        if factory is None or inspect.signature(factory).parameters:  # legacy: a parse function
            return False
        cls = cast(Callable[[], type[Frontend]], factory)()
        return dataclasses.is_dataclass(cls) and any(f.name == "input_types" for f in dataclasses.fields(cls))

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.args.bisect:
            self._bisect(prog)
            return
        self._ran = 0
        self._times = PassTimes(self._expanded) if self.args.time_passes else None
        with collect() as stats:
            try:
                super().apply_passes(prog)
            except ZigguratError as e:
                if not self.args.verify_diagnostics:
                    raise
                # one chunk's error, printed as xDSL prints a verifier's: the next chunk runs
                raise DiagnosticException(f"error: {e}") from None
        if self.args.pass_statistics and stats.counters:
            print(stats.format(), file=sys.stderr)
        if self._times is not None:
            print(self._times.format(), file=sys.stderr)

    def _bisect(self, prog: ModuleOp) -> None:
        from ziggurat.backends.bisect import bisect_module
        from ziggurat.backends.compiled_module import forward_function
        from ziggurat.ir.types import example_tensor

        name = _entry_name(prog)
        fn = forward_function(prog, name)
        inputs = [example_tensor(t) for t in fn.function_type.inputs.data]  # pyright: ignore
        result = bisect_module(prog, inputs, list(self.pipeline.passes), ctx=self.ctx, func_name=name)
        print(result.format())
        raise SystemExit(0 if result.ok else 1)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        from ziggurat.backends.explain_pass import ExplainPass

        if any(isinstance(p, ExplainPass) for p in self.pipeline.passes):
            return ""  # the pipeline's output is explain's report, printed by the pass
        # Frontends build ops without parsing, so the builtin dialect (which owns the
        # weight blobs printed after the module) may not be loaded yet.
        if "builtin" not in {d.name for d in self.ctx.loaded_dialects}:
            self.ctx.load_registered_dialect("builtin")
        with elided_resources(self.args.elide_resources):
            return super().output_resulting_program(prog)


def _entry_name(prog: ModuleOp) -> str:
    from xdsl.dialects import func

    names = [op.sym_name.data for op in prog.ops if isinstance(op, func.FuncOp)]
    return "forward" if "forward" in names else names[0]


def _parse_error_line(e: ParseError) -> str:
    location = e.span.get_location()
    context = e.span.print_with_context().splitlines()
    source = context[1].strip() if len(context) > 1 else ""
    return f"{location}: error: {e.msg}" + (f"  (at: {source[:120]})" if source else "")


def _diagnostic_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    message = next((ln for ln in lines if not ln.lstrip().startswith(("%", "^", "builtin.", "func.", "}"))), lines[0] if lines else type(e).__name__)
    return f"error: {message.strip()}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        ZigguratOptMain(args=argv).run()
    except ParseError as e:
        print(f"ziggurat-opt: {_parse_error_line(e)}", file=sys.stderr)
        return 1
    except ZigguratError as e:
        print(f"ziggurat-opt: error: {e}", file=sys.stderr)
        return 1
    except DiagnosticException as e:
        print(f"ziggurat-opt: {_diagnostic_line(e)}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as e:
        print(f"ziggurat-opt: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        if os.environ.get("ZIGGURAT_DEBUG"):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"ziggurat-opt: internal error: {type(e).__name__}: {first} "
              "(set ZIGGURAT_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["ZigguratOptMain", "main"]
