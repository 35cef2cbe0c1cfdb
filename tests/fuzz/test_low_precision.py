"""The fuzzer's ``-bf16`` and ``-fp16`` configurations (``low_precision.py``): generated programs
with GEMMs compiled with ``precision="bf16"`` or ``"fp16"`` agree with eager float32 at that
type's tolerance, and the comparison fails a result that is off by more than its rounding
explains."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from tests.fuzz.execute import build_module, example_inputs, run_eager
from tests.fuzz.generator import PROFILES, generate
from tests.fuzz.program import Program
from tests.fuzz.low_precision import LowReference, compare_low, low_reference
from tests.fuzz.oracle import check_program, low_precision_configs
from tests.fuzz.thread_counts import CHOICES

SEED = 21
GEMM_OPS = ("fused_gemm", "linear", "matmul", "mm", "bmm", "addmm", "conv")


def _programs_with_gemms(limit: int) -> list[Program]:
    found: list[Program] = []
    for index in range(200):
        program = generate(SEED, index, PROFILES["default"])
        if any(op.startswith(GEMM_OPS) for op in program.ops()):
            found.append(program)
            if len(found) == limit:
                break
    return found


PROGRAMS = _programs_with_gemms(6)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_low_precision_programs_match_eager(program: Program, precision: str) -> None:
    threads = CHOICES[PROGRAMS.index(program) % len(CHOICES)]  # by its place: 1, 2, 3, 1, ...
    result = check_program(program, [c for c in low_precision_configs() if c.precision == precision], threads)
    assert not result.invalid, result.invalid
    failures = [f"{o.config}: {o.kind}: {o.reason}\n    {o.detail[:600]}" for o in result.outcomes
                if o.kind in ("wrong", "crash")]
    assert not failures, f"{program.name} ({', '.join(program.ops())}, {threads} threads):\n" + "\n".join(failures)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_low_precision_comparison_fails_a_wrong_value(precision: str) -> None:
    program = PROGRAMS[0]
    inputs = example_inputs(program)
    e32 = run_eager(build_module(program), inputs)
    low = low_reference(program, inputs, precision)
    compiled = ziggurat.compile(build_module(program), inputs, backend="reference", precision=precision)
    with torch.no_grad():
        out = compiled(*inputs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    assert compare_low(outs, e32, low).ok
    k = next(i for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel())
    wrong = outs[k].contiguous().clone()
    scale = float(e32[k].abs().max())
    wrong.view(-1)[0] += 0.1 * scale + 0.1  # a tenth of the output's scale: no 16-bit rounding does that
    outs[k] = wrong
    assert not compare_low(outs, e32, low).ok


def test_float32_noise_counts_for_ops_autocast_leaves_in_float32() -> None:
    # cross(x, x): exactly 0 in float64 and in Ziggurat, -5e-7 in eager float32 (seed 21, 363)
    e32 = [torch.tensor([-5.1e-7, 2.0e-7, 0.0])]
    ours = [torch.zeros(3)]
    low = LowReference(autocast=[e32[0].clone()])
    assert not compare_low(ours, e32, low).ok
    assert compare_low(ours, e32, low, [[torch.zeros(3, dtype=torch.float64)]]).ok


def test_deep_linears_agree_in_bf16() -> None:
    """The ``gemm`` profile's ``deep_linear`` (513 to 1000 deep, 40 to 130 rows: the AMX bf16
    kernel's K in passes, ``gemm_bf16.k_passes``) in two generated programs."""
    programs = [p for p in (generate(SEED, i, PROFILES["gemm"]) for i in range(200)) if "deep_linear" in p.ops()][:2]
    assert len(programs) == 2
    for program in programs:
        result = check_program(program, [c for c in low_precision_configs() if c.precision == "bf16"])
        assert not result.invalid, result.invalid
        failures = [f"{o.config}: {o.kind}: {o.reason}" for o in result.outcomes if o.kind != "ok"]
        assert not failures, f"{program.name}: {failures}"


def test_a_convolution_by_non_finite_weights_has_no_low_precision_answer() -> None:
    """Seed 174, program 28: ``v1`` is a conv3d by a constant weight holding -inf and NaN, whose
    bf16 result in torch 2.13 is finite garbage that changes from call to call.  What depends on
    it (``v3 = lt(x3, v1)``, and ``v8`` through ``v5``) is masked; the other outputs stay checked."""
    program = generate(174, 28, PROFILES["gemm"])
    inputs = example_inputs(program)
    e32 = run_eager(build_module(program), inputs)
    measured = low_reference(program, inputs, "bf16")
    assert len(measured.undefined) == 3
    # eager float32 for the autocast run, whose garbage would mask elements by chance
    low = LowReference(autocast=e32, pushed=measured.pushed, undefined=measured.undefined)
    ours = list(e32)
    ours[0] = ~e32[0]  # all of lt's answers flipped
    ours[3] = torch.full_like(e32[3], 2.4e38)
    assert compare_low(ours, e32, low).ok
    assert not compare_low(ours, e32, LowReference(autocast=e32, pushed=measured.pushed)).ok
    off = e32[1].clone()
    off.view(-1)[0] += 1.0 + float(off.abs().max())
    assert not compare_low([e32[0], off, e32[2], e32[3]], e32, low).ok
