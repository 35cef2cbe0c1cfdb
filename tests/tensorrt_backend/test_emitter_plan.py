"""The emitter's TensorRT API calls (the network plan), and its behaviour without TensorRT.

Engines are built only by the real TensorRT (``test_tensorrt_engine.py``, skipped here);
these tests check which ``INetworkDefinition`` calls each trt op becomes.
"""

from __future__ import annotations

import enum
import re
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.parser import Parser

from trt_builders import build_function, constant
from ziggurat.backends.tensorrt.availability import (
    CHECKED_TENSORRT_MAJOR,
    CHECKED_TENSORRT_VERSION,
    TensorRTUnavailableError,
    check_tensorrt_version,
    tensorrt_unavailable_reason,
)
from ziggurat.backends.tensorrt.emitter import BuilderOptions, EngineBuildError, build_engine, plan_network
from ziggurat.backends.tensorrt.layer_calls import EMITTERS, PlanError
from ziggurat.backends.tensorrt.network_plan import DataTypeRef, EnumRef, TensorRef, Weights
from ziggurat.backends.tensorrt.reference_executor import find_function
from ziggurat.backends.tensorrt.runtime import TensorRTEngine
from ziggurat.dialects.trt import TRT_OPS, ConvolutionOp, CumulativeOp
from ziggurat.ir.context import make_context
from ziggurat.ir.types import tensor_type

ROUNDTRIP = Path(__file__).parents[1] / "filecheck" / "trt" / "roundtrip.mlir"


def all_ops_plan():  # noqa: ANN201
    module = Parser(make_context(), ROUNDTRIP.read_text()).parse_module()
    return plan_network(find_function(module))


def test_every_trt_op_has_an_emitter() -> None:
    assert set(TRT_OPS) <= set(EMITTERS)


def test_plan_of_every_op() -> None:
    plan = all_ops_plan()
    assert [i.name for i in plan.inputs] == ["x", "m", "n", "c", "idx"]
    assert plan.inputs[0].dtype == DataTypeRef("FLOAT") and plan.inputs[0].shape == (1, 3, 8, 8)
    assert plan.inputs[3].dtype == DataTypeRef("BOOL")
    names = [c.name for c in plan.layers]
    assert len(names) == len(set(names)), "TensorRT needs distinct layer names"
    tensors = [t for c in plan.layers for t in c.outputs]
    assert len(tensors) == len(set(tensors))

    conv = plan.layer("conv")
    assert conv.method == "add_convolution_nd"
    x, maps, kernel_size, kernel, bias = conv.args
    assert x == TensorRef("x") and maps == 4 and kernel_size == (3, 3)
    assert isinstance(kernel, Weights) and kernel.array is not None and kernel.array.shape == (4, 3, 3, 3)
    assert isinstance(bias, Weights) and bias.array is not None and bias.array.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert conv.attribute("pre_padding") == (1, 1) and conv.attribute("padding_mode") == EnumRef("PaddingMode", "EXPLICIT_ROUND_DOWN")
    assert conv.outputs == ("conv:0",)
    # Weights used only by the convolution do not become constant layers.
    assert "conv.weight" not in names and "conv.bias" not in names

    clip = plan.layer("hardtanh")
    assert clip.method == "add_activation" and clip.args == (TensorRef("conv:0"), EnumRef("ActivationType", "CLIP"))
    assert clip.attribute("alpha") == -1.0 and clip.attribute("beta") == 1.0

    assert plan.layer("mm").args == (TensorRef("m"), EnumRef("MatrixOperation", "NONE"), TensorRef("n"),
                                     EnumRef("MatrixOperation", "NONE"))
    assert plan.layer("lt").args[2] == EnumRef("ElementWiseOperation", "LESS")
    assert plan.layer("sum").args[1:] == (EnumRef("ReduceOperation", "SUM"), 2, True)
    assert plan.layer("softmax").attribute("axes") == 2
    shuffle = plan.layer("t")
    assert shuffle.attribute("first_transpose") == (1, 0) and shuffle.attribute("reshape_dims") == (0, -1)
    fill_slice = plan.layer("pad")
    assert fill_slice.attribute("mode") == EnumRef("SampleMode", "FILL")
    assert fill_slice.set_inputs == ((4, TensorRef("f")),)  # named after %f
    assert plan.layer("f").method == "add_constant"  # the fill value is a tensor input
    assert plan.layer("index_select").attribute("mode") == EnumRef("GatherMode", "DEFAULT")
    assert plan.layer("up").attribute("scales") == (1.0, 1.0, 2.0, 2.0)
    assert plan.layer("up").attribute("coordinate_transformation") == EnumRef("ResizeCoordinateTransformation", "ALIGN_CORNERS")
    assert plan.layer("scale").args[1] == EnumRef("ScaleMode", "CHANNEL")
    assert plan.layer("cast").args[1] == DataTypeRef("HALF")
    assert plan.layer("topk").outputs == ("topk:0", "topk:1")
    assert plan.layer("cumsum (axis)").method == "add_constant"
    assert plan.outputs == ["conv:0"]


