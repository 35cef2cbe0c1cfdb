"""The valid inputs the mutation harness starts from, built into a folder.

    python -m tests.malformed.corpus OUT

writes ``OUT/seeds.json`` (name, kind, file, the ziggurat-opt arguments of each seed) and
the files: the ``torch``-level IR of two small models, their ``fused`` and ``loop`` levels,
TorchScript IR text, a ``torch.jit.save`` file and modules saved by the ``cpu`` (vector
code on one thread; scalar code on two, which calls libgomp and has an ``.eh_frame``),
``reference`` and ``tensorrt-reference`` backends.  It runs in its own process: the
harness's runner forks and must not have run torch ops itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tests.support import models

TS_GRAPHS = {
    "linear_relu.ts": ("""graph(%x : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu),
      %w : Float(16, 8, strides=[8, 1], requires_grad=0, device=cpu)):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::linear(%x, %w, %none)
  %z : Tensor = aten::relu(%y)
  %s : Tensor = aten::add(%z, %z, %one)
  return (%s)
""", []),
    "topk_softmax.ts": ("""graph(%x : Tensor):
  %k : int = prim::Constant[value=3]()
  %dim : int = prim::Constant[value=-1]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %v : Tensor, %i : Tensor = aten::topk(%x, %k, %dim, %true, %true)
  %p : Tensor = aten::softmax(%v, %dim, %none)
  %m : Tensor = aten::mean(%p, %none)
  return (%p, %i, %m)
""", ["--input-types", "tensor<5x10xf32>"]),
}


class Mixed(nn.Module):
    """Embedding, layer norm, attention-like matmuls, softmax, topk, views and a reduction."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 8)
        self.norm = nn.LayerNorm(8)
        self.proj = nn.Linear(8, 8)

    def forward(self, ids: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.norm(self.embed(ids) + x)
        scores = torch.softmax(self.proj(h) @ h.transpose(0, 1) / 8**0.5, dim=-1)
        values, _ = torch.topk(scores, 3, dim=-1)
        y = torch.cat([h, torch.nn.functional.gelu(scores @ h)], dim=1).view(2, 5, 8).permute(1, 0, 2)
        return y.sum(dim=(0, 2)), values.mean()


def _seed(name: str, kind: str, args: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "kind": kind, "file": name, "args": args or []}


def build(out: Path) -> list[dict[str, Any]]:
    import ziggurat
    from ziggurat.ir.importer import import_model
    from ziggurat.ir.pipeline import print_module, run_pipeline
    from ziggurat.backends.passes import parse_pipeline

    out.mkdir(parents=True, exist_ok=True)
    seeds: list[dict[str, Any]] = []
    models.seeded()
    convbn = models.randomize_bn(models.ConvBNNet())
    conv_x = torch.randn(1, 3, 8, 8)
    mixed = Mixed().eval()
    mixed_x = (torch.tensor([1, 4, 0, 9, 3]), torch.randn(5, 8))
    for name, model, inputs in (("convbn", convbn, (conv_x,)), ("mixed", mixed, mixed_x)):
        module = import_model(model, inputs, frontend="torchscript")
        (out / f"{name}_torch.mlir").write_text(print_module(module, elide=False))
        seeds.append(_seed(f"{name}_torch.mlir", "mlir"))
        run_pipeline(module, parse_pipeline("graph-opt,prepack-weights"))
        (out / f"{name}_fused.mlir").write_text(print_module(module, elide=False))
        seeds.append(_seed(f"{name}_fused.mlir", "mlir"))
        if name == "convbn":
            run_pipeline(module, parse_pipeline("convert-torch-to-loop{threads=1}"))
            (out / f"{name}_loop.mlir").write_text(print_module(module, elide=False))
            seeds.append(_seed(f"{name}_loop.mlir", "mlir"))
    for name, (text, args) in TS_GRAPHS.items():
        (out / name).write_text(text)
        seeds.append(_seed(name, "ts", args))
    torch.jit.save(torch.jit.script(convbn), str(out / "convbn.pt"))
    seeds.append(_seed("convbn.pt", "pt", ["--input-types", "tensor<1x3x8x8xf32>"]))
    mlp = models.MLP((8, 16, 16, 4)).eval()  # three linears: one TensorRT segment
    mlp_x = torch.randn(2, 8)
    saved: list[tuple[str, str, nn.Module, torch.Tensor, dict[str, Any]]] = [
        ("cpu", "zig-cpu", mlp, mlp_x, {"threads": 1}),
        # scalar code on two threads: calls into libgomp, and an .eh_frame section
        ("cpu-scalar", "zig-cpu", convbn, torch.randn(2, 3, 16, 16), {"threads": 2, "isa": "scalar"}),
        ("reference", "zig", convbn, conv_x, {}),
        ("tensorrt-reference", "zig", mlp, mlp_x, {}),
    ]
    for name, kind, model, x, options in saved:
        compiled = ziggurat.compile(model, (x,), backend=name.split("-scalar")[0], **options)
        path = out / f"{name}.zig"
        compiled.save(path)
        seeds.append(_seed(path.name, kind))
    (out / "seeds.json").write_text(json.dumps(seeds, indent=1))
    return seeds


if __name__ == "__main__":
    build(Path(sys.argv[1]))
