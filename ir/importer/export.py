"""The ``torch.export`` frontend: an ``ExportedProgram`` (ATen-level FX graph) -> ``torch`` dialect.

Upstream has deprecated TorchScript; ``torch.export`` is where users are moving.  Each FX
``call_function`` node whose target is an ``OpOverload`` becomes one op, bound by its
schema exactly as in the TorchScript importer (:mod:`op_builder`); parameters, buffers and
lifted constants become literals; types come from the nodes' ``meta["val"]``; locations
from ``meta["stack_trace"]``.
"""

from __future__ import annotations

import inspect
import operator
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.export.graph_signature import OutputKind
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, ModuleOp, StringAttr, TensorType, UnitAttr, f64, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from ziggurat.dialects.torch import TorchOp
from ziggurat.dialects.torch.meta_eval import first_line
from ziggurat.dialects.torch.result_types import cpu_result_types, involves_quantized
from ziggurat.dialects.torch.schema import parse_schema
from ziggurat.ir.errors import ModelImportError, ZigguratError, verify_imported
from ziggurat.ir.importer.autocast import float32_inside_regions
from ziggurat.ir.importer.eval_mode import eval_mode
from ziggurat.ir.importer.hidden_writes import check_exported, decompositions, node_hidden_writes
from ziggurat.ir.importer.literal_pool import LiteralPool, ssa_name
from ziggurat.ir.importer.op_builder import build_aten_op, result_type
from ziggurat.ir.importer.scalar_operands import aten_of, place_runtime_scalars
from ziggurat.ir.importer.values import Dynamic, TensorConstant
from ziggurat.ir.locations import describe_location, make_location, user_frame, user_line
from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.signature import format_structure, set_call_signature, set_input_writes, set_signature
from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR, SIZED_ATTR, ShapeSymbols
from ziggurat.ir.structure import Ref
from ziggurat.ir.types import UnsupportedTypeError, tensor_type_of



def export(model: torch.nn.Module, example_inputs: Sequence[Any],
           example_kwargs: Mapping[str, Any] | None = None, dynamic_shapes: Any = None) -> Any:
    with eval_mode(model), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.export(model, tuple(example_inputs), dict(example_kwargs or {}),
                                   dynamic_shapes=dynamic_shapes)


def _location(node: torch.fx.Node) -> Any:
    trace = node.meta.get("stack_trace") or ""
    frame = user_frame(trace) if trace else None
    module = ""
    stack = node.meta.get("nn_module_stack")
    if stack:
        module = list(stack.values())[-1][0]
    label = f"%{node.name}" + (f" ({module})" if module else "")
    return make_location(label, frame)


