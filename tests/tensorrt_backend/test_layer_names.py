"""Layer names: every trt layer is named after the node info of the torch op it came from
(``aten::conv2d @ file.py:12 [%x (conv)]``, helper layers with a suffix), names are unique in
their segment, and every layer carries the op's source location."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import torch
from xdsl.dialects.func import FuncOp

import ziggurat
from tests.support import models
from ziggurat.backends.tensorrt.emitter import plan_network
from ziggurat.backends.tensorrt.partition_report import segment_functions
from ziggurat.dialects.trt import ConstantOp, TrtLayerOp
from ziggurat.ir.locations import op_location


def _layers(compiled: torch.nn.Module) -> list[TrtLayerOp]:
    module = compiled.module_ir  # type: ignore[attr-defined]
    return [op for seg in segment_functions(module) for op in seg.walk() if isinstance(op, TrtLayerOp)]


def _line(cls: type, marker: str) -> int:
    lines, first = inspect.getsourcelines(cls.forward)  # type: ignore[attr-defined]
    return first + next(i for i, text in enumerate(lines) if marker in text)


def test_fused_and_aten_layers_are_named_after_their_source_line() -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(1, 3, 8, 8)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1)
    names = [op.layer for op in _layers(compiled)]
    stem = _line(models.ConvBNNet, "self.stem(x)")
    conv2 = _line(models.ConvBNNet, "self.conv2(r)")
    pool = _line(models.ConvBNNet, "self.pool(y)")
    conv = re.compile(rf"fused\.conv2d @ \S*models\.py:{stem} \[%\S+ \(stem\)\]")
    assert any(conv.fullmatch(n) for n in names), names
    assert any(re.fullmatch(rf"fused\.conv2d @ \S*models\.py:{stem} \[%\S+ \(stem\)\] \(post-op relu\)", n)
               for n in names), names
    assert [n.split(" @ ")[0] for n in names if n.endswith("(post-op add)")] == ["fused.conv2d"]
    assert any(re.fullmatch(rf"fused\.conv2d @ \S*models\.py:{conv2} \[%\S+ \(conv2\)\] \(post-op add\)", n)
               for n in names), names
    assert any(re.fullmatch(rf"aten::max_pool2d @ \S*models\.py:{pool} \[%\S+ \(pool\)\]", n) for n in names)
    assert len(set(names)) == len(names)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_every_layer_carries_the_torch_ops_location() -> None:
    models.seeded()
    model = models.MLP()
    compiled = ziggurat.compile(model, (torch.randn(2, 32),), backend="tensorrt-reference", min_block_size=1)
    line = _line(models.MLP, "self.net(x)")
    layers = _layers(compiled)
    scopes = set()
    for op in layers:
        where = op_location(op)
        assert where is not None and re.fullmatch(rf"\S*models\.py:{line} \[%linear\S* \((net\.\d)\)\]", where), where
        scopes.add(where.split("(")[-1])
        if not (isinstance(op, ConstantOp) and " @ " not in op.layer):  # literals keep their weight name
            assert op.layer.startswith(f"fused.linear @ {where}"), (where, op.layer)
    assert scopes == {"net.0)]", "net.2)]", "net.4)]"}


def test_ops_sharing_a_node_info_get_distinct_names() -> None:
    """scaled_dot_product_attention decomposes into two fused.matmul ops with one location."""
    layer = models.transformer_layer()
    x = torch.randn(2, 5, 32)
    compiled = ziggurat.compile(layer, (x,), backend="tensorrt-reference", min_block_size=1)
    names = [op.layer for op in _layers(compiled)]
    assert len(set(names)) == len(names), [n for n, k in Counter(names).items() if k > 1]
    matmuls = [n for n in names if n.startswith("fused.matmul @ ") and n.endswith("(matmul)")]
    assert len(matmuls) == 2 and matmuls[1] == matmuls[0].replace(" (matmul)", " #2 (matmul)")
    torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-5)


def test_the_network_plan_keeps_the_names() -> None:
    """Unique in the IR already: the TensorRT layers are named exactly as the trt ops."""
    layer = models.transformer_layer()
    compiled = ziggurat.compile(layer, (torch.randn(2, 5, 32),), backend="tensorrt-reference", min_block_size=1)
    for seg in segment_functions(compiled.module_ir):
        assert isinstance(seg, FuncOp)
        planned = {call.name for call in plan_network(seg).layers}
        for op in seg.walk():
            if isinstance(op, TrtLayerOp) and not isinstance(op, ConstantOp):
                assert op.layer in planned, op.layer
