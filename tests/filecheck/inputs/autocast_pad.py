"""Print the torch level of a bf16 autocast compile of a reflection pad: autocast runs
``reflection_pad2d`` in float32 inside ``F.pad``, so the imported pad reads a float32 cast of
the bf16 convolution and the sum after it is float32, as in eager."""

from __future__ import annotations

import torch

import ziggurat


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 4, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.conv(x)
        return torch.nn.functional.pad(y, (2, 1, 1, 2), mode="reflect").sum(dim=(2, 3)), y * 2


torch.manual_seed(0)
compiled = ziggurat.compile(Model().eval(), (torch.randn(1, 8, 9, 9),), "reference", precision="bf16")
print(compiled.ir["torch"])