class ExportImporter:
    def __init__(self, program: Any, sizes: Mapping[Any, int] | None = None,
                 symbols: ShapeSymbols | None = None, mark_sized: bool = False) -> None:
        """``sizes``: a value for each symbol of a program exported with dynamic shapes (its
        sympy symbols), which specializes the import to those sizes; without them its sizes are
        ``?`` and its size arithmetic is run-time scalars, and ``symbols`` (recorded on the
        function) declares them.  ``mark_sized``: with ``sizes``, each op whose result's shape
        follows the symbols carries ``ziggurat.sized`` (:data:`SIZED_ATTR`), which keeps
        constant folding from baking a size into a literal (a range build's lowerings must
        differ only in sizes, not in constants: ``embedding(pos, arange(seq))``)."""
        self.program = program
        self.values: dict[torch.fx.Node, Any] = {}
        self.sizes: dict[Any, int] = dict(sizes or {})
        self.symbols = symbols
        self.mark_sized = mark_sized

    def import_program(self, example_inputs: Sequence[Any], example_kwargs: Mapping[str, Any] | None = None,
                       input_names: Sequence[str] | None = None) -> ModuleOp:
        sig = self.program.graph_signature
        constants = {**sig.inputs_to_parameters, **sig.inputs_to_buffers,
                     **sig.inputs_to_lifted_tensor_constants}
        state = {**self.program.state_dict, **self.program.constants}
        graph = self.program.graph_module.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        user_nodes = [n for n in placeholders if n.name not in constants]
        args, kwargs = exported_call(self.program, example_inputs, example_kwargs)
        flat_inputs = list(pytree.tree_flatten((args, kwargs))[0])
        if len(flat_inputs) != len(user_nodes):
            raise ModelImportError(f"the exported program takes {len(user_nodes)} inputs, got "
                                   f"{len(flat_inputs)}", op="export")
        arg_types: list[Attribute] = []
        tensor_nodes: list[tuple[torch.fx.Node, torch.Tensor]] = []
        for node, example in zip(user_nodes, flat_inputs, strict=True):
            if isinstance(example, torch.Tensor):
                arg_types.append(self._type(example, node))
                tensor_nodes.append((node, example))
            else:
                self.values[node] = example
        block = Block(arg_types=arg_types)
        if input_names is not None and len(input_names) != len(tensor_nodes):
            raise ModelImportError(f"{len(input_names)} input names for {len(tensor_nodes)} tensor inputs", op="export")
        self.input_names = list(input_names) if input_names is not None else [n.name for n, _ in tensor_nodes]
        for arg, name, (node, example) in zip(block.args, self.input_names, tensor_nodes, strict=True):
            arg.name_hint = ssa_name(name)
            self.values[node] = Dynamic(arg, example)
        for node in placeholders:
            if node.name in constants:
                self.values[node] = TensorConstant(state[constants[node.name]], constants[node.name])
        self.builder = Builder(InsertPoint.at_end(block))
        self.literals = LiteralPool(block)
        for node in graph.nodes:
            if node.op == "call_function":
                self._call(node)
            elif node.op == "output":
                return self._finish(node, block, arg_types, [n.name for n, _ in tensor_nodes])
            elif node.op != "placeholder":
                raise self._error(node, f"unsupported FX node kind '{node.op}'")
        raise ModelImportError("the exported graph has no output", op="export")

    def _type(self, example: torch.Tensor, node: torch.fx.Node) -> Attribute:
        val = node.meta.get("val")
        try:
            if not self.sizes and isinstance(val, torch.Tensor) and not all(isinstance(d, int) for d in val.shape):
                return _symbolic_result_type(val)  # a dynamic dim of the program's inputs: ?
            return tensor_type_of(example)
        except UnsupportedTypeError as e:
            raise self._error(node, str(e)) from None

    def _arg(self, value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            return self.values[value]
        if isinstance(value, list | tuple):
            return [self._arg(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return value

    def _call(self, node: torch.fx.Node) -> None:
        target = node.target
        if target is operator.getitem:
            container, index = node.args
            self.values[node] = self.values[container][index]  # pyright: ignore
            return
        target = aten_of(target, node.args)
        if not isinstance(target, torch._ops.OpOverload):  # pyright: ignore[reportPrivateUsage]
            raise self._error(node, f"calls {target}, which is not an ATen operator")
        schema = parse_schema(str(target._schema))  # pyright: ignore[reportPrivateUsage]
        args: dict[str, Any] = {}
        positional = list(node.args)
        for spec in schema.args:
            if positional and not spec.kwarg_only:
                args[spec.name] = self._arg(positional.pop(0))
            elif spec.name in node.kwargs:
                args[spec.name] = self._arg(node.kwargs[spec.name])
            else:
                args[spec.name] = spec.default if spec.has_default else None
        if target is torch.ops.aten._assert_tensor_metadata.default:  # pyright: ignore[reportPrivateUsage]
            self._check_metadata(node, args, schema.text)
            return
        val = node.meta.get("val")
        sized = False
        if self.sizes:
            if self._specialized(node, target, args, val):
                return
            sized = _has_symbolic_shape(val)
            val = self._concrete(val)
        examples = list(val) if isinstance(val, list | tuple) else [val]
        if not schema.returns:  # aten._assert_scalar: an op for its effect only
            examples = []
        try:
            types = [_symbolic_result_type(v) for v in examples]
        except UnsupportedTypeError as e:
            raise self._error(node, str(e), schema.text) from None
        schema = place_runtime_scalars(target, schema, args)
        op = build_aten_op(self.builder, schema, args, types, _location(node), self.literals)
        if isinstance(op, TorchOp) and involves_quantized(op):
            quantized = self._quantized_types(node, op, schema.text)
            if quantized != [r.type for r in op.results]:
                op.detach()
                op.erase()
                op = build_aten_op(self.builder, schema, args, quantized, _location(node), self.literals)
        if sized and self.mark_sized:
            op.attributes[SIZED_ATTR] = UnitAttr()
        results = [Dynamic(r, e) for r, e in zip(op.results, examples, strict=True)]
        if len(results) == 1 and not isinstance(val, list | tuple):
            results[0].ssa.name_hint = ssa_name(node.name)
            self.values[node] = results[0]
        else:
            self.values[node] = results

    def _size_value(self, value: Any) -> Any:
        """A SymInt/SymFloat/SymBool whose symbols all have sizes, as its Python value; else None."""
        if not isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
            return None
        expr = value.node.expr
        if not expr.free_symbols <= self.sizes.keys():
            return None  # an unbacked size (nonzero, unique...): only the run knows it
        concrete = expr.xreplace(self.sizes)
        kind = bool if isinstance(value, torch.SymBool) else float if isinstance(value, torch.SymFloat) else int
        return kind(concrete)

    def _concrete(self, val: Any) -> Any:
        """``val`` (a node's fake result) with the sizes of ``self.sizes`` put in."""
        if isinstance(val, list | tuple):
            return type(val)(self._concrete(v) for v in val)  # pyright: ignore
        if isinstance(val, torch.Tensor) and not all(isinstance(d, int) for d in val.shape):
            sizes = [d if isinstance(d, int) else self._size_value(d) for d in val.shape]
            if all(isinstance(d, int) for d in sizes):
                return torch.empty(sizes, dtype=val.dtype, device="meta")
        return val

    def _specialized(self, node: torch.fx.Node, target: Any, args: dict[str, Any], val: Any) -> bool:
        """Size arithmetic and size asserts over known sizes become Python values (none is an
        op): True when ``node`` is done."""
        if target is torch.ops.aten._assert_scalar.default:  # pyright: ignore[reportPrivateUsage]
            cond = args.get("self")
            if isinstance(cond, bool):
                if not cond:
                    raise self._error(node, f"the exported program asserts {args.get('assert_msg')!r}, which does "
                                      f"not hold at these sizes")
                return True
            return False
        concrete = self._size_value(val)
        if concrete is None:
            return False
        self.values[node] = concrete
        return True

    def _quantized_types(self, node: torch.fx.Node, op: TorchOp, schema: str) -> list[Attribute]:
        """The result types of an op reading or writing quantized tensors, from a CPU run:
        fake tensors cannot be quantized, so export's ``meta["val"]`` types them as float."""
        try:
            types = cpu_result_types(op)
        except Exception as e:  # noqa: BLE001 - torch refuses the example operands
            raise self._error(node, f"cannot type an op on quantized tensors (torch.export gives them "
                              f"as float): {first_line(e)}", schema) from None
        return [t if t is not None else r.type for t, r in zip(types, op.results, strict=True)]

    def _check_metadata(self, node: torch.fx.Node, args: dict[str, Any], schema: str) -> None:
        """``aten._assert_tensor_metadata`` (what ``x.to(x.device)`` leaves in an exported
        graph) checks static facts: checked here, once, and imported as nothing."""
        example = args["a"].example if isinstance(args["a"], Dynamic) else None
        if not isinstance(example, torch.Tensor):
            return
        wanted = {"size": args.get("size"), "stride": args.get("stride"), "dtype": args.get("dtype"),
                  "device": args.get("device"), "layout": args.get("layout")}
        actual = {"size": list(example.shape), "stride": list(example.stride()), "dtype": example.dtype,
                  "device": example.device, "layout": example.layout}
        for key, want in wanted.items():
            if want is None or key == "stride":  # strides are not a property of compiled values
                continue
            have = actual[key]
            if key == "device" and have.type == "meta":
                continue  # a specialization's intermediate values are meta tensors standing in for CPU ones
            same = (list(want) == have if isinstance(want, list | tuple)
                    else torch.device(want) == have if key == "device" else want == have)
            if not same:
                raise self._error(node, f"asserts {key} {want}, but the tensor has {have}", schema)

    def _finish(self, node: torch.fx.Node, block: Block, arg_types: list[Attribute],
                names: list[str]) -> ModuleOp:
        outputs = [self.values[n] if isinstance(n, torch.fx.Node) else n for n in node.args[0]]  # pyright: ignore
        specs = self.program.graph_signature.output_specs
        flat: list[SSAValue] = []
        refs: list[Any] = []
        writes: list[tuple[Any, int]] = []
        for value, spec in zip(outputs, specs, strict=True):
            if isinstance(value, TensorConstant):
                value = self.literals(value)
            if spec.kind == OutputKind.USER_INPUT_MUTATION and spec.target in names:
                writes.append((value, names.index(spec.target)))
                continue
            if spec.kind != OutputKind.USER_OUTPUT:
                raise ModelImportError(
                    f"the model writes to {spec.target or 'a value'} in place ({spec.kind.name.lower()}); "
                    "a compiled module holds its parameters and buffers as constants", op="export")
            if isinstance(value, Dynamic):
                flat.append(value.ssa)
                refs.append(Ref(len(flat) - 1))
            else:
                refs.append(value)
        tree = pytree.tree_unflatten(refs, self.program.call_spec.out_spec)
        input_writes: list[tuple[int, int]] = []
        for value, index in writes:
            flat.append(value.ssa)
            input_writes.append((len(flat) - 1, index))
        self.builder.insert(func.ReturnOp(*flat))
        fn = func.FuncOp("forward", FunctionType.from_lists(arg_types, [v.type for v in flat]), Region(block))
        set_signature(fn, self.input_names, format_structure(tree))
        set_input_writes(fn, input_writes)
        if self.symbols is not None:
            fn.attributes[SHAPE_SYMBOLS_ATTR] = StringAttr(self.symbols.to_json())
        module = ModuleOp([fn])
        verify_imported(module)
        return module

    def _error(self, node: torch.fx.Node, message: str, schema: str | None = None) -> ModelImportError:
        return ModelImportError(message, op=str(node.target), schema=schema,
                                location=describe_location(_location(node)))


def _has_symbolic_shape(val: Any) -> bool:
    """A node's fake result (or one of its results) has a dim that is an expression of symbols."""
    if isinstance(val, list | tuple):
        return any(_has_symbolic_shape(v) for v in val)  # pyright: ignore[reportUnknownVariableType]
    return isinstance(val, torch.Tensor) and not all(isinstance(d, int) for d in val.shape)


def _symbolic_result_type(example: Any) -> Attribute:
    """The type of an exported value: a size that torch.export keeps symbolic (an unbacked
    ``u0`` from ``nonzero``, ``unique``...: the shape depends on the data) is ``?``; a SymInt or
    SymBool is a run-time scalar."""
    if isinstance(example, torch.SymInt):
        return i64
    if isinstance(example, torch.SymBool):
        return i1
    if isinstance(example, torch.SymFloat):
        return f64
    if isinstance(example, torch.Tensor) and not all(isinstance(d, int) for d in example.shape):
        static = tensor_type_of(torch.empty(0, dtype=example.dtype))  # the element type, checked
        sizes = [d if isinstance(d, int) else DYNAMIC_INDEX for d in example.shape]
        return TensorType(static.get_element_type(), sizes)
    return result_type(example)


def import_exported(model: Any, example_inputs: Sequence[Any], example_kwargs: Mapping[str, Any] | None = None,
                    input_names: Sequence[str] | None = None) -> ModuleOp:
    """Import an ``ExportedProgram`` (or export an ``nn.Module`` first).  A program given as
    such keeps its call signature (:func:`exported_call_signature`): the compiled module takes
    keyword inputs as the program does."""
    program = model
    if isinstance(model, torch.nn.Module):
        try:
            program = export(model, example_inputs, example_kwargs)
        except ZigguratError:
            raise
        except Exception as e:
            raise ModelImportError(f"torch.export failed: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
                                   op=type(model).__name__, location=user_line(e)) from None
    module = ExportImporter(functional(program)).import_program(example_inputs, example_kwargs, input_names)
    if not isinstance(model, torch.nn.Module):
        fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
        set_call_signature(fn, exported_call_signature(program, example_inputs, example_kwargs))
    return module


def _spec_children(spec: Any) -> list[Any]:
    return list(spec.children()) if hasattr(spec, "children") else list(spec.children_specs)


def _spec_keys(program: Any) -> tuple[int, list[str]] | None:
    """The number of positional inputs and the keyword names (in order) ``program`` was
    exported with, from its ``in_spec`` (``((args...), {kwargs...})``); None without one."""
    spec = getattr(getattr(program, "call_spec", None), "in_spec", None)
    if spec is None:
        return None
    children = _spec_children(spec)
    if len(children) != 2:
        return None
    return children[0].num_children, [str(k) for k in (children[1].context or [])]


def exported_call(program: Any, args: Sequence[Any],
                  kwargs: Mapping[str, Any] | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The example call in the program's order: its keywords in the order it was exported with
    (the flat inputs follow that order, not the caller's); an :class:`ModelImportError` naming what
    is missing or extra when the call does not fit the program."""
    kwargs = dict(kwargs or {})
    keys = _spec_keys(program)
    if keys is None:
        return tuple(args), kwargs
    n_args, names = keys
    if len(args) != n_args or set(kwargs) != set(names):
        want = f"{n_args} positional input(s)" + (f" and the keyword input(s) {', '.join(names)}" if names else "")
        got = f"{len(args)} positional" + (f" and {', '.join(kwargs)}" if kwargs else " and no keyword input")
        hint = "; pass the keywords as example_kwargs" if set(names) - set(kwargs) else ""
        raise ModelImportError(f"the exported program was exported with {want}, got {got}{hint}", op="export")
    call = (tuple(args), {k: kwargs[k] for k in names})
    spec = getattr(program.call_spec, "in_spec", None)
    flat_spec = pytree.tree_flatten(call)[1]
    if spec is not None and flat_spec != spec:
        raise ModelImportError(f"the example inputs have the structure {_one_line(flat_spec)}, the exported program "
                               f"{_one_line(spec)}", op="export")
    return call


def _one_line(spec: Any) -> str:
    return " ".join(str(spec).split())


def exported_call_signature(program: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> CallSignature:
    """The call signature of ``program`` with the example call: its positional inputs under the
    names ``forward`` gave them (``forward_arg_names``; ``arg<i>``, by position only, without
    them), then its keyword inputs by keyword only, as ``program.module()`` takes them: the
    program does not record where a keyword sat among ``forward``'s parameters, so binding one
    by position could put it in another's place."""
    args, kwargs = exported_call(program, args, kwargs)
    names: list[str] = []
    call_graph = getattr(program, "module_call_graph", None)
    if call_graph:
        sig = getattr(call_graph[0], "signature", None)
        names = [str(n) for n in getattr(sig, "forward_arg_names", None) or []]
    P = inspect.Parameter
    positional = names[:len(args)]
    if (names == [*positional, *kwargs] and len(names) == len(set(names))
            and all(n.isidentifier() for n in positional)):
        params = [P(n, P.POSITIONAL_OR_KEYWORD) for n in positional]
    else:
        params = [P(f"arg{i}", P.POSITIONAL_ONLY) for i in range(len(args))]
    params += [P(k, P.KEYWORD_ONLY) for k in kwargs]
    counter = iter(range(1 << 62))
    return CallSignature.bind(inspect.Signature(params), args, kwargs, lambda _t: next(counter))


def _mutates(node: torch.fx.Node) -> bool:
    target = node.target
    return (node.op == "call_function" and isinstance(target, torch._ops.OpOverload)  # pyright: ignore[reportPrivateUsage]
            and (target._schema.is_mutable or bool(node_hidden_writes(node))))  # pyright: ignore[reportPrivateUsage]


#: Higher-order ops that scope a region of the exported graph under a dispatch state
#: (``with torch.autocast(...)``, ``with torch.no_grad()`` inside ``forward``);
#: ``run_decompositions`` inlines them as the ops that state makes (autocast's casts).
_SCOPES = frozenset({"wrap_with_autocast", "wrap_with_set_grad_enabled"})


def _scope(node: torch.fx.Node) -> bool:
    target = node.target
    return (node.op == "call_function" and isinstance(target, torch._ops.HigherOrderOperator)  # pyright: ignore[reportPrivateUsage]
            and target.name() in _SCOPES)


def _drop_metadata_asserts(module: torch.fx.GraphModule) -> None:
    """Remove ``aten._assert_tensor_metadata`` checks (they compute nothing) before an autocast
    region is inlined: re-tracing it does not always redo autocast's choice for an op autocast
    casts inside its own kernel (``nn.RNN``'s ``rnn_tanh`` is traced in float32, where the
    export saw bf16), and a check of the traced dtype would stop the compile.  Such an op then
    runs in float32, closer to the float32 result than eager's autocast (as nn.LSTM and nn.GRU
    do, which leave no check)."""
    graph = module.graph
    target = torch.ops.aten._assert_tensor_metadata.default  # pyright: ignore[reportPrivateUsage]
    dropped = [n for n in graph.nodes if n.op == "call_function" and n.target is target and not n.users]
    for node in dropped:
        graph.erase_node(node)
    if dropped:
        module.recompile()


def functional(program: Any) -> Any:
    """The program with its in-place ops functionalized (``y[2:] = v`` -> ``slice_scatter``,
    a write to an input -> a ``USER_INPUT_MUTATION`` output) when it has any: importing an
    in-place op as its functional form would lose writes through views. A program without
    mutation is kept as exported (functionalizing rewrites a few ops, e.g. ``batch_norm``).
    Training-mode ``batch_norm`` writes its running statistics although its schema does not
    say so (``hidden_writes``): it is functionalized too. Autocast and grad-mode regions
    (``_SCOPES``) are inlined by the same step, their casts made explicit."""
    if not any(_mutates(n) or _scope(n) for n in program.graph_module.graph.nodes):
        return program
    if any(_scope(n) for n in program.graph_module.graph.nodes):
        _drop_metadata_asserts(program.graph_module)
        float32_inside_regions(program.graph_module)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            functionalized = program.run_decompositions(decompositions(program))
    except Exception as e:
        raise ModelImportError(f"functionalizing the exported program (its in-place ops, autocast regions) failed: "
                               f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
                               op="export") from None
    check_exported(program, functionalized)
    return functionalized
