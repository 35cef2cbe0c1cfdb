"""The torch.export frontend takes what Hugging Face models emit (``.to(x.device)`` and
``.to(x.dtype)`` no-ops as ``_assert_tensor_metadata``, ``torch._check``, asserts on shapes,
``sym_size``, ``torch.tensor`` constants as ``lift_fresh_copy``, mask construction with
``ones``/``triu``/``masked_fill``) without falling back to tracing; when export does fail, the
WARNING names the construct and its source line."""

from __future__ import annotations

import inspect
import logging

import pytest
import torch

import ziggurat

BACKENDS = ("cpu", "tensorrt-reference")


class HuggingFaceIdioms(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.position = torch.nn.Parameter(torch.randn(6, 4))
        self.register_buffer("scale", torch.arange(1.0, 5.0))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        torch._check(x.shape[0] == 2)
        assert x.shape[-1] == 4, "hidden size"
        batch, length = x.shape[0], torch.ops.aten.sym_size.int(x, 1)
        position = self.position[:length].to(x.device)
        scale = self.scale.to(x.dtype).to(device=x.device)
        offset = torch.tensor([0.5, -1.0, 2.0, 0.25])
        causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
        keep = causal[None] & mask[:, None, :].to(torch.bool)
        scores = (x @ x.transpose(1, 2)).masked_fill(~keep, torch.finfo(x.dtype).min)
        return scores.softmax(-1) @ (x + position) * scale / batch + offset


@pytest.mark.parametrize("backend", BACKENDS)
def test_hugging_face_idioms_export_without_tracing(backend: str, caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    model = HuggingFaceIdioms().eval()
    x, mask = torch.randn(2, 5, 4), torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    options = {"threads": 1} if backend == "cpu" else {"min_block_size": 1}
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        compiled = ziggurat.compile(model, (x,), backend=backend, frontend="auto",
                                    example_kwargs={"mask": mask}, **options)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, mask=mask), model(x, mask), rtol=1e-5, atol=1e-5)
    if backend == "cpu":
        assert compiled.report.fallback_ops == {}


class ReadsPointer(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.data_ptr() % 1 == 0:  # fake tensors have no data: export fails here
            return x + 1
        return x


def test_the_export_warning_names_the_construct_and_its_line(caplog: pytest.LogCaptureFixture) -> None:
    x = torch.randn(3)
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        compiled = ziggurat.compile(ReadsPointer(), (x,), backend="reference")
    torch.testing.assert_close(compiled(x), x + 1)
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = record.getMessage()
    assert "tracing with TorchScript instead" in message
    line = inspect.getsourcelines(ReadsPointer.forward)[1] + 1
    assert f"test_export_constructs.py:{line} (if x.data_ptr() % 1 == 0:" in message
    assert "Cannot access data pointer" in message


class ConvBatchNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 64, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(64)
        self.relu = torch.nn.ReLU(inplace=True)  # an in-place op: the program is functionalized

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv(x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_eval_batch_norm_imports_through_export(backend: str, caplog: pytest.LogCaptureFixture) -> None:
    """An eval-mode BatchNorm in a functionalized program (ResNet's in-place ReLU) exports as
    ``_native_batch_norm_legit_no_training``, whose saved
    mean and invstd are ``tensor<0xf32>`` (torch's CPU kernel and fake tensors), while its meta
    kernel says ``[64]``: the verifier took the meta answer, the import failed, and every
    ResNet/MobileNet fell back to tracing.  The CPU answer on fake tensors now wins where it
    agrees with the exported graph."""
    torch.manual_seed(0)
    model = ConvBatchNorm().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 3, 48, 48)  # above the operand size the verifier re-runs on the CPU
    options = {"threads": 1} if backend == "cpu" else {"min_block_size": 1}
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        compiled = ziggurat.compile(model, (x,), backend=backend, frontend="export", **options)
    assert "_native_batch_norm_legit_no_training" in compiled.ir["torch"]
    assert not [r for r in caplog.records if "frontend" in r.getMessage()]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
