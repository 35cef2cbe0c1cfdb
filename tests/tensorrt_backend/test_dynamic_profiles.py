"""TensorRT segments with dynamic dims: one build serves a declared range (optimization profiles).

The numerics are checked against eager at the ranges' ends and at odd sizes in between, on
``tensorrt-reference`` (which specializes each segment to a call's sizes with the layers' own
shape rules, as TensorRT resolves an engine's shapes); the emitter's plan carries the profile.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
from torch.export import Dim
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

import ziggurat
from ziggurat.backends.dynamic_module import RANGE_BUILD, SPECIALIZED
from ziggurat.backends.tensorrt.emitter import plan_network
from ziggurat.backends.tensorrt.profiles import read_profile
from ziggurat.backends.tensorrt.reference_executor import ReferenceExecutionError, TrtFunctionRunner
from ziggurat.dialects.trt.shapes import DYNAMIC, ShapeError, broadcast_shapes, reshape_dims
from ziggurat.ir.errors import InputError
from ziggurat.ir.pipeline import make_context

torch.manual_seed(0)


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.l2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.l2(torch.relu(self.l1(x))), -1) + x[:, :8].sum(-1, keepdim=True)


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn, self.fc = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.Linear(8, 5)
        self.bn.load_state_dict({**self.bn.state_dict(), "running_mean": torch.rand(8) * 2 - 1,
                                 "running_var": torch.rand(8) * 1.5 + 0.5})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.bn(self.conv(x))), 1)
        return self.fc(torch.nn.functional.max_pool2d(y, 1).flatten(1))


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(32, 32) for _ in range(3))
        self.o, self.ln = torch.nn.Linear(32, 32), torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, 4, 8).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2) / 8 ** 0.5, -1) @ v
        return self.ln(x + torch.nn.functional.gelu(self.o(a.transpose(1, 2).reshape(b, t, 32))))


class FusedQkv(torch.nn.Module):
    """GPT-2's attention: one projection split in three (slices along a static dim of a tensor
    with dynamic ones: gathers with constant indices), heads unbound by select."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.o = torch.nn.Linear(32, 96), torch.nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(32, -1)
        heads = torch.stack([q, k, v]).view(3, b, t, 4, 8).transpose(2, 3)
        q, k, v = heads.unbind(0)
        a = torch.softmax(q @ k.transpose(-1, -2) * 8 ** -0.5, -1) @ v
        return self.o(a.transpose(1, 2).reshape(b, t, 32)) + x[:, :, 1:33:2].sum(-1, keepdim=True) + x.select(2, -1)[..., None]


BATCH, SEQ = Dim("batch", min=1, max=16), Dim("seq", min=1, max=64)
CASES = {
    "mlp": (Mlp, (4, 16), {"x": {0: BATCH}}, [(1,), (7,), (16,)]),
    "convnet": (ConvNet, (2, 3, 9, 9), {"x": {0: BATCH}}, [(1,), (5,), (16,)]),
    "attention": (Attention, (2, 5, 32), {"x": {0: BATCH, 1: SEQ}}, [(1, 1), (3, 7), (16, 64), (13, 2)]),
    "fused_qkv": (FusedQkv, (2, 5, 32), {"x": {0: BATCH, 1: SEQ}}, [(1, 1), (3, 7), (16, 64), (13, 2)]),
}


def _segments(module: ModuleOp) -> list[FuncOp]:
    return [f for f in module.ops if isinstance(f, FuncOp) and "ziggurat.backend" in f.attributes]


@functools.cache
def _compiled(name: str) -> tuple[torch.nn.Module, Any]:
    """The model of a case and its dynamic tensorrt-reference build, compiled once per process
    (a dynamic compile takes seconds): the tests below that compile the same model with the
    same ranges share it, and only call it or read its report."""
    make, example, spec, _ = CASES[name]
    model = make().eval()
    return model, ziggurat.compile(model, (torch.randn(example),), backend="tensorrt-reference", dynamic_shapes=spec)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_build_serves_the_range(name: str) -> None:
    _, example, _, sizes = CASES[name]
    model, compiled = _compiled(name)
    assert compiled.report.stats[RANGE_BUILD] == "one build serves every size in the ranges"
    assert compiled.range_build is not None
    segments = _segments(compiled.range_build.module_ir)
    assert segments, compiled.report.unsupported
    assert all(read_profile(f) is not None for f in segments if "?" in str(f.function_type))
    for lead in sizes:
        x = torch.randn(*lead, *example[len(lead):])
        torch.testing.assert_close(compiled(x), model(x), atol=2e-5, rtol=1e-5)
    assert SPECIALIZED not in compiled.report.stats
    with pytest.raises(InputError, match="batch"):
        compiled(torch.randn(17, *example[1:]))


def test_conv_net_runs_wholly_in_tensorrt() -> None:
    _, compiled = _compiled("convnet")  # ConvNet, x: [2, 3, 9, 9] with dim 0 in BATCH
    assert not compiled.report.unsupported, compiled.report.unsupported


