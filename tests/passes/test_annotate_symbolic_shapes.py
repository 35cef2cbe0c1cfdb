"""Size expressions of dynamic-shape torch levels, from real exported models: every ``?``
value gets one, they are right at every size in the range (evaluated and compared with the
shapes eager computes), and an op that holds only for one size is an error naming it."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim
from xdsl.dialects.func import FuncOp

import ziggurat
from ziggurat.backends.dynamic_module import SYMBOLIC_SHAPES
from ziggurat.ir.interpreter import run
from ziggurat.ir.shape_symbols import evaluate
from ziggurat.ir.symbolic_shapes import SymbolicShapeError, infer_symbolic_shapes
from ziggurat.ir.types import has_dynamic_dims


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)
        self.out = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        y = self.out(y.transpose(1, 2).reshape(b, s, 16))
        return torch.cat([y, x[:, :1]], 1)


class Conv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(torch.relu(self.bn(self.conv(x))), 1)


CASES = [
    (Attention, (torch.randn(3, 5, 16),), ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=64)},),
     [{"batch": 1, "seq": 2}, {"batch": 7, "seq": 13}, {"batch": 8, "seq": 64}]),
    (Conv, (torch.randn(2, 3, 9, 9),), ({0: Dim("batch", min=1, max=32)},),
     [{"batch": 1}, {"batch": 5}, {"batch": 32}]),
]


@pytest.mark.parametrize(("model", "example", "spec", "points"), CASES, ids=["attention", "conv"])
def test_every_dynamic_value_has_an_expression_that_holds_across_the_range(model, example, spec, points) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    compiled = ziggurat.compile(model().eval(), example, "reference", dynamic_shapes=spec)
    assert compiled.report.stats[SYMBOLIC_SHAPES] == "annotated"
    shapes = infer_symbolic_shapes(compiled.module_ir)
    assert shapes.incomplete is None
    fn = next(op for op in compiled.module_ir.ops if isinstance(op, FuncOp))
    dynamic = [r for op in fn.body.walk() for r in op.results if has_dynamic_dims(r.type)]
    assert dynamic and all(r in shapes.sizes for r in dynamic)
    for values in points:  # the expressions against the sizes the reference run computes
        inputs = [torch.randn([values[d.expr] if (d := next((b for b in compiled.symbols.dims if b.input == i
                                                               and b.dim == k), None)) else n
                               for k, n in enumerate(t.shape)]) for i, t in enumerate(example)]
        seen: dict[object, tuple[int, ...]] = {}

        class Listener:
            def will_interpret_op(self, op: object, args: object) -> None: ...

            def did_interpret_op(self, op: object, results: object) -> None:
                for r, v in zip(op.results, results, strict=False):  # pyright: ignore
                    if isinstance(v, torch.Tensor):
                        seen[r] = tuple(v.shape)

        run(compiled.module_ir, inputs, listeners=[Listener()])  # pyright: ignore[reportArgumentType]
        for r in dynamic:
            want = tuple(evaluate(e, values) for e in shapes.sizes[r])
            assert seen[r] == want, (shapes.text(r), values)


def test_a_batch_baked_into_the_level_is_an_error_naming_the_op() -> None:
    """Edit a compile's symbolic level as a buggy pass could: its reshape gets the example's
    batch as a constant; the analysis names the op and the symbol."""
    from ziggurat.dialects.torch import AtenOp

    compiled = ziggurat.compile(Conv().eval(), (torch.randn(2, 3, 9, 9),), "reference",
                                dynamic_shapes=({0: Dim("batch", min=1, max=32)},))
    fn = next(op for op in compiled.module_ir.ops if isinstance(op, FuncOp))
    relu = next(op for op in fn.body.walk() if isinstance(op, AtenOp) and op.name == "torch.aten.relu")
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.rewriter import Rewriter

    Rewriter.replace_value_with_new_type(relu.results[0], TensorType(f32, [2, 4, 5, 5]))
    with pytest.raises(SymbolicShapeError, match=r"torch.aten.relu.*computed \(batch, 4, 5, 5\)"):
        infer_symbolic_shapes(compiled.module_ir)


class Residual(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(27, 27)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)) + x)
        z = y.flatten(1)
        return torch.nn.functional.gelu(self.fc(z) - z)


def test_graph_opt_on_a_symbolic_level_fuses_and_keeps_the_numbers() -> None:
    """graph-opt on the dynamic level: batch norm folded, the residuals and activations fused
    into the conv and the linear; the reference run of the rewritten level equals eager at
    sizes across the range."""
    from xdsl.context import Context

    from ziggurat.dialects.fused import FusedOp
    from ziggurat.passes.graph_opt import GraphOptPass

    torch.manual_seed(0)
    model = Residual().eval()
    with torch.no_grad():
        model.bn.running_mean.copy_(torch.tensor([0.5, -0.25, 1.0]))  # pyright: ignore[reportOptionalMemberAccess]
        model.bn.running_var.copy_(torch.tensor([2.0, 0.5, 1.5]))  # pyright: ignore[reportOptionalMemberAccess]
    compiled = ziggurat.compile(model, (torch.randn(2, 3, 3, 3),), "reference",
                                dynamic_shapes=({0: Dim("batch", min=1, max=32)},))
    module = compiled.module_ir.clone()
    GraphOptPass().apply(Context(), module)
    fused = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert [len(op.post_ops.data) for op in fused] == [2, 2], module  # pyright: ignore[reportAttributeAccessIssue]
    assert not any("batch_norm" in op.name for op in module.walk())
    for batch in (1, 7, 32):
        x = torch.randn(batch, 3, 3, 3)
        torch.testing.assert_close(run(module, [x])[0], model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("high", [16, 17])
def test_a_condition_that_pins_the_range_end_is_not_a_baked_size(high: int) -> None:
    """conv2d's kernel choice needs ``batch >= 16`` (or < 16): at a range whose maximum is 16 the
    run at that end pins batch to 16, which is not a size baked into the level."""
    conv = torch.nn.Conv2d(3, 8, 3, padding=1).eval()
    compiled = ziggurat.compile(conv, (torch.randn(2, 3, 9, 9),), "reference",
                                dynamic_shapes={"input": {0: Dim("batch", min=1, max=high)}})
    assert compiled.report.stats[SYMBOLIC_SHAPES] == "annotated"
    assert 'ziggurat.shapes = ["batch x 8 x 9 x 9"]' in compiled.ir["torch"]
