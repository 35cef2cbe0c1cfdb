"""Recurrent encoders: a multi-layer nn.LSTM / nn.GRU / nn.RNN returning its output sequence."""

from __future__ import annotations

import torch
from torch import nn


class RnnEncoder(nn.Module):
    """``nn.LSTM``, ``nn.GRU`` or ``nn.RNN`` (tanh; sequence first), called without initial states."""

    def __init__(self, kind: str, input_size: int = 64, hidden: int = 128, layers: int = 2) -> None:
        super().__init__()
        cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
        self.rnn = cls(input_size, hidden, num_layers=layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]
