"""Every use the TensorRT emitter makes of the ``tensorrt`` Python API, found without TensorRT.

Three sources, so that nothing escapes:

* :func:`plan_uses`: the calls a real :class:`NetworkPlan` replays (``populate_network``):
  each ``INetworkDefinition`` method with its positional argument kinds, each attribute set
  on the layer it returns, ``set_input``, the enum members and ``trt.Weights`` it resolves;
* :func:`table_uses`: the emitter's tables read from its source (``layer_calls.py``'s
  ``b.add(op, "add_x", (...), (("attr", v), ...))`` calls, the ``trt`` dialect enums its
  ``EnumRef``\\ s take every member of, the ``DataType`` members of its dtype tables);
* :func:`source_uses`: the static calls of ``emitter.py``/``runtime.py``/``network_plan.py``
  (builder, config, runtime, engine, context, logger), typed by a small inference that starts
  from ``trt`` (the module) and follows the real module's return types.

Each use names where it came from (the ``trt`` op and the emitter function, or file:line).
"""

from __future__ import annotations

import ast
import enum
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ziggurat.backends.tensorrt.layer_calls import EMITTERS
from ziggurat.backends.tensorrt.network_plan import (
    TRT_DATA_TYPES,
    DataTypeRef,
    EnumRef,
    LayerCall,
    NetworkPlan,
    TensorRef,
    Weights,
)
from ziggurat.dialects.trt import enums as trt_enums

NETWORK = "INetworkDefinition"


@dataclass(frozen=True)
class Returned:
    """The object ``cls.method(...)`` returns (a layer from ``network.add_x``)."""

    cls: str
    method: str

    def __str__(self) -> str:
        return f"{self.cls}.{self.method}()"


Receiver = str | Returned


@dataclass(frozen=True)
class ApiUse:
    """``call``: receiver.name(*args, **keywords); ``set``/``get``: receiver.name; ``member``:
    receiver.name is an enum member or exported constant; ``class``: ``trt.name`` exists."""

    kind: str
    receiver: Receiver
    name: str
    args: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    where: str = ""

    def describe(self) -> str:
        if self.kind == "call":
            args = [*self.args, *(f"{k}=..." for k in self.keywords)]
            return f"{self.receiver}.{self.name}({', '.join(args)})"
        if self.kind == "set":
            return f"{self.receiver}.{self.name} = <{self.args[0] if self.args else 'any'}>"
        return f"{self.receiver}.{self.name}" if self.kind != "class" else f"tensorrt.{self.name}"


# -- argument kinds ------------------------------------------------------------------------


def kind_of(value: object) -> str:
    """The kind of a plan argument: ITensor, ITensor[], enum:X, Weights, Dims, float[], bool, int, float, str."""
    if isinstance(value, TensorRef):
        return "ITensor"
    if isinstance(value, EnumRef):
        return f"enum:{value.enum}"
    if isinstance(value, DataTypeRef):
        return "enum:DataType"
    if isinstance(value, Weights):
        return "Weights"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list | tuple):
        items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        if items and all(isinstance(v, TensorRef) for v in items):
            return "ITensor[]"
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return "Dims"
        if all(isinstance(v, int | float) for v in items):
            return "float[]"
    return "any"


def _enum_members(value: object) -> list[ApiUse]:
    if isinstance(value, EnumRef):
        return [ApiUse("member", value.enum, value.member)]
    if isinstance(value, DataTypeRef):
        return [ApiUse("member", "DataType", value.member)]
    if isinstance(value, list | tuple):
        return [u for v in value for u in _enum_members(v)]  # pyright: ignore[reportUnknownVariableType]
    return []


def _weights_uses(value: object) -> list[ApiUse]:
    """The ``trt.Weights(...)`` construction ``Weights.resolve`` makes for ``value``."""
    if not isinstance(value, Weights):
        return []
    if value.array is None:
        return [ApiUse("call", "Weights", "__init__")]
    if value.data_type is not None and value.data_type.member == "BF16":
        return [ApiUse("call", "Weights", "__init__", ("enum:DataType", "int", "int"))]
    return [ApiUse("call", "Weights", "__init__", ("ndarray",))]


# -- uses of a network plan ------------------------------------------------------------------


