"""The hand-written part of the ``torch`` dialect.

* :class:`AtenOp` — base of every generated ``torch.aten.*`` op. The op's
  schema string is a class variable; tensor arguments are operands, static
  arguments are properties (see :mod:`static_values`), and
  :meth:`TorchOp.arguments` binds both back by schema name.
* :class:`OperatorOp` — ``torch.operator "aten::name.overload"(...)``, the
  escape hatch for any op the dialect does not define (or whose scalar
  arguments are not compile-time constants), as in torch-mlir.
* :class:`LiteralOp` — a tensor constant, usually a ``dense_resource`` weight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.torch import static_values
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec, OpSchema, parse_schema
from ziggurat.ir.types import is_float_element

BoundValue = SSAValue | list[SSAValue | None] | static_values.StaticValue
"""A bound schema argument: a tensor value, a list of them, or a static value."""


@dataclass(frozen=True)
class BoundArguments:
    """The arguments of a torch op by schema name, defaults filled in."""

    schema: OpSchema
    values: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name)
        return default if value is None else value

    def tensor(self, name: str) -> SSAValue:
        value = self.values[name]
        if not isinstance(value, SSAValue):
            raise TypeError(f"{self.schema.key}: argument '{name}' is not a tensor value")
        return value

    def static(self, name: str) -> static_values.StaticValue:
        value = self.values[name]
        if isinstance(value, SSAValue):
            raise TypeError(f"{self.schema.key}: argument '{name}' is not a static value")
        return value  # pyright: ignore[reportReturnType]

    def call_arguments(self, resolve: Callable[[ArgSpec, Any], Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments of a call of torch's overload, each argument's
        bound value first passed through ``resolve(spec, value)``."""
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for spec in self.schema.args:
            value = resolve(spec, self.values.get(spec.name))
            if spec.kwarg_only:
                keywords[spec.name] = value
            else:
                positional.append(value)
        return positional, keywords


def flat_results(result: Any) -> list[Any]:
    """What torch's overload returned, one entry per op result (``Tensor[]`` flattened)."""
    flat: list[Any] = []
    for item in result if isinstance(result, tuple | list) else (result,):  # pyright: ignore
        flat.extend(item if isinstance(item, list) else [item])  # pyright: ignore
    return flat


class TorchOp(IRDLOperation):
    """Common interface of ``torch.aten.*`` and ``torch.operator``."""

    @property
    def op_schema(self) -> OpSchema:
        raise NotImplementedError

    @property
    def aten_key(self) -> str:
        """``aten::add.Tensor``: the op's qualified name and overload."""
        return self.op_schema.key

    def arguments(self) -> BoundArguments:
        raise NotImplementedError


