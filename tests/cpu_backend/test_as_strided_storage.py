"""``as_strided`` addresses its operand's *storage* (issue 14 item 5).

After a view (``t``, ``transpose``, ``permute``, ``narrow``, ``select``, a stepped slice,
``unfold``, ``diagonal``, ``movedim``, ``expand``, ``alias``/``detach``, ``_unsafe_view``,
a nested ``as_strided``) that storage is the base's; after a pointwise op on a permuted view
it is a fresh buffer in the view's order (eager keeps the layout), after ``contiguous`` a
fresh row-major one.  The native lowering read the row-major view instead (wrong numbers),
its fallback handed torch a row-major copy, or an arena slice whose storage is the whole
arena (wrong numbers, or a raw ``RuntimeError`` about overlapping memory)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

import ziggurat
from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule
from ziggurat.ir.errors import InputError, ZigguratError

Fn = Callable[[torch.Tensor], torch.Tensor]

S = torch.as_strided

CASES: dict[str, Fn] = {
    "plain": lambda x: S(x, (3, 2), (1, 3), 1) + 0,
    "t": lambda x: S(x.t(), (3, 2), (1, 3), 1) + 0,
    "transpose": lambda x: S(x.transpose(0, 1), (2, 3), (5, 2), 1) * 2,
    "permute": lambda x: S(x.unsqueeze(0).permute(2, 0, 1), (4, 3), (3, 1), 0) + 1,
    "slice": lambda x: S(x[1:], (2, 2), (2, 1), 1) + 0,
    "stepped_slice": lambda x: S(x[::2], (3, 3), (1, 4), 1) - 1,
    "narrow": lambda x: S(x.narrow(1, 1, 2), (2, 3), (3, 2), 4) + 0,
    "select": lambda x: S(x.select(0, 2), (5,), (2,), 1) + 0,
    "unfold": lambda x: S(x.flatten().unfold(0, 3, 2), (4, 2), (2, 3), 0) + 0,
    "diagonal": lambda x: S(x.diagonal(), (2, 2), (4, 1), 0) + 0,
    "movedim": lambda x: S(x.movedim(0, 1), (6,), (2,), 0) + 0,
    "expand": lambda x: S(x[:1].expand(4, 3), (3, 3), (3, 1), 3) + 0,
    "alias_detach": lambda x: S(torch.ops.aten.alias(x.detach()), (4,), (3,), 2) + 0,
    "unsafe_view": lambda x: S(torch.ops.aten._unsafe_view(x, (3, 4)), (2, 2), (1, 6), 3) + 0,
    "nested_offset": lambda x: S(S(x, (3, 3), (3, 1), 3), (2, 2), (1, 3), 4) + 0,
    "nested_default_offset": lambda x: S(S(x, (2, 3), (3, 1), 5), (2,), (4,)) + 0,
    "pointwise_on_view": lambda x: S(x.t() + 0, (3, 2), (1, 3), 1) + 0,
    "contiguous_of_view": lambda x: S(x.t().contiguous(), (3, 2), (1, 3), 1) + 0,
    "clone_of_view": lambda x: S(x.t().clone(), (3, 2), (1, 3), 1) + 0,
    "reshape_copy": lambda x: S(x.t().reshape(12), (5,), (2,), 1) + 0,
    "reshape_view": lambda x: S(x.reshape(2, 6), (5,), (2,), 1) + 0,
    "reduction_of_view": lambda x: S(x.t().exp().sum(0, keepdim=True), (2,), (2,), 0) + 0,
    "reshape_alias": lambda x: torch.ops.aten._reshape_alias(x[1:], (3, 3), (1, 3)) + 0,
}


def _x() -> torch.Tensor:
    return torch.randn(4, 3, generator=torch.Generator().manual_seed(5))


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_as_strided_after_views_cpu(case: str, frontend: str) -> None:
    fn, x = CASES[case], _x()
    try:
        expected = fn(x)
    except RuntimeError:
        pytest.skip("eager refuses this case")
    compiled = compile_cpu(OpModule(fn), (x,), frontend=frontend)
    tol = 1e-6 if case == "reduction_of_view" else 0.0
    torch.testing.assert_close(compiled(x), expected, rtol=tol, atol=tol)
    y = torch.randn(4, 3)  # other values at call time
    torch.testing.assert_close(compiled(y), fn(y), rtol=tol, atol=tol)
    assert "aten::as_strided" not in compiled.report.fallback_ops


@pytest.mark.parametrize("backend", ["tensorrt-reference", "reference"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_as_strided_after_views_other_backends(case: str, backend: str) -> None:
    fn, x = CASES[case], _x()
    compiled = ziggurat.compile(OpModule(fn), (x,), backend=backend, frontend="torchscript")
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)


def test_input_with_storage_offset_is_refused_at_call() -> None:
    """Eager's as_strided of an input reads from the start of the input's *storage*: an input
    that starts inside a larger storage gives eager other numbers, so the call refuses it."""
    fn = CASES["plain"]
    compiled = compile_cpu(OpModule(fn), (_x(),))
    big = torch.randn(5, 3)
    with pytest.raises(InputError, match="storage offset"):
        compiled(big[1:])
    torch.testing.assert_close(compiled(big[:4]), fn(big[:4]), rtol=0, atol=0)  # offset 0 is fine


def test_unprovable_layout_is_a_clean_error() -> None:
    """A storage read past the operand's own elements (eager reads the base's other elements
    through a view of a larger input) cannot be proven: a ZigguratError naming the op."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return S(x[:2], (4, 3), (3, 1), 0) + 0  # all of x's storage through a 2-row view

    compiled = compile_cpu(OpModule(fn), (_x(),))  # the root is x itself: provable
    torch.testing.assert_close(compiled(_x()), fn(_x()), rtol=0, atol=0)

    def beyond(x: torch.Tensor) -> torch.Tensor:
        return S(x.sum(0), (3,), (1,), 0) + S(x[0], (3,), (1,), 9)

    compiled = compile_cpu(OpModule(beyond), (_x(),))
    torch.testing.assert_close(compiled(_x()), beyond(_x()), rtol=1e-6, atol=1e-6)
    with pytest.raises(ZigguratError, match="as_strided"):
        compile_cpu(OpModule(lambda x: S(x, (13,), (1,), 0) + 0), (torch.randn(20)[:12],))


