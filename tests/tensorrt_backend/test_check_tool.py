"""tools/check_tensorrt.py: the reference run passes (including the reload of its payload and every
layer run alone on the values the reference gave it); without TensorRT the engine run exits 2 with the reason."""

from __future__ import annotations

import pytest

from ziggurat.backends.tensorrt.availability import tensorrt_unavailable_reason
from ziggurat.tools.check_tensorrt import main


def test_reference_check_of_the_small_cnn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--reference", "--models", "small-cnn"]) == 0
    out = capsys.readouterr().out
    assert "PASS  model  small-cnn" in out and "7/7 rows pass" in out
    for kind in ("trt.convolution", "trt.activation", "trt.pooling", "trt.matrix_multiply"):
        assert f"PASS  op     {kind}" in out
    assert "reloaded payload differs" not in out


@pytest.mark.skipif(tensorrt_unavailable_reason() is None, reason="TensorRT is installed here")
def test_without_tensorrt_the_check_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--models", "small-cnn"]) == 2
    assert "TensorRT is not available here" in capsys.readouterr().err


def test_unknown_model_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--reference", "--models", "nope"]) == 2
    assert "unknown model(s) nope" in capsys.readouterr().err
