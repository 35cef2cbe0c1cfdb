"""GPT-2-small style decoder: pre-LN blocks, causal softmax attention, GELU(tanh), tied LM head."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class GPT2Config:
    vocab_size: int = 50257
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    max_positions: int = 1024
    layer_norm_eps: float = 1e-5


class CausalSelfAttention(nn.Module):
    future: torch.Tensor

    def __init__(self, cfg: GPT2Config) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.head_dim = cfg.hidden // cfg.heads
        self.hidden = cfg.hidden
        self.c_attn = nn.Linear(cfg.hidden, 3 * cfg.hidden)
        self.c_proj = nn.Linear(cfg.hidden, cfg.hidden)
        self.scale = 1.0 / math.sqrt(self.head_dim)
        # True above the diagonal: positions a query may not attend to.
        future = torch.ones(cfg.max_positions, cfg.max_positions, dtype=torch.bool).triu(1)
        self.register_buffer("future", future.view(1, 1, cfg.max_positions, cfg.max_positions), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(self.hidden, dim=2)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        scores = scores.masked_fill(self.future[:, :, :t, :t], float("-inf"))
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class GPT2MLP(nn.Module):
    def __init__(self, cfg: GPT2Config) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.hidden, 4 * cfg.hidden)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * cfg.hidden, cfg.hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, cfg: GPT2Config) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.mlp = GPT2MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """Token ids (int64, [batch, seq]) -> next-token logits ([batch, seq, vocab])."""

    position_ids: torch.Tensor

    def __init__(self, cfg: GPT2Config | None = None) -> None:
        super().__init__()
        cfg = cfg or GPT2Config()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.wpe = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.blocks = nn.ModuleList(GPT2Block(cfg) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2
        self.register_buffer("position_ids", torch.arange(cfg.max_positions).unsqueeze(0), persistent=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        t = input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(self.position_ids[:, :t])
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))
