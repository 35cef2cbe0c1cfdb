"""The ``reference`` backend: the reference interpreter, executing every op with torch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.ir.interpreter import run


class ReferenceExecutable:
    def __init__(self, module: ModuleOp) -> None:
        self.module = module

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        return run(self.module, inputs)

    def serialize(self) -> bytes:
        return b"reference: the module's IR is the program"


class ReferenceBackend:
    name = "reference"
    #: builds ``?`` dims once for a whole range (``DynamicCompiledModule.build_range``)
    range_builds = True
    extra_options: tuple[str, ...] = ()

    def default_pipeline(self, options: CompileOptions) -> str:
        return ""

    def build(self, module: ModuleOp, options: CompileOptions, report: CompileReport) -> ReferenceExecutable:
        from ziggurat.backends.op_census import count_ops

        report.native_ops = count_ops(module)
        return ReferenceExecutable(module)

    def load(self, payload: bytes, module: ModuleOp, options: CompileOptions) -> ReferenceExecutable:
        return ReferenceExecutable(module)
