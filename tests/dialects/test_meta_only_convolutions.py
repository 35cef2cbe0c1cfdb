"""Convolutions are typed by their meta kernels only, never by a run of their CPU kernel at
compile time: torch 2.13's bf16 ``conv2d`` of a ``[1, 2, 1, 37]`` image (3x3 weight, stride 2,
padding (3, 0), dilation (2, 1), every tap in the padding) segfaults in oneDNN on an AMX host,
eager autocast too, and the verifier's run of it on zeros killed the compiling process (fuzz
seed 93, program 137, ``cpu-avx512-bf16``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
import torch
from xdsl.dialects.builtin import TensorType

from ziggurat.dialects.torch.meta_eval import evaluate, meta_only
from ziggurat.ir.types import tensor_type_of


@pytest.mark.parametrize("name", ["torch.aten.conv2d", "torch.aten.convolution", "torch.aten._convolution",
                                  "torch.aten.conv_transpose2d", "torch.aten.conv1d", "torch.aten.mkldnn_convolution",
                                  "conv2d"])
def test_convolutions_are_meta_only(name: str) -> None:
    assert meta_only(name)
    half = [tensor_type_of(torch.zeros(1, 2, 3, 3, dtype=dt)) for dt in (torch.float32, torch.bfloat16)]
    assert meta_only(name, half) and meta_only(name, [tensor_type_of(torch.zeros(1, dtype=torch.float16))])
    # float32 convolutions still run on the CPU first (a meta kernel's message can be poorer:
    # stride 0 reads "Invalid channel dimensions" on meta, "non-positive stride" on the CPU)
    assert not meta_only(name, [tensor_type_of(torch.zeros(1, 2, 3, 3))] * 2)


@pytest.mark.parametrize("name", ["torch.aten.add", "torch.aten.linear", "torch.aten.mm", "torch.aten.max_pool2d"])
def test_other_ops_may_run_on_the_cpu(name: str) -> None:
    assert not meta_only(name)


def test_evaluate_without_cpu_runs_asks_only_meta() -> None:
    x = torch.zeros(1, 2, 1, 37, dtype=torch.bfloat16)
    w = torch.zeros(1, 2, 3, 3, dtype=torch.bfloat16)
    asked: list[str] = []

    def run(device: str) -> list[Any]:
        asked.append(device)
        if device == "cpu":
            raise AssertionError("the CPU kernel ran")
        return [torch.nn.functional.conv2d(x.to(device), w.to(device), stride=2, padding=(3, 0), dilation=(2, 1))]

    types = [tensor_type_of(x), tensor_type_of(w)]
    declared = [tensor_type_of(torch.zeros(1, 1, 2, 18, dtype=torch.bfloat16))]
    verdict, error = evaluate(run, types, declared, cpu_runs=False)
    assert error is None and asked == ["meta"]
    assert verdict is not None and isinstance(verdict[0], TensorType) and verdict[0] == declared[0]


def test_bf16_all_padding_convolution_compiles_and_runs() -> None:
    """In a child process (a segfault must fail the test, not end the run)."""
    program = textwrap.dedent("""
        import torch, torch.nn.functional as F
        import ziggurat

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("w", torch.randn(1, 2, 3, 3))
                self.register_buffer("b", torch.randn(1))

            def forward(self, x):
                return F.hardswish(F.conv2d(x, self.w, self.b, stride=(2, 2), padding=(3, 0), dilation=(2, 1)))

        x = torch.randn(1, 2, 1, 37).contiguous(memory_format=torch.channels_last)
        m = M().eval()
        out = ziggurat.compile(m, (x,), backend="cpu", precision="bf16", threads=1)(x)
        want = F.hardswish(m.b.bfloat16().float()).expand(1, 1, 2, 18)  # every tap reads the padding
        assert out.shape == (1, 1, 2, 18), out.shape
        assert torch.allclose(out, want, rtol=1e-2), (out, want)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), (done.returncode, done.stderr[-2000:])
