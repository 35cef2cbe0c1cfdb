"""``explain{backend=cpu}``: print ``ziggurat.explain``'s report for the module on stdout
and leave the module as it is: ``ziggurat-opt model.pt -p explain`` prints the report
instead of the IR."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.backends.executable import CompileReport
from ziggurat.backends.explain import analyze, report_from
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.registry import get_backend
from ziggurat.ir.pipeline import run_pipeline
from ziggurat.ir.statistics import Statistics
from ziggurat.backends.passes import parse_pipeline


@dataclass(frozen=True)
class ExplainPass(ModulePass):
    name = "explain"

    backend: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = CompileOptions(backend=self.backend)
        backend = get_backend(self.backend)
        module = op.clone()
        report = CompileReport(backend=self.backend)
        stats = Statistics()
        spec = backend.default_pipeline(options)
        run_pipeline(module, parse_pipeline(spec) if spec else [], stats=stats)
        report.add_pass_stats(stats)
        analyze(backend, module, options, report)
        print(report_from(report, module).format(), file=sys.stdout)
