"""``reuse-reduction-values``: softmax's ``exp`` is computed once per element (kept in a row
scratch by the sum loop, read back by the output loop), and the numbers are the ones the
recomputing kernel gave, bit for bit, on every ISA and thread count."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
import torch

import ziggurat.backends.cpu.reuse_reduction_values as reuse
from tests.cpu_backend.conftest import WIDEST_ISA, compile_cpu
from tests.support.opinfo import OpModule

Fn = Callable[..., torch.Tensor]

#: name -> (function, input shapes); the last dim is the row the scratch holds
CASES: dict[str, tuple[Fn, list[tuple[int, ...]]]] = {
    "row_of_1": (lambda x: torch.softmax(x, -1), [(5, 1)]),
    "tail_of_7": (lambda x: torch.softmax(x, -1), [(3, 7)]),
    "one_vector": (lambda x: torch.softmax(x, -1), [(4, 16)]),
    "tail_of_100": (lambda x: torch.softmax(x, -1), [(6, 100)]),
    "tail_of_129": (lambda x: torch.softmax(x * 0.5, -1), [(2, 3, 129)]),
    "scaled_masked": (lambda x, m: torch.softmax(x * 0.125 + m, -1), [(2, 4, 9, 37), (9, 37)]),
    "to_bf16": (lambda x: torch.softmax(x, -1).to(torch.bfloat16), [(3, 5, 50)]),
    "to_fp16": (lambda x: torch.softmax(x, -1).half(), [(2, 77)]),
    "largest_row": (lambda x: torch.softmax(x, -1), [(2, 8192)]),
}
#: a row of one element is exp(x - x) / itself: the lowering folds it to one loop
NOTHING_TO_KEEP = {"row_of_1"}


def _inputs(shapes: list[tuple[int, ...]]) -> tuple[torch.Tensor, ...]:
    xs = []
    for i, shape in enumerate(shapes):
        x = torch.randn(shape, generator=torch.Generator().manual_seed(math.prod(shape) + i)) * 4
        if i == 0 and x.numel() > 8:
            x.view(-1)[1] = math.inf  # a NaN row, as eager's
            x.view(-1)[-2] = -math.inf  # a zero
            x.view(-1)[-5] = math.nan
        xs.append(x)
    return tuple(xs)


def _without_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reuse, "reuse_reduction_values", lambda fn: 0)


def _kernel_text(compiled: object) -> str:
    return compiled.ir["loop"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kept_exponentials_give_the_recomputed_numbers(name: str, threads: int, isa: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fn, shapes = CASES[name]
    xs = _inputs(shapes)
    kept = compile_cpu(OpModule(fn), xs, isa=isa, threads=threads)
    text = _kernel_text(kept)
    if isa == "scalar" or name in NOTHING_TO_KEEP:
        assert "loop.scratch" not in text  # scalar loops are left as they are
    else:
        assert "loop.scratch" in text and len(re.findall(r'loop\.unary "exp"', text)) == 1, text
    with monkeypatch.context() as m:
        _without_reuse(m)
        recomputed = compile_cpu(OpModule(fn), xs, isa=isa, threads=threads)
    assert "loop.scratch" not in _kernel_text(recomputed)
    got, want = kept(*xs), recomputed(*xs)
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(), want.nan_to_num())
    expected = fn(*xs)
    torch.testing.assert_close(got.float(), expected.float(), rtol=2e-6 if got.dtype == torch.float32 else 1e-2,
                               atol=1e-7 if got.dtype == torch.float32 else 1e-3, equal_nan=True)


def test_a_row_past_the_scratch_limit_recomputes() -> None:
    x = torch.randn(2, 8193)
    compiled = compile_cpu(OpModule(lambda x: torch.softmax(x, -1)), (x,), isa=WIDEST_ISA, threads=1)
    text = _kernel_text(compiled)
    assert "loop.scratch" not in text and len(re.findall(r'loop\.unary "exp"', text)) == 2
    torch.testing.assert_close(compiled(x), torch.softmax(x, -1), rtol=2e-6, atol=1e-7)


def test_log_softmax_keeps_no_row() -> None:
    """log_softmax's output loop computes no transcendental of the element: nothing to keep."""
    x = torch.randn(3, 40)
    compiled = compile_cpu(OpModule(lambda x: torch.log_softmax(x, -1)), (x,), isa=WIDEST_ISA)
    assert "loop.scratch" not in _kernel_text(compiled)


def test_attention_under_bf16_keeps_its_exponentials() -> None:
    """BERT-style attention under ``precision="bf16"``: the softmax (its cast to bf16 as its
    epilogue) keeps its row, and matches eager autocast."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 33, 16, generator=g) for _ in range(3))

    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.softmax(q @ k.transpose(-1, -2) * 0.25, -1) @ v

    compiled = compile_cpu(OpModule(attention), (q, k, v), precision="bf16", isa=WIDEST_ISA, threads=1)
    assert "loop.scratch" in _kernel_text(compiled)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = attention(q, k, v)
    torch.testing.assert_close(compiled(q, k, v), expected.float(), rtol=2e-2, atol=2e-2)


def test_a_run_time_row_recomputes() -> None:
    """A range build's row length is a run-time size: that loop keeps its recomputation."""
    from torch.export import Dim

    x = torch.randn(3, 40)
    compiled = compile_cpu(OpModule(lambda x: torch.softmax(x, -1)), (x,), isa=WIDEST_ISA,
                           dynamic_shapes=({1: Dim("n", min=2, max=300)},))
    for n in (2, 17, 300):
        y = torch.randn(3, n)
        torch.testing.assert_close(compiled(y), torch.softmax(y, -1), rtol=2e-6, atol=1e-7)



def test_a_range_build_keeps_a_static_row(tmp_path: object) -> None:
    """A dynamic batch over rows of static length: the range build's softmax keeps its row, right
    at every batch, and a saved and loaded module runs the same code."""
    from pathlib import Path

    from torch.export import Dim

    import ziggurat

    fn = CASES["scaled_masked"][0]
    x, m = _inputs([(3, 4, 9, 37), (9, 37)])
    compiled = compile_cpu(OpModule(fn), (x, m), isa=WIDEST_ISA, threads=2,
                           dynamic_shapes=({0: Dim("batch", min=1, max=16)}, None))
    assert "loop.scratch" in _kernel_text(compiled)
    path = Path(str(tmp_path)) / "softmax.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    for batch in (1, 5, 16):
        y, _ = _inputs([(batch, 4, 9, 37), (9, 37)])
        expected = fn(y, m)
        for module in (compiled, loaded):
            got = module(y, m)
            assert torch.equal(got.isnan(), expected.isnan())
            torch.testing.assert_close(got, expected, rtol=2e-6, atol=1e-7, equal_nan=True)
