"""Run a ``trt`` function on CPU, following TensorRT's documented layer semantics.

This is ``backend="tensorrt-reference"``: it proves a lowering to ``trt`` right
without TensorRT, because each layer is computed from nvinfer1's documented
formulas (``ir/interpreter/trt_layers/``), never by calling back the torch op it
came from.  The function runs in the reference interpreter (its ``trt`` table,
``ir/interpreter/trt_functions.py``); this module checks the inputs and that the
function holds ``trt`` ops only, and reports failures as :class:`ReferenceExecutionError`.

    outputs = run_trt_function(func_op, [x, y])
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Block, Operation, SSAValue

from ziggurat.backends.tensorrt.profiles import check_in_profile, read_profile
from ziggurat.dialects.trt.base import TrtLayerOp
from ziggurat.dialects.trt.specialize import SpecializationError, has_dynamic_dims, specialize
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.interpreter import make_trt_interpreter
from ziggurat.ir.interpreter.trt_layers import HANDLERS
from ziggurat.ir.types import dtype_of, fits_shape


class ReferenceExecutionError(ZigguratError):
    """A ``trt`` function the reference executor cannot run (bad op, bad data)."""


def find_function(module: ModuleOp, name: str | None = None) -> FuncOp:
    """The function called ``name`` (or the only/first one) of a module."""
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    if name is not None:
        funcs = [f for f in funcs if f.sym_name.data == name]
    if not funcs:
        raise ReferenceExecutionError(f"no func.func{f' @{name}' if name else ''} in the module")
    return funcs[0]


def _check_inputs(func_op: FuncOp, inputs: Sequence[torch.Tensor]) -> None:
    arg_types = func_op.function_type.inputs.data
    name = func_op.sym_name.data
    if len(inputs) != len(arg_types):
        raise InputError(f"@{name} takes {len(arg_types)} inputs, got {len(inputs)}", op=f"@{name}")
    for i, (value, ty) in enumerate(zip(inputs, arg_types, strict=True)):
        if not isinstance(value, torch.Tensor):
            raise InputError(f"input #{i} must be a torch.Tensor, got {type(value).__name__}", op=f"@{name}")
        if not isinstance(ty, TensorType):
            raise InputError(f"argument #{i} has non-tensor type {ty}", op=f"@{name}")
        if not fits_shape(value.shape, ty.get_shape()) or value.dtype != dtype_of(ty):
            raise InputError(
                f"input #{i} is {str(value.dtype).removeprefix('torch.')}{list(value.shape)}, "
                f"the function was built for {ty}",
                op=f"@{name}",
            )


def _check_body(func_op: FuncOp) -> Block:
    """The body, once every op before its ``func.return`` is a ``trt`` layer the interpreter runs."""
    body = func_op.body.blocks.first
    if body is None:
        raise ReferenceExecutionError(f"@{func_op.sym_name.data} has no body")
    for op in body.ops:
        if isinstance(op, ReturnOp):
            return body
        if type(op) not in HANDLERS or not isinstance(op, TrtLayerOp):
            raise ReferenceExecutionError(
                f"the TensorRT reference executor runs only trt ops, got {op.name}", op=op.name
            )
    raise ReferenceExecutionError(f"@{func_op.sym_name.data} does not end with func.return")


class _Recorder(Interpreter.Listener):
    """Puts every layer result into ``values``."""

    def __init__(self, values: dict[SSAValue, torch.Tensor]) -> None:
        self.values = values

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.values.update(zip(op.results, results, strict=True))


def _module_of(func_op: FuncOp) -> ModuleOp:
    parent = func_op.parent_op()
    return parent if isinstance(parent, ModuleOp) else ModuleOp([])


def _failure(func_op: FuncOp, error: Exception) -> tuple[ReferenceExecutionError, BaseException | None]:
    """The :class:`ReferenceExecutionError` for what the interpreter raised (a layer's error keeps
    its message and op), and the error to chain it to: the layer's own, not the interpreter's
    (which carries a printout of the whole module)."""
    found: BaseException | None = error
    while found is not None and not isinstance(found, ZigguratError):
        found = found.__cause__ or found.__context__
    if isinstance(found, ZigguratError):
        return (ReferenceExecutionError(found.message, op=found.op, schema=found.schema, location=found.location),
                found.__cause__)
    lines = str(error).strip().splitlines()
    return (ReferenceExecutionError(f"internal error: {lines[0] if lines else type(error).__name__}",
                                    op=f"@{func_op.sym_name.data}"), None)


def _values_of(body: Block) -> list[SSAValue]:
    """The arguments and every result of ``body``, in order."""
    return [*body.args, *(r for op in body.ops for r in op.results)]


#: static copies a dynamic function keeps (least recently used out)
MAX_SPECIALIZED = 16


class TrtFunctionRunner:
    """Runs one ``trt`` function again and again: its body is checked on the first call, and
    each thread keeps its own interpreter for it (an interpreter holds the running call's scope)."""

    def __init__(self, func_op: FuncOp) -> None:
        self.func_op = func_op
        self._body: Block | None = None
        self._local = threading.local()
        #: a function with dynamic dims runs as static copies, one per input-shape tuple
        self._dynamic = has_dynamic_dims(func_op)
        self._profile = read_profile(func_op)
        self._specialized: OrderedDict[tuple[tuple[int, ...], ...], tuple[TrtFunctionRunner, list[SSAValue]]] = \
            OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:  # copy.deepcopy / pickle: the interpreters stay behind
        return {"func_op": self.func_op}

    def __setstate__(self, state: dict[str, object]) -> None:
        func_op = state["func_op"]
        assert isinstance(func_op, FuncOp)
        self.__init__(func_op)

    def __call__(self, inputs: Sequence[torch.Tensor],
                 values: dict[SSAValue, torch.Tensor] | None = None) -> list[torch.Tensor]:
        func_op = self.func_op
        _check_inputs(func_op, inputs)
        if self._dynamic:
            return self._call_specialized(inputs, values)
        body = self._check_body()
        args = tuple(t.detach().cpu() for t in inputs)
        if values is None:
            interpreter: Interpreter | None = getattr(self._local, "interpreter", None)
            if interpreter is None:
                interpreter = self._local.interpreter = make_trt_interpreter(_module_of(func_op))
        else:
            values.update(zip(body.args, args, strict=True))
            interpreter = make_trt_interpreter(_module_of(func_op), (_Recorder(values),))
        try:
            return list(interpreter.call_op(func_op, args))
        except Exception as e:  # noqa: BLE001 - the interpreter re-raises a layer's error with the module printed
            self._local.interpreter = None  # it is left inside the failed call's scope
            failure, cause = _failure(func_op, e)
            raise failure from cause


    def _call_specialized(self, inputs: Sequence[torch.Tensor],
                          values: dict[SSAValue, torch.Tensor] | None) -> list[torch.Tensor]:
        """Run the static copy for these input shapes (made on first use, as TensorRT resolves
        an engine's shapes when they are set); ``values`` gets this function's values."""
        func_op = self.func_op
        shapes = tuple(tuple(int(n) for n in t.shape) for t in inputs)
        if self._profile is not None:
            check_in_profile(func_op, self._profile, shapes)
        with self._lock:
            found = self._specialized.get(shapes)
            if found is None:
                try:
                    static = specialize(func_op, shapes)
                except SpecializationError as e:
                    raise ReferenceExecutionError(
                        f"@{func_op.sym_name.data} at input shapes {[list(s) for s in shapes]}: {e}",
                        op=f"@{func_op.sym_name.data}") from None
                ModuleOp([static])
                found = (TrtFunctionRunner(static), _values_of(static.body.block))
                self._specialized[shapes] = found
                if len(self._specialized) > MAX_SPECIALIZED:
                    self._specialized.popitem(last=False)
            else:
                self._specialized.move_to_end(shapes)
        runner, copies = found
        if values is None:
            return runner(inputs)
        inner: dict[SSAValue, torch.Tensor] = {}
        outputs = runner(inputs, inner)
        originals = _values_of(self._check_body())  # the copy's values in the same order
        values.update({orig: inner[copy] for orig, copy in zip(originals, copies, strict=True) if copy in inner})
        return outputs

    def _check_body(self) -> Block:
        if self._body is None:
            self._body = _check_body(self.func_op)
        return self._body


def run_trt_function(
    func_op: FuncOp, inputs: Sequence[torch.Tensor], values: dict[SSAValue, torch.Tensor] | None = None
) -> list[torch.Tensor]:
    """Execute ``func_op`` (``trt`` ops and ``func.return``) on CPU tensors; ``values``, when
    given, receives every argument and layer result (for checking layers one by one)."""
    return TrtFunctionRunner(func_op)(inputs, values)