def emitter_of(source_op: str) -> str:
    """``layer_calls._convolution (backends/tensorrt/layer_calls.py:231)`` for ``trt.convolution``."""
    for op_type, fn in EMITTERS.items():
        if op_type.name == source_op:
            line = inspect.getsourcelines(fn)[1]
            return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__} (backends/tensorrt/layer_calls.py:{line})"
    return "emitter._mark_outputs" if source_op == "func.return" else "?"


def plan_uses(plan: NetworkPlan, origin: str) -> list[ApiUse]:
    """What ``populate_network`` calls to replay ``plan`` (``origin`` names the plan's source)."""
    uses: list[ApiUse] = []
    for inp in plan.inputs:
        where = f"network input '{inp.name}' of {origin} (emitter.populate_network)"
        uses.append(ApiUse("call", NETWORK, "add_input", ("str", "enum:DataType", "Dims"), where=where))
        uses.extend(_with_where(_enum_members(inp.dtype), where))
    for call in plan.layers:
        uses.extend(_layer_uses(call, origin))
    if plan.outputs:
        uses.append(ApiUse("call", NETWORK, "mark_output", ("ITensor",), where=f"outputs of {origin}"))
    return uses


def _with_where(uses: Iterable[ApiUse], where: str) -> list[ApiUse]:
    return [ApiUse(u.kind, u.receiver, u.name, u.args, u.keywords, where) for u in uses]


def _layer_uses(call: LayerCall, origin: str) -> list[ApiUse]:
    where = f"{call.source_op} (layer '{call.name}' of {origin}) emitted by {emitter_of(call.source_op)}"
    layer = Returned(NETWORK, call.method)
    uses = [ApiUse("call", NETWORK, call.method, tuple(kind_of(a) for a in call.args))]
    for a in call.args:
        uses += _enum_members(a) + _weights_uses(a)
    uses.append(ApiUse("set", layer, "name", ("str",)))
    for key, value in call.attributes:
        uses.append(ApiUse("set", layer, key, (kind_of(value),)))
        uses += _enum_members(value) + _weights_uses(value)
    for _index, _ref in call.set_inputs:
        uses.append(ApiUse("call", layer, "set_input", ("int", "ITensor")))
    for _ in call.outputs:
        uses.append(ApiUse("call", layer, "get_output", ("int",)))
        uses.append(ApiUse("set", "ITensor", "name", ("str",)))
    return _with_where(uses, where)


# -- the emitter's tables, from its source -------------------------------------------------------


def _dialect_enum(name: str) -> list[str] | None:
    cls: object = getattr(trt_enums, name, None)
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
        return None
    values = [str(m.value) for m in cls]
    return [v[1:] if v.startswith("k") else v for v in values]


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def table_uses(source: str, filename: str = "backends/tensorrt/layer_calls.py") -> list[ApiUse]:
    """The network methods, their positional arity, the layer attributes and the enums that the
    emitter functions in ``source`` (``layer_calls.py``'s text) name."""
    tree = ast.parse(source, filename)
    functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    uses: list[ApiUse] = []
    for fn in functions.values():
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            where = f"{filename}:{node.lineno} in {fn.name}"
            if node.func.attr in ("add", "add_helper") and len(node.args) >= 3:
                for method, site in _methods(node.args[1], fn, functions):
                    uses.extend(_add_site(node, method, f"{where}{site}"))
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_enum", "EnumRef"):
                enum = _literal(node.args[0]) if node.args else None
                members = _dialect_enum(enum) if enum else None
                if enum:
                    uses.append(ApiUse("class", "tensorrt", enum, where=f"{filename}:{node.lineno} in {fn.name}"))
                if enum and members:
                    where = f"{filename}:{node.lineno} in {fn.name} (every trt.{enum} value)"
                    uses.extend(ApiUse("member", enum, m, where=where) for m in members)
    return uses


def _methods(node: ast.expr, fn: ast.FunctionDef, functions: dict[str, ast.FunctionDef]) -> list[tuple[str, str]]:
    """The method names ``node`` (a literal, or a parameter its callers pass a literal for) can be."""
    text = _literal(node)
    if text is not None:
        return [(text, "")]
    if isinstance(node, ast.Name) and node.id in [a.arg for a in fn.args.args]:
        index = [a.arg for a in fn.args.args].index(node.id)
        found: list[tuple[str, str]] = []
        for caller in functions.values():
            for call in ast.walk(caller):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == fn.name
                        and len(call.args) > index and _literal(call.args[index]) is not None):
                    found.append((str(_literal(call.args[index])), f" (called from {caller.name}, line {call.lineno})"))
        return found
    return []


