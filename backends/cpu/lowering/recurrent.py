"""RNN cells (LSTM, GRU, tanh/relu RNN): two GEMMs for the gate pre-activations, then one
element-wise kernel for the gate arithmetic."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.linalg import Epilogue, all_float32, linear
from ziggurat.backends.cpu.lowering.ops import add, mul, sub, unary
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import reshape

F32 = torch.float32


def _gates(ctx: LoweringContext, x: TensorValue, h: TensorValue, w_ih: TensorValue, w_hh: TensorValue,
           b_ih: TensorValue | None, b_hh: TensorValue | None) -> tuple[TensorValue, TensorValue]:
    """``x W_ih^T + b_ih`` and ``h W_hh^T + b_hh`` as ``[B, G]`` buffers."""
    batched = x.rank == 2
    xb = x if batched else reshape(ctx, x, (1, x.shape[0]))
    hb = h if batched else reshape(ctx, h, (1, h.shape[0]))
    g = w_ih.shape[0]
    gi = linear(ctx, xb, w_ih, g, (xb.shape[0], g), Epilogue(bias=b_ih))
    gh = linear(ctx, hb, w_hh, g, (hb.shape[0], g), Epilogue(bias=b_hh))
    return gi, gh


def _sigmoid(v: Value) -> Value:
    return unary("sigmoid", v)


def _unbatch(ctx: LoweringContext, t: TensorValue, shape: Sequence[int]) -> TensorValue:
    return reshape(ctx, t, tuple(shape)) if t.shape != tuple(shape) else t


@lowering("aten::lstm_cell", validator=all_float32)
def lstm_cell(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    x = args.tensor("input")
    hx = args.tensors("hx")
    if len(hx) != 2:
        raise NotLowerable("lstm_cell needs (h, c)")
    h, c = hx
    gi, gh = _gates(ctx, x, h, args.tensor("w_ih"), args.tensor("w_hh"), args.optional_tensor("b_ih"),
                    args.optional_tensor("b_hh"))
    hid = h.shape[-1]
    b = gi.shape[0]
    cb = c if c.rank == 2 else reshape(ctx, c, (1, hid))

    def gate(idx: Index, k: int) -> Value:
        j = [IndexExpr.of(idx[0]), IndexExpr.of(idx[1]) + k * hid]
        return add(gi.load(j), gh.load(j), F32)

    def cell(idx: Index) -> Value:
        i, f, g = _sigmoid(gate(idx, 0)), _sigmoid(gate(idx, 1)), unary("tanh", gate(idx, 2))
        return add(mul(f, cb.load(idx), F32), mul(i, g, F32), F32)

    c_new = ctx.lazy((b, hid), F32, cell, [gi, gh])
    h_new = ctx.lazy((b, hid), F32, lambda idx: mul(_sigmoid(gate(idx, 3)), unary("tanh", c_new.load(idx)), F32),
                     [gi, gh])
    return [_unbatch(ctx, h_new, args.result_shape(0)), _unbatch(ctx, c_new, args.result_shape(1))]


@lowering("aten::gru_cell", validator=all_float32)
def gru_cell(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, h = args.tensor("input"), args.tensor("hx")
    gi, gh = _gates(ctx, x, h, args.tensor("w_ih"), args.tensor("w_hh"), args.optional_tensor("b_ih"),
                    args.optional_tensor("b_hh"))
    hid = h.shape[-1]
    hb = h if h.rank == 2 else reshape(ctx, h, (1, hid))

    def part(t: TensorValue, idx: Index, k: int) -> Value:
        return t.load([IndexExpr.of(idx[0]), IndexExpr.of(idx[1]) + k * hid])

    def element(idx: Index) -> Value:
        r = _sigmoid(add(part(gi, idx, 0), part(gh, idx, 0), F32))
        z = _sigmoid(add(part(gi, idx, 1), part(gh, idx, 1), F32))
        n = unary("tanh", add(part(gi, idx, 2), mul(r, part(gh, idx, 2), F32), F32))
        return add(mul(sub(1.0, z, F32), n, F32), mul(z, hb.load(idx), F32), F32)

    out = ctx.lazy((gi.shape[0], hid), F32, element, [gi, gh])
    return _unbatch(ctx, out, args.out_shape)


@lowering("aten::rnn_tanh_cell", "aten::rnn_relu_cell", validator=all_float32)
def rnn_cell(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, h = args.tensor("input"), args.tensor("hx")
    gi, gh = _gates(ctx, x, h, args.tensor("w_ih"), args.tensor("w_hh"), args.optional_tensor("b_ih"),
                    args.optional_tensor("b_hh"))
    kind = "tanh" if args.name == "rnn_tanh_cell" else "relu"
    out = ctx.lazy(gi.shape, F32, lambda idx: unary(kind, add(gi.load(idx), gh.load(idx), F32)), [gi, gh])
    return _unbatch(ctx, out, args.out_shape)
