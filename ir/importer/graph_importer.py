"""Import one TorchScript graph into a ``func.func @forward``.

The importer walks the graph's nodes once.  Static values (constants, lists of
constants, shape queries on static shapes, constant ``prim::If``) are folded
while importing; every other aten node becomes one ``torch`` dialect op (see
:mod:`op_builder`), typed by running it on the example values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import torch
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ziggurat.dialects.torch import AtenOp, LiteralOp
from ziggurat.dialects.torch.result_types import UNTAGGED_DATA_DEPENDENT
from ziggurat.dialects.torch.schema import ArgKind, OpSchema, parse_schema, registered_schemas
from ziggurat.dialects.torch.static_values import SCALAR_TYPE_CODES
from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer import static_eval
from ziggurat.ir.importer.aliasing import AliasTracker, StaleRead, UnsupportedWrite, aliased_arguments
from ziggurat.ir.importer.hidden_writes import describe as describe_hidden_writes
from ziggurat.ir.importer.hidden_writes import hidden_writes
from ziggurat.ir.importer.op_builder import build_aten_op, build_generic, result_type, wrap_number
from ziggurat.ir.importer.literal_pool import LiteralPool, ssa_name
from ziggurat.ir.importer.values import Dynamic, TensorConstant, dynamics, example_of, is_static
from ziggurat.ir.importer.view_steps import Emit, call, describe, is_view_op, same_view, schema_of
from ziggurat.ir.locations import describe_location, node_location
from ziggurat.ir.signature import format_structure, set_input_writes, set_signature
from ziggurat.ir.types import (DATA_DEPENDENT_SHAPE, UnsupportedTypeError, dynamic_tensor_type, has_dynamic_dims,
                               tensor_type_of)

# Ops whose result only depends on the (static) shape/dtype of their tensor inputs.
_SHAPE_QUERIES = {"aten::size", "aten::dim", "aten::numel", "prim::device", "prim::dtype",
                  "prim::layout", "prim::shape", "aten::len", "prim::is_cuda",
                  "prim::requires_grad", "aten::is_floating_point", "aten::is_complex"}
# Shape queries whose answer does not depend on the sizes (static even for a data-dependent shape).
_SIZE_FREE_QUERIES = {"aten::dim", "prim::device", "prim::dtype", "prim::layout", "prim::is_cuda",
                      "prim::requires_grad", "aten::is_floating_point", "aten::is_complex"}
_NO_EXAMPLE_RUN = {"aten::warn", "prim::RaiseException"}
# Argument kinds whose value cannot change a result's shape.
_VALUE_ONLY_KINDS = {ArgKind.SCALAR, ArgKind.FLOAT, ArgKind.FLOAT_LIST, ArgKind.STR, ArgKind.SCALAR_TYPE,
                     ArgKind.LAYOUT, ArgKind.DEVICE, ArgKind.MEMORY_FORMAT, ArgKind.GENERATOR}
# Ops that turn a tensor's value into a Python number (an int from them is data).
_VALUE_TO_SCALAR = {"aten::Int.Tensor", "aten::Bool.Tensor", "aten::item", "aten::ScalarImplicit",
                    "aten::IntImplicit", "aten::_local_scalar_dense"}


class GraphImporter:
    """Imports a TorchScript graph given example inputs (one per graph input)."""

    def __init__(self, graph: torch._C.Graph, func_name: str = "forward") -> None:
        self.graph = graph
        self.func_name = func_name
        self.values: dict[torch._C.Value, Any] = {}
        self.builder = Builder(InsertPoint.at_end(Block()))
        self.literals = LiteralPool(Block())
        self.aliases = AliasTracker()
        #: ids of the TensorConstants the graph makes afresh at each call (torch.tensor of
        #: static data in a scripted graph), which may be written in place
        self.fresh_constants: set[int] = set()
        #: run-time ints and bools computed from data (``int(x.sum())``, ``nonzero(x).size(0)``):
        #: they may set a size, a dim or ``keepdim``, so what is computed from them has ``?`` sizes
        self.data_dependent: set[SSAValue] = set()

    # -- entry ----------------------------------------------------------------
    def import_graph(self, example_inputs: Sequence[Any]) -> ModuleOp:
        inputs = list(self.graph.inputs())
        if len(inputs) != len(example_inputs):
            raise ModelImportError(
                f"the graph takes {len(inputs)} input(s) but {len(example_inputs)} example "
                "input(s)/input type(s) were given",
                op="graph",
            )
        arg_types: list[Attribute] = []
        tensor_inputs: list[tuple[torch._C.Value, torch.Tensor]] = []
        for value, example in zip(inputs, example_inputs, strict=True):
            if isinstance(example, torch.Tensor):
                arg_types.append(self._tensor_type(example, f"input %{value.debugName()}"))
                tensor_inputs.append((value, example))
            else:
                self.values[value] = example  # non-tensor inputs are specialized
        block = Block(arg_types=arg_types)
        for position, (arg, (value, example)) in enumerate(zip(block.args, tensor_inputs, strict=True)):
            arg.name_hint = ssa_name(value.debugName())
            self.values[value] = Dynamic(arg, example)
            self.aliases.add_input(self.values[value], position)
        self.builder = Builder(InsertPoint.at_end(block))
        self.literals = LiteralPool(block)
        self._import_block(self.graph.nodes())
        outputs = self._read(None, [self.values[o] for o in self.graph.outputs()])
        result = outputs[0] if len(outputs) == 1 else tuple(outputs)
        flat: list[SSAValue] = []
        structure = self._output_structure(result, flat)
        writes = self._input_writes([v for v, _ in tensor_inputs], flat)
        self.builder.insert(func.ReturnOp(*flat))
        _erase_dead_ops(block)
        fn = func.FuncOp(
            self.func_name,
            FunctionType.from_lists(arg_types, [v.type for v in flat]),
            Region(block),
        )
        set_signature(fn, [v.debugName() for v, _ in tensor_inputs], format_structure(structure))
        set_input_writes(fn, writes)
        return ModuleOp([fn])

    def _input_writes(self, inputs: list[torch._C.Value], flat: list[SSAValue]) -> list[tuple[int, int]]:
        """Graph inputs the model writes in place (also through views) get their final value
        as extra results, which the compiled module copies back into the caller's tensors."""
        writes: list[tuple[int, int]] = []
        for position in sorted(self.aliases.written_inputs):
            try:
                final = self.aliases.input_value(position)
            except StaleRead as e:
                raise ModelImportError(
                    f"the model writes to its input %{inputs[position].debugName()} through a view "
                    f"({e}); the TorchScript frontend cannot compile that, torch.export "
                    "(frontend='export') functionalizes it", op="graph input") from None
            flat.append(final.ssa)
            writes.append((len(flat) - 1, position))
        return writes

    # -- nodes ----------------------------------------------------------------
    def _import_block(self, nodes: Any) -> None:
        for node in nodes:
            self._import_node(node)

    def _import_node(self, node: torch._C.Node) -> None:
        handler = _HANDLERS.get(node.kind())
        if handler is not None:
            handler(self, node)
            return
        self._import_generic(node)

    def _import_generic(self, node: torch._C.Node) -> None:
        kind = node.kind()
        inputs = [self.values[i] for i in node.inputs()]
        if _returns_no_tensor(node) and (is_static(inputs) or self._shape_query(kind, inputs)):
            self._fold(node, inputs)
            return
        inputs = self._read(node, inputs)
        if kind.startswith(("prim::", "aten::", "quantized::", "prepacked::")) or "::" in kind:
            self._import_op(node, inputs)
            return
        raise self._error(node, "unsupported node kind")

    # -- reading through aliases (see :mod:`aliasing`) ---------------------------------------
    def _read(self, node: torch._C.Node | None, value: Any) -> Any:
        """``value`` (a run-time value, or lists/tuples/dicts of them) as eager reads it at
        ``node`` (None: the graph's outputs): a view written through another alias since it was
        made is re-derived from the written base. A read that cannot be is refused."""
        try:
            return self._current(value, self._emitter(node))
        except StaleRead as e:
            message = (f"reads a tensor after an in-place write to a view or base of it ({e}); the "
                       "TorchScript frontend cannot replay that view, torch.export (frontend='export') "
                       "functionalizes it")
            if node is None:
                raise ModelImportError(f"the graph returns a tensor that {message}", op="return") from None
            raise self._error(node, message) from None

    def _current(self, value: Any, emit: Emit) -> Any:
        if isinstance(value, Dynamic):
            return self.aliases.current(value, emit) if value.is_tensor else value
        if isinstance(value, TensorConstant):
            if value.materialized is not None and value.materialized.ssa in self.aliases.members:
                now = self.aliases.current(value.materialized, emit)
                return value if now is value.materialized else now
            return value
        if isinstance(value, list):
            return [self._current(v, emit) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, tuple):
            return tuple(self._current(v, emit) for v in value)  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return {k: self._current(v, emit) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
        return value

    def _emitter(self, node: torch._C.Node | None) -> Emit:
        """Emits the ops functionalization adds (view replays, scatters) at ``node``'s line."""
        def emit(schema: OpSchema, args: Mapping[str, Any], example: torch.Tensor) -> Dynamic:
            location = node_location(node if node is not None else self.graph.return_node())
            op = build_aten_op(self.builder, schema, args, [result_type(example)], location, self.literals)
            return Dynamic(op.results[0], example)
        return emit

    def _visible(self) -> Callable[[SSAValue], bool]:
        """Whether a value can be used at the insertion point (it is not inside a region the
        importer has left)."""
        blocks: set[Block] = set()
        block: Block | None = self.builder.insertion_point.block
        while block is not None:
            blocks.add(block)
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None

        def visible(value: SSAValue) -> bool:
            owner = value.owner
            return (owner if isinstance(owner, Block) else owner.parent_block()) in blocks
        return visible

    def _is_data_dependent(self, value: object) -> bool:
        """Whether ``value`` (or a run-time value inside it) has a data-dependent shape, or is an
        int or bool computed from data (:attr:`data_dependent`): ops on it run through torch and
        their sizes are ``?``."""
        return any(has_dynamic_dims(d.ssa.type) or d.ssa in self.data_dependent for d in dynamics(value))

    def _sizes_from_data(self, schema: OpSchema, inputs: list[Any]) -> bool:
        """Whether an op's result sizes may follow data: a tensor operand of data-dependent
        shape, or a data-derived int or bool where the schema takes a size, a dim or a flag
        (``zeros(n)``, ``sum(x, d)``); a ``Scalar``/``float`` operand (``x * int(t)``) sets
        values only."""
        for spec, value in zip(schema.args, inputs, strict=True):
            if spec.kind in _VALUE_ONLY_KINDS:
                continue
            if self._is_data_dependent(value):
                return True
        return False

    def _shape_query(self, kind: str, inputs: list[Any]) -> bool:
        if kind not in _SHAPE_QUERIES:
            return False
        if kind not in _SIZE_FREE_QUERIES and self._is_data_dependent(inputs):
            return False  # nonzero(x).size(0) is known at run time only: an op of its own
        return all(
            is_static(v) or (isinstance(v, Dynamic) and v.is_tensor) or isinstance(v, TensorConstant)
            for v in inputs
        )

    def _fold(self, node: torch._C.Node, inputs: list[Any]) -> None:
        args = [example_of(v) for v in inputs]
        try:
            result = static_eval.evaluate(node.kind(), args)
        except Exception as e:
            raise self._error(node, f"failed on compile-time values {args}: {_first_line(e)}") from None
        if result is NotImplemented:
            outputs = self._evaluate(node, args)
        else:
            outputs = [result] if node.outputsSize() == 1 else list(result)
        for out, value in zip(node.outputs(), outputs, strict=True):
            self.values[out] = value

    def _import_op(self, node: torch._C.Node, inputs: list[Any]) -> None:
        schema = self._schema(node)
        if schema is None:
            raise self._error(node, "has no operator schema")
        mutated = [a.name for a in schema.args if a.mutable]
        data_dependent = self._sizes_from_data(schema, inputs)
        if mutated and data_dependent:
            raise self._error(node, f"writes in place with or to a tensor whose {DATA_DEPENDENT_SHAPE}; "
                              "a compiled module has static shapes; write it out of place", schema)
        if mutated and schema.is_inplace:
            self._import_inplace(node, schema, inputs)
            return
        if mutated:
            raise self._error(node, f"mutates its argument(s) {', '.join(mutated)}", schema)
        args = {spec.name: value for spec, value in zip(schema.args, inputs, strict=True)}
        written = hidden_writes(schema.qualified_name, args)
        if written:
            raise self._error(node, describe_hidden_writes(schema.qualified_name, written), schema)
        data_dependent = data_dependent or _shape_depends_on_data(schema, args)
        outputs = self._evaluate(node, [example_of(v) for v in inputs])
        self._emit(node, schema, args, outputs, data_dependent)

    def _import_inplace(self, node: torch._C.Node, schema: OpSchema, inputs: list[Any]) -> None:
        """``x.add_(y)``: the functional op, then every later use of ``x`` sees the result.
        When ``x`` is a view, its base is rebuilt with scatter ops, and the other views of that
        base see the write when they are read (see :mod:`aliasing`). An in-place view op
        (``x.t_()``) makes ``x`` a view of what it was."""
        target = inputs[0]
        text = _functional_form(schema.text)
        if text is None or not isinstance(target, Dynamic | TensorConstant):
            raise self._error(node, "is an in-place op with no functional form", schema)
        emit = self._emitter(node)
        if isinstance(target, TensorConstant):
            target = self._read(node, self._literal(target))
            inputs = [target, *inputs[1:]]
        functional = parse_schema(text)
        view_op = bool(aliased_arguments(functional.text))  # t_, unsqueeze_, ...: a view op in place
        examples = [example_of(v) for v in inputs]
        if view_op:  # the functional view of the example, which must not change
            try:
                outputs = [call(functional, dict(zip([a.name for a in functional.args], examples, strict=True)))]
            except Exception as e:
                raise self._error(node, f"failed on the example inputs: {_first_line(e)}", schema) from None
        else:
            examples[0] = examples[0].clone()
            outputs = self._evaluate(node, examples)
        args = {spec.name: value for spec, value in zip(functional.args, inputs, strict=True)}
        computed = self._computed_dtype(functional, examples, outputs[0])
        if computed is not None:  # x_f32.add_(y_f64): the op computes in float64, then casts
            self._emit(node, functional, args, [computed])
            wide = self.values[node.outputsAt(0)]
            self.values[node.outputsAt(0)] = emit(schema_of("aten::_to_copy"),
                                                  {"self": wide, "dtype": outputs[0].dtype}, outputs[0])
        else:
            self._emit(node, functional, args, outputs)
        result = self.values[node.outputsAt(0)]
        why = f"{node.kind()} at {describe_location(node_location(node)) or '?'}"
        try:
            if view_op:
                if not same_view(example_of(target), result.example):  # not detach_: metadata changed
                    self.aliases.retire(target, result, why)
            else:
                result = self.aliases.write(target, result, why, emit)
        except UnsupportedWrite as e:
            raise self._error(node, f"{e}; the TorchScript frontend cannot functionalize this in-place "
                              "write", schema) from None
        self.values[node.outputsAt(0)] = result
        self.values[node.inputsAt(0)] = result

    def _computed_dtype(self, functional: OpSchema, examples: list[Any], written: Any) -> torch.Tensor | None:
        """The functional op's own result when its dtype is not the written tensor's (an
        in-place op computes in the promoted dtype and casts to its target's); else None."""
        if not isinstance(written, torch.Tensor):
            return None
        meta = [e.to("meta") if isinstance(e, torch.Tensor) else e for e in examples]
        try:
            probe = call(functional, dict(zip([a.name for a in functional.args], meta, strict=True)))
        except Exception:  # an op without a meta kernel: run it on the examples
            try:
                probe = call(functional, dict(zip([a.name for a in functional.args], examples, strict=True)))
            except Exception:
                return None
        if not isinstance(probe, torch.Tensor) or probe.dtype == written.dtype:
            return None
        return call(functional, dict(zip([a.name for a in functional.args], examples, strict=True)))

    def _emit(self, node: torch._C.Node, schema: OpSchema, args: dict[str, Any],
              outputs: list[Any], data_dependent: bool = False) -> None:
        """One op for ``node``, typed by its example ``outputs``; with ``data_dependent``, its
        tensor results have ``?`` sizes (only their rank and dtype are known) and its scalar
        results are marked as computed from data."""
        flat_examples: list[Any] = []
        for out in outputs:
            flat_examples.extend(out if isinstance(out, list) else [out])
        try:
            types = [dynamic_tensor_type(e.dim(), e.dtype) if data_dependent and isinstance(e, torch.Tensor)
                     else result_type(e) for e in flat_examples]
        except UnsupportedTypeError as e:
            raise self._error(node, str(e), schema) from None
        op = build_aten_op(self.builder, schema, args, types, node_location(node), self.literals)
        if data_dependent or schema.key in _VALUE_TO_SCALAR:
            self.data_dependent.update(r for r, e in zip(op.results, flat_examples, strict=True)
                                       if isinstance(e, int))
        results = iter(zip(op.results, flat_examples, strict=True))
        for ts_out, out in zip(node.outputs(), outputs, strict=True):
            if isinstance(out, list):
                self.values[ts_out] = [Dynamic(r, e) for r, e in (next(results) for _ in out)]
            else:
                r, e = next(results)
                r.name_hint = ssa_name(ts_out.debugName())
                self.values[ts_out] = Dynamic(r, e)
        results = dynamics([self.values[o] for o in node.outputs()])
        self._track_aliases(node, schema, args, op, [r for r in results if r.is_tensor])

    def _track_aliases(self, node: torch._C.Node, schema: OpSchema, args: dict[str, Any], op: Operation,
                       results: list[Dynamic]) -> None:
        """Record how the results of a view op were made from its base (see :mod:`aliasing`);
        results of ops that may alias their inputs otherwise join their storage as aliases the
        importer cannot replay; a fresh contiguous tensor is a root with a fixed layout."""
        aliased = aliased_arguments(schema.text)
        if not results:
            return
        if not aliased and not is_view_op(schema.key):
            if _fixed_layout(schema, args):
                for result in results:
                    self.aliases.add_root(result, fixed_layout=True)
            return
        bases = dynamics([self._literal(v) for name, v in args.items()
                           if name in aliased or "*" in aliased or (not aliased and name == schema.args[0].name)])
        bases = [b for b in bases if b.is_tensor]
        if not bases:
            return
        base = self._literal(args.get(schema.args[0].name))
        if is_view_op(schema.key) and isinstance(base, Dynamic) and base.is_tensor:
            steps = describe(schema, args, base.example, [r.example for r in results],
                             self.aliases.fixed_layout(base))
            if steps is not None:
                for result, step in zip(results, steps, strict=True):
                    self.aliases.add_view(result, base, step)
                return
        if schema.base_name in ("to", "type_as") and all(r.example.dtype != b.example.dtype
                                                          for r in results for b in bases):
            return  # a dtype conversion that converts: a new tensor
        made_by = f"{schema.key} at {describe_location(op.location) or '?'}"
        if schema.base_name in _VIEW_OR_COPY:
            made_by += " (a view or a copy depending on the strides at run time)"
        for result in results:
            self.aliases.add_alias(result, bases, made_by)

    def _literal(self, value: Any) -> Any:
        """A constant tensor as its literal (a root with a fixed layout), other values as they are."""
        if isinstance(value, TensorConstant):
            literal = self.literals(value)
            if literal.ssa not in self.aliases.members:
                fresh = id(value) in self.fresh_constants  # made by the graph at each call
                self.aliases.add_root(literal, fixed_layout=True, constant="" if fresh else f"%{value.name}")
            return literal
        return value

    # -- evaluation with torch --------------------------------------------------
    def _evaluate(self, node: torch._C.Node, args: list[Any]) -> list[Any]:
        if node.kind() in _NO_EXAMPLE_RUN:
            return []
        schema = self._schema(node)
        try:
            if schema is None:
                raise RuntimeError("no schema")
            fn = _overload(schema)
            args = _wrapped_numbers(schema, args)
            positional = [a for a, s in zip(args, schema.args, strict=True) if not s.kwarg_only]
            keywords = {s.name: a for a, s in zip(args, schema.args, strict=True) if s.kwarg_only}
            with torch.no_grad():
                result = fn(*positional, **keywords)
        except Exception as e:  # the op failed on the example inputs
            raise self._error(node, f"failed on the example inputs: {_first_line(e)}", schema) from None
        n = node.outputsSize()
        if n == 1:
            return [result]
        return list(result)

    def _schema(self, node: torch._C.Node) -> OpSchema | None:
        try:
            text = str(node.schema())
        except RuntimeError:
            return None
        if text == "(no schema)":
            return None
        return parse_schema(text)

    # -- outputs ----------------------------------------------------------------
    def _output_structure(self, value: Any, flat: list[SSAValue]) -> Any:
        if isinstance(value, TensorConstant):
            value = self.literals(value)
        if isinstance(value, Dynamic):
            flat.append(value.ssa)
            return ("ref", len(flat) - 1)
        if isinstance(value, tuple):
            return tuple(self._output_structure(v, flat) for v in value)  # pyright: ignore
        if isinstance(value, list):
            return [self._output_structure(v, flat) for v in value]  # pyright: ignore
        if isinstance(value, dict):
            return {k: self._output_structure(v, flat) for k, v in value.items()}  # pyright: ignore
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise ModelImportError(f"the graph returns a {type(value).__name__}, which cannot be compiled",
                               op="return")

    # -- errors ----------------------------------------------------------------
    def _error(self, node: torch._C.Node, message: str, schema: OpSchema | None = None) -> ModelImportError:
        return ModelImportError(
            message,
            op=node.kind(),
            schema=schema.text if schema else None,
            location=describe_location(node_location(node)),
        )

    def _tensor_type(self, example: torch.Tensor, what: str) -> TensorType[Attribute]:
        try:
            return tensor_type_of(example)
        except UnsupportedTypeError as e:
            raise ModelImportError(str(e), op=what) from None


def _erase_dead_ops(block: Block) -> None:
    """Drop the typed aten ops, literals and constants nothing reads: a base rebuilt after a
    write through a view (``slice_scatter``...) that is never read again, a piece of a
    ``chunk`` left unused. Every such op is functional here, so nothing observable is lost;
    left in, a backend without a lowering for one would run it through torch for nothing."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if (isinstance(op, AtenOp | LiteralOp | arith.ConstantOp) and op.results
                    and all(not r.uses for r in op.results)):
                op.detach()
                op.erase()
                changed = True


# -- prim:: node handlers --------------------------------------------------------
def _constant(imp: GraphImporter, node: torch._C.Node) -> None:
    out = node.output()
    if node.hasAttribute("value"):
        value = out.toIValue()
    else:
        value = None
    imp.values[out] = _constant_value(value, out.debugName().removeprefix("self."))


def _constant_value(value: Any, name: str) -> Any:
    """A constant's import value: tensors, also inside lists and tuples (freezing folds
    ``[self.idx]`` into one constant list), become :class:`TensorConstant` literals."""
    if isinstance(value, torch.Tensor):
        return TensorConstant(value, name)
    if isinstance(value, list | tuple):
        items = [_constant_value(v, f"{name}_{i}") for i, v in enumerate(value)]  # pyright: ignore
        return items if isinstance(value, list) else tuple(items)
    return value


def _list_construct(imp: GraphImporter, node: torch._C.Node) -> None:
    imp.values[node.output()] = [imp.values[i] for i in node.inputs()]


def _tuple_construct(imp: GraphImporter, node: torch._C.Node) -> None:
    imp.values[node.output()] = tuple(imp.values[i] for i in node.inputs())


def _dict_construct(imp: GraphImporter, node: torch._C.Node) -> None:
    """A dict (a scripted module's ``Dict[str, Tensor]`` output) with static keys."""
    items = [imp.values[i] for i in node.inputs()]
    keys = items[0::2]
    if not all(isinstance(k, str | int | bool) for k in keys):
        raise imp._error(node, "builds a dict whose keys are not constants")  # pyright: ignore[reportPrivateUsage]
    imp.values[node.output()] = dict(zip(keys, items[1::2], strict=True))


def _unpack(imp: GraphImporter, node: torch._C.Node) -> None:
    value = imp.values[node.input()]
    if not isinstance(value, list | tuple):
        raise imp._error(node, "unpacks a value that is not a static list/tuple")  # pyright: ignore[reportPrivateUsage]
    outs = list(node.outputs())
    if len(outs) != len(value):  # pyright: ignore[reportUnknownArgumentType]
        raise imp._error(node, f"unpacks {len(value)} values into {len(outs)}")  # pyright: ignore
    for out, v in zip(outs, value, strict=True):  # pyright: ignore[reportUnknownVariableType]
        imp.values[out] = v


def _tuple_index(imp: GraphImporter, node: torch._C.Node) -> None:
    value, index = (imp.values[i] for i in node.inputs())
    imp.values[node.output()] = value[index]


def _num_to_tensor(imp: GraphImporter, node: torch._C.Node) -> None:
    value = imp.values[node.input()]
    if is_static(value):
        imp.values[node.output()] = TensorConstant(torch.tensor(value), node.output().debugName())
    else:
        imp._import_op(node, [value])  # pyright: ignore[reportPrivateUsage]


def _if(imp: GraphImporter, node: torch._C.Node) -> None:
    cond = imp.values[node.input()]
    if not is_static(cond):
        raise imp._error(  # pyright: ignore[reportPrivateUsage]
            node, "is control flow on a run-time value; only conditions known at compile "
            "time (shapes, constants) can be compiled. Rewrite it with torch.where, or make "
            "the condition static",
        )
    block = list(node.blocks())[0 if cond else 1]
    imp._import_block(block.nodes())  # pyright: ignore[reportPrivateUsage]
    for out, ret in zip(node.outputs(), block.returnNode().inputs(), strict=True):
        imp.values[out] = imp.values[ret]


def _loop(imp: GraphImporter, node: torch._C.Node) -> None:
    """A loop reads its initial carried values as they are now; a loop imported as a
    ``torch.loop`` region must not write through a view to a tensor from outside it."""
    from ziggurat.ir.importer.loops import import_loop

    for value in node.inputs():
        if isinstance(imp.values[value], Dynamic | TensorConstant):
            imp.values[value] = imp._read(node, imp.values[value])  # pyright: ignore[reportPrivateUsage]
    import_loop(imp, node)
    escaped = imp.aliases.forget(imp._visible())  # pyright: ignore[reportPrivateUsage]
    if escaped is not None:
        raise imp._error(  # pyright: ignore[reportPrivateUsage]
            node, f"writes in place through a view ({escaped.last_write}) to a tensor from outside a loop "
            "whose trip count or condition is not static; pass it as a loop-carried value instead")


def _append(imp: GraphImporter, node: torch._C.Node) -> None:
    """``ys.append(y)``: TorchScript lists are shared, so the list itself grows (the values of
    a list may be run-time tensors: the loop ``for i in range(n): ys.append(x[i] * i)``)."""
    target, item = (imp.values[i] for i in node.inputs())
    if not isinstance(target, list):
        raise imp._error(node, "appends to a value that is not a list known at compile time")  # pyright: ignore
    target.append(item)  # pyright: ignore[reportUnknownMemberType]
    imp.values[node.output()] = target


def _list_getitem(imp: GraphImporter, node: torch._C.Node) -> None:
    """``xs[i]`` on a list, tuple or dict with a static index: the item itself, also when it is a
    run-time tensor (the pieces of ``split``/``unbind``/``chunk``)."""
    container, index = (imp.values[i] for i in node.inputs())
    if isinstance(container, list | tuple | dict) and is_static(index):
        try:
            imp.values[node.output()] = container[index]  # pyright: ignore
        except (IndexError, KeyError, TypeError) as e:
            raise imp._error(node, f"indexes a list of {len(container)} with {index!r}: {e}") from None  # pyright: ignore
        return
    imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]


