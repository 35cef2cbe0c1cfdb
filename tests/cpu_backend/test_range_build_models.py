"""One range build for transformer models over a dynamic batch and sequence (issue 16): the
bench zoo's BERT encoder and GPT-2 decoder at tiny configs, against eager at the ranges' ends,
odd and prime sizes, sizes below the served floors (pinned range builds) and batch 1, on every
ISA this host has."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import ONE_BUILD, RANGE_BUILD, SPECIALIZED
from ziggurat.bench.zoo.bert import BertConfig, BertEncoder
from ziggurat.bench.zoo.gpt2 import GPT2, GPT2Config


def _ids(shape: tuple[int, int]) -> torch.Tensor:
    return torch.randint(0, 512, shape, generator=torch.Generator().manual_seed(shape[0] * 1000 + shape[1]))


def test_bert_batch_and_sequence(model_isa: str) -> None:
    torch.manual_seed(0)
    model = BertEncoder(BertConfig(vocab_size=512, hidden=64, layers=1, heads=2, intermediate=128)).eval()
    compiled = ziggurat.compile(model, (_ids((3, 17)),), backend="cpu", isa=model_isa,
                                dynamic_shapes=({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=96)},))
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    with torch.no_grad():
        for shape in ((2, 2), (8, 96), (3, 41), (5, 16), (7, 95), (1, 37), (4, 3)):
            x = _ids(shape)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats  # batch 1 and short sequences: pinned range builds


def test_gpt2_sequence(model_isa: str) -> None:
    torch.manual_seed(0)
    model = GPT2(GPT2Config(vocab_size=512, hidden=64, layers=1, heads=2)).eval()
    compiled = ziggurat.compile(model, (_ids((1, 17)),), backend="cpu", isa=model_isa,
                                dynamic_shapes=({1: Dim("seq", min=1, max=127)},))
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    floor = compiled.range_lows[0] if compiled.range_lows else 2
    with torch.no_grad():
        for seq in sorted({floor, 16, 17, 31, 64, 101, 126, 127}):
            x = _ids((1, seq))
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert SPECIALIZED not in compiled.report.stats


@pytest.mark.parametrize("seq", [1, 2])
def test_gpt2_below_the_floor_gets_its_own_build(seq: int) -> None:
    torch.manual_seed(0)
    model = GPT2(GPT2Config(vocab_size=512, hidden=64, layers=1, heads=2)).eval()
    compiled = ziggurat.compile(model, (_ids((1, 9)),), backend="cpu",
                                dynamic_shapes=({1: Dim("seq", min=1, max=31)},))
    with torch.no_grad():
        x = _ids((1, seq))
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