def test_non_constant_kernel_is_a_layer_input_and_repeated_names_are_made_unique() -> None:
    def body(x, w):  # noqa: ANN001, ANN202
        a = ConvolutionOp(x, w, constant(torch.zeros(2), "b"), name="aten::conv2d @ m.py:3").output
        return [a, ConvolutionOp(a, w, name="aten::conv2d @ m.py:3").output, x]

    func = build_function([tensor_type((1, 2, 5, 5), torch.float32), tensor_type((2, 2, 1, 1), torch.float32)], body)
    plan = plan_network(func)
    first, second = (c for c in plan.layers if c.method == "add_convolution_nd")
    assert first.name == "aten::conv2d @ m.py:3" and second.name == "aten::conv2d @ m.py:3 #2"
    assert first.set_inputs == ((1, TensorRef("input_1")),)
    kernel = first.args[3]
    assert isinstance(kernel, Weights) and kernel.array is None
    # The returned input gets an identity layer: a network input cannot be an output.
    copy = plan.layers[-1]
    assert copy.method == "add_identity" and copy.args == (TensorRef("input_0"),)
    assert plan.outputs[-1] == copy.outputs[0]


def test_cumulative_axis_is_a_zero_d_int32_constant() -> None:
    func = build_function([tensor_type((2, 3), torch.float32)], lambda x: CumulativeOp(x, -1, name="cumsum").output)
    plan = plan_network(func)
    axis = plan.layer("cumsum (axis)")
    (shape, weights) = axis.args
    assert shape == () and isinstance(weights, Weights) and weights.array is not None
    assert weights.array.dtype == np.int32 and int(weights.array) == 1


def test_weights_own_contiguous_arrays() -> None:
    t = torch.arange(6.0).reshape(2, 3).T
    w = Weights.from_tensor(t)
    assert w.array is not None and w.array.flags["C_CONTIGUOUS"] and w.array.tolist() == t.tolist()
    assert w.data_type == DataTypeRef("FLOAT")
    b = Weights.from_tensor(torch.tensor([1.0, -2.0], dtype=torch.bfloat16))
    assert b.data_type == DataTypeRef("BF16") and b.array is not None and b.array.dtype == np.int16
    assert b.array.tolist() == torch.tensor([1.0, -2.0], dtype=torch.bfloat16).view(torch.int16).tolist()


def test_enum_refs_resolve_by_name_and_name_a_missing_member() -> None:
    class SampleMode(enum.Enum):  # stands for the module's enum class (only names are read)
        STRICT_BOUNDS = 0
        WRAP = 1

    namespace = types.ModuleType("tensorrt_namespace")
    namespace.SampleMode = SampleMode  # type: ignore[attr-defined]
    assert EnumRef("SampleMode", "WRAP").resolve(namespace) is SampleMode.WRAP
    with pytest.raises(AttributeError, match="no SampleMode.REFLECT"):
        EnumRef("SampleMode", "REFLECT").resolve(namespace)


def test_only_the_checked_tensorrt_major_version_is_accepted() -> None:
    major = CHECKED_TENSORRT_MAJOR
    assert check_tensorrt_version(types.SimpleNamespace(__version__=CHECKED_TENSORRT_VERSION)) == CHECKED_TENSORRT_VERSION
    assert check_tensorrt_version(types.SimpleNamespace(__version__=f"{major}.0.1")) == f"{major}.0.1"
    for other in (f"{major - 1}.3.0.30", f"{major + 1}.0.0", "8.6.1"):
        with pytest.raises(TensorRTUnavailableError, match=rf"TensorRT {re.escape(other)} is installed.*checked only against TensorRT {major}\.x"):
            check_tensorrt_version(types.SimpleNamespace(__version__=other))
    for broken in (types.SimpleNamespace(), types.SimpleNamespace(__version__="dev"), types.SimpleNamespace(__version__=11)):
        with pytest.raises(TensorRTUnavailableError, match="no readable __version__"):
            check_tensorrt_version(broken)


def test_reduced_precision_flags_are_refused_with_the_reason() -> None:
    func = build_function([tensor_type((2,), torch.float32)], lambda x: x)
    for options in (BuilderOptions(fp16=True), BuilderOptions(int8=True)):
        with pytest.raises(EngineBuildError, match="strongly typed networks only"):
            build_engine(func, options)


def test_plan_rejects_non_trt_ops() -> None:
    text = "func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {\n %0 = arith.addi %x, %x : tensor<2xi32>\n func.return %0 : tensor<2xi32>\n}"
    with pytest.raises(PlanError, match="only trt ops"):
        plan_network(find_function(Parser(make_context(), text).parse_module()))


@pytest.mark.skipif(tensorrt_unavailable_reason() is None, reason="TensorRT is installed here")
def test_without_tensorrt_a_clear_error_suggests_the_reference_backend() -> None:
    func = build_function([tensor_type((2,), torch.float32)], lambda x: x)
    with pytest.raises(TensorRTUnavailableError) as info:
        build_engine(func, BuilderOptions())
    message = str(info.value)
    assert "tensorrt" in message and 'backend="tensorrt-reference"' in message
    with pytest.raises(TensorRTUnavailableError):
        TensorRTEngine(b"not an engine")
