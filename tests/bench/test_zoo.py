"""The model zoo: registry shape, determinism, realistic weights, traceability and exportability."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from ziggurat.bench.models import MODELS, models_tagged, select_models
from ziggurat.bench.spec import TAG_SMOKE, TAG_ZOO

# Models whose build + trace + export takes more than a few seconds on a 2-core machine.
HEAVY = {"resnet50", "bert-base", "gpt2-small", "mobilenet_v2"}


def _params(names: list[str]) -> list[pytest.param]:  # type: ignore[valid-type]
    return [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in names]


EXPECTED_ZOO = [
    "mlp-b1",
    "mlp-b64",
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "bert-base",
    "gpt2-small",
    "transformer-layer",
    "convnext-blocks",
    "conv-silu-stack",
    "lstm-2l",
    "gru-2l",
    "rnn-2l",
]

EXPECTED_INPUT_SHAPES = {
    "mlp-b1": (1, 784),
    "mlp-b64": (64, 784),
    "resnet18": (1, 3, 224, 224),
    "resnet50": (1, 3, 224, 224),
    "mobilenet_v2": (1, 3, 224, 224),
    "bert-base": (1, 128),
    "gpt2-small": (1, 64),
    "transformer-layer": (1, 197, 768),
    "convnext-blocks": (1, 96, 56, 56),
    "conv-silu-stack": (1, 3, 224, 224),
    "lstm-2l": (32, 4, 64),
    "gru-2l": (32, 4, 64),
    "rnn-2l": (32, 4, 64),
    "conv-silu-tiny": (1, 3, 32, 32),
}


def test_registry_contents() -> None:
    assert models_tagged(TAG_ZOO) == EXPECTED_ZOO
    assert models_tagged(TAG_SMOKE) == ["mlp-b1", "conv-silu-tiny"]
    assert set(MODELS) == set(EXPECTED_INPUT_SHAPES)
    for name, spec in MODELS.items():
        assert spec.name == name and spec.description and 0 < spec.tolerance <= 1e-4
    assert [s.name for s in select_models("gpt2-small, mlp-b1", TAG_ZOO)] == ["gpt2-small", "mlp-b1"]
    with pytest.raises(KeyError):
        select_models("mlp-b1,vgg16", TAG_ZOO)


@pytest.mark.parametrize("name", list(EXPECTED_INPUT_SHAPES))
def test_inputs_are_seeded_and_shaped(name: str) -> None:
    spec = MODELS[name]
    torch.manual_seed(7)
    expected_next = torch.rand(3)
    torch.manual_seed(7)
    a, b = spec.example_inputs(), spec.example_inputs()
    assert torch.equal(torch.rand(3), expected_next), "example_inputs must not disturb the global RNG"
    assert len(a) == 1 and tuple(a[0].shape) == EXPECTED_INPUT_SHAPES[name]
    assert torch.equal(a[0], b[0])
    expected_dtype = torch.int64 if name in ("bert-base", "gpt2-small") else torch.float32
    assert a[0].dtype == expected_dtype


@pytest.mark.parametrize("name", _params(list(EXPECTED_INPUT_SHAPES)))
def test_model_is_deterministic_eval_and_finite(name: str) -> None:
    spec = MODELS[name]
    torch.manual_seed(7)
    expected_next = torch.rand(3)
    torch.manual_seed(7)
    m1, m2 = spec.build(), spec.build()
    assert torch.equal(torch.rand(3), expected_next), "build must not disturb the global RNG"
    assert not m1.training and all(not m.training for m in m1.modules())
    s1, s2 = m1.state_dict(), m2.state_dict()
    assert s1.keys() == s2.keys() and all(torch.equal(s1[k], s2[k]) for k in s1)
    (x,) = spec.example_inputs()
    with torch.no_grad():
        y = m1(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and torch.isfinite(y).all()
    assert 0 < y.abs().max().item() < 1e3 and y.std().item() > 1e-3, "activations should be well scaled"


@pytest.mark.parametrize("name", ["resnet18", "conv-silu-stack", "conv-silu-tiny"] + [pytest.param("resnet50", marks=pytest.mark.slow), pytest.param("mobilenet_v2", marks=pytest.mark.slow)])
def test_batchnorm_has_nontrivial_running_stats_and_affine(name: str) -> None:
    bns = [m for m in MODELS[name].build().modules() if isinstance(m, nn.BatchNorm2d)]
    assert bns
    for bn in bns:
        assert bn.running_mean is not None and bn.running_var is not None
        assert bn.running_mean.abs().max() > 1e-3
        assert (bn.running_var - 1).abs().max() > 1e-2 and (bn.running_var > 0).all()
        assert (bn.weight - 1).abs().max() > 1e-2 and bn.bias.abs().max() > 1e-3


def test_transformer_layer_traces_to_the_fused_op() -> None:
    spec = MODELS["transformer-layer"]
    model, inputs = spec.build(), spec.example_inputs()
    with torch.no_grad():
        traced = torch.jit.trace(model, inputs)
    kinds = {node.kind() for node in traced.inlined_graph.nodes()}
    assert "aten::_transformer_encoder_layer_fwd" in kinds


def test_gpt2_is_causal_and_tied() -> None:
    from ziggurat.bench.zoo.gpt2 import GPT2, GPT2Config

    torch.manual_seed(0)
    model = GPT2(GPT2Config(vocab_size=97, hidden=32, layers=2, heads=4, max_positions=16)).eval()
    assert model.lm_head.weight is model.wte.weight
    ids = torch.randint(0, 97, (1, 10))
    changed = ids.clone()
    changed[0, 7] = (ids[0, 7] + 1) % 97
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert torch.equal(a[:, :7], b[:, :7]), "positions before 7 must not see token 7"
    assert not torch.equal(a[:, 7:], b[:, 7:])


@pytest.mark.parametrize("name", _params(EXPECTED_ZOO))
def test_traceable_and_exportable(name: str) -> None:
    spec = MODELS[name]
    model, inputs = spec.build(), spec.example_inputs()
    with torch.no_grad():
        expected = model(*inputs)
        traced = torch.jit.trace(model, inputs)
        assert torch.allclose(traced(*inputs), expected, rtol=0, atol=1e-5 * expected.abs().max().item())
    exported = torch.export.export(model, inputs)
    with torch.no_grad():
        got = exported.module()(*inputs)
    assert torch.allclose(got, expected, rtol=0, atol=1e-5 * expected.abs().max().item())
