"""The reference executor's contract: inputs checked, non-trt ops and bad data reported by layer,
every layer result recorded on request, a runner usable again after an error."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects.func import ReturnOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from trt_builders import build_function
from ziggurat.backends.tensorrt.reference_executor import (
    ReferenceExecutionError,
    TrtFunctionRunner,
    find_function,
    run_trt_function,
)
from ziggurat.dialects.trt import ActivationOp, GatherOp
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import InputError
from ziggurat.ir.interpreter.trt_layers import HANDLERS, LayerExecutionError
from ziggurat.ir.types import tensor_type

PROGRAM = """
func.func @mlp(%x: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi1>) {
  %w = trt.constant {name = "fc.weight"} dense<[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0]]> : tensor<4x3xf32>
  %b = trt.constant {name = "fc.bias"} dense<[[0.0, 1.0, -1.0, 0.5]]> : tensor<1x4xf32>
  %0 = trt.matrix_multiply %x kNONE, %w kTRANSPOSE {name = "aten::linear @ m.py:4"} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = trt.elementwise kSUM %0, %b {name = "aten::linear @ m.py:4 (bias)"} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %2 = trt.activation kRELU %1 {name = "aten::relu @ m.py:5"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %z = trt.constant {name = "zero"} dense<0.0> : tensor<1x1xf32>
  %3 = trt.elementwise kGREATER %2, %z {name = "aten::gt @ m.py:6"} : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xi1>
  func.return %2, %3 : tensor<2x4xf32>, tensor<2x4xi1>
}
"""


def test_runs_a_parsed_module_end_to_end() -> None:
    module = Parser(make_context(), PROGRAM).parse_module()
    module.verify()
    func = find_function(module, "mlp")
    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]])
    y, positive = run_trt_function(func, [x])
    w = torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0]])
    expected = torch.relu(x @ w.T + torch.tensor([0.0, 1.0, -1.0, 0.5]))
    torch.testing.assert_close(y, expected)
    assert torch.equal(positive, expected > 0)


def test_rejects_wrong_inputs() -> None:
    func = find_function(Parser(make_context(), PROGRAM).parse_module())
    with pytest.raises(InputError, match="takes 1 inputs, got 2"):
        run_trt_function(func, [torch.zeros(2, 3), torch.zeros(2, 3)])
    with pytest.raises(InputError, match=r"input #0 is float64\[2, 3\], the function was built for tensor<2x3xf32>"):
        run_trt_function(func, [torch.zeros(2, 3, dtype=torch.float64)])


def test_rejects_non_trt_ops() -> None:
    text = """
    func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
      %0 = arith.addi %x, %x : tensor<2xi32>
      func.return %0 : tensor<2xi32>
    }"""
    func = find_function(Parser(make_context(), text).parse_module())
    with pytest.raises(ReferenceExecutionError, match="runs only trt ops, got arith.addi"):
        run_trt_function(func, [torch.zeros(2, dtype=torch.int32)])


def test_out_of_range_index_names_the_layer() -> None:
    func = build_function(
        [tensor_type((4, 2), torch.float32), tensor_type((3,), torch.int32)],
        lambda d, i: GatherOp(d, i, name="aten::index_select @ m.py:9").output,
    )
    with pytest.raises(ReferenceExecutionError) as info:
        run_trt_function(func, [torch.zeros(4, 2), torch.tensor([0, 4, 1], dtype=torch.int32)])
    assert "aten::index_select @ m.py:9" in str(info.value)
    assert "indices must be in [0, 4)" in str(info.value)


def test_values_receive_every_argument_and_layer_result() -> None:
    func = find_function(Parser(make_context(), PROGRAM).parse_module())
    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]])
    values: dict[SSAValue, torch.Tensor] = {}
    y, positive = run_trt_function(func, [x], values)
    body = func.body.blocks.first
    assert body is not None
    assert torch.equal(values[body.args[0]], x)
    layers = [op for op in body.ops if not isinstance(op, ReturnOp)]
    assert all(r in values for op in layers for r in op.results)
    assert torch.equal(values[layers[4].results[0]], y)  # the relu
    assert torch.equal(values[layers[6].results[0]], positive)


def test_a_runner_runs_again_after_a_layer_error() -> None:
    func = build_function(
        [tensor_type((4, 2), torch.float32), tensor_type((3,), torch.int32)],
        lambda d, i: GatherOp(d, i, name="aten::index_select @ m.py:9").output,
    )
    runner = TrtFunctionRunner(func)
    data = torch.arange(8.0).reshape(4, 2)
    good = torch.tensor([3, 0, 1], dtype=torch.int32)
    for _ in range(2):
        with pytest.raises(ReferenceExecutionError, match=r"indices must be in \[0, 4\)") as info:
            runner([data, torch.tensor([0, 4, 1], dtype=torch.int32)])
        assert isinstance(info.value.__cause__, LayerExecutionError)
        (y,) = runner([data, good])
        assert torch.equal(y, data[good.long()])


def test_a_layer_computing_another_type_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    func = find_function(Parser(make_context(), PROGRAM).parse_module())
    x = torch.zeros(2, 3)
    monkeypatch.setitem(HANDLERS, ActivationOp, lambda op, args: [torch.zeros(1)])
    with pytest.raises(ReferenceExecutionError, match=r"internal error: computed torch.float32\[1\] for a result of "
                       r"type tensor<2x4xf32>") as info:
        run_trt_function(func, [x])
    assert "aten::relu @ m.py:5" in str(info.value)
    monkeypatch.setitem(HANDLERS, ActivationOp, lambda op, args: [])
    with pytest.raises(ReferenceExecutionError, match="internal error: produced 0 tensors for 1 results"):
        run_trt_function(func, [x])