class AtenOp(TorchOp):
    """Base class of the generated ``torch.aten.*`` ops."""

    SCHEMA: ClassVar[str]
    RANK_RULES: ClassVar[Mapping[str, tuple[int, ...]]] = {}
    DTYPE_RULES: ClassVar[Mapping[str, str]] = {}

    @property
    def op_schema(self) -> OpSchema:
        return parse_schema(type(self).SCHEMA)

    @classmethod
    def parsed_schema(cls) -> OpSchema:
        return parse_schema(cls.SCHEMA)

    def static_value(self, name: str) -> Any:
        """Static argument ``name`` decoded (see :mod:`static_values`), as :meth:`arguments`
        binds it: an absent optional one is None (the op was built with None: ``from_arguments``
        fills in schema defaults before encoding).  The generated ops read it typed through
        their ``<name>_value`` properties."""
        spec = self.op_schema.arg(name)
        return static_values.decode(spec, self.properties.get(spec.field))

    def arguments(self) -> BoundArguments:
        schema = self.op_schema
        values: dict[str, Any] = {}
        for spec in schema.args:
            if spec.kind == ArgKind.TENSOR:
                values[spec.name] = getattr(self, spec.field)
            elif spec.kind == ArgKind.TENSOR_LIST:
                items: list[SSAValue | None] = list(getattr(self, spec.field))
                if spec.elem_optional:
                    items = _apply_presence(items, self.properties.get(spec.field + "_present"))
                values[spec.name] = items
            else:
                values[spec.name] = static_values.decode(spec, self.properties.get(spec.field))
        return BoundArguments(schema, values)

    @classmethod
    def from_arguments(
        cls, args: Mapping[str, Any], result_types: Sequence[Attribute]
    ) -> AtenOp:
        """Build the op from arguments bound by schema name (static ones as Python values)."""
        schema = cls.parsed_schema()
        operands: list[SSAValue | Sequence[SSAValue] | None] = []
        properties: dict[str, Attribute] = {}
        for spec in schema.args:
            value = args.get(spec.name, spec.default if spec.has_default else None)
            if spec.kind == ArgKind.TENSOR:
                if value is None and not spec.optional:
                    raise static_values.StaticArgumentError(
                        f"{schema.key}: tensor argument '{spec.name}' is missing"
                    )
                operands.append([] if value is None else [value] if spec.optional else value)
            elif spec.kind == ArgKind.TENSOR_LIST:
                items = list(value or [])
                if spec.elem_optional:
                    properties[spec.field + "_present"] = DenseArrayBase.from_list(
                        i1, [int(v is not None) for v in items]
                    )
                    items = [v for v in items if v is not None]
                operands.append(items)
            else:
                attr = static_values.encode(spec, value)
                if attr is not None:
                    properties[spec.field] = attr
        return cls.build(operands=operands, properties=properties,
                         result_types=cls._group_results(result_types))

    @classmethod
    def _group_results(cls, result_types: Sequence[Attribute]) -> list[Attribute | list[Attribute]]:
        """Flat result types -> one entry per result definition (a list for ``Tensor[]``)."""
        from xdsl.irdl import VarResultDef

        defs = cls.get_irdl_definition().results
        if not any(isinstance(d, VarResultDef) for _, d in defs):
            return list(result_types)
        fixed = len(defs) - 1
        n_var = len(result_types) - fixed
        grouped: list[Attribute | list[Attribute]] = []
        it = iter(result_types)
        for _, d in defs:
            grouped.append([next(it) for _ in range(n_var)] if isinstance(d, VarResultDef) else next(it))
        return grouped

    def verify_(self) -> None:
        schema = self.op_schema
        for arg_name, ranks in self.RANK_RULES.items():
            value = getattr(self, schema.arg(arg_name).field)
            if value is None or not isinstance(value.type, TensorType):
                continue
            rank = len(value.type.get_shape())
            if rank not in ranks:
                allowed = " or ".join(str(r) for r in ranks)
                raise VerifyException(
                    f"{self.name}: operand '{arg_name}' must have rank {allowed}, "
                    f"got {value.type} (schema: {schema.text})"
                )
        for arg_name, rule in self.DTYPE_RULES.items():
            value = getattr(self, schema.arg(arg_name).field)
            if value is None or not isinstance(value.type, TensorType):
                continue
            element = value.type.get_element_type()
            if not _element_matches(element, rule):
                raise VerifyException(
                    f"{self.name}: operand '{arg_name}' must have {rule} elements, "
                    f"got {value.type} (schema: {schema.text})"
                )
        _verify_result_types(self)


def _verify_result_types(op: TorchOp) -> None:
    """The declared result types are the ones torch computes (``result_types``)."""
    from ziggurat.dialects.torch.result_types import verify_result_types

    # pyright sees this file both as dialects.torch.ops_base and as ziggurat.dialects...
    verify_result_types(op)  # pyright: ignore[reportArgumentType]


def _element_matches(element: Attribute, rule: str) -> bool:
    is_float = is_float_element(element)
    is_bool = element == i1
    is_integer = isinstance(element, IntegerType)  # not complex, float8 or quantized
    match rule:
        case "float":
            return is_float
        case "integer":
            return is_integer and not is_bool
        case "bool":
            return is_bool
        case "integer_or_bool":
            return is_integer
        case _:
            raise ValueError(f"unknown dtype rule {rule}")


def _apply_presence(items: list[SSAValue | None], mask: Attribute | None) -> list[SSAValue | None]:
    if not isinstance(mask, DenseArrayBase):
        return items
    present = [bool(v) for v in mask.get_values()]  # pyright: ignore[reportUnknownVariableType]
    it = iter(items)
    return [next(it) if p else None for p in present]