def _set_item(imp: GraphImporter, node: torch._C.Node) -> None:
    """``ys[i] = y`` on a list known at compile time (its items may be run-time values)."""
    target, index, item = (imp.values[i] for i in node.inputs())
    if not isinstance(target, list) or not is_static(index):
        raise imp._error(node, "assigns into a value that is not a list known at compile time")  # pyright: ignore
    try:
        target[index] = item
    except (IndexError, TypeError) as e:
        raise imp._error(node, f"assigns item {index!r} of a list of {len(target)}: {e}") from None  # pyright: ignore
    imp.values[node.output()] = target


def _list_slice(imp: GraphImporter, node: torch._C.Node) -> None:
    """``ys[a:b:c]`` on a list known at compile time: a new list of the same items (a tensor's
    ``aten::slice`` imports as usual)."""
    values = [imp.values[i] for i in node.inputs()]
    target, rest = values[0], values[1:]
    if not isinstance(target, list) or not is_static(rest):
        imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]
        return
    start, end, step = (rest + [None, None, 1])[:3]
    imp.values[node.output()] = target[slice(start, end, step)]  # pyright: ignore


def _list_copy(imp: GraphImporter, node: torch._C.Node) -> None:
    """``list(xs)``: a new list of the same items."""
    value = imp.values[node.input()]
    if not isinstance(value, list | tuple):
        imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]
        return
    imp.values[node.output()] = list(value)  # pyright: ignore[reportUnknownArgumentType]