@pytest.mark.parametrize("make", [Attention, FusedQkv])
def test_attention_runs_in_tensorrt_but_its_size_arithmetic(make: type[torch.nn.Module]) -> None:
    # the case's build: x: [2, 5, 32] with dims 0 and 1 in BATCH and SEQ
    _, compiled = _compiled({Attention: "attention", FusedQkv: "fused_qkv"}[make])
    left = {r.op for r in compiled.report.unsupported}
    assert left <= {"aten::sym_size.int", "arith.constant", "arith.muli"}, compiled.report.unsupported


def test_reference_backend_builds_once_too() -> None:
    model = Mlp().eval()
    compiled = ziggurat.compile(model, (torch.randn(4, 16),), backend="reference", dynamic_shapes={"x": {0: BATCH}})
    assert compiled.range_build is not None
    for n in (1, 11, 16):
        x = torch.randn(n, 16)
        torch.testing.assert_close(compiled(x), model(x))


def _segment(model: torch.nn.Module, example: torch.Tensor, spec: object) -> FuncOp:
    compiled = ziggurat.compile(model, (example,), backend="tensorrt-reference", dynamic_shapes=spec,
                                min_block_size=1)
    assert compiled.range_build is not None
    return _segments(compiled.range_build.module_ir)[0]


@functools.cache
def _mlp_segment() -> FuncOp:
    """The one segment of an Mlp over x: [4, 16] with dim 0 in BATCH, compiled once per process
    for the two tests that read it (the plan) and run it (the executor)."""
    return _segment(Mlp().eval(), torch.randn(4, 16), {"x": {0: BATCH}})


def test_profile_and_network_plan() -> None:
    seg = _mlp_segment()
    (profile,) = read_profile(seg) or []
    assert (profile.min, profile.opt, profile.max) == ((1, 16), (4, 16), (16, 16))  # opt: the example
    plan = plan_network(seg)
    assert plan.inputs[0].shape == (DYNAMIC, 16)
    assert [(p.min, p.max) for p in plan.profile] == [((1, 16), (16, 16))]


def test_reference_executor_specializes_and_checks_the_profile() -> None:
    seg = _mlp_segment()
    runner = TrtFunctionRunner(seg)
    for n in (1, 3, 16):
        assert runner([torch.randn(n, 16)])[0].shape[0] == n
    with pytest.raises(InputError, match=r"input #0 dim 0 is 17, outside the optimization profile \[1, 16\]"):
        runner([torch.randn(17, 16)])


def test_a_run_time_size_that_breaks_a_layer_rule_names_the_layer() -> None:
    from xdsl.parser import Parser

    text = """func.func @f(%a: tensor<?x3xf32>, %b: tensor<7x3xf32>) -> tensor<7x3xf32> {
      %0 = trt.elementwise kSUM %a, %b {name = "add @ m.py:3"} : (tensor<?x3xf32>, tensor<7x3xf32>) -> tensor<7x3xf32>
      func.return %0 : tensor<7x3xf32>
    }"""
    module = Parser(make_context(), text).parse_module()
    func = next(f for f in module.ops if isinstance(f, FuncOp))
    runner = TrtFunctionRunner(func)
    out = runner([torch.ones(1, 3), torch.ones(7, 3)])[0]
    assert out.shape == (7, 3) and bool((out == 2).all())
    with pytest.raises(ReferenceExecutionError, match="add @ m.py:3.*dims are neither equal nor 1"):
        runner([torch.ones(5, 3), torch.ones(7, 3)])


def test_converters_never_compute_with_a_run_time_size() -> None:
    """x.var(0) divides by the batch size: its converter reads it as a number, so the op stays
    in torch (said in the report), and the answer is eager's at every size."""

    class Var(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x).var(0) * 2

    compiled = ziggurat.compile(Var(), (torch.randn(4, 3),), backend="tensorrt-reference",
                                dynamic_shapes={"x": {0: BATCH}}, min_block_size=1)
    reasons = [r.reason for r in compiled.report.unsupported if "var" in r.op]
    assert reasons and "a dynamic dim is known only at run time" in reasons[0]
    for n in (2, 5, 16):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), Var()(x))


def test_shape_rules_on_dynamic_dims() -> None:
    assert broadcast_shapes((DYNAMIC, 3), (1, 3)) == (DYNAMIC, 3)
    assert broadcast_shapes((DYNAMIC, 3), (7, 3)) == (7, 3)
    assert reshape_dims((DYNAMIC, 3), [0, 3, 1], True) == (DYNAMIC, 3, 1)
    assert reshape_dims((DYNAMIC, 3, 4), [0, -1], True) == (DYNAMIC, 12)
    assert reshape_dims((DYNAMIC, 3, 4), [-1, 4], False) == (DYNAMIC, 4)
    with pytest.raises(ShapeError, match="needs 0"):
        reshape_dims((DYNAMIC, 3), [4, 3], True)
    with pytest.raises(ShapeError, match="more than one -1"):
        reshape_dims((DYNAMIC, DYNAMIC), [-1, -1], False)