def _add_site(node: ast.Call, method: str, where: str) -> list[ApiUse]:
    uses: list[ApiUse] = []
    args = node.args[2]
    if isinstance(args, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in args.elts):
        uses.append(ApiUse("call", NETWORK, method, ("any",) * len(args.elts), where=where))
    else:
        uses.append(ApiUse("get", NETWORK, method, where=where))
    attributes = node.args[3] if len(node.args) > 3 else next((k.value for k in node.keywords if k.arg == "attributes"), None)
    layer = Returned(NETWORK, method)
    for key in _attribute_keys(attributes):
        uses.append(ApiUse("set", layer, key, ("any",), where=where))
    return uses


def _attribute_keys(node: ast.expr | None) -> list[str]:
    if node is None:
        return []
    return [k for t in ast.walk(node) if isinstance(t, ast.Tuple) and len(t.elts) == 2
            for k in [_literal(t.elts[0])] if k is not None]


def data_type_uses(tables: Mapping[str, Iterable[str]]) -> list[ApiUse]:
    """``trt.DataType`` members named by the emitter's dtype tables (``getattr(trt.DataType, m)``)."""
    return [ApiUse("member", "DataType", m, where=f"{name}") for name, members in tables.items() for m in members]


def default_data_type_tables() -> dict[str, list[str]]:
    from ziggurat.backends.tensorrt import runtime

    return {
        "network_plan.TRT_DATA_TYPES (DataTypeRef.resolve)": sorted(set(TRT_DATA_TYPES.values())),
        "runtime._TORCH_DTYPES (TensorRTEngine._io_tensor)": sorted(runtime._TORCH_DTYPES),  # pyright: ignore[reportPrivateUsage]
    }


# -- static calls of the emitter's modules -------------------------------------------------------

#: What a name means before any inference: the module, and in ``populate_network`` the objects
#: whose class the data fixes (its layers come from ``getattr(network, call.method)``, checked per
#: plan; here they are ``ILayer``s, whose members every layer class inherits).
SEEDS: dict[str, str] = {"trt": "module", "self._trt": "module", "module": "module"}
FUNCTION_SEEDS: dict[str, dict[str, str]] = {
    "populate_network": {"network": NETWORK, "layer": "ILayer", "tensor": "ITensor"},
}

Returns = Callable[[str, str], str | None]


def source_uses(source: str, filename: str, returns: Returns, severity_defaults: Sequence[str] = ()) -> list[ApiUse]:
    """Uses in one module's source, receivers typed from :data:`SEEDS` and ``returns(cls, method)``
    (the class a method of the real module returns, or None)."""
    return _SourceScan(filename, returns, list(severity_defaults)).run(ast.parse(source, filename))


