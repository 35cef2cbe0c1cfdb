"""Importer: every accepted source kind, models, typing, locations and bad input."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects import func

import ziggurat
from tests.support import models
from tests.support.opinfo import assert_same
from ziggurat.dialects.torch import AtenOp, LiteralOp, OperatorOp
from ziggurat.ir.errors import ModelImportError, InputError, ZigguratError
from ziggurat.ir.importer import import_torchscript
from ziggurat.ir.interpreter import run
from ziggurat.ir.locations import op_location


def _reference(model: torch.nn.Module, *inputs: torch.Tensor) -> None:
    with torch.no_grad():
        expected = model(*inputs)
    compiled = ziggurat.compile(model, inputs, backend="reference")
    assert_same(compiled(*inputs), expected, op=type(model).__name__, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "model,shape",
    [
        (models.MLP(), (5, 32)),
        (models.ConvBNNet(), (2, 3, 16, 16)),
        (models.InvertedResidual(), (1, 8, 9, 9)),
        (models.ConvBNSiLUStack(), (1, 3, 12, 12)),
    ],
    ids=["mlp", "convbn", "inverted-residual", "conv-bn-silu"],
)
def test_models_import_and_match_eager(model: torch.nn.Module, shape: tuple[int, ...]) -> None:
    models.seeded()
    model = models.randomize_bn(model)
    _reference(model, torch.randn(shape))


def test_transformer_encoder_layer() -> None:
    models.seeded()
    layer = models.transformer_layer()
    x = torch.randn(2, 7, 32)
    module = import_torchscript(layer, (x,))
    names = {op.name for op in module.walk()}
    # In eval mode the layer traces into one fused op; it imports (typed or generic).
    assert "torch.aten._transformer_encoder_layer_fwd" in names or any(
        isinstance(op, OperatorOp) and "transformer" in op.op_name.data for op in module.walk()
    )
    _reference(layer, x)


def test_tuple_outputs_and_constants() -> None:
    models.seeded()
    model = models.TwoHeads().eval()
    x, y = torch.randn(2, 6), torch.randn(2, 6)
    compiled = ziggurat.compile(model, (x, y), backend="reference")
    out = compiled(x, y)
    assert isinstance(out, tuple) and len(out) == 3
    assert_same(out, model(x, y), op="two-heads")


def test_script_function_and_graph_and_ir_text() -> None:
    @torch.jit.script
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:  # static: folded at import
            return torch.relu(x @ y) + 1
        return x

    x, y = torch.randn(3, 4), torch.randn(4, 5)
    expected = f(x, y)
    for source in (f, f.graph, str(f.graph)):
        module = import_torchscript(source, (x, y))
        assert_same(run(module, [x, y])[0], expected, op=type(source).__name__)
    ops = {op.name for op in import_torchscript(f, (x, y)).walk()}
    assert "torch.aten.matmul" in ops and "torch.aten.relu" in ops


def test_every_result_is_typed_and_located() -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    module = import_torchscript(model, (torch.randn(1, 3, 8, 8),))
    module.verify()
    aten = [op for op in module.walk() if isinstance(op, AtenOp)]
    assert aten
    for op in aten:
        assert op_location(op) is not None, op.name
    # the user's own source line is found (not a frame inside torch)
    relu = next(op for op in aten if op.name == "torch.aten.relu")
    assert "models.py" in (op_location(relu) or "")
    weights = [op for op in module.walk() if isinstance(op, LiteralOp)]
    assert any("stem.weight" in str(op.value) for op in weights)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert fn.sym_name.data == "forward"


def test_inplace_ops_are_functionalized() -> None:
    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x * 2
            y.add_(1)
            y.relu_()
            return y * y

    x = torch.randn(4, 5)
    module = import_torchscript(M(), (x,))
    names = [op.name for op in module.walk() if isinstance(op, AtenOp)]
    assert not any(n.split(".")[2].endswith("_") for n in names), names
    assert_same(run(module, [x])[0], M()(x), op="inplace")


def test_data_dependent_control_flow_is_a_clear_error() -> None:
    @torch.jit.script
    def f(x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            return x
        return -x

    with pytest.raises(ModelImportError) as info:
        import_torchscript(f, (torch.randn(3),))
    assert "prim::If" in str(info.value) and "run-time value" in str(info.value)


def test_loop_with_a_static_trip_count_unrolls() -> None:
    """(tests/importer/test_loops.py has the loops that do not unroll.)"""

    @torch.jit.script
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        for _ in range(n):
            x = x + 1
        return x

    text = str(import_torchscript(f, (torch.randn(2), 3)))
    assert text.count("torch.aten.add") == 3 and "torch.loop" not in text


def test_bad_inputs_are_clear_errors() -> None:
    model = models.MLP()
    with pytest.raises(ZigguratError, match="unknown backend 'nope'"):
        ziggurat.compile(model, (torch.randn(2, 32),), backend="nope")
    compiled = ziggurat.compile(model, (torch.randn(2, 32),), backend="reference")
    with pytest.raises(InputError, match=r"shape \(3, 32\)"):
        compiled(torch.randn(3, 32))
    with pytest.raises(InputError, match="dtype torch.float64"):
        compiled(torch.randn(2, 32, dtype=torch.float64))
    with pytest.raises(InputError, match="expected 1 input"):
        compiled(torch.randn(2, 32), torch.randn(2, 32))
    with pytest.raises(ModelImportError, match="malformed TorchScript IR"):
        import_torchscript("graph(%x : Tensor):\n  %y = aten::relu(%x\n", input_types=None)
    with pytest.raises(ModelImportError, match="cannot import a int"):
        import_torchscript(3, ())  # type: ignore[arg-type]


def test_unknown_ops_import_generically() -> None:
    @torch.jit.script
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.special.i0e(x) + 1

    x = torch.randn(6)
    module = import_torchscript(f, (x,))
    generic = [op for op in module.walk() if isinstance(op, OperatorOp)]
    assert [op.op_name.data for op in generic] == ["aten::special_i0e"]
    assert_same(run(module, [x])[0], f(x), op="i0e")
