"""Parsed torch operator schemas: what each argument of an aten op is.

Everything that binds arguments by name (the importer, the generated ops, the
reference interpreter, the TensorRT converter registry) reads schemas through
:func:`parse_schema`, so the meaning of ``SymInt[2] stride=1`` or
``ScalarType? dtype=None`` is decided in one place.
"""

from __future__ import annotations

import importlib
import keyword
import re
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

import torch


class ArgKind(Enum):
    TENSOR = "Tensor"
    TENSOR_LIST = "Tensor[]"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    SCALAR = "Scalar"
    INT_LIST = "int[]"
    FLOAT_LIST = "float[]"
    BOOL_LIST = "bool[]"
    STR = "str"
    SCALAR_TYPE = "ScalarType"
    LAYOUT = "Layout"
    DEVICE = "Device"
    MEMORY_FORMAT = "MemoryFormat"
    GENERATOR = "Generator"
    OTHER = "other"

    @property
    def is_tensor(self) -> bool:
        return self in (ArgKind.TENSOR, ArgKind.TENSOR_LIST)


_BASE_KINDS: dict[str, ArgKind] = {
    "Tensor": ArgKind.TENSOR,
    "int": ArgKind.INT,
    "SymInt": ArgKind.INT,
    "float": ArgKind.FLOAT,
    "bool": ArgKind.BOOL,
    "Scalar": ArgKind.SCALAR,
    "str": ArgKind.STR,
    "ScalarType": ArgKind.SCALAR_TYPE,
    "Layout": ArgKind.LAYOUT,
    "Device": ArgKind.DEVICE,
    "MemoryFormat": ArgKind.MEMORY_FORMAT,
    "Generator": ArgKind.GENERATOR,
}
_LIST_KINDS: dict[ArgKind, ArgKind] = {
    ArgKind.TENSOR: ArgKind.TENSOR_LIST,
    ArgKind.INT: ArgKind.INT_LIST,
    ArgKind.FLOAT: ArgKind.FLOAT_LIST,
    ArgKind.BOOL: ArgKind.BOOL_LIST,
}

# Names an IRDL op class already uses, or Python keywords: such argument fields get a "_".
_RESERVED = {
    "self", "name", "result", "results", "operands", "properties", "attributes",
    "regions", "successors", "parent", "location", "traits", "schema", "verify",
    "print", "parse", "create", "clone", "walk", "build", "type", "irdl_options",
    "assembly_format", "op", "kind", "args",
}


def field_name(arg_name: str) -> str:
    """The Python field of an op class that holds schema argument ``arg_name``."""
    if arg_name in _RESERVED or keyword.iskeyword(arg_name):
        return arg_name + "_"
    return arg_name


@dataclass(frozen=True)
class ArgSpec:
    """One schema argument: ``SymInt[2] stride=[1, 1]`` -> name, kind INT_LIST, length 2."""

    name: str
    kind: ArgKind
    type_text: str
    optional: bool = False
    elem_optional: bool = False
    length: int | None = None
    has_default: bool = False
    default: object = None
    kwarg_only: bool = False
    mutable: bool = False

    @property
    def field(self) -> str:
        return field_name(self.name)


@dataclass(frozen=True)
class ReturnSpec:
    name: str
    kind: ArgKind
    type_text: str


@dataclass(frozen=True)
class OpSchema:
    """A parsed ``aten::name.overload(args) -> returns`` schema."""

    text: str
    qualified_name: str  # "aten::add"
    overload: str  # "Tensor", or "" for the default overload
    args: tuple[ArgSpec, ...]
    returns: tuple[ReturnSpec, ...]
    is_vararg: bool = False

    @property
    def key(self) -> str:
        """``aten::add.Tensor`` (or ``aten::relu`` for the default overload)."""
        return self.qualified_name + (f".{self.overload}" if self.overload else "")

    @property
    def namespace(self) -> str:
        return self.qualified_name.split("::")[0]

    @property
    def base_name(self) -> str:
        return self.qualified_name.split("::")[1]

    @property
    def is_inplace(self) -> bool:
        return self.base_name.endswith("_") and not self.base_name.endswith("__") and any(
            a.mutable for a in self.args
        )

    @property
    def is_out_variant(self) -> bool:
        return any(a.mutable and a.kwarg_only for a in self.args)

    def arg(self, name: str) -> ArgSpec:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f"{self.key} has no argument {name!r}")

    def tensor_args(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if a.kind.is_tensor)

    def static_args(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if not a.kind.is_tensor)


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


_ALIAS = re.compile(r"\([^)]*\)")


