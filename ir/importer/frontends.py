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
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.frontend import Frontend

from ziggurat.ir.errors import ImportError_
from ziggurat.ir.importer.torchscript import import_torchscript
from ziggurat.ir.importer.torchscript_archive import load_script_module
from ziggurat.ir.types import UnsupportedTypeError, parse_type_list


def _types(text: str) -> list | None:  # pyright: ignore[reportMissingTypeArgument]
    if not text:
        return None
    try:
        return parse_type_list(text)
    except (UnsupportedTypeError, Exception) as e:  # xDSL ParseError included
        raise ImportError_(f"cannot parse input types '{text}': {str(e).splitlines()[-1]}",
                           op="--input-types") from None


@dataclass(frozen=True)
class TorchScriptFrontend(Frontend):
    name: ClassVar[str] = "torchscript"
    input_types: str = ""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        module = load_script_module(input.read(), input_name)
        return import_torchscript(module, input_types=_types(self.input_types))


@dataclass(frozen=True)
class PtFrontend(TorchScriptFrontend):
    name: ClassVar[str] = "pt"


@dataclass(frozen=True)
class TorchScriptIRFrontend(Frontend):
    name: ClassVar[str] = "torchscript-ir"
    input_types: str = ""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str) -> ModuleOp:
        text = input.read().decode("utf-8", errors="replace")
        return import_torchscript(text, input_types=_types(self.input_types))


@dataclass(frozen=True)
class TsFrontend(TorchScriptIRFrontend):
    name: ClassVar[str] = "ts"


FRONTENDS: tuple[type[Frontend], ...] = (
    TorchScriptFrontend, PtFrontend, TorchScriptIRFrontend, TsFrontend,
)
