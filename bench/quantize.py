"""``--precision int8``: the model quantized once with PT2E and torchao's ``X86InductorQuantizer``
(static, per-channel int8 weights, uint8 activations, calibrated on the example inputs); every
column then runs that same quantized ``GraphModule`` (eager, Inductor's compile of it, Ziggurat's)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

#: The integer format the bench quantizes to (the flag's value).
INT8 = "int8"


def quantize_x86(model: nn.Module, inputs: tuple[torch.Tensor, ...], dynamic_shapes: Any = None) -> Any:
    """``prepare_pt2e`` -> one calibration call -> ``convert_pt2e``.  The model is exported with
    ``strict=True``: torchao's quantizer finds conv/bn/add/relu partitions by their
    ``source_fn_stack``, which only Dynamo's export records in torch 2.13 (a non-strict export
    fails in ``_annotate_conv2d_binary_unary`` on ResNets).  ``dynamic_shapes`` (torch.export's)
    keeps those dims symbolic in the quantized graph, so it runs at other sizes."""
    try:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as xiq
    except ImportError as e:
        raise RuntimeError(f"--precision int8 needs torchao (the test extra): {e}") from None
    with torch.no_grad():
        try:
            exported = torch.export.export(model.eval(), inputs, dynamic_shapes=dynamic_shapes, strict=True).module()
        except Exception:  # noqa: BLE001 - a model Dynamo cannot export strictly: the default export
            exported = torch.export.export(model.eval(), inputs, dynamic_shapes=dynamic_shapes).module()
        quantizer = xiq.X86InductorQuantizer()
        quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
        prepared = prepare_pt2e(exported, quantizer)
        prepared(*inputs)
        return convert_pt2e(prepared)