def _tensor_of_data(imp: GraphImporter, node: torch._C.Node) -> None:
    """``torch.tensor(data)`` / ``torch.as_tensor(data)`` of values known at compile time: a
    constant (its dtype as torch infers it). Data computed at run time imports as the op."""
    data, *options = (imp.values[i] for i in node.inputs())
    if isinstance(data, Dynamic | TensorConstant) or not is_static(data) or not is_static(options):
        imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]
        return
    option: Any = options[0] if options else None
    dtype: torch.dtype | None = option if isinstance(option, torch.dtype) else None
    if isinstance(option, int) and not isinstance(option, bool):  # TorchScript passes a ScalarType code
        dtype = SCALAR_TYPE_CODES.get(option)
    try:
        value = torch.tensor(data, dtype=dtype)
    except (TypeError, ValueError, RuntimeError) as e:
        raise imp._error(node, f"cannot make a tensor of {data!r}: {_first_line(e)}") from None  # pyright: ignore
    constant = TensorConstant(value, node.output().debugName())
    imp.fresh_constants.add(id(constant))
    imp.values[node.output()] = constant


def _same_value(imp: GraphImporter, node: torch._C.Node) -> None:
    """``prim::unchecked_cast`` (``Optional[Tensor]`` refined to ``Tensor`` after a None check):
    the value itself."""
    imp.values[node.output()] = imp.values[node.input()]


