"""A Python model's call as the frontends see it: flat tensors in, flat tensors out.

``torch.export`` and ``torch.jit.trace`` take the model with its ``forward`` replaced, for the
import, by one that takes the flat tensors of the example call (its arguments, bound to the
parameters of ``forward`` as Python binds them, keywords and nested containers included),
rebuilds that call, runs the model through ``__call__`` (its hooks see the real arguments) and
returns the tensors of the output, whatever its shape (dicts, Hugging Face ``ModelOutput``s,
dataclasses, named tuples, caches). The call signature and the output structure are recorded
on the imported function (``ziggurat.signature``, ``ziggurat.outputs``).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp, StringAttr

from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.importer.autocast import Autocast
from ziggurat.ir.errors import ModelImportError, ZigguratError
from ziggurat.ir.signature import OUTPUTS_ATTR, output_structure, set_call_signature
from ziggurat.ir.structure import Const, Container, Leaf, Node, check_rebuilds, describe, format_tree, parse_tree

_HOOKS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
          "_forward_hooks_with_kwargs", "_forward_hooks_always_called")


def forward_signature(model: torch.nn.Module) -> inspect.Signature:
    try:
        return inspect.signature(model.forward)
    except (TypeError, ValueError):
        return inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])


def _traced_number(t: torch.Tensor) -> bool:
    """While tracing, ``x.size(0)``, ``x.shape[i]``, ``x.numel()`` are 0-d tensors made by
    ``prim::NumToTensor``; eager's are Python ints (constants: shapes are static)."""
    if torch._C._get_tracing_state() is None or t.dim() != 0:  # pyright: ignore[reportPrivateUsage]
        return False
    try:
        return torch._C._get_value_trace(t).node().kind() == "prim::NumToTensor"  # pyright: ignore
    except RuntimeError:
        return False


class _FlatGraphModule(torch.nn.Module):
    """A ``torch.fx.GraphModule`` (a PT2E-quantized model, an exported program's module) called
    with flat tensors: the module holding it is what the frontend traces."""

    def __init__(self, model: torch.fx.GraphModule, flat_forward: Any) -> None:
        super().__init__()
        self.model = model
        self.flat_forward = flat_forward

    def forward(self, *flat: Any) -> Any:
        return self.flat_forward(*flat)


class ModelCall:
    """``model(*args, **kwargs)`` with example inputs, over flat tensors; with ``autocast``,
    the call runs under it and its floating outputs come back in the model's dtype."""

    def __init__(self, model: torch.nn.Module, args: Sequence[Any], kwargs: Mapping[str, Any],
                 autocast: Autocast | None = None) -> None:
        self.model = model
        self.autocast = autocast
        #: fresh copies of the example tensors, in flat order
        self.tensors: list[torch.Tensor] = []
        self.signature = CallSignature.bind(forward_signature(model), args, kwargs, self._add_input)
        self.input_names = self.signature.input_names()
        self.output: Node | None = None
        self._output_value: Any = None
        self._output_leaves: list[torch.Tensor] = []
        self._held: dict[str, Any] = {}
        self._own_forward: Any = None

    def _add_input(self, tensor: torch.Tensor) -> int:
        self.tensors.append(tensor.detach().clone())
        return len(self.tensors) - 1

    def _flat_forward(self, *flat: Any) -> tuple[torch.Tensor, ...]:
        args, kwargs = self.signature.arguments(flat)
        autocast = self.autocast
        with self._original_forward(), autocast.context() if autocast is not None else nullcontext():
            out = self.model(*args, **kwargs)
        leaves: list[torch.Tensor] = []

        def add(t: torch.Tensor) -> int | Const:
            if _traced_number(t):
                return Const(t.item())  # a size or numel: a Python int in eager
            leaves.append(autocast.output(t) if autocast is not None else t)
            return len(leaves) - 1

        try:
            self.output = describe(out, add)
        except ZigguratError as e:  # an import error: the "auto" frontend tries tracing next
            raise ModelImportError(e.message, op=type(self.model).__name__) from None
        self._output_value, self._output_leaves = out, leaves
        return tuple(leaves)

    @contextmanager
    def _original_forward(self) -> Iterator[None]:
        model = self.model
        patched = self._swap_forward(self._own_forward)
        model.__dict__.update(self._held)
        try:
            yield
        finally:
            model.__dict__.update({name: type(hooks)() for name, hooks in self._held.items()})
            self._swap_forward(patched)

    def _swap_forward(self, forward: Any) -> Any:
        """Set the instance's ``forward`` (None: the class's); return the one it had."""
        before = self.model.__dict__.pop("forward", None)
        if forward is not None:
            self.model.__dict__["forward"] = forward
        return before

    @contextmanager
    def flat(self) -> Iterator[torch.nn.Module]:
        """The model taking the flat tensors, while the frontend runs it. Its own hooks are
        held back from the flat call and run around the real one; a ``forward`` set on the
        instance (as accelerate's hooks do) is the one the real call runs."""
        model = self.model
        self._held = {name: model.__dict__[name] for name in _HOOKS if name in model.__dict__}
        model.__dict__.update({name: type(hooks)() for name, hooks in self._held.items()})
        self._own_forward = self._swap_forward(self._flat_forward)
        try:
            # torch.export traces a GraphModule's graph, not its forward: it gets a wrapper.
            yield _FlatGraphModule(model, self._flat_forward) if isinstance(model, torch.fx.GraphModule) else model
        finally:
            self._swap_forward(self._own_forward)
            model.__dict__.update(self._held)
            self._held, self._own_forward = {}, None

    def finish(self, module: ModuleOp, fn: Any) -> ModuleOp:
        """Record the call signature and the output structure on the imported ``fn``."""
        if self.output is None:
            raise ModelImportError("the frontend never called the model", op=type(self.model).__name__)
        n = len(self._output_leaves)
        flat = parse_tree(output_structure(fn))
        if flat != Container("tuple", tuple(Leaf(i) for i in range(n))):
            raise ModelImportError(f"the imported graph returns {format_tree(flat)}, not the {n} tensors of "
                                   "the model's output", op=type(self.model).__name__)
        try:
            check_rebuilds(self.output, self._output_value, self._output_leaves, "output", "output")
        except ZigguratError as e:
            raise ModelImportError(e.message, op=type(self.model).__name__) from None
        if self.autocast is not None:
            from ziggurat.ir.importer.autocast import cast_outputs

            cast_outputs(fn, [t.dtype for t in self._output_leaves])
        fn.attributes[OUTPUTS_ATTR] = StringAttr(format_tree(self.output))
        set_call_signature(fn, self.signature)
        self._output_value, self._output_leaves = None, []
        return module
