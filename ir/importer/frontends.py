"""xDSL frontends (``-f``/``--frontend`` of ``ziggurat-opt`` and ``xdsl-opt``).

* ``torchscript`` (also for ``.pt`` files): a module saved with ``torch.jit.save`` (the
  archive is checked, and loaded where a damaged one cannot end the process:
  ``torchscript_archive``).
* ``torchscript-ir`` (also for ``.ts`` files): TorchScript IR text.

``input-types`` gives the graph inputs' types (``tensor<1x3xf32>,tensor<5xi64>``);
without it the types annotated in the graph are used.
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
from ziggurat.ir.types import UnsupportedTypeError, format_type, has_dynamic_dims, parse_type_list


def _types(text: str) -> list | None:  # pyright: ignore[reportMissingTypeArgument]
    if not text:
        return None
    try:
        types = parse_type_list(text)
    except (UnsupportedTypeError, Exception) as e:  # xDSL ParseError included
        raise ModelImportError(f"cannot parse input types '{text}': {str(e).splitlines()[-1]}",
                               op="--input-types") from None
    dynamic = [format_type(t) for t in types if has_dynamic_dims(t)]
    if dynamic:
        raise ModelImportError(f"{dynamic[0]} has a ? size: the TorchScript frontends import static sizes (they "
                               "run the graph on example inputs); give the sizes, or compile a Python model with "
                               "ziggurat.compile(..., dynamic_shapes=...), whose torch level is symbolic",
                               op="--input-types")
    return types


def _import(graph: Any, input_types: str, input_name: str) -> ModuleOp:
    """Import runs the graph on example inputs of its input types: memory they cannot get
    is a diagnostic about the input, not an internal error."""
    try:
        return import_torchscript(graph, input_types=_types(input_types))
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

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        return _import(load_script_module(input.read(), input_name), self.input_types, input_name)


@dataclass(frozen=True)
class PtFrontend(TorchScriptFrontend):
    name: ClassVar[str] = "pt"


@dataclass(frozen=True)
class TorchScriptIRFrontend(Frontend):
    name: ClassVar[str] = "torchscript-ir"
    input_types: str = ""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        return _import(input.read().decode("utf-8", errors="replace"), self.input_types, input_name)


@dataclass(frozen=True)
class TsFrontend(TorchScriptIRFrontend):
    name: ClassVar[str] = "ts"


FRONTENDS: tuple[type[Frontend], ...] = (
    TorchScriptFrontend, PtFrontend, TorchScriptIRFrontend, TsFrontend,
)