def _identity_test(imp: GraphImporter, node: torch._C.Node) -> None:
    """``x is None`` / ``x is not None``: a run-time value is never None, so the answer is
    known at compile time whenever one side is None."""
    a, b = (imp.values[i] for i in node.inputs())
    if is_static(a) and is_static(b):
        result = a is b
    elif a is None or b is None:
        result = False
    else:
        imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]
        return
    imp.values[node.output()] = result if node.kind() == "aten::__is__" else not result


def _len(imp: GraphImporter, node: torch._C.Node) -> None:
    container = imp.values[node.input()]
    if isinstance(container, list | tuple | dict | str):
        imp.values[node.output()] = len(container)  # pyright: ignore[reportUnknownArgumentType]
        return
    imp._import_generic(node)  # pyright: ignore[reportPrivateUsage]


def _uninitialized(imp: GraphImporter, node: torch._C.Node) -> None:
    imp.values[node.output()] = None


def _ignore(imp: GraphImporter, node: torch._C.Node) -> None:
    for out in node.outputs():
        imp.values[out] = None


def _raise(imp: GraphImporter, node: torch._C.Node) -> None:
    raise imp._error(node, "raises an exception on these inputs (prim::RaiseException)")  # pyright: ignore


_HANDLERS = {
    "prim::Constant": _constant,
    "prim::ListConstruct": _list_construct,
    "prim::TupleConstruct": _tuple_construct,
    "prim::DictConstruct": _dict_construct,
    "prim::ListUnpack": _unpack,
    "prim::TupleUnpack": _unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::NumToTensor": _num_to_tensor,
    "prim::If": _if,
    "prim::Loop": _loop,
    "prim::Uninitialized": _uninitialized,
    "aten::append": _append,
    "aten::__getitem__": _list_getitem,
    "aten::len": _len,
    "aten::_set_item": _set_item,
    "aten::slice": _list_slice,
    "aten::list": _list_copy,
    "prim::unchecked_cast": _same_value,
    "aten::tensor": _tensor_of_data,
    "aten::as_tensor": _tensor_of_data,
    "aten::__is__": _identity_test,
    "aten::__isnot__": _identity_test,
    "aten::warn": _ignore,
    "prim::RaiseException": _raise,
}

