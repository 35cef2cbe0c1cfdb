"""The float64 reference run computes gelu without eager's cancellation (``exact64.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from tests.fuzz.exact64 import Exact64, gelu64
from tests.fuzz.execute import example_inputs, run_eager, run_eager64, build_module
from tests.fuzz.program import Program

REPRO = Path(__file__).parent / "repros" / "oracle_gelu_tail_cancellation.json"


def test_gelu64_is_eager_gelu_away_from_the_tail() -> None:
    x = torch.linspace(-5, 30, 701, dtype=torch.float64)
    for approximate in ("none", "tanh"):
        torch.testing.assert_close(gelu64(x, approximate), F.gelu(x, approximate=approximate), rtol=1e-14, atol=1e-15)


def test_gelu64_keeps_the_tail_eager_cancels() -> None:
    x = torch.tensor([-9.2, -13.0], dtype=torch.float64)
    assert (F.gelu(x) == 0).all()  # eager's 1 + erf(x / sqrt 2) rounds to 0
    with Exact64():
        y = F.gelu(x)
    # gelu(x) = x * Phi(x); Phi(-9.2) = 1.79e-20
    assert math.isclose(float(y[0]), -9.2 * 0.5 * math.erfc(9.2 / math.sqrt(2)), rel_tol=1e-12)
    assert float(y[1]) < 0


def test_float64_reference_of_a_floor_after_the_gelu_tail() -> None:
    """Seed 3 program 6001, minimized: floor(gelu(conv) / 3) - gelu(conv) where conv < -8.3;
    the float64 run says -1 (the exact answer) where eager float32 says 0."""
    program = Program.from_json(json.dumps(json.loads(REPRO.read_text())["program"]))
    inputs = example_inputs(program)
    e32 = run_eager(build_module(program), inputs)[0]
    e64 = run_eager64(program, inputs)[0]
    # the exact answer is never 0 (gelu(c) < 0 below 0, 0 < gelu(c) < 3 gives -gelu(c)); eager's
    # float64 gelu cancels to -0.0 below -8.3, so its floor was 0 at three elements
    assert (e32 == 0).sum() >= 3
    assert (e64 != 0).all(), e64[e64 == 0]
    assert ((e64 - e32.double()).abs()[e32 != 0] < 1e-5).all()


def test_float64_run_orders_by_float32_values() -> None:
    """Order-statistic indices come from the float32 values (seed 11 program 1438): 1e-169
    is 0 in float32, so it ties with 0 and keeps its stable place; the values stay float64."""
    x = torch.tensor([0.0, 1e-169, 7e-29, -1.0], dtype=torch.float64)
    assert torch.sort(x, stable=True, descending=True).indices.tolist() == [2, 1, 0, 3]  # by float64
    with Exact64():
        values, indices = torch.sort(x, stable=True, descending=True)
        assert indices.tolist() == [2, 0, 1, 3]
        assert values.dtype == torch.float64 and float(values[0]) == 7e-29
        assert int(torch.argmax(x[:2])) == 0
        best = torch.max(x[:2].reshape(1, 2), 1)
        assert int(best.indices[0]) == 0 and best.values.dtype == torch.float64
        assert torch.topk(x, 2).values.dtype == torch.float64


def test_sort_of_an_underflowed_gelu_tail_is_masked() -> None:
    """Seed 11 program 1438, minimized: a stable sort's indices of gelu_tanh(conv) where
    eager float32 ties three cancelled tails at 0; the float64 run now ties the two that
    float32 cannot tell apart, so an accurate compiled tail (7e-29, 0, 0) passes."""
    from tests.fuzz.oracle import reference
    from tests.fuzz.tolerance import compare

    saved = json.loads((REPRO.parent / "oracle_sort_of_underflowed_gelu_tail.json").read_text())
    program = Program.from_json(json.dumps(saved["program"]))
    inputs = example_inputs(program)
    module = build_module(program)
    ref = reference(program, inputs)
    e32 = ref.e32[0]
    consts = module.state_dict()
    with Exact64():
        keys = F.gelu(F.conv2d(inputs[0].double(), consts["c0"].double(), consts["c1"].double(), stride=(1, 3),
                               padding=(0, 2), dilation=(1, 2)), approximate="tanh")
    accurate = torch.sort(keys.float(), dim=-4, stable=True, descending=True).indices
    assert not torch.equal(accurate, e32)
    assert compare([accurate], ref).ok
    wrong = e32.clone()
    wrong[0, 0, 0, 0], wrong[1, 0, 0, 0] = e32[1, 0, 0, 0], e32[0, 0, 0, 0]
    assert not compare([wrong], ref).ok


def test_the_float64_run_takes_quantized_ops() -> None:
    """PT2E's quantized_decomposed ops assert float32 input: the float64 run gives them their
    float32 operands and widens what they return (seed 164, program 141: without a float64 run
    eager's cancelled gelu tail after a quantized linear was held to 1e-10)."""
    from tests.fuzz.execute import fresh_inputs

    saved = json.loads((Path(__file__).parent / "repros" / "oracle_quantized_gelu_tail_exact64.json").read_text())
    program = Program.from_json(json.dumps(saved["program"]))
    outputs = run_eager64(program, fresh_inputs(program))
    assert all(o.dtype == torch.float64 for o in outputs)  # the dequantized linear too
    assert outputs[0][1, 0].item() < -5.67e-06  # gelu's tail, not eager float32's -5.61e-06