@irdl_op_definition
class OperatorOp(TorchOp):
    """``torch.operator "aten::foo.bar"(%a, %b) {args = {...}}``: any op, imported generically.

    ``operand_names`` says which schema argument each operand binds
    (``"self"``, or ``"tensors#1"`` for element 1 of a list); ``args`` holds
    the static arguments by schema name.
    """

    name = "torch.operator"

    op_name = prop_def(StringAttr)
    schema_text = opt_prop_def(StringAttr, prop_name="schema")
    args = prop_def(DictionaryAttr)
    operand_names = prop_def(ArrayAttr[StringAttr])
    inputs = var_operand_def()
    outputs = var_result_def()

    assembly_format = (
        "$op_name `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"
    )

    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        _verify_result_types(self)

    @property
    def op_schema(self) -> OpSchema:
        if self.schema_text is None:
            raise KeyError(f"torch.operator \"{self.op_name.data}\" has no known schema")
        return parse_schema(self.schema_text.data)

    def arguments(self) -> BoundArguments:
        schema = self.op_schema
        values: dict[str, Any] = {}
        statics = self.args.data
        lists: dict[str, list[tuple[int, SSAValue]]] = {}
        for name_attr, operand in zip(self.operand_names.data, self.inputs, strict=True):
            name, _, index = name_attr.data.partition("#")
            if index:
                lists.setdefault(name, []).append((int(index), operand))
            else:
                values[name] = operand
        for spec in schema.args:
            if spec.name in values:
                continue
            if spec.name in lists:
                elements = dict(lists[spec.name])
                static_list = statics.get(spec.name)
                size = max(elements) + 1
                constant = _decode_list(spec, static_list) if static_list else []
                size = max(size, len(constant))
                values[spec.name] = [
                    elements[i] if i in elements else constant[i] for i in range(size)
                ]
            elif spec.kind.is_tensor:
                values[spec.name] = [] if spec.kind == ArgKind.TENSOR_LIST else None
            else:
                values[spec.name] = _decode_static(spec, statics.get(spec.name))
        return BoundArguments(schema, values)


def _decode_static(spec: ArgSpec, attr: Attribute | None) -> Any:
    if spec.kind == ArgKind.OTHER:
        return None if attr is None else attr
    return static_values.decode(spec, attr)


def _decode_list(spec: ArgSpec, attr: Attribute) -> list[Any]:
    if isinstance(attr, ArrayAttr):
        return [None for _ in attr.data]  # pyright: ignore
    value = static_values.decode(spec, attr)
    return list(value) if isinstance(value, list) else []  # pyright: ignore


@irdl_op_definition
class LiteralOp(IRDLOperation):
    """``%w = torch.literal dense_resource<conv1.weight> : tensor<8x3x3x3xf32>``."""

    name = "torch.literal"

    value = prop_def(DenseResourceAttr | DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    def verify_(self) -> None:
        if self.result.type != self.value.get_type():
            raise VerifyException(
                f"torch.literal: result type {self.result.type} differs from the value's "
                f"type {self.value.get_type()}"
            )
        if isinstance(self.value, DenseResourceAttr):
            try:
                self.tensor()  # decodes the blob once; its size must fit the type
            except KeyError:
                raise VerifyException(
                    f"torch.literal: {self.value} has no data (its blob is missing from the file's "
                    "dialect_resources, or the IR was printed with --elide-resources)") from None
            except (ValueError, TypeError, RuntimeError) as e:
                raise VerifyException(f"torch.literal: {e}") from None

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> LiteralOp:
        value = parser.parse_attribute()
        if not isinstance(value, DenseResourceAttr | DenseIntOrFPElementsAttr):
            parser.raise_error("torch.literal expects a dense or dense_resource attribute")
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def tensor(self) -> torch.Tensor:
        """The literal's value as a torch tensor (a view of the blob, do not mutate)."""
        from ziggurat.ir.literals import literal_tensor

        return literal_tensor(self.value)


def is_torch_op(op: Operation) -> bool:
    return isinstance(op, TorchOp)
