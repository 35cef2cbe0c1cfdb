"""Converters vs eager on torch's OpInfo samples (import -> convert-torch-to-trt -> reference executor).

Every sample must match eager, whether its ops went to TensorRT or (with a reason) stayed in
torch; every OpInfo must have at least one sample converted entirely.  The default run takes
one sample of a few OpInfos of each family; ``-m slow`` runs the first two samples of every
OpInfo, and all samples (about 3,500).
"""

from __future__ import annotations

import pytest

from opinfo_sweep import OPINFOS, run_opinfo

#: OpInfos whose first samples use what TensorRT cannot take (their later samples convert).
PARTIAL_FIRST = {"narrow", "nn.functional.max_pool1d", "nn.functional.max_pool2d", "nn.functional.avg_pool2d",
                 "nn.functional.adaptive_max_pool2d", "nn.functional.batch_norm"}
#: OpInfos whose float samples stay in torch by design (float floor division: see the elementwise converters).
FLOAT_IN_TORCH = {"div.floor_rounding", "floor_divide", "remainder"}
NAMES = [n for n in OPINFOS if n != "fake_quantize_per_tensor_affine"]  # no OpInfo: see test_convert_composite


SMOKE = ["add", "div.trunc_rounding", "where", "nn.functional.gelu", "nn.functional.hardtanh", "permute", "cat",
         "index_select", "sum", "topk", "softmax", "matmul", "nn.functional.conv2d", "nn.functional.adaptive_avg_pool2d",
         "nn.functional.layer_norm", "nn.functional.pad.reflect", "nn.functional.interpolate.bilinear"]


#: smoke ops whose first sample runs through torch, and why (the numbers still match eager)
SMOKE_FALLBACK = {
    # the sample passes the weights as an input, with padding: eager skips the padded taps,
    # TensorRT multiplies them by zero (NaN for an inf weight), which a run-time weight cannot rule out
    "nn.functional.conv2d": "a padded convolution by weights known at run time only",
}


@pytest.mark.parametrize("name", SMOKE)
def test_one_sample(name: str) -> None:
    outcome = run_opinfo(name, limit=1)
    assert outcome.samples == 1 and not outcome.mismatches, outcome.mismatches
    if name in SMOKE_FALLBACK:
        assert any(SMOKE_FALLBACK[name] in r for r in outcome.fallback_reasons), outcome.fallback_reasons
        return
    assert outcome.converted == 1, sorted(set(outcome.fallback_reasons))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_first_samples(name: str) -> None:
    outcome = run_opinfo(name, limit=2)
    assert not outcome.mismatches, outcome.mismatches
    if name not in PARTIAL_FIRST | FLOAT_IN_TORCH and outcome.samples:
        assert outcome.converted, sorted(set(outcome.fallback_reasons))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_all_samples(name: str) -> None:
    outcome = run_opinfo(name, limit=None)
    assert not outcome.mismatches, outcome.mismatches
    assert outcome.converted or not outcome.samples or name in FLOAT_IN_TORCH, sorted(set(outcome.fallback_reasons))
