"""The reference executor's contract: inputs checked, non-trt ops and bad data reported by layer."""

from __future__ import annotations

import pytest
import torch
from xdsl.parser import Parser

from trt_builders import build_function
from ziggurat.backends.tensorrt.reference_executor import (
    ReferenceExecutionError,
    find_function,
    run_trt_function,
)
from ziggurat.dialects.trt import GatherOp
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import InputError
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