class _SourceScan:
    """Names are typed per function (from :data:`SEEDS`, their assignments and the typed
    arguments callers in the module pass); ``self.x`` attributes per module."""

    def __init__(self, filename: str, returns: Returns, severities: list[str]) -> None:
        self.filename = filename
        self.returns = returns
        self.severities = severities
        self.types: dict[str, str] = dict(SEEDS)
        self.attributes: dict[str, str] = {}
        self.params: dict[str, dict[str, str]] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.uses: list[ApiUse] = []

    def run(self, tree: ast.Module) -> list[ApiUse]:
        self.functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
        for _ in range(3):  # types found in one pass (assignments, callers' arguments) serve the next
            self.uses = []
            for fn in self.functions.values():
                self.types = {**SEEDS, **FUNCTION_SEEDS.get(fn.name, {}), **self.params.get(fn.name, {})}
                for node in ast.walk(fn):
                    self._visit(node)
        return self.uses

    def _key(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return f"{node.value.id}.{node.attr}"
        return None

    def _known(self, key: str) -> str | None:
        return self.attributes.get(key) if key.startswith("self.") else self.types.get(key)

    def _bind(self, key: str, t: str) -> None:
        (self.attributes if key.startswith("self.") else self.types).setdefault(key, t)

    def type_of(self, node: ast.expr) -> str | None:
        """``module``, ``class:X`` (the class object), ``X`` (an instance) or None.  Names are
        typed module-wide (the first assignment wins), which the emitter's few modules allow."""
        key = self._key(node)
        known = self._known(key) if key is not None else None
        if known is not None:
            return known
        if isinstance(node, ast.Attribute):
            base = self.type_of(node.value)
            if base == "module":
                return f"class:{node.attr}"
            if base is not None and base.startswith("class:"):
                return f"class:{base[6:]}.{node.attr}"
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "import_tensorrt":
                return "module"
            callee = self.type_of(node.func) if not isinstance(node.func, ast.Attribute) else None
            if callee is not None and callee.startswith("class:"):
                return callee[6:]
            if isinstance(node.func, ast.Attribute):
                owner = self.type_of(node.func.value)
                if owner == "module":
                    return node.func.attr  # trt.Builder(...): an instance
                if owner is not None and owner.startswith("class:"):
                    return owner[6:]
                if owner is not None:
                    return self.returns(owner, node.func.attr)
        return None

    def _arg_kind(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return {bool: "bool", int: "int", float: "float", str: "str", bytes: "buffer"}.get(type(node.value), "any")
        t = self.type_of(node)
        if t is not None and t.startswith("class:") and t.count(".") == 1:
            return f"enum:{t[6:].split('.')[0]}"
        if t is not None and not t.startswith("class:") and t != "module":
            return f"obj:{t}"
        return "any"

    def _where(self, node: ast.AST) -> str:
        return f"{self.filename}:{getattr(node, 'lineno', '?')}"

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            t = self.type_of(node.value)
            for target in targets:
                key = self._key(target)
                if key is not None and t is not None:
                    self._bind(key, t)
                if isinstance(target, ast.Attribute):
                    owner = self.type_of(target.value)
                    if owner is not None and not owner.startswith(("class:", "module")):
                        self.uses.append(ApiUse("set", owner, target.attr, (self._arg_kind(node.value),),
                                                where=self._where(node)))
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            owner = self.type_of(node.value)
            if owner is not None and owner.startswith("class:"):
                cls = owner[6:]
                if "." not in cls:
                    self.uses.append(ApiUse("member", cls, node.attr, where=self._where(node)))
            elif owner == "module":
                self.uses.append(ApiUse("class", "tensorrt", node.attr, where=self._where(node)))
            elif owner is not None:
                self.uses.append(ApiUse("get", owner, node.attr, where=self._where(node)))

    def _call(self, node: ast.Call) -> None:
        func = node.func
        where = self._where(node)
        if isinstance(func, ast.Name) and func.id in self.functions:
            names = [a.arg for a in self.functions[func.id].args.args]
            for name, arg in zip(names, node.args, strict=False):
                t = self.type_of(arg)
                if t is not None:
                    self.params.setdefault(func.id, {}).setdefault(name, t)
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(node.args) >= 2:
            owner = self.type_of(node.args[0])
            name = _literal(node.args[1])
            if owner is not None and owner.startswith("class:") and name is not None:
                self.uses.append(ApiUse("member", owner[6:], name, where=where))
            elif owner is not None and owner.startswith("class:") and owner[6:] == "Logger":
                self.uses.extend(ApiUse("member", "Logger", s, where=f"{where} (log_severity default)") for s in self.severities)
            elif owner == "module" and name is not None:
                self.uses.append(ApiUse("class", "tensorrt", name, where=where))
            return
        if not isinstance(func, ast.Attribute):
            return
        owner = self.type_of(func.value)
        if owner is None or owner == "module":
            if owner == "module" and func.attr[:1].isupper():
                self.uses.append(ApiUse("call", func.attr, "__init__", tuple(self._arg_kind(a) for a in node.args),
                                        tuple(k.arg for k in node.keywords if k.arg), where=where))
            return
        if owner.startswith("class:"):
            return
        self.uses.append(ApiUse("call", owner, func.attr, tuple(self._arg_kind(a) for a in node.args),
                                tuple(k.arg for k in node.keywords if k.arg), where=where))


def module_sources() -> dict[str, str]:
    """The emitter's modules that touch the ``tensorrt`` API, by repository path."""
    root = Path(__file__).resolve().parents[1]
    paths = ["backends/tensorrt/emitter.py", "backends/tensorrt/runtime.py", "backends/tensorrt/network_plan.py",
             "backends/tensorrt/availability.py"]
    return {p: (root / p).read_text() for p in paths}


def layer_calls_source() -> str:
    return (Path(__file__).resolve().parents[1] / "backends/tensorrt/layer_calls.py").read_text()
