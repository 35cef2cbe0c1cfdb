"""Generate ``dialects/torch/aten_ops.py`` from torch's own operator schemas.

Usage: ``python -m ziggurat.tools.gen_torch_ops`` (or ``make gen-ops``).

For every op name in ``tools/torch_ops.txt`` it emits one IRDL op class per
overload whose arguments all have a static encoding (tensors become operands,
``int``/``float``/``int[]``/``ScalarType``... become properties).  ``out=``
variants are skipped.  A static argument whose property does not read as its value with
``.value.data``/``.data`` (anything but a plain ``int``, ``float`` or ``str``: a ``Scalar``,
``bool``, list, dtype, layout, device or memory format, or an optional argument, absent
when None) also gets a typed ``<name>_value`` property that decodes
it (``AtenOp.static_value``).  Rank and dtype rules that the schema implies but does
not spell out are listed in ``RANK_RULES``/``DTYPE_RULES`` below.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import torch

from ziggurat.dialects.torch.schema import (
    ArgKind,
    OpSchema,
    parse_schema,
    registered_schemas,
)
from ziggurat.dialects.torch.ops_base import AtenOp
from ziggurat.dialects.torch.static_values import encodable

ROOT = Path(__file__).resolve().parent.parent
OP_LIST = ROOT / "tools" / "torch_ops.txt"
OUTPUT = ROOT / "dialects" / "torch" / "aten_ops.py"

# Ranks that operands must have (by base name, or "name.overload").
RANK_RULES: dict[str, dict[str, tuple[int, ...]]] = {
    "conv1d": {"input": (2, 3), "weight": (3,)},
    "conv2d": {"input": (3, 4), "weight": (4,)},
    "conv3d": {"input": (4, 5), "weight": (5,)},
    "conv_transpose2d": {"input": (3, 4), "weight": (4,)},
    "linear": {"weight": (1, 2), "bias": (0, 1)},
    "mm": {"self": (2,), "mat2": (2,)},
    "bmm": {"self": (3,), "mat2": (3,)},
    "addmm": {"mat1": (2,), "mat2": (2,)},
    "baddbmm": {"batch1": (3,), "batch2": (3,)},
    "max_pool1d": {"self": (2, 3)},
    "max_pool2d": {"self": (3, 4)},
    "max_pool3d": {"self": (4, 5)},
    "avg_pool1d": {"self": (2, 3)},
    "avg_pool2d": {"self": (3, 4)},
    "avg_pool3d": {"self": (4, 5)},
    "adaptive_avg_pool1d": {"self": (2, 3)},
    "adaptive_avg_pool2d": {"self": (3, 4)},
    "adaptive_avg_pool3d": {"self": (4, 5)},
    "adaptive_max_pool1d": {"self": (2, 3)},
    "adaptive_max_pool2d": {"self": (3, 4)},
    "adaptive_max_pool3d": {"self": (4, 5)},
    "batch_norm": {"input": (2, 3, 4, 5)},
    "embedding": {"weight": (2,)},
    "t": {"self": (0, 1, 2)},
    "pixel_shuffle": {"self": (3, 4, 5, 6)},
}
# Element kinds that operands must have.
DTYPE_RULES: dict[str, dict[str, str]] = {
    "embedding": {"indices": "integer"},
    "index_select": {"index": "integer"},
    "gather": {"index": "integer"},
    "scatter": {"index": "integer"},
    "masked_fill": {"mask": "bool"},
    "masked_fill_": {"mask": "bool"},
    "where.self": {"condition": "bool"},
    "bitwise_not": {"self": "integer_or_bool"},
    "bitwise_and.Tensor": {"self": "integer_or_bool", "other": "integer_or_bool"},
    "bitwise_or.Tensor": {"self": "integer_or_bool", "other": "integer_or_bool"},
    "bitwise_xor.Tensor": {"self": "integer_or_bool", "other": "integer_or_bool"},
}
# Ops with side effects or randomness: never Pure (so DCE/CSE leave them alone).
IMPURE = re.compile(r"^(rand|randn|randint|bernoulli|normal|uniform|rrelu|.*dropout.*|empty.*|new_empty)$")

_RESULT_KINDS = {
    ArgKind.TENSOR: "result_def(TensorType)",
    ArgKind.TENSOR_LIST: "var_result_def(TensorType)",
    ArgKind.INT: "result_def(IntegerType)",
    ArgKind.BOOL: "result_def(IntegerType)",
    ArgKind.FLOAT: "result_def(Float64Type)",
    ArgKind.SCALAR: "result_def()",
}
_PROP_CONSTRAINT = {
    ArgKind.INT: "IntegerAttr",
    ArgKind.FLOAT: "FloatAttr",
    ArgKind.BOOL: "IntegerAttr",
    ArgKind.SCALAR: "IntegerAttr | FloatAttr",
    ArgKind.INT_LIST: "DenseArrayBase",
    ArgKind.FLOAT_LIST: "DenseArrayBase",
    ArgKind.BOOL_LIST: "DenseArrayBase",
    ArgKind.STR: "StringAttr",
    ArgKind.SCALAR_TYPE: "Attribute",
    ArgKind.LAYOUT: "StringAttr",
    ArgKind.DEVICE: "StringAttr",
    ArgKind.MEMORY_FORMAT: "StringAttr",
}
# Python types of the decoded static arguments (the ``<name>_value`` properties).
_VALUE_TYPES = {
    ArgKind.INT: "int",
    ArgKind.FLOAT: "float",
    ArgKind.BOOL: "bool",
    ArgKind.SCALAR: "int | float | bool",
    ArgKind.INT_LIST: "list[int]",
    ArgKind.FLOAT_LIST: "list[float]",
    ArgKind.BOOL_LIST: "list[bool]",
    ArgKind.STR: "str",
    ArgKind.SCALAR_TYPE: "torch.dtype",
    ArgKind.LAYOUT: "torch.layout",
    ArgKind.DEVICE: "torch.device",
    ArgKind.MEMORY_FORMAT: "torch.memory_format",
}
# Static arguments that read as their value from the property (``.value.data``, ``.data``);
# every other one gets a ``<name>_value`` property: an i1 ``IntegerAttr`` (``true`` is -1), an
# int or float attribute (Scalar), a ``DenseArrayBase`` (whose ``get_values()`` pyright cannot
# type), a type or a name, or an optional argument (absent: None).
_PLAIN_KINDS = {ArgKind.INT, ArgKind.FLOAT, ArgKind.STR}


def class_name(schema: OpSchema) -> str:
    def camel(text: str) -> str:
        return "".join(w[:1].upper() + w[1:] if w else "_" for w in text.split("_"))

    return "Aten" + camel(schema.base_name) + camel(schema.overload) + "Op"


def op_name(schema: OpSchema) -> str:
    return f"torch.aten.{schema.base_name}" + (f".{schema.overload}" if schema.overload else "")


def supported(schema: OpSchema) -> str | None:
    """Why an overload cannot be a typed op, or None if it can."""
    if schema.is_vararg:
        return "variadic schema"
    if schema.is_out_variant or schema.overload.endswith("out") or "_out" in schema.overload:
        return "out= variant"
    for arg in schema.args:
        if arg.kind == ArgKind.TENSOR_LIST and arg.optional:
            return f"optional list argument {arg.name}"
        if arg.kind == ArgKind.GENERATOR:
            continue
        if not arg.kind.is_tensor and not encodable(arg):
            return f"argument {arg.name}: {arg.type_text}"
    if not schema.returns:
        return "no results"
    for ret in schema.returns:
        if ret.kind not in _RESULT_KINDS:
            return f"result type {ret.type_text}"
    return None


def result_fields(schema: OpSchema) -> list[tuple[str, str]]:
    arg_fields = {a.field for a in schema.args}
    if len(schema.returns) == 1:
        names = ["result"]
    else:
        names = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
    fields = []
    for name, ret in zip(names, schema.returns, strict=True):
        field = name if name not in arg_fields and name not in ("name", "results") else name + "_out"
        fields.append((field, _RESULT_KINDS[ret.kind]))
    return fields


def assembly_format(schema: OpSchema) -> str:
    """Operands in schema order, optional ones as ``name(%v)``, lists as ``[%a, %b]``.

    With more than one optional/variadic operand the operand groups are ambiguous
    for ``functional-type``, so each such group carries its types inline.
    """
    tensor_args = schema.tensor_args()
    variadic = sum(a.optional or a.kind == ArgKind.TENSOR_LIST for a in tensor_args)
    inline_types = variadic > 1
    parts: list[str] = []
    required: list[str] = []
    for arg in tensor_args:
        f = arg.field
        comma = "`,` " if parts else ""
        if arg.kind == ArgKind.TENSOR_LIST:
            if inline_types:
                parts.append((comma or "` ` ") + f"`[` (${f}^ `:` type(${f}))? `]`")
            else:
                parts.append((comma or "` ` ") + f"`[` ${f} `]`")
        elif arg.optional:
            inner = f"${f}^ `:` type(${f})" if inline_types else f"${f}^"
            parts.append(f"(`{arg.name}` `(` {inner} `)`)?")
        else:
            parts.append(comma + f"${f}")
            required.append(f)
    if not tensor_args:
        return "attr-dict `:` type(results)"
    if not inline_types:
        return " ".join([*parts, "attr-dict `:` functional-type(operands, results)"])
    types = " `,` ".join(f"type(${f})" for f in required)
    return " ".join([*parts, "attr-dict `:`", f"`(` {types} `)`" if types else "`(` `)`", "`->` type(results)"])


def rules_for(schema: OpSchema, table: dict[str, dict[str, object]]) -> dict[str, object]:
    rules = dict(table.get(schema.base_name, {}))
    rules.update(table.get(f"{schema.base_name}.{schema.overload}", {}))
    names = {a.name for a in schema.args}
    return {k: v for k, v in rules.items() if k in names}


def value_accessors(schema: OpSchema) -> list[str]:
    """Typed ``<name>_value`` properties of the static arguments that need decoding."""
    taken = {a.field for a in schema.args} | {a.field + "_present" for a in schema.args}
    taken |= {field for field, _ in result_fields(schema)}
    lines: list[str] = []
    for arg in schema.args:
        if arg.kind.is_tensor or arg.kind == ArgKind.GENERATOR:
            continue
        if not arg.optional and arg.kind in _PLAIN_KINDS:
            continue
        accessor = f"{arg.name}_value"
        if accessor in taken or hasattr(AtenOp, accessor):
            raise ValueError(f"{schema.key}: accessor {accessor} clashes with a field")
        value_type = _VALUE_TYPES[arg.kind]
        if arg.optional:  # absent when None, whatever the schema's default
            value_type += " | None"
        lines += ["", "    @property", f"    def {accessor}(self) -> {value_type}:",
                  f"        return self.static_value({arg.name!r})"]
    return lines


def emit_class(schema: OpSchema) -> str:
    lines = [
        "@irdl_op_definition",
        f"class {class_name(schema)}(AtenOp):",
        f'    """`{schema.text}`"""',
        "",
        f'    name = "{op_name(schema)}"',
        f"    SCHEMA: ClassVar[str] = {schema.text!r}",
    ]
    n_variadic = 0
    for arg in schema.args:
        if arg.kind == ArgKind.TENSOR:
            kind = "opt_operand_def" if arg.optional else "operand_def"
            n_variadic += arg.optional
            lines.append(f"    {arg.field} = {kind}(TensorType)")
        elif arg.kind == ArgKind.TENSOR_LIST:
            n_variadic += 1
            lines.append(f"    {arg.field} = var_operand_def(TensorType)")
            if arg.elem_optional:
                lines.append(f"    {arg.field}_present = prop_def(DenseArrayBase)")
        elif arg.kind == ArgKind.GENERATOR:
            continue
        else:
            kind = "opt_prop_def" if arg.optional else "prop_def"
            lines.append(f"    {arg.field} = {kind}({_PROP_CONSTRAINT[arg.kind]})")
    for field, definition in result_fields(schema):
        lines.append(f"    {field} = {definition}")
    ranks = rules_for(schema, RANK_RULES)  # pyright: ignore[reportArgumentType]
    dtypes = rules_for(schema, DTYPE_RULES)  # pyright: ignore[reportArgumentType]
    if ranks:
        lines.append(f"    RANK_RULES: ClassVar[dict[str, tuple[int, ...]]] = {ranks!r}")
    if dtypes:
        lines.append(f"    DTYPE_RULES: ClassVar[dict[str, str]] = {dtypes!r}")
    pure = not schema.is_inplace and not IMPURE.match(schema.base_name) and not any(
        a.mutable for a in schema.args
    )
    if pure:
        lines.append("    traits = traits_def(Pure())")
    options = ["ParsePropInAttrDict()"]
    if n_variadic > 1:
        options.insert(0, "AttrSizedOperandSegments(as_property=True)")
    lines.append(f"    irdl_options = ({', '.join(options)},)")
    lines.append(f"    assembly_format = {assembly_format(schema)!r}")
    lines += value_accessors(schema)
    return "\n".join(lines)


HEADER = '''"""Typed ``torch.aten.*`` ops, generated from torch {version}'s operator schemas.

