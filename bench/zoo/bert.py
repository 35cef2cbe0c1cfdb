"""BERT-base style encoder: embeddings + 12 post-LN layers of plain Linear/LayerNorm/GELU/softmax attention."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    max_positions: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12


class BertEmbeddings(nn.Module):
    position_ids: torch.Tensor
    token_type_ids: torch.Tensor

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.word = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.position = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.hidden)
        self.norm = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.register_buffer("position_ids", torch.arange(cfg.max_positions).unsqueeze(0), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(1, cfg.max_positions, dtype=torch.long), persistent=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq = input_ids.shape[1]
        x = self.word(input_ids) + self.position(self.position_ids[:, :seq]) + self.token_type(self.token_type_ids[:, :seq])
        return self.norm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.head_dim = cfg.hidden // cfg.heads
        self.query = nn.Linear(cfg.hidden, cfg.hidden)
        self.key = nn.Linear(cfg.hidden, cfg.hidden)
        self.value = nn.Linear(cfg.hidden, cfg.hidden)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q = self._split_heads(self.query(x))
        k = self._split_heads(self.key(x))
        v = self._split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)
        return ctx.transpose(1, 2).reshape(b, t, c)


class BertLayer(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.attention = BertSelfAttention(cfg)
        self.attention_out = nn.Linear(cfg.hidden, cfg.hidden)
        self.attention_norm = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.intermediate = nn.Linear(cfg.hidden, cfg.intermediate)
        self.act = nn.GELU()
        self.output = nn.Linear(cfg.intermediate, cfg.hidden)
        self.output_norm = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention_norm(x + self.attention_out(self.attention(x)))
        return self.output_norm(x + self.output(self.act(self.intermediate(x))))


class BertEncoder(nn.Module):
    """Token ids (int64, [batch, seq]) -> last hidden state ([batch, seq, hidden])."""

    def __init__(self, cfg: BertConfig | None = None) -> None:
        super().__init__()
        cfg = cfg or BertConfig()
        self.embeddings = BertEmbeddings(cfg)
        self.layers = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.layers))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(input_ids)
        for layer in self.layers:
            x = layer(x)
        return x
