"""xDSL frontends (``-f``/``--frontend`` of ``ziggurat-opt`` and ``xdsl-opt``).

* ``torchscript`` (also for ``.pt`` files): a module saved with ``torch.jit.save`` (the
  archive is checked, and loaded where a damaged one cannot end the process:
  ``torchscript_archive``).
* ``torchscript-ir`` (also for ``.ts`` files): TorchScript IR text.

``input-types`` gives the graph inputs' types (``tensor<1x3xf32>,tensor<5xi64>``);
without it the types annotated in the graph are used.  ``?`` sizes need ``dim-ranges``
(``batch=1:64``, see ``ziggurat.ir.dim_ranges``): the graph is then imported symbolically
(``torchscript_symbolic``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.frontend import Frontend

from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.torchscript import import_torchscript
from ziggurat.ir.importer.torchscript_archive import load_script_module
from ziggurat.ir.importer.torchscript_symbolic import import_torchscript_symbolic
from ziggurat.ir.types import UnsupportedTypeError, format_type, has_dynamic_dims, parse_type_list


def _types(text: str, dim_ranges: str) -> list | None:  # pyright: ignore[reportMissingTypeArgument]
    if dim_ranges and not text:
        raise ModelImportError("names symbols for ? sizes, which the TorchScript frontends take from "
                               "--input-types ('tensor<?x128xf32>')", op="--dim-ranges")
    if not text:
        return None
    try:
        types = parse_type_list(text)
    except (UnsupportedTypeError, Exception) as e:  # xDSL ParseError included
        raise ModelImportError(f"cannot parse input types '{text}': {str(e).splitlines()[-1]}",
                               op="--input-types") from None
    dynamic = [format_type(t) for t in types if has_dynamic_dims(t)]
    if dynamic and not dim_ranges:
        raise ModelImportError(f"{dynamic[0]} has a ? size: name its symbol and range with --dim-ranges "
                               "(e.g. 'batch=1:64'), or give the size", op="--input-types")
    if dim_ranges and not dynamic:
        raise ModelImportError(f"--dim-ranges '{dim_ranges}' for input types without a ? size ({text})",
                               op="--dim-ranges")
    return types


def _import(graph: Any, input_types: str, input_name: str, dim_ranges: str = "") -> ModuleOp:
    """Import runs the graph on example inputs of its input types: memory they cannot get
    is a diagnostic about the input, not an internal error."""
    types = _types(input_types, dim_ranges)
    if dim_ranges and types is not None:
        return import_torchscript_symbolic(graph, types, dim_ranges)
    try:
        return import_torchscript(graph, input_types=types)
    except (MemoryError, RuntimeError) as e:
        if not isinstance(e, MemoryError) and "can't allocate memory" not in str(e):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelImportError(f"importing {input_name} runs its graph on example inputs of the given types, "
                               f"and this process cannot allocate them ({first[:160]})", op="import") from None


@dataclass(frozen=True)
class TorchScriptFrontend(Frontend):
    name: ClassVar[str] = "torchscript"
    input_types: str = ""
    dim_ranges: str = ""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        return _import(load_script_module(input.read(), input_name), self.input_types, input_name, self.dim_ranges)


@dataclass(frozen=True)
class PtFrontend(TorchScriptFrontend):
    name: ClassVar[str] = "pt"


@dataclass(frozen=True)
class TorchScriptIRFrontend(Frontend):
    name: ClassVar[str] = "torchscript-ir"
    input_types: str = ""
    dim_ranges: str = ""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        return _import(input.read().decode("utf-8", errors="replace"), self.input_types, input_name, self.dim_ranges)


@dataclass(frozen=True)
class TsFrontend(TorchScriptIRFrontend):
    name: ClassVar[str] = "ts"


FRONTENDS: tuple[type[Frontend], ...] = (
    TorchScriptFrontend, PtFrontend, TorchScriptIRFrontend, TsFrontend,
)
