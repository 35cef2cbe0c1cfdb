"""The oracle's tolerances on values whose rounding it used to underrate (seed 11)."""

from __future__ import annotations

import torch

from tests.fuzz.execute import build_module, example_inputs, fresh_inputs
from tests.fuzz.oracle import reference
from tests.fuzz.program import Node, Program, TensorSpec
from tests.fuzz.tolerance import compare, on_grid, rounding_step


def test_value_on_the_grid_by_coincidence_is_not_exact() -> None:
    """A float32 near 45114 is a multiple of 1/64 one time in four; many small ones are not
    by chance, and exact zeros say nothing."""
    assert not on_grid(torch.tensor(45114.53125))
    assert not on_grid(torch.tensor([3.0]))
    assert on_grid(torch.tensor([3.5, -0.75, 0.0]))
    assert on_grid(torch.arange(-20.0, 20.0))
    assert not on_grid(torch.tensor([0.1, 3.0]))


def test_var_of_integers_is_rounded_like_any_sum() -> None:
    """Seed 11 program 6593: var of 361 trunc-divided values (integers, two near 4038) is
    45114.53125 in eager (float64 45114.5316), a multiple of 1/64 by chance, so the rounding
    runs left it alone and the tolerance was 0.175; the CPU backend's serial scalar sum gives
    45114.23828125, within what 361 terms' summation order allows."""
    x = TensorSpec("x0", [1, 19, 19], "float32", "normal", 1146013144)
    c = TensorSpec("c0", [1, 19, 19], "float32", "normal", 928128220)
    nodes = [Node(["v1 = torch.div(x0, torch.where(c0 == 0, 1.0, c0), rounding_mode='trunc')"], ["v1"],
                  ["c0", "x0"], "div_trunc"),
             Node(["v7 = torch.var(v1, False)"], ["v7"], ["v1"], "var_unbiased")]
    program = Program("var_grid", [x], [c], nodes, ["v7"])
    ref = reference(program, example_inputs(program))
    assert float(ref.e32[0]) == 45114.53125  # the premise
    assert compare([torch.tensor(45114.23828125)], ref).ok
    assert not compare([torch.tensor(45100.0)], ref).ok


def test_group_norm_shift_rounding_is_noise() -> None:
    """Seed 11 program 4641: group_norm with one element per group (rstd = 1/sqrt(eps)):
    eager's kernel computes x * a + (bias - mean * a), |mean * a| in the thousands, so the
    output carries that shift's rounding (up to 2.4e-4 on outputs near 1.5).  The same
    formula rounded another way (the CPU backend's rsqrt) was called wrong where eager's own
    error happened to be small.  The rounding runs now step the kernel's hidden
    intermediates; an output off by 0.1 still fails."""
    x = TensorSpec("x1", [3, 7, 7], "float32", "grid", 1560517302)
    specs = [TensorSpec("c0", [7, 7], "float32", "grid", 644175803), TensorSpec("c4", [7], "float32", "normal", 2054585832),
             TensorSpec("c5", [7], "float32", "normal", 27151647)]
    nodes = [Node(["v3 = torch.amax(torch.add(x1, c0, alpha=2), dim=1, keepdim=False)"], ["v3"], ["c0", "x1"], "amax"),
             Node(["v9 = F.group_norm(v3, 7, c4, c5, 1e-5)"], ["v9"], ["c4", "c5", "v3"], "group_norm")]
    program = Program("group_norm_shift", [x], specs, nodes, ["v9"])
    inputs = fresh_inputs(program)  # x1[2, :, 3] has maximum 12.0 in the call-time values
    ref = reference(program, inputs)
    consts = dict(build_module(program).named_buffers())
    v3 = torch.amax(inputs[0] + 2 * consts["c0"], dim=1)
    a = torch.rsqrt(torch.tensor(1e-5)) * consts["c4"]  # var 0: eager's formula, rounded another way
    other = v3 * a + (consts["c5"] - v3 * a)
    assert compare([other], ref).ok
    assert not compare([ref.e32[0] + 0.1], ref).ok


def test_a_sum_within_rounding_distance_of_zero_may_cancel_exactly() -> None:
    """Another order may cancel a sum to exactly 0 (seed 31 program 256): the rounding-noise
    runs make that 0, so a sign or a comparison computed from it counts as noise; a value
    clear of the operands' rounding stays as it was."""
    t = torch.tensor([2.98e-8, -1e-9, 0.3, 0.0])
    operands = [torch.tensor([0.5, -0.25, 1.0])]
    out = rounding_step(t, operands, torch.Generator().manual_seed(0))
    assert out[0] == 0 and out[1] == 0 and out[3] == 0
    assert abs(float(out[2]) - 0.3) < 1e-6


def test_a_lopsided_mirror_push_is_a_kink() -> None:
    """Moves of +5.4e-4 and -1.09e-3 under a tolerance of 5.9e-4 (seed 165, program 61): the
    element crossed a quantizer's tie one way only.  A smooth element that moves as far both
    ways, however far, is not one."""
    from tests.fuzz.tolerance import _kinks  # pyright: ignore[reportPrivateUsage]

    e = torch.tensor([-0.31709, 1.0, 2.0], dtype=torch.float64)
    tol = torch.full((3,), 5.9e-4, dtype=torch.float64)
    plus = torch.tensor([-0.31709 + 5.4e-4, 1.0 + 3e-3, 2.0 + 1e-4], dtype=torch.float64)
    minus = torch.tensor([-0.31709 - 1.09e-3, 1.0 - 3e-3 + 1e-6, 2.0 - 3e-4], dtype=torch.float64)
    assert _kinks(e, tol, [(plus, minus)]).tolist() == [True, False, False]
