"""The result of ``ziggurat.compile``: an ``nn.Module`` with the model's call signature."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.executable import CompileReport, Executable
from ziggurat.backends.input_check import InputSignature
from ziggurat.ir.errors import InputError
from ziggurat.ir.signature import (call_signature, forward_function, input_names, input_writes, output_structure,
                                   reads_storage, rebuild)
from ziggurat.ir.structure import parse_tree

#: ``report.stats`` key: call-time inputs copied to the layout the module was compiled for
_COPIED = "inputs copied to the compiled layout"


class CompiledModule(torch.nn.Module):
    """A compiled model. Call it like the original; ``.report`` says what ran where,
    ``.ir`` holds the IR text of the levels it went through."""

    def __init__(
        self,
        executable: Executable,
        module: ModuleOp,
        report: CompileReport,
        static_inputs: dict[int, Any],
        ir: MutableMapping[str, str] | None = None,
        device: str = "cpu",
        options: Any = None,
        input_types: Sequence[Any] | None = None,
    ) -> None:
        super().__init__()
        fn = forward_function(module)
        self.executable = executable
        self.module_ir = module
        self.report = report
        self.ir = ir or {}
        self._input_types = list(input_types if input_types is not None else fn.function_type.inputs.data)
        self._input_names = input_names(fn)
        self._structure = output_structure(fn)
        parse_tree(self._structure)  # its classes are found now, not at the first call
        self._call = call_signature(fn)
        self._input_writes = input_writes(fn)
        self._static_inputs = static_inputs
        #: inputs in another layout are copied to the compiled one, unless an op reads storage
        self._copy_layouts = not reads_storage(fn)
        # An executable that checks its own inputs (the CPU runtime: shapes, dtypes, device and
        # contiguity) is called past that check once this one has run it.
        own = getattr(executable, "input_signature", None)
        run_checked: Callable[[Sequence[Any]], list[Any]] | None = getattr(executable, "run_checked", None)
        if isinstance(own, InputSignature) and run_checked is not None:
            self._signature, self._run = own, run_checked
        else:
            self._signature = InputSignature(self._input_types, self._input_names, device=device)
            self._run = executable.run
        self.options = options

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self._call is not None:
            tensors = self._call.flat_inputs(args, kwargs)
        else:
            tensors = self._positional(args, kwargs)
        given = tensors
        if self._copy_layouts:
            tensors = self._compiled_layout(tensors)
        self._signature.check(tensors)
        if self._input_writes:
            _check_unaliased(given, self._input_names)
        results = self._run(tensors)
        for result, index in self._input_writes:
            given[index].copy_(results[result])
        return rebuild(self._structure, results)

    def _positional(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The inputs of a module compiled without a Python signature (TorchScript, IR text)."""
        if kwargs:
            raise InputError(f"this module takes its inputs by position ({', '.join(self._input_names)}), "
                             f"not by keyword ({', '.join(kwargs)}): it was compiled from a graph without "
                             "a Python signature", op="call")
        tensors: list[Any] = []
        for i, arg in enumerate(args):
            if i in self._static_inputs:
                if arg != self._static_inputs[i]:
                    raise InputError(
                        f"input {i} was {self._static_inputs[i]!r} at compile time and is "
                        f"specialized into the compiled code; got {arg!r}",
                        op="call",
                    )
                continue
            tensors.append(arg)
        return tensors

    def _compiled_layout(self, tensors: list[Any]) -> list[Any]:
        """Non-contiguous tensors (channels-last, transposed, expanded) copied to the row-major
        layout the module was compiled for; counted in ``report.stats``."""
        copied = 0
        out = tensors
        for i, t in enumerate(tensors):
            if isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_contiguous():
                if out is tensors:
                    out = list(tensors)
                out[i] = t.contiguous()
                copied += 1
        if copied:
            stats = self.report.stats
            stats[_COPIED] = stats.get(_COPIED, 0) + copied
        return out

    def save(self, path: str | Path) -> None:
        """Write one file with the executable (object code / engine), the IR, the input
        signature and the versions; ``ziggurat.load(path)`` reads it back without recompiling."""
        from ziggurat.backends.serialization import save

        save(self, Path(path))  # pyright: ignore[reportArgumentType]

    def extra_repr(self) -> str:
        return f"backend={self.report.backend}, inputs={[str(t) for t in self._input_types]}"


def _check_unaliased(tensors: Sequence[Any], names: Sequence[str]) -> None:
    """A model that writes to its inputs was compiled for inputs that share no memory; eager
    would let a write through one input show through another."""
    seen: dict[int, int] = {}
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            continue
        key = t.untyped_storage().data_ptr()
        if key in seen:
            first = seen[key]
            raise InputError(
                f"inputs {first} ('{names[first] if first < len(names) else first}') and {i} "
                f"('{names[i] if i < len(names) else i}') share memory, and the model writes to "
                "its inputs in place; pass separate tensors (e.g. x.clone())", op="call")
        seen[key] = i


def static_inputs_of(example_inputs: Sequence[Any]) -> dict[int, Any]:
    return {i: v for i, v in enumerate(example_inputs) if not isinstance(v, torch.Tensor)}
