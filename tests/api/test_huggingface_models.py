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


def deberta() -> Any:
    return transformers.DebertaV2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                                        max_position_embeddings=16, **TOKENS), _ids()


def llama() -> Any:
    return transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                                    num_key_value_heads=2, max_position_embeddings=16, **TOKENS), _ids()


def segformer() -> Any:
    config = transformers.SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16],
                                          num_attention_heads=[1, 2], decoder_hidden_size=16, patch_sizes=[7, 3],
                                          strides=[4, 2], mlp_ratios=[2, 2])
    return config, ((torch.randn(2, 3, 32, 32),), {})


def bloom() -> Any:
    return transformers.BloomConfig(hidden_size=32, n_layer=1, n_head=2, **TOKENS), _ids()


def bart_encoder() -> Any:
    return transformers.BartConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                   decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                   max_position_embeddings=16, **TOKENS), _ids()


def wav2vec2() -> Any:
    config = transformers.Wav2Vec2Config(conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), hidden_size=32,
                                         num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return config, ((torch.randn(2, 400),), {})


#: bf16 models: (config and inputs, the model class or None for AutoModel, encoder only); each
#: ran an op through torch before (GPT-2's ``x ** 3``, T5's ``where(mask, x, finfo.min)``,
#: DeBERTa's ``mask.to(bf16)``, SegFormer's bilinear resize, Bloom's ``softmax(x, dtype=float32)``,
#: Bart's ``to(bf16)`` of a bf16 tensor, wav2vec2's weight norm)
BF16_MODELS: dict[str, tuple[Callable[[], Any], Any, bool]] = {
    "gpt2": (gpt2, None, False), "t5-encoder": (t5_encoder, None, True), "deberta": (deberta, None, False),
    "segformer": (segformer, "SegformerForSemanticSegmentation", False), "llama": (llama, None, False),
    "bloom": (bloom, None, False), "bart-encoder": (bart_encoder, None, True), "wav2vec2": (wav2vec2, None, False),
}
BF16_CASES = [(name, mode) for name in BF16_MODELS for mode in ("native", "autocast")
              if mode == "native" or name in ("gpt2", "llama", "segformer")]


@pytest.mark.parametrize("name,mode", BF16_CASES)
def test_huggingface_model_in_bf16_runs_natively(name: str, mode: str) -> None:
    """``model.to(torch.bfloat16)``, or ``precision="bf16"`` against eager under autocast: every op
    native, and the first floating output as far from the float32 model's as eager's is (at most
    1.25x its max relative error)."""
    make, cls, encoder = BF16_MODELS[name]
    torch.manual_seed(0)
    config, (args, kwargs) = make()
    model = (getattr(transformers, cls)(config) if cls else transformers.AutoModel.from_config(config))
    model = (model.get_encoder() if encoder else model).eval()
    with torch.no_grad():
        reference = model(*args, **kwargs)
    if mode == "native":
        model = model.to(torch.bfloat16)
        args = tuple(a.to(torch.bfloat16) if a.is_floating_point() else a for a in args)
        compiled = ziggurat.compile(model, args, example_kwargs=kwargs, threads=1)
        with torch.no_grad():
            eager = model(*args, **kwargs)
    else:
        compiled = ziggurat.compile(model, args, example_kwargs=kwargs, threads=1, precision="bf16")
        with torch.no_grad(), torch.autocast("cpu", torch.bfloat16):
            eager = model(*args, **kwargs)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got = compiled(*args, **kwargs)
    key = next(k for k, v in reference.items() if torch.is_tensor(v) and v.is_floating_point())
    want = reference[key].float()

    def error(t: torch.Tensor) -> float:
        return float((t.float() - want).abs().max() / want.abs().max())

    assert got[key].dtype == (torch.bfloat16 if mode == "native" else torch.float32)  # autocast: the model's dtype
    assert error(got[key]) <= 1.25 * error(eager[key]), (error(got[key]), error(eager[key]))
