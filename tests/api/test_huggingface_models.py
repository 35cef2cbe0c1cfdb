"""Hugging Face models out of the box: built from tiny configs (no downloads), with the default
``return_dict=True`` and ``use_cache``, their attention masks passed by keyword, compiled on
``cpu`` and ``tensorrt-reference``; every output (a ``ModelOutput``, GPT-2's ``DynamicCache``
included) matches eager key by key, as the same types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import ziggurat
from tests.support.pytrees import assert_same_tree

transformers = pytest.importorskip("transformers")

TOKENS = dict(vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _ids() -> tuple[tuple[torch.Tensor, ...], dict[str, torch.Tensor]]:
    ids = torch.randint(3, 64, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    return (ids,), {"attention_mask": mask}


def bert() -> Any:
    return transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=64, max_position_embeddings=16, **TOKENS), _ids()


def gpt2() -> Any:
    return transformers.GPT2Config(n_embd=32, n_layer=1, n_head=2, n_positions=16, **TOKENS), _ids()


def distilbert() -> Any:
    return transformers.DistilBertConfig(dim=32, n_layers=1, n_heads=2, hidden_dim=64,
                                         max_position_embeddings=16, **TOKENS), _ids()


def t5_encoder() -> Any:
    config = transformers.T5Config(d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2,
                                   decoder_start_token_id=0, **TOKENS)
    return config, _ids()


def vit() -> Any:
    return transformers.ViTConfig(image_size=16, patch_size=8, hidden_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=64), ((torch.randn(2, 3, 16, 16),), {})


def whisper_encoder() -> Any:
    config = transformers.WhisperConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                        num_mel_bins=8, max_source_positions=8, max_target_positions=8,
                                        decoder_start_token_id=1, **TOKENS)
    return config, ((torch.randn(2, 8, 16),), {})


def clip_text() -> Any:
    return transformers.CLIPTextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, max_position_embeddings=16, **TOKENS), _ids()


#: model -> (config and example inputs, does the model of the config need its encoder taken)
MODELS: dict[str, tuple[Callable[[], Any], bool]] = {
    "bert": (bert, False), "gpt2": (gpt2, False), "distilbert": (distilbert, False),
    "t5-encoder": (t5_encoder, True), "vit": (vit, False), "whisper-encoder": (whisper_encoder, True),
    "clip-text": (clip_text, False),
}


def _model(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], dict[str, torch.Tensor]]:
    make, encoder = MODELS[name]
    torch.manual_seed(0)
    config, (args, kwargs) = make()
    model = transformers.AutoModel.from_config(config)
    if encoder:
        model = model.get_encoder()
    return model.eval(), args, kwargs


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
@pytest.mark.parametrize("name", list(MODELS))
def test_huggingface_model_matches_eager(name: str, backend: str) -> None:
    model, args, kwargs = _model(name)
    options: dict[str, Any] = {"threads": 1} if backend == "cpu" else {}
    compiled = ziggurat.compile(model, args, backend=backend, example_kwargs=kwargs, **options)
    with torch.no_grad():
        want = model(*args, **kwargs)
    assert isinstance(want, transformers.utils.ModelOutput)
    assert_same_tree(compiled(*args, **kwargs), want, name, 1e-5)
    other = tuple(torch.randint(3, 64, a.shape) if a.dtype == torch.long else torch.randn(a.shape) for a in args)
    with torch.no_grad():
        assert_same_tree(compiled(*other, **kwargs), model(*other, **kwargs), name, 1e-5)
