"""The model zoo registry: `MODELS` maps a name to its `ModelSpec`.

Every constructor seeds torch's RNG itself, so weights and inputs are identical across runs,
processes and backends. All models are eval mode, fp32, free of Python control flow on tensor
values, and traceable with `torch.jit.trace` and exportable with `torch.export`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ziggurat.bench.spec import TAG_SMOKE, TAG_ZOO, ModelSpec, calibrate_batchnorm, init_transformer_weights, randomize_norm_affine, seeded
from ziggurat.bench.zoo.bert import BertConfig, BertEncoder
from ziggurat.bench.zoo.conv_stack import ConvStack
from ziggurat.bench.zoo.convnext import ConvNeXtStage
from ziggurat.bench.zoo.gpt2 import GPT2, GPT2Config
from ziggurat.bench.zoo.mlp import MLP
from ziggurat.bench.zoo.mobilenet_v2 import MobileNetV2
from ziggurat.bench.zoo.resnet import resnet18, resnet50
from ziggurat.bench.zoo.rnn import RnnEncoder

WEIGHT_SEED = 0
INPUT_SEED = 1234
CALIBRATION_SEED = 99


def _randn(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        with seeded(INPUT_SEED):
            return (torch.randn(*shape),)

    return make


def _token_ids(vocab: int, batch: int, seq: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        with seeded(INPUT_SEED):
            return (torch.randint(0, vocab, (batch, seq), dtype=torch.int64),)

    return make


def _plain(factory: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        with seeded(WEIGHT_SEED):
            return factory().eval()

    return build


def bn_calibrated(factory: Callable[[], nn.Module], calibration_shape: tuple[int, ...]) -> Callable[[], nn.Module]:
    """Seeded weights, random BN affine, BN running stats from one train-mode pass on random data."""

    def build() -> nn.Module:
        with seeded(WEIGHT_SEED):
            model = factory()
            randomize_norm_affine(model)
        with seeded(CALIBRATION_SEED):
            calibrate_batchnorm(model, torch.randn(*calibration_shape))
        return model.eval()

    return build


def transformer(factory: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        with seeded(WEIGHT_SEED):
            model = factory()
            init_transformer_weights(model)
        return model.eval()

    return build


def _transformer_encoder_layer() -> nn.Module:
    # In eval under no_grad this runs (and traces to) the fused aten::_transformer_encoder_layer_fwd.
    layer = nn.TransformerEncoderLayer(768, 12, batch_first=True)
    randomize_norm_affine(layer)
    return layer


_IMAGE = (1, 3, 224, 224)
_CALIB_IMAGES = (2, 3, 224, 224)

_ENTRIES: tuple[ModelSpec, ...] = (
    ModelSpec("mlp-b1", "MLP 784-1024-1024-10, batch 1", _plain(MLP), _randn(1, 784), 1e-5, frozenset({TAG_ZOO, TAG_SMOKE})),
    ModelSpec("mlp-b64", "MLP 784-1024-1024-10, batch 64", _plain(MLP), _randn(64, 784), 1e-5),
    ModelSpec("resnet18", "ResNet-18, 1x3x224x224", bn_calibrated(resnet18, _CALIB_IMAGES), _randn(*_IMAGE), 1e-4),
    ModelSpec("resnet50", "ResNet-50, 1x3x224x224", bn_calibrated(resnet50, _CALIB_IMAGES), _randn(*_IMAGE), 1e-4),
    ModelSpec("mobilenet_v2", "MobileNetV2 1.0, 1x3x224x224", bn_calibrated(MobileNetV2, _CALIB_IMAGES), _randn(*_IMAGE), 1e-4),
    ModelSpec("bert-base", "BERT-base encoder, 12x768, 12 heads, seq 128, batch 1 (int64 ids)", transformer(BertEncoder), _token_ids(BertConfig.vocab_size, 1, 128), 1e-4),
    ModelSpec("gpt2-small", "GPT-2-small decoder, 12x768, seq 64, causal, GELU-tanh, tied LM head", transformer(GPT2), _token_ids(GPT2Config.vocab_size, 1, 64), 1e-4),
    ModelSpec("transformer-layer", "nn.TransformerEncoderLayer(768, 12, batch_first) on 1x197x768 (fused fast path)", _plain(_transformer_encoder_layer), _randn(1, 197, 768), 1e-4),
    ModelSpec("convnext-blocks", "3 ConvNeXt blocks (dw7x7, LN channels-last, MLP, GELU, layer scale), 1x96x56x56", _plain(ConvNeXtStage), _randn(1, 96, 56, 56), 1e-4),
    ModelSpec("conv-silu-stack", "Conv-BN-SiLU residual stack, 3 stages to 256 ch, 1x3x224x224", bn_calibrated(ConvStack, _CALIB_IMAGES), _randn(*_IMAGE), 1e-4),
    ModelSpec("lstm-2l", "2-layer nn.LSTM, input 64, hidden 128, seq 32, batch 4 (output sequence)", _plain(lambda: RnnEncoder("lstm")), _randn(32, 4, 64), 1e-4),
    ModelSpec("gru-2l", "2-layer nn.GRU, input 64, hidden 128, seq 32, batch 4 (output sequence)", _plain(lambda: RnnEncoder("gru")), _randn(32, 4, 64), 1e-4),
    ModelSpec("rnn-2l", "2-layer nn.RNN (tanh), input 64, hidden 128, seq 32, batch 4 (output sequence)", _plain(lambda: RnnEncoder("rnn")), _randn(32, 4, 64), 1e-4),
    ModelSpec(
        "conv-silu-tiny",
        "Small Conv-BN-SiLU residual stack (smoke test), 1x3x32x32",
        bn_calibrated(lambda: ConvStack(stem=8, stages=(16, 32), blocks=1), (4, 3, 32, 32)),
        _randn(1, 3, 32, 32),
        1e-4,
        frozenset({TAG_SMOKE}),
    ),
)

MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in _ENTRIES}


def models_tagged(tag: str) -> list[str]:
    """Names of the models carrying `tag`, in registry order."""
    return [name for name, spec in MODELS.items() if tag in spec.tags]


def select_models(names: str | None, tag: str) -> list[ModelSpec]:
    """Resolve a `--models` filter (comma-separated names, or None for every model tagged `tag`)."""
    if names is None or names.strip() in ("", "all"):
        return [MODELS[name] for name in models_tagged(tag)]
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in MODELS]
    if unknown:
        raise KeyError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    return [MODELS[name] for name in chosen]
