"""Output targets of ``ziggurat-opt -t <target>`` beyond xDSL's own (``mlir``, ``llvm``...)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.utils.target import Target

# target name -> "ziggurat.module:ClassName"; filled as backends land.
_TARGETS: dict[str, str] = {}
_TARGETS["llvm-ir"] = "ziggurat.backends.cpu.llvm_target:LlvmIrTarget"


def all_targets() -> dict[str, Callable[[], type[Target]]]:
    def factory(target: str) -> Callable[[], type[Target]]:
        def load() -> type[Target]:
            module, _, cls = target.partition(":")
            return getattr(importlib.import_module(module), cls)

        return load

    return {name: factory(t) for name, t in _TARGETS.items()}