def _classify(type_text: str) -> tuple[ArgKind, bool, bool, int | None]:
    """Kind, optional, element-optional and fixed length of a schema type like ``int[2]?``."""
    mutable = False
    text = type_text
    optional = text.endswith("?")
    if optional:
        text = text[:-1]
    m = re.fullmatch(r"(\w+)(\?)?(?:\[(\d*)\])?", text)
    if not m:
        return ArgKind.OTHER, optional, False, None
    base, elem_opt, length = m.group(1), bool(m.group(2)), m.group(3)
    kind = _BASE_KINDS.get(base, ArgKind.OTHER)
    if length is None:
        if elem_opt:  # "Tensor?" written without a list suffix cannot happen; be safe
            return kind, True, False, None
        return kind, optional, False, None
    list_kind = _LIST_KINDS.get(kind, ArgKind.OTHER)
    del mutable
    return list_kind, optional, elem_opt, int(length) if length else None


@cache
def parse_schema(text: str) -> OpSchema:
    """Parse a schema string as printed by ``str(torch.FunctionSchema)``."""
    parsed = torch._C.parse_schema(text)  # pyright: ignore[reportPrivateUsage]
    head, _, rest = text.partition("(")
    qualified, _, overload = head.partition(".")
    depth = 1
    i = 0
    while depth:
        ch = rest[i]
        depth += ch == "("
        depth -= ch == ")"
        i += 1
    arg_text, ret_text = rest[: i - 1], rest[i:].strip().removeprefix("->").strip()
    raw_args = [a for a in _split_top_level(arg_text) if a != "*"]
    if "..." in raw_args or ret_text.strip() == "...":
        return OpSchema(text, qualified, overload, (), (), is_vararg=True)
    args: list[ArgSpec] = []
    for raw, parsed_arg in zip(raw_args, parsed.arguments, strict=True):
        decl = raw.split("=")[0].strip()
        type_text = decl.rsplit(" ", 1)[0].strip()
        mutable = "!" in type_text
        clean = _ALIAS.sub("", type_text).replace(" ", "")
        kind, optional, elem_opt, length = _classify(clean)
        has_default = "=" in raw
        args.append(
            ArgSpec(
                name=parsed_arg.name,
                kind=kind,
                type_text=clean,
                optional=optional,
                elem_optional=elem_opt,
                length=length,
                has_default=has_default,
                default=parsed_arg.default_value if has_default else None,
                kwarg_only=parsed_arg.kwarg_only,
                mutable=mutable,
            )
        )
    returns: list[ReturnSpec] = []
    ret_body = ret_text[1:-1] if ret_text.startswith("(") else ret_text
    for raw, parsed_ret in zip(_split_top_level(ret_body), parsed.returns, strict=True):
        type_text = _ALIAS.sub("", raw.split(" ")[0]).strip()
        kind, _, _, _ = _classify(type_text)
        returns.append(ReturnSpec(parsed_ret.name or "", kind, type_text))
    return OpSchema(
        text=text,
        qualified_name=qualified,
        overload=overload,
        args=tuple(args),
        returns=tuple(returns),
    )


#: Namespaces whose ops torch registers only when a Python module is imported (PT2E's
#: quantize/dequantize ops, which a saved or printed module holds without that import).
NAMESPACE_MODULES = {"quantized_decomposed": "torch.ao.quantization.fx._decomposed"}


def torch_overload(schema: OpSchema) -> Any:
    """``torch.ops.<ns>.<name>.<overload>`` of ``schema``, or None when torch has none."""
    module = NAMESPACE_MODULES.get(schema.namespace)
    if module is not None:
        importlib.import_module(module)
    try:
        packet = getattr(getattr(torch.ops, schema.namespace), schema.base_name)
        return getattr(packet, schema.overload or "default")
    except (AttributeError, RuntimeError):
        return None


@cache
def registered_schemas() -> dict[str, str]:
    """Every schema torch knows, by ``aten::name.overload`` key."""
    result: dict[str, str] = {}
    for s in torch._C._jit_get_all_schemas():  # pyright: ignore[reportPrivateUsage]
        key = s.name + (f".{s.overload_name}" if s.overload_name else "")
        result.setdefault(key, str(s))
    return result


# ScalarType / Layout / MemoryFormat are plain ints in TorchScript graphs and schema defaults.
SCALAR_TYPE_CODES: dict[int, torch.dtype] = {
    0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64,
    5: torch.float16, 6: torch.float32, 7: torch.float64, 8: torch.complex32, 9: torch.complex64,
    10: torch.complex128, 11: torch.bool, 12: torch.qint8, 13: torch.quint8, 14: torch.qint32,
    15: torch.bfloat16, 16: torch.quint4x2, 17: torch.quint2x4, 23: torch.float8_e5m2,
    24: torch.float8_e4m3fn, 25: torch.float8_e5m2fnuz, 26: torch.float8_e4m3fnuz,
}
if hasattr(torch, "float8_e8m0fnu"):  # torch >= 2.7
    SCALAR_TYPE_CODES[44] = torch.float8_e8m0fnu
MEMORY_FORMAT_CODES: dict[int, torch.memory_format] = {
    0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
    3: torch.channels_last_3d,
}
LAYOUT_CODES: dict[int, torch.layout] = {0: torch.strided, 1: torch.sparse_coo}
