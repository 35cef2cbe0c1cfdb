"""View, permutation, broadcast, slicing, joining and indexing converters vs eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts

torch.manual_seed(0)
X = torch.randn(2, 3, 4, 5)

CASES = {
    "reshape": lambda x: x.reshape(6, -1),
    "view": lambda x: x.view(2, 60) * 2,
    "flatten": lambda x: torch.flatten(x, 1),
    "unflatten": lambda x: x.unflatten(3, (5, 1)),
    "squeeze_unsqueeze": lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze(0).squeeze(-1),
    "permute": lambda x: x.permute(3, 1, 0, 2),
    "transpose": lambda x: x.transpose(1, -1),
    "t": lambda x: x[0, 0].t(),
    "expand": lambda x: x[:, :, :1].expand(2, 3, 7, 5),
    "expand_new_dims": lambda x: x[0, 0, 0].expand(3, 4, 5),
    "expand_as": lambda x: x[:1].expand_as(x),
    "repeat": lambda x: x.repeat(1, 2, 1, 3),
    "repeat_more_dims": lambda x: x[0, 0].repeat(2, 1, 2),
    "tile": lambda x: x[0].tile((2,)),
    "flip": lambda x: torch.flip(x, [1, 3]),
    "roll": lambda x: torch.roll(x, shifts=(2, -1), dims=(3, 1)),
    "roll_flat": lambda x: torch.roll(x, 7),
    "pixel_shuffle": lambda x: F.pixel_shuffle(x.reshape(2, 12, 1, 5), 2),
    "contiguous_clone": lambda x: x.transpose(0, 1).contiguous().clone() + 1,
    "to_dtype": lambda x: x.to(torch.float16).to(torch.int32),
    "type_as": lambda x: x.type_as(torch.zeros(1, dtype=torch.float16)),
    "slice": lambda x: x[:, 1:, ::2, -3:],
    "slice_step": lambda x: x[..., 1:5:3],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "select": lambda x: x[:, -1, 2],
    "chunk": lambda x: torch.chunk(x, 2, dim=3),
    "split": lambda x: torch.split(x, [1, 2], dim=1),
    "split_size": lambda x: torch.split(x, 2, dim=2),
    "unbind": lambda x: torch.unbind(x, 1),
    "cat": lambda x: torch.cat([x, x * 2, x[:, :1]], dim=1),
    "cat_promote": lambda x: torch.cat([x, x.to(torch.float16)], dim=0),
    "stack": lambda x: torch.stack([x, x + 1], dim=-1),
    "meshgrid": lambda x: torch.meshgrid(x[0, 0, 0], x[0, 0, :, 0], indexing="ij"),
    "meshgrid_xy": lambda x: torch.meshgrid(x[0, 0, 0], x[0, 0, :, 0], indexing="xy"),
    "repeat_interleave": lambda x: torch.repeat_interleave(x, 2, dim=1),
    "repeat_interleave_flat": lambda x: torch.repeat_interleave(x[0, 0], 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_op(name: str) -> None:
    check_converts(CASES[name], [X.clone()])


def test_index_select_embedding_gather_scatter() -> None:
    idx = torch.tensor([2, 0, -1])
    check_converts(lambda x, i: torch.index_select(x, 2, i.abs()), [X.clone(), idx])
    check_converts(lambda x, i: x[:, :, i], [X.clone(), idx])
    table = torch.randn(10, 4)
    tokens = torch.tensor([[1, 9, 3], [0, 0, 7]])
    check_converts(lambda w, t: F.embedding(t, w), [table, tokens])
    emb = torch.nn.Embedding(10, 4).eval()
    check_converts(emb, [tokens])
    g = torch.tensor([[0, 2], [1, 1], [2, 0]])
    check_converts(lambda x, i: torch.gather(x, 1, i), [torch.randn(3, 4), g])
    check_converts(lambda x, i: torch.scatter(x, 1, i, torch.ones(3, 3)), [torch.zeros(3, 4), g])
    check_converts(lambda x, i: torch.scatter(x, 1, i, 5.0), [torch.zeros(3, 4), g])


def test_advanced_indexing_with_several_tensors() -> None:
    a = torch.tensor([0, 1, -1])
    b = torch.tensor([[2], [0]])
    check_converts(lambda x, i, j: x[:, i, j], [X.clone(), a, b])  # adjacent: stays in place
    check_converts(lambda x, i, j: x[i, :, j], [X.clone(), a[:2], b[:, :1].reshape(2)])  # split: front


def test_repeat_interleave_with_constant_repeats() -> None:
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("r", torch.tensor([1, 0, 2]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.repeat_interleave(x, self.r, dim=1)

    check_converts(M(), [torch.randn(2, 3)])
