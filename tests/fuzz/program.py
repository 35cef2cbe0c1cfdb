"""A generated program: graph inputs, constant buffers, straight-line statements, outputs.

The program *is* Python source: :func:`module_source` emits an ``nn.Module`` whose
``forward`` runs the statements in order.  Each :class:`Node` is one or more lines that
read values by name and define new ones; the minimizer removes and bypasses nodes, so
a node is the unit of reduction.  Programs round-trip through JSON (the runner sends
them between processes and saves them next to every repro).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
    "int64": torch.int64, "bool": torch.bool, "bfloat16": torch.bfloat16, "float16": torch.float16,
    "int8": torch.int8,
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass
class TensorSpec:
    """A graph input (``layout``, ``alias``) or a constant buffer (``literal``)."""

    name: str
    shape: list[int]
    dtype: str
    domain: str
    seed: int
    layout: str = "contiguous"
    #: inputs only: at compile time this input is passed the very tensor of that earlier input
    alias: str | None = None
    #: exact values (index tensors, imported programs) instead of values drawn from ``domain``;
    #: an input's call-time values are these moved (``materialize.from_literal``)
    literal: list[Any] | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]


@dataclass
class Node:
    """Statements defining ``outs`` from ``uses``; ``op`` names the spec that made them."""

    lines: list[str]
    outs: list[str]
    uses: list[str]
    op: str


@dataclass
class Program:
    name: str
    inputs: list[TensorSpec] = field(default_factory=list)
    consts: list[TensorSpec] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> Program:
        raw = json.loads(text)
        return Program(
            raw["name"],
            [TensorSpec(**t) for t in raw["inputs"]],
            [TensorSpec(**t) for t in raw["consts"]],
            [Node(**n) for n in raw["nodes"]],
            list(raw["outputs"]),
        )

    def ops(self) -> list[str]:
        return [n.op for n in self.nodes]


def literal_text(values: list[Any]) -> str:
    """Python source of a flat list of numbers (non-finite floats spelled out)."""
    def one(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return f"float('{v}')"
        return repr(v)

    return "[" + ", ".join(one(v) for v in values) + "]"


def const_expr(spec: TensorSpec) -> str:
    """A torch expression that builds the constant (``make_const`` comes from materialize)."""
    dtype = f"torch.{spec.dtype}"
    if spec.literal is not None:
        return f"torch.tensor({literal_text(spec.literal)}, dtype={dtype}).reshape({spec.shape!r})"
    return f"make_const({spec.shape!r}, {dtype}, {spec.domain!r}, {spec.seed})"


def input_expr(spec: TensorSpec, seed_offset: int = 0) -> str:
    if spec.literal is not None:
        return (f"from_literal({literal_text(spec.literal)}, {spec.shape!r}, torch.{spec.dtype}, {spec.layout!r}, "
                f"{seed_offset})")
    return (f"make_input({spec.shape!r}, torch.{spec.dtype}, {spec.domain!r}, {spec.layout!r}, "
            f"{spec.seed + seed_offset})")


def forward_body(program: Program) -> list[str]:
    lines = [f"{c.name} = self.{c.name}" for c in program.consts]
    for node in program.nodes:
        lines += node.lines
    outs = ", ".join(program.outputs)
    lines.append(f"return ({outs},)")
    return lines


def module_source(program: Program, class_name: str = "Model") -> str:
    args = ", ".join(["self"] + [i.name for i in program.inputs])
    out = [f"class {class_name}(torch.nn.Module):", "    def __init__(self) -> None:",
           "        super().__init__()"]
    for c in program.consts:
        out.append(f"        self.register_buffer({c.name!r}, {const_expr(c)})")
    out.append(f"    def forward({args}):")
    out += ["        " + line for line in forward_body(program)]
    return "\n".join(out) + "\n"
