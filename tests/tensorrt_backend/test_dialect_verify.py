"""TensorRT's layer rules as verifier rules: messages name the op, the nvinfer1 layer and its ``name``."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.trt import TRT, ShapeError, axes_from_mask, mask_from_axes
from ziggurat.ir.context import make_context


def verify(body: str, args: str = "%a: tensor<2x3xf32>") -> None:
    text = f"func.func @f({args}) {{\n{body}\n  func.return\n}}"
    module = Parser(make_context(), text).parse_module()
    module.verify()


def expect_error(body: str, message: str, args: str = "%a: tensor<2x3xf32>") -> str:
    with pytest.raises(VerifyException) as info:
        verify(body, args)
    text = str(info.value)
    assert message in text, text
    assert "'L'" in text, text  # the layer name
    return text


def test_dialect_name_and_size() -> None:
    assert TRT.name == "trt"
    assert len(list(TRT.operations)) == 30


def test_axes_bitmask_helpers() -> None:
    assert axes_from_mask(0b1010, 4) == (1, 3)
    assert mask_from_axes([-1, 0], 3) == 0b101
    with pytest.raises(ShapeError):
        axes_from_mask(0b1000, 3)
    with pytest.raises(ShapeError):
        axes_from_mask(0, 3)


CASES = [
    ('%0 = trt.elementwise kSUM %a, %b {name = "L"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>',
     "inputs must have equal rank", "%a: tensor<2x3xf32>, %b: tensor<3xf32>"),
    ('%0 = trt.elementwise kSUM %a, %b {name = "L"} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>',
     "neither equal nor 1", "%a: tensor<2x3xf32>, %b: tensor<2x2xf32>"),
    ('%0 = trt.elementwise kSUM %a, %b {name = "L"} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>',
     "result type must be tensor<2x3xf32>", "%a: tensor<2x3xf32>, %b: tensor<1x3xf32>"),
    ('%0 = trt.elementwise kAND %a, %a {name = "L"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
     "takes bool (i1) inputs", "%a: tensor<2x3xf32>"),
    ('%0 = trt.elementwise kSUM %a, %b {name = "L"} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>',
     "share one element type", "%a: tensor<2x3xf32>, %b: tensor<2x3xf16>"),
    ('%0 = trt.matrix_multiply %a kNONE, %b kNONE {name = "L"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>',
     "contraction dims differ", "%a: tensor<2x3xf32>, %b: tensor<4x5xf32>"),
    ('%0 = trt.matrix_multiply %a kNONE, %b kNONE {name = "L"} : (tensor<2x3xf32>, tensor<7x3x5xf32>) -> tensor<7x2x5xf32>',
     "same number of batch dims", "%a: tensor<2x3xf32>, %b: tensor<7x3x5xf32>"),
    ('%0 = trt.convolution %a, %w {name = "L", num_output_maps = 4 : i64, kernel_size = array<i64: 3>} : '
     '(tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>',
     "2-D and 3-D windows only", "%a: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>"),
    ('%0 = trt.convolution %a, %w {name = "L", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>} : '
     '(tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>',
     "kernel weights must have shape [4, 3, 3, 3]", "%a: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>"),
    ('%0 = trt.convolution %a, %w {name = "L", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>} : '
     '(tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>',
     "result type must be tensor<1x4x6x6xf32>", "%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>"),
    ('%0 = trt.softmax %a {name = "L", axes = 3 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>',
     "exactly one axis", "%a: tensor<2x3xf32>"),
    ('%0 = trt.reduce kSUM %a {name = "L", axes = 4 : i32} : tensor<2x3xf32> -> tensor<2xf32>',
     "selects an axis >= rank 2", "%a: tensor<2x3xf32>"),
    ('%0 = trt.shuffle %a {name = "L", reshape_dims = array<i64: 4, 2>} : tensor<2x3xf32> -> tensor<4x2xf32>',
     "changes the element count", "%a: tensor<2x3xf32>"),
    ('%0 = trt.shuffle %a {name = "L", first_transpose = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>',
     "is not a permutation", "%a: tensor<2x3xf32>"),
    ('%0 = trt.concatenation %a, %b {name = "L", axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>',
     "agree on every dim except axis 0", "%a: tensor<2x3xf32>, %b: tensor<2x4xf32>"),
    ('%0 = trt.slice %a {name = "L", start = array<i64: 0, 2>, size = array<i64: 2, 2>, stride = array<i64: 1, 1>} : '
     'tensor<2x3xf32> -> tensor<2x2xf32>', "reads out of bounds", "%a: tensor<2x3xf32>"),
    ('%0 = trt.gather kELEMENT %a[%i] {name = "L", axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xi32>) -> tensor<3x3xf32>',
     "must match data", "%a: tensor<2x3xf32>, %i: tensor<3x3xi32>"),
    ('%0 = trt.gather kDEFAULT %a[%i] {name = "L"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>',
     "indices has element type f32", "%a: tensor<2x3xf32>, %i: tensor<2xf32>"),
    ('%0, %1 = trt.topk kMAX %a {name = "L", k = 4000 : i64, axes = 2 : i32} : '
     'tensor<2x5000xf32> -> tensor<2x4000xf32>, tensor<2x4000xi32>', "k must be in [1, 3840]", "%a: tensor<2x5000xf32>"),
    ('%0 = trt.padding %a {name = "L", pre_padding = array<i64: 1, 1>, post_padding = array<i64: 1, 1>} : '
     'tensor<2x3xf32> -> tensor<4x5xf32>', "rank >= 4", "%a: tensor<2x3xf32>"),
    ('%0 = trt.resize kLINEAR kASYMMETRIC %a {name = "L", output_dims = array<i64: 2, 4, 4, 4>} : '
     'tensor<1x2x2x2xf32> -> tensor<2x4x4x4xf32>', "at most the 3 innermost dims", "%a: tensor<1x2x2x2xf32>"),
    ('%0 = trt.einsum %a {name = "L", equation = "...i->i"} : (tensor<2x3xf32>) -> tensor<3xf32>',
     "no ellipsis", "%a: tensor<2x3xf32>"),
    ('%0 = trt.einsum %a {name = "L", equation = "ii->i"} : (tensor<3x3xf32>) -> tensor<3xf32>',
     "diagonals are not supported", "%a: tensor<3x3xf32>"),
    ('%0 = trt.scale kCHANNEL %a scale(%s : tensor<3xf32>) {name = "L"} : tensor<1x3x2x2xf32> -> tensor<1x3x2x2xf32>',
     "must be build-time weights", "%a: tensor<1x3x2x2xf32>, %s: tensor<3xf32>"),
    ('%0 = trt.fill kLINSPACE {name = "L", alpha = 0.0 : f64, beta = array<f64: 1.0>} : tensor<2x3xf32>',
     "one beta (delta) per dim", "%a: tensor<2x3xf32>"),
    ('%0 = trt.padding %a {name = "L", pre_padding = array<i64: 1, 1>, post_padding = array<i64: 1, 1>} : '
     'tensor<?x1x3x3xf32> -> tensor<?x1x5x5xf32>', "not modelled on dynamic dims", "%a: tensor<?x1x3x3xf32>"),
    # dynamic dims: what the layers' rules can check before run time
    ('%0 = trt.shuffle %a {name = "L", reshape_dims = array<i64: 4, 3>} : tensor<?x3xf32> -> tensor<4x3xf32>',
     "needs 0 (copy) or -1", "%a: tensor<?x3xf32>"),
    ('%0 = trt.shuffle %a {name = "L", reshape_dims = array<i64: -1, -1>, zero_is_placeholder = false} : '
     'tensor<?x?xf32> -> tensor<?x?xf32>', "more than one -1", "%a: tensor<?x?xf32>"),
    ('%0 = trt.elementwise kSUM %a, %b {name = "L"} : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<5x3xf32>',
     "result type must be tensor<?x3xf32>", "%a: tensor<?x3xf32>, %b: tensor<1x3xf32>"),
    ('%0 = trt.pooling kMAX %a {name = "L", window_size = array<i64: 2, 2>} : '
     'tensor<1x1x?x4xf32> -> tensor<1x1x?x3xf32>', "dynamic batch dim only", "%a: tensor<1x1x?x4xf32>"),
    ('%0 = trt.unary kEXP %a {name = "L"} : tensor<2xf64> -> tensor<2xf64>',
     "TensorRT takes", "%a: tensor<2xf64>"),
    ('%0 = trt.unary kEXP %a {name = "L"} : tensor<2xi32> -> tensor<2xi32>',
     "this layer takes f32, f16, bf16", "%a: tensor<2xi32>"),
    ('%0 = trt.pooling kMAX %a {name = "L", window_size = array<i64: 2, 2>, pre_padding = array<i64: 2, 0>} : '
     'tensor<1x1x4x4xf32> -> tensor<1x1x3x2xf32>', "must be smaller than the window", "%a: tensor<1x1x4x4xf32>"),
    ('%0 = trt.normalization %a, %s, %s {name = "L", axes = 12 : i32, num_groups = 2 : i64} : '
     '(tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>',
     "must have shape [1, 2, 1, 1]", "%a: tensor<1x4x2x2xf32>, %s: tensor<1x4x1x1xf32>"),
    ('%0 = trt.deconvolution %a, %w {name = "L", num_output_maps = 2 : i64, kernel_size = array<i64: 2, 2>, '
     'padding_mode = #trt<padding_mode kSAME_UPPER>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x4x4xf32>',
     "only kEXPLICIT_ROUND_DOWN", "%a: tensor<1x4x3x3xf32>, %w: tensor<4x2x2x2xf32>"),
    ('%0 = trt.cast %a {name = "L"} : tensor<2x3xf32> -> tensor<3x2xf16>', "result type must be", "%a: tensor<2x3xf32>"),
]


@pytest.mark.parametrize(("body", "message", "args"), CASES, ids=[c[1][:30] for c in CASES])
def test_verifier_rejects(body: str, message: str, args: str) -> None:
    text = expect_error(body, message, args)
    assert text.count("trt.") >= 1


def test_message_names_op_layer_class_and_source() -> None:
    with pytest.raises(VerifyException) as info:
        verify('%0 = trt.softmax %a {name = "aten::softmax @ model.py:3", axes = 0 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>')
    message = str(info.value)
    assert "trt.softmax (ISoftMaxLayer) 'aten::softmax @ model.py:3'" in message
    assert "axes bitmask must select at least one axis" in message


def test_valid_ops_verify() -> None:
    verify(
        '%0 = trt.matrix_multiply %a kNONE, %b kTRANSPOSE {name = "mm"} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>\n'
        '%1 = trt.matrix_multiply %a kNONE, %v kVECTOR {name = "mv"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
        '%2 = trt.elementwise kEQUAL %a, %a {name = "eq"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>\n'
        '%3 = trt.shuffle %a {name = "flat", reshape_dims = array<i64: -1>} : tensor<2x3xf32> -> tensor<6xf32>',
        "%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %v: tensor<3xf32>",
    )


def test_dynamic_dims_verify_where_the_rules_are_modelled() -> None:
    verify(
        '%0 = trt.matrix_multiply %a kNONE, %b kTRANSPOSE {name = "mm"} : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x4xf32>\n'
        '%1 = trt.elementwise kSUM %a, %c {name = "bcast"} : (tensor<?x3xf32>, tensor<7x3xf32>) -> tensor<7x3xf32>\n'
        '%2 = trt.shuffle %a {name = "copy", reshape_dims = array<i64: 0, 3, 1>} : tensor<?x3xf32> -> tensor<?x3x1xf32>\n'
        '%3 = trt.shuffle %a {name = "infer", reshape_dims = array<i64: -1>} : tensor<?x3xf32> -> tensor<?xf32>\n'
        '%4 = trt.concatenation %a, %c {name = "cat", axis = 0 : i64} : (tensor<?x3xf32>, tensor<7x3xf32>) -> tensor<?x3xf32>\n'
        '%5 = trt.reduce kSUM %a {name = "sum", axes = 1 : i32, keep_dims = false} : tensor<?x3xf32> -> tensor<3xf32>',
        "%a: tensor<?x3xf32>, %b: tensor<4x3xf32>, %c: tensor<7x3xf32>",
    )


def test_builders_infer_result_types_and_reject_bad_shapes() -> None:
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.dialects.func import FuncOp

    from ziggurat.dialects.trt import ElementWiseOp, ElementWiseOperation, PoolingOp, PoolingType

    func = FuncOp("f", ([TensorType(f32, [1, 3, 8, 8]), TensorType(f32, [1, 1, 8])], []))
    with ImplicitBuilder(func.body) as (x, y):
        pool = PoolingOp(x, PoolingType.kAVERAGE, (3, 3), name="p", stride=(2, 2), pre_padding=(1, 1), post_padding=(1, 1))
        assert pool.output.type == TensorType(f32, [1, 3, 4, 4])
        with pytest.raises(ShapeError, match="equal rank"):
            ElementWiseOp(x, y, ElementWiseOperation.kSUM, name="bad")