#: in-place ops whose functional form has another name
_FUNCTIONAL_NAMES = {"aten::normal_": "aten::normal_functional"}


@lru_cache(maxsize=1024)
def _functional_form(inplace_text: str) -> str | None:
    """The schema of the functional op ``x.op_(...)`` computes: the overload of ``op`` that
    takes the same arguments (``pow_.Scalar(Tensor self, Scalar exponent)`` is
    ``pow.Tensor_Scalar``, not ``pow.Scalar(Scalar self, Tensor exponent)``)."""
    inplace = parse_schema(inplace_text)
    name = _FUNCTIONAL_NAMES.get(inplace.key, inplace.qualified_name[:-1])

    def signature(s: OpSchema) -> list[tuple[str, ArgKind, bool, bool]]:
        return [(a.name, a.kind, a.optional, a.kwarg_only) for a in s.args]

    schemas = registered_schemas()
    same_overload = schemas.get(name + (f".{inplace.overload}" if inplace.overload else ""))
    candidates = [same_overload] if same_overload is not None else []
    candidates += [text for key, text in schemas.items() if key == name or key.startswith(name + ".")]
    for text in candidates:
        if signature(parse_schema(text)) == signature(inplace):
            return text
    return None

#: ops that return a view for some strides of their input and a copy for others
_VIEW_OR_COPY = {"reshape", "reshape_as", "flatten", "ravel", "contiguous"}

