"""In-place writes through views on the TorchScript frontend (issue 15, item 6).

The importer functionalizes them as torch's functionalization does (see
``ziggurat.ir.importer.aliasing``): a write through a view rebuilds its base with scatter ops,
and a view read after a write to its base is re-derived from the new base. Every model here
is compiled scripted and traced, on the reference and cpu backends, and checked against
eager on fresh inputs (exactly: the ops are exact), the caller's tensors included. What
cannot be proven is refused with the reason."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import Tensor

import ziggurat
from ziggurat.ir.errors import ModelImportError

BACKENDS = ["reference", "cpu"]
MODES = ["script", "trace"]


class Repro(torch.nn.Module):
    """The issue's model."""

    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y[:, 1].fill_(3.0)
        y[0].copy_(x[1])
        y[2:] = 2.5
        return y


class Nested(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y[1:, ::2][0].mul_(2)
        y.narrow(0, 1, 3)[:, 1:].select(1, -1).sub_(x[0, :3])
        return y


class Transposed(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.t()[1].add_(10.0)
        y.transpose(0, 1)[:, 2].zero_()
        y.permute(1, 0)[0, 1:].mul_(-1.0)
        y.movedim(0, 1).diagonal().fill_(4.0)
        return y


class Pieces(torch.nn.Module):
    """Writes through split/unbind/chunk pieces; ``b`` and ``r[0]`` were taken before."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        y = x.clone()
        a, b = y.split(2)
        a.add_(1.0)
        r = y.unbind(1)
        r[2].mul_(-1.0)
        c = y.chunk(2, 1)[1]
        c.sub_(0.5)
        return y, b, r[0]


class ReadBefore(torch.nn.Module):
    """Views taken before a write see it when read after it, as in eager."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        y = x.clone()
        v = y[1:3]
        w = y.t()
        parts = y.unbind(0)
        y.mul_(2.0)
        y[0].fill_(7.0)
        return v + 1, w, v, torch.stack(parts)


class InputWrite(torch.nn.Module):
    """Writes into the graph input through views: the caller's tensor is updated."""

    def forward(self, x: Tensor) -> Tensor:
        x[1:].mul_(3.0)
        x[:, 0].fill_(-1.0)
        x.view(-1)[::3].add_(1.0)
        return x.sum(0)


class InputWriteAnyLayout(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        x[1:, :2].mul_(3.0)
        x.t()[-1].fill_(0.5)
        return x * 2


class IndexPut(torch.nn.Module):
    """index_put_ with a tensor index (and None indices) through slices."""

    def forward(self, x: Tensor, idx: Tensor, vals: Tensor) -> Tensor:
        y = x.clone()
        y[:, idx] = 7.0
        y[1:][idx] = -1.0
        y[1:].index_put_((idx,), vals, accumulate=True)
        return y


class Mask(torch.nn.Module):
    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        y = x.clone()
        y[mask] = 1.0
        y[1:].masked_fill_(mask[1:], -2.0)
        y[:, 1:][mask[:, 1:]] = 0.5
        return y


class ShapeViews(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.diagonal().copy_(x[0])
        y.unsqueeze(0)[0, 1].fill_(5.0)
        y.view(2, 8)[1].sub_(1.0)
        y.diagonal(1)[1:].mul_(3.0)
        y[None, 2].squeeze(0)[::2].neg_()
        y.detach()[3, 3] = -9.0
        return y


class Fresh(torch.nn.Module):
    """reshape/flatten of a fresh contiguous tensor are views whatever the caller's layouts."""

    def forward(self, x: Tensor) -> Tensor:
        y = torch.zeros(4, 4)
        y.flatten()[3:7] = x[0]
        y.reshape(2, 8)[1, ::2] = x[1]
        return y + x


class InplaceView(torch.nn.Module):
    """t_/unsqueeze_ make the tensor a view of what it was; writes go through."""

    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.t_()
        y[0].fill_(1.0)
        y.unsqueeze_(0)
        y[0, 1] = 2.0
        return y


class RandomInView(torch.nn.Module):
    """bernoulli_ runs through torch; the scatter back is native."""

    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y[1:].bernoulli_(1.0)
        y[0, :2].bernoulli_(0.0)
        return y


class StridedFresh(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = torch.zeros(16)
        y.as_strided((2, 2), (4, 1), 1).copy_(x[:2, :2])
        return y


class Resized(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.resize_(2, 2)
        y[1].fill_(0.0)
        return y * 2


def _inputs(name: str) -> tuple[Tensor, ...]:
    x = torch.randn(4, 4)
    if name == "index_put":
        return x, torch.tensor([0, 2]), torch.randn(2, 4)
    if name == "mask":
        return x, torch.randn(4, 4) > 0
    return (x,)


CASES: dict[str, type[torch.nn.Module]] = {
    "repro": Repro, "nested": Nested, "transposed": Transposed, "pieces": Pieces, "read_before": ReadBefore,
    "input_write": InputWrite, "index_put": IndexPut, "mask": Mask, "shape_views": ShapeViews, "fresh": Fresh,
    "inplace_view": InplaceView, "random_in_view": RandomInView, "strided_fresh": StridedFresh,
}


def _compile(cls: type[torch.nn.Module], mode: str, args: tuple[Tensor, ...], backend: str) -> Any:
    model = torch.jit.script(cls()) if mode == "script" else cls()
    return ziggurat.compile(model, tuple(a.clone() for a in args), backend=backend, frontend="torchscript")


def _flat(out: Any) -> list[Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _check_against_eager(cls: type[torch.nn.Module], compiled: Any, args: tuple[Tensor, ...]) -> None:
    eager_args = [a.clone() for a in args]
    our_args = [a.clone() for a in args]
    expected, got = _flat(cls()(*eager_args)), _flat(compiled(*our_args))
    assert len(expected) == len(got)
    for e, g in zip(expected, got, strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0)
    for e, g in zip(eager_args, our_args, strict=True):  # the caller's tensors, as eager left them
        torch.testing.assert_close(g, e, rtol=0, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CASES))
def test_writes_through_views_match_eager(name: str, mode: str, backend: str) -> None:
    cls = CASES[name]
    compiled = _compile(cls, mode, _inputs(name), backend)
    for _ in range(2):
        args = tuple(a if a.dtype in (torch.int64, torch.bool) else torch.randn_like(a) for a in _inputs(name))
        _check_against_eager(cls, compiled, args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", MODES)
def test_input_written_through_views_in_any_layout(mode: str, backend: str) -> None:
    """A caller's transposed tensor gets the same writes as in eager (the compiled module runs
    on a contiguous copy and copies the final value back)."""
    compiled = _compile(InputWriteAnyLayout, mode, (torch.randn(4, 4),), backend)
    _check_against_eager(InputWriteAnyLayout, compiled, (torch.randn(4, 4).t(),))
    _check_against_eager(InputWriteAnyLayout, compiled, (torch.randn(4, 4),))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_resized_tensor_is_a_tensor_of_its_own(backend: str) -> None:
    """Scripted only: torch.jit.trace does not record resize_ (it bakes the example's values)."""
    _check_against_eager(Resized, _compile(Resized, "script", (torch.randn(4, 4),), backend), (torch.randn(4, 4),))


def test_scatters_replace_the_refusal_in_the_ir() -> None:
    compiled = _compile(Nested, "script", (torch.randn(4, 4),), "reference")
    text = compiled.ir["torch"]
    assert "select_scatter" in text and "slice_scatter" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_write_into_a_view_keeps_the_rest(backend: str) -> None:
    class Uniform(torch.nn.Module):
        def forward(self, x: Tensor) -> Tensor:
            y = x.clone()
            y[1:, 1:].uniform_(2.0, 3.0)
            return y

    compiled = _compile(Uniform, "script", (torch.randn(4, 4),), backend)
    x = torch.randn(4, 4)
    y = compiled(x)
    assert torch.equal(y[0], x[0]) and torch.equal(y[:, 0], x[:, 0])
    assert bool(((y[1:, 1:] >= 2.0) & (y[1:, 1:] < 3.0)).all())


# -- refused, with the reason ---------------------------------------------------------------
class ThroughExpand(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y[0:1].expand(4, 4).mul_(2.0)
        return y


class ThroughUnfold(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.unfold(0, 2, 1).fill_(0.0)
        return y


class ThroughOverlappingStrides(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = torch.zeros(16)
        y.as_strided((2, 2), (1, 1)).fill_(1.0)
        return y


class ThroughStridedInput(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        x.as_strided((2, 2), (4, 1), 1).fill_(1.0)
        return x


class ThroughMergingReshape(torch.nn.Module):
    """reshape(-1) of a clone of the input is a view only when the caller's layout allows it."""

    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        y.reshape(-1)[3:6] = 1.0
        return y


class ContiguousReadAfterWrite(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        c = y.contiguous()
        y[0].fill_(1.0)
        return c


class TransposeInput(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        x.t_()
        return x + 1


#: ``held = [y]; y.t_(); held[0] + 1`` (scripting folds the list away, so as IR text): in eager
#: ``held[0]`` is ``y`` itself, transposed
OLD_NAME_AFTER_T_ = """graph(%x : Float(4, 4)):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  %held : Tensor[] = prim::ListConstruct(%y)
  %t : Tensor = aten::t_(%y)
  %old : Tensor = aten::__getitem__(%held, %zero)
  %r : Tensor = aten::add(%old, %one, %one)
  return (%r)
"""


class ViewReadAfterResize(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        v = y[0]
        y.resize_(2, 2)
        return v * 2


class LoopWritesOutside(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x.clone()
        while bool(y.sum() < 100.0):
            y[0].add_(1.0)
        return y


REFUSED: dict[str, tuple[type[torch.nn.Module] | str, str]] = {
    "expand": (ThroughExpand, "through a view made by aten::expand: expand makes several view elements one"),
    "unfold": (ThroughUnfold, "through a view made by aten::unfold"),
    "overlapping_as_strided": (ThroughOverlappingStrides, "as_strided makes several view elements one"),
    "as_strided_of_input": (ThroughStridedInput, "as_strided of a tensor whose memory layout is not known"),
    "merging_reshape": (ThroughMergingReshape, "aten::reshape .* \\(a view or a copy depending on the strides"),
    "contiguous": (ContiguousReadAfterWrite, "aten::contiguous .* \\(a view or a copy depending on the strides"),
    "t_of_input": (TransposeInput, "changes the shape of a graph input in place"),
    "old_name_after_t_": (OLD_NAME_AFTER_T_, "aten::t_ .* changed the shape of this tensor in place"),
    "view_after_resize_": (ViewReadAfterResize, "aten::resize_ .* changed the shape of this tensor's memory in place"),
    "loop": (LoopWritesOutside, "writes in place through a view .* from outside a loop whose trip count"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_cannot_be_proven_is_refused_with_the_reason(name: str) -> None:
    model, reason = REFUSED[name]
    x = torch.randn(4, 4).abs()
    with pytest.raises(ModelImportError, match=reason) as info:
        if isinstance(model, str):
            ziggurat.compile(model, (x,), backend="reference")
        else:
            _compile(model, "script", (x,), "reference")
    assert "in-place" in str(info.value) or "in place" in str(info.value)


class WritesMadeTensor(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        a = torch.tensor([1.0, 2.0, 3.0])
        a[0] += 1.0
        return x + a


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_made_in_forward_is_written_as_eager_writes_it(backend: str) -> None:
    """Scripted, ``torch.tensor(...)`` is made afresh at each call: the write through a view
    of it is functionalized. Traced, it is a constant captured with the write already in it
    (torch.jit.trace's own module returns [3, 2, 3] where eager returns [2, 2, 3]): refused."""
    compiled = _compile(WritesMadeTensor, "script", (torch.randn(3),), backend)
    _check_against_eager(WritesMadeTensor, compiled, (torch.randn(3),))
    with pytest.raises(ModelImportError, match="writes in place into the constant tensor .* the tracer captured"):
        _compile(WritesMadeTensor, "trace", (torch.randn(3),), backend)