Generated by ``tools/gen_torch_ops.py`` from the op list ``tools/torch_ops.txt``;
do not edit by hand, regenerate with ``make gen-ops``.
{count} ops from {names} aten op names. Skipped overloads (not expressible as typed
ops; they import as ``torch.operator``): {skipped}.

Tensor arguments are operands and static ones properties, by schema name.  A plain ``int``,
``float`` or ``str`` reads as ``op.groups.value.data``; every other static argument (Scalar,
bool, list, dtype, layout, device, memory format, or optional) also reads decoded through a
typed ``<name>_value`` property (``op.stride_value``; an absent optional one is None).
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

import torch
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure

from ziggurat.dialects.torch.ops_base import AtenOp

__all__ = ["ATEN_OPS"]

'''


def generate(names: list[str]) -> tuple[str, list[str]]:
    schemas = registered_schemas()
    by_name: dict[str, list[str]] = {}
    for key, text in schemas.items():
        by_name.setdefault(key.split(".")[0], []).append(text)
    classes: list[str] = []
    class_names: list[str] = []
    skipped: list[str] = []
    missing: list[str] = []
    for name in names:
        texts = by_name.get(name)
        if not texts:
            missing.append(name)
            continue
        for text in sorted(texts):
            schema = parse_schema(text)
            reason = supported(schema)
            if reason is not None:
                if reason != "out= variant":
                    skipped.append(schema.key)
                continue
            classes.append(emit_class(schema))
            class_names.append(class_name(schema))
    header = HEADER.format(
        version=torch.__version__.split("+")[0],
        count=len(class_names),
        names=len(names) - len(missing),
        skipped=len(skipped),
    )
    body = "\n\n\n".join(classes)
    table = "\n\nATEN_OPS: tuple[type[AtenOp], ...] = (\n" + "".join(
        f"    {c},\n" for c in class_names
    ) + ")\n"
    return header + "\n" + body + table, missing


def read_op_list(path: Path) -> list[str]:
    names: list[str] = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(line.split()[0])
    return sorted(set(names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--op-list", type=Path, default=OP_LIST)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    source, missing = generate(read_op_list(args.op_list))
    args.output.write_text(source)
    subprocess.run([sys.executable, "-m", "ruff", "format", str(args.output)], check=False,
                   capture_output=True)
    print(f"wrote {args.output}")
    if missing:
        print("names with no torch schema (imported generically):", ", ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