#: factories whose result is laid out row-major whatever the inputs' layouts
_FRESH_CONTIGUOUS = {"zeros", "ones", "full", "empty", "arange", "rand", "randn", "randint", "eye",
                     "linspace", "logspace", "clone"}


def _fixed_layout(schema: OpSchema, args: Mapping[str, Any]) -> bool:
    """A fresh tensor whose strides do not depend on the layout of any input: a factory, or a
    ``clone(memory_format=torch.contiguous_format)``."""
    if schema.namespace != "aten" or schema.base_name not in _FRESH_CONTIGUOUS:
        return False
    fmt = args.get("memory_format")
    if schema.base_name == "clone":
        return fmt in (0, torch.contiguous_format)
    return fmt in (None, 0, torch.contiguous_format)


def _returns_no_tensor(node: torch._C.Node) -> bool:
    for out in node.outputs():
        text = str(out.type())
        if "Tensor" in text or text in ("Float", "Long", "Int", "Double", "Bool"):
            return False
        if isinstance(out.type(), torch._C.TensorType):  # pyright: ignore[reportPrivateUsage]
            return False
    return True


def _shape_depends_on_data(schema: OpSchema, args: dict[str, Any]) -> bool:
    """An op tagged ``dynamic_output_shape`` (``nonzero``, ``masked_select``, ``unique``,
    indexing with a boolean mask ...), unless these arguments make its shape static."""
    if schema.key in UNTAGGED_DATA_DEPENDENT:
        if isinstance(args.get("repeats"), TensorConstant):
            return False  # constant repeats: the example's size is the size
        return args.get("output_size") is None or isinstance(args.get("output_size"), Dynamic)
    try:
        op = _overload(schema)
    except AttributeError:
        return False
    if torch.Tag.dynamic_output_shape not in op.tags:  # pyright: ignore[reportAttributeAccessIssue]
        return False
    if schema.base_name in ("index", "index_put", "_index_put_impl"):  # integer indices: static
        masks = [v for v in dynamics(args.get("indices")) if v.is_tensor
                 and v.example.dtype in (torch.bool, torch.uint8)]
        if masks and schema.base_name != "index":
            return not _mask_put_is_static(args)
        return bool(masks)
    if schema.base_name == "one_hot":
        return args.get("num_classes", -1) == -1
    if schema.base_name == "repeat_interleave":
        return args.get("output_size") is None
    return True


