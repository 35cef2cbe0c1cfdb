"""A kernel with more than one ``loop.parallel`` nest: each gets a body function of its own
(``threads.emit_parallel_for``).  A realized ``cat``/``stack`` of large parts runs one nest per
part (``loopgen/kernel._domains``), each parallel over 2 threads; both nests' bodies were named
``<kernel>.par.body`` (the name check looked for ``<kernel>.par`` itself, which is no
function), and llvmlite raised ``DuplicatedNameError`` out of ``ziggurat.compile`` (a raw
traceback, at 800fe64).  The fuzzer compiles with one thread and small values, so it never
made two parallel nests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

CASES: list[tuple[str, Callable[..., torch.Tensor]]] = [
    ("cat_rows", lambda a, b: torch.cat([a * 2, b + 1], dim=0)),
    ("stack", lambda a, b: torch.stack([a.exp(), b, a - b])),
    ("cat_columns", lambda a, b: torch.cat([a.sin(), b * b], dim=1)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_parallel_nests_of_one_kernel_compile_and_agree(name: str, fn: Callable[..., torch.Tensor], isa: str) -> None:
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(64, 4096, generator=g), torch.randn(64, 4096, generator=g)
    compiled = compile_cpu(OpModule(fn), (a, b), isa=isa, threads=2)
    assert compiled.ir["loop"].count("loop.parallel") >= 2
    torch.testing.assert_close(compiled(a, b), fn(a, b), rtol=2e-6, atol=1e-6)