def test_float64_as_strided_of_view_stays_correct() -> None:
    """A dtype the CPU backend does not compute (float64): the view chain runs in torch, where
    an as_strided of a view would see a row-major copy; it is lowered natively as data
    movement, or the compile refuses, never a wrong number."""
    x = _x().double()
    fn = CASES["t"]
    try:
        compiled = compile_cpu(OpModule(fn), (x,))
    except ZigguratError as e:
        assert "as_strided" in str(e)
        return
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)


#: Graphs big enough that their ops form TensorRT segments (min_block_size 3).
SEGMENT_CASES: dict[str, Fn] = {
    "pointwise_on_view": lambda x: S(((x.t() * 2 + 1).relu() * 3), (3, 2), (1, 3), 1) + 0,
    "view_of_segment": lambda x: S((x * 2 + 1).relu().t(), (3, 2), (1, 3), 1) * 2 + 1,
    "contiguous_of_segment": lambda x: S(((x * 2 + 1).relu().t()).contiguous(), (3, 2), (1, 3), 1) * 2 + 1,
}


@pytest.mark.parametrize("backend", ["tensorrt-reference", "cpu"])
@pytest.mark.parametrize("case", sorted(SEGMENT_CASES))
def test_as_strided_operand_computed_by_segments(case: str, backend: str) -> None:
    """TensorRT's outputs are fresh row-major tensors, eager's (x.t() * 2) is in x.t()'s order:
    the ops an as_strided operand depends on stay in torch, with the reason reported."""
    fn, x = SEGMENT_CASES[case], _x()
    compiled = ziggurat.compile(OpModule(fn), (x,), backend=backend, frontend="torchscript")
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    if backend != "cpu":
        reasons = [r for rs in compiled.report.fallback_ops.values() for r in rs]
        assert any("as_strided" in r for r in reasons), reasons


class _OfWeights(torch.nn.Module):
    b: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("b", torch.randn(4, 3, generator=torch.Generator().manual_seed(8)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = self.b
        return S(b.t(), (3, 2), (1, 3), 1) + x, S(S(b, (3, 3), (3, 1), 3), (3, 2), (1, 3), 1) + x


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_as_strided_of_a_weight_view(backend: str, frontend: str) -> None:
    """constant-fold turned b.t() into a fresh row-major literal, so the as_strided behind it
    read the transposed copy instead of b's storage."""
    model, x = _OfWeights(), torch.randn(3, 2)
    compiled = ziggurat.compile(model, (x,), backend=backend, frontend=frontend)
    for got, expected in zip(compiled(x), model(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("case", sorted(CASES))
def test_as_strided_after_views_half_floats(case: str, dtype: torch.dtype) -> None:
    """A bf16/float16 as_strided is index arithmetic on the storage root, as a float32 one is
    (it ran through torch, where the proof had to refuse a view's storage)."""
    fn, x = CASES[case], _x().to(dtype)
    compiled = compile_cpu(OpModule(fn), (x,), frontend="export")
    tol = 1e-2 if case == "reduction_of_view" else 0.0
    torch.testing.assert_close(compiled(x), fn(x), rtol=tol, atol=tol)
    assert "aten::as_strided" not in compiled.report.fallback_ops


class _NormThenStorage(torch.nn.Module):
    """Fuzz seed 177, programs 55 and 71: torch.export's inference batch norm
    (``_native_batch_norm_legit_no_training``) declares its saved statistics (0,), as the CPU
    kernel returns them; its meta function gives (C,), so proving the layout behind it failed."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(6).eval()
        self.bn.running_mean.copy_(torch.randn(6, generator=g))
        self.bn.running_var.copy_(torch.rand(6, generator=g) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.hardsigmoid(self.bn(torch.relu(self.conv(x))))  # not folded
        return S(y.clone().narrow(0, 1, 2), (4, 3), (0, 1))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_as_strided_behind_an_inference_batch_norm(precision: str) -> None:
    model = _NormThenStorage().eval()
    x = torch.randn(3, 3, 5, 5, generator=torch.Generator().manual_seed(4))
    compiled = compile_cpu(model, (x,), frontend="export", precision=precision)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
        expected = model(x)
    tol = 2e-2 if precision == "bf16" else 1e-5
    torch.testing.assert_close(compiled(x), expected.float(), rtol=tol, atol=tol)
    assert "aten::as_strided" not in compiled.report.fallback_ops