def _wrapped_numbers(schema: OpSchema, args: list[Any]) -> list[Any]:
    """A Python number in a ``Tensor`` position as the 0-d tensor eager makes of it (a traced
    ``y[i] = 0`` passes the wrapped number, which ``index_put`` does not take as a number)."""
    if not any(s.kind == ArgKind.TENSOR and isinstance(a, bool | int | float)
               for a, s in zip(args, schema.args, strict=True)):
        return args
    operands = [a for a, s in zip(args, schema.args, strict=True)
                if s.kind == ArgKind.TENSOR and isinstance(a, torch.Tensor)]
    return [example_of(wrap_number(s, a, operands, schema.base_name)) for a, s in zip(args, schema.args, strict=True)]


def _mask_put_is_static(args: dict[str, Any]) -> bool:
    """``y[mask] = v``: the result has ``y``'s shape; the values broadcast to the selected
    elements whatever their number when they have size 1 at the selection's dim (one boolean
    index, the other indices None)."""
    indices = args.get("indices")
    values = args.get("values")
    self_value = args.get("self")
    if not isinstance(indices, list | tuple) or not isinstance(self_value, Dynamic | TensorConstant):
        return False
    tensors = [v for v in indices if v is not None]  # pyright: ignore[reportUnknownVariableType]
    if len(tensors) != 1:  # pyright: ignore[reportUnknownArgumentType]
        return False
    mask = example_of(tensors[0])
    if not isinstance(mask, torch.Tensor) or mask.dtype not in (torch.bool, torch.uint8):
        return False
    lead = next(i for i, v in enumerate(indices) if v is tensors[0])  # pyright: ignore
    trailing = example_of(self_value).dim() - lead - mask.dim()  # dims after the masked ones
    shape = list(example_of(values).shape) if isinstance(example_of(values), torch.Tensor) else []
    return len(shape) <= trailing or shape[len(shape) - trailing - 1] == 1


def _overload(schema: OpSchema) -> Any:
    namespace = getattr(torch.ops, schema.namespace)
    packet = getattr(namespace, schema.base_name)
    return getattr(packet, schema.overload or "default")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
