"""The oracle's float64-rounded alternate run (``wide_ops.py``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.fuzz.execute import example_inputs
from tests.fuzz.oracle import reference
from tests.fuzz.program import Node, Program, TensorSpec
from tests.fuzz.tolerance import compare
from tests.fuzz.wide_ops import WideOps


def _program(outputs: list[str]) -> Program:
    """Seed 11 program 3123, minimized: ``all(std(group_norm(x, C groups)))``."""
    return Program(
        name="s11_g3123",
        inputs=[TensorSpec("x1", [3, 23], "float32", "normal", 841770153)],
        consts=[TensorSpec("c1", [23], "float32", "positive", 1207523048)],
        nodes=[Node(["v5 = F.group_norm(x1, 23, None, c1, 1e-5)"], ["v5"], ["c1", "x1"], "group_norm"),
               Node(["v6 = torch.std(v5, dim=(0,), keepdim=False)"], ["v6"], ["v5"], "std"),
               Node(["v7 = torch.all(v6, -1)"], ["v7"], ["v6"], "all_dim")],
        outputs=outputs,
    )


def test_group_norm_of_one_element_groups_is_the_bias_when_computed_wide() -> None:
    torch.manual_seed(0)
    x, bias = torch.randn(3, 23), torch.rand(23) + 0.25
    assert not torch.equal(F.group_norm(x, 23, None, bias), bias.expand(3, 23))  # eager's rounding
    with WideOps():
        assert torch.equal(F.group_norm(x, 23, None, bias), bias.expand(3, 23))


def test_zero_test_of_group_norm_rounding_is_not_held_against_an_exact_answer() -> None:
    """The std of rows that are all ``bias`` is 0; eager's group_norm leaves ~2**-15 of
    rounding in them, so eager's ``all`` is True, where the CPU backend's rounding happened to
    cancel and gave False (called wrong)."""
    program = _program(["v7"])
    ref = reference(program, example_inputs(program))
    assert ref.e32[0].item() is True
    assert compare([torch.tensor(False)], ref).ok
    assert compare([torch.tensor(True)], ref).ok


def test_a_wrong_group_norm_value_is_still_caught() -> None:
    program = _program(["v5"])
    ref = reference(program, example_inputs(program))
    assert compare([ref.e32[0].clone()], ref).ok
    assert not compare([ref.e32[0] + 1e-3], ref).ok
