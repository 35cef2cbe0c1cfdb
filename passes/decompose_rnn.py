"""``decompose-rnn{max_steps=256}``: full-sequence LSTM, GRU and RNN -> GEMMs and a cell per time step.

``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` trace and export to ``aten::lstm.input`` /
``aten::gru.input`` / ``aten::rnn_tanh.input`` (``rnn_relu`` with ``nonlinearity="relu"``): the
whole sequence, every layer and direction, in one op with a flat weight list
(``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` per layer and direction).  As eager's CPU
implementation (``RNN.cpp``: ``FullLayer`` with ``pre_compute_input``), each layer and
direction becomes

* one ``linear(x, w_ih, b_ih)`` over every time step at once (``[T, B, G*H]``, or
  ``[B, T, G*H]`` batch first: the input is never transposed);
* per time step (backwards for the reverse direction) ``linear(h, w_hh, b_hh)`` and the gate
  arithmetic on ``select(x_proj, time, t)``, in eager's gate order and formulas:

  - LSTM (gates i, f, g, o): ``gates = linear(h, w_hh, b_hh) + x_t``;
    ``c = sigmoid(f) * c + sigmoid(i) * tanh(g)``; ``h = sigmoid(o) * tanh(c)``, then
    ``h = linear(h, w_hr)`` with a projection (``proj_size > 0``);
  - GRU (gates r, z, n): ``r = sigmoid(hr + xr)``, ``z = sigmoid(hz + xz)``,
    ``n = tanh(xn + hn * r)``, ``h = (h - n) * z + n``;
  - RNN (one gate): ``h = tanh(linear(h, w_hh, b_hh) + x_t)``, or ``relu``;

* ``stack`` of the step outputs along the time dim (for two directions, of each step's
  ``cat`` of both along the features); the next layer reads that; the final states are the
  ``stack`` of each layer and direction's last ``h`` (and ``c``).

Initial states are always read (``select(hx, 0, layer * D + d)``): when they are zeros (the
module was called without them), ``constant-fold`` turns the first step's ``h @ w_hh^T`` into
a constant, exactly what eager computes.  ``fuse-post-ops`` then joins ``+ x_t`` to the step's
GEMM, and ``fuse-sibling-linears`` the two directions' input projections.

The op is left alone, with the reason in its ``ziggurat.declined`` attribute (backends report
it), when the sequence is longer than ``max_steps`` (the unrolled IR grows with it), when
dropout applies between layers (``train`` with ``dropout > 0``), or for other than float32
3-D inputs, empty sequences or batches, and weight lists of unexpected length or shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.torch import TorchOp
from ziggurat.dialects.torch.aten_ops import (
    AtenAddTensorOp,
    AtenCat_Op,
    AtenLinear_Op,
    AtenMulTensorOp,
    AtenRelu_Op,
    AtenSelectIntOp,
    AtenSigmoid_Op,
    AtenSplitTensorOp,
    AtenStack_Op,
    AtenSubTensorOp,
    AtenTanh_Op,
)
from ziggurat.ir.rewriting import DECLINED_ATTR, StaticShapesOnly
from ziggurat.ir.statistics import record
from ziggurat.ir.types import shape_of
from ziggurat.passes.decompose_torch_ops import Emitter

NAME = "decompose-rnn"

RnnKind = Literal["lstm", "gru", "rnn_tanh", "rnn_relu"]
#: gates per cell, in eager's order: LSTM i, f, g, o; GRU r, z, n; RNN one
GATES: dict[RnnKind, int] = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
#: The full-sequence ops by schema key.  They have no typed op (they are not in the dialect's
#: op list, ``tools/torch_ops.txt``, and import as ``torch.operator``), so this pass takes the
#: generic path: it matches any ``TorchOp`` by key and binds its arguments by schema name.
KEYS: dict[str, RnnKind] = {"aten::lstm.input": "lstm", "aten::gru.input": "gru",
                            "aten::rnn_tanh.input": "rnn_tanh", "aten::rnn_relu.input": "rnn_relu"}


@dataclass(frozen=True)
class CellWeights:
    """One layer and direction's weights."""

    w_ih: SSAValue
    w_hh: SSAValue
    b_ih: SSAValue | None
    b_hh: SSAValue | None
    w_hr: SSAValue | None


@dataclass(frozen=True)
class Rnn:
    """A full-sequence ``aten::lstm.input`` / ``gru.input`` / ``rnn_*.input``, its arguments checked."""

    kind: RnnKind
    input: SSAValue
    h0: SSAValue
    c0: SSAValue | None
    cells: list[CellWeights]  # layer-major: layer l direction d at l * directions + d
    num_layers: int
    directions: int
    batch_first: bool

    @property
    def time_dim(self) -> int:
        return 1 if self.batch_first else 0


def _op_key(op: TorchOp) -> str | None:
    try:
        return op.aten_key
    except KeyError:  # a torch.operator whose schema torch does not know
        return None


def _is_f32(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.get_element_type(), Float32Type)


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(shape_of(value.type))


def bind(op: TorchOp, kind: RnnKind, max_steps: int) -> Rnn | str:
    """The op's arguments, or why it is not decomposed."""
    a = op.arguments()
    x: SSAValue = a["input"]
    hx: list[SSAValue | None] = list(a["hx"]) if kind == "lstm" else [a["hx"]]
    params: list[SSAValue | None] = list(a["params"])
    layers, has_biases = int(a["num_layers"]), bool(a["has_biases"])
    directions = 2 if a["bidirectional"] else 1
    if a["train"] and float(a["dropout"]) > 0 and layers > 1:
        return f"dropout {float(a['dropout'])} between layers in training mode"
    if any(v is None for v in [x, *hx, *params]) or len(hx) != (2 if kind == "lstm" else 1):
        return "an initial state or weight that is not a tensor"
    values = [v for v in [x, *hx, *params] if v is not None]
    if not all(_is_f32(v) for v in values):
        return "not float32 (only float32 is decomposed)"
    if len(_shape(x)) != 3:
        return f"a {len(_shape(x))}-D input (3-D expected)"
    steps, batch = (_shape(x)[1], _shape(x)[0]) if a["batch_first"] else _shape(x)[:2]
    if steps == 0 or batch == 0:
        return "an empty sequence or batch"
    if steps > max_steps:
        return f"{steps} time steps, more than max_steps={max_steps} (the steps are unrolled)"
    per_cell = 2 + 2 * has_biases
    count = layers * directions
    with_projection = kind == "lstm" and len(params) == count * (per_cell + 1)
    if len(params) != count * (per_cell + with_projection):
        return f"{len(params)} weights for {layers} layer(s) of {directions} direction(s)"
    weights = [v for v in params if v is not None]
    cells: list[CellWeights] = []
    for k in range(count):
        group = weights[k * (per_cell + with_projection):(k + 1) * (per_cell + with_projection)]
        cells.append(CellWeights(group[0], group[1], group[2] if has_biases else None,
                                 group[3] if has_biases else None, group[-1] if with_projection else None))
    h0 = hx[0]
    assert h0 is not None
    rnn = Rnn(kind, x, h0, hx[1] if kind == "lstm" else None, cells, layers, directions, bool(a["batch_first"]))
    problem = _shape_problem(rnn, batch)
    return problem if problem is not None else rnn


def _shape_problem(rnn: Rnn, batch: int) -> str | None:
    gates = GATES[rnn.kind]
    hidden = _shape(rnn.cells[0].w_hh)[0] // gates if len(_shape(rnn.cells[0].w_hh)) == 2 else -1
    out = hidden
    for k, cell in enumerate(rnn.cells):
        if cell.w_hr is not None:
            out = _shape(cell.w_hr)[0]
            if _shape(cell.w_hr) != (out, hidden):
                return f"w_hr of shape {_shape(cell.w_hr)}"
        features = _shape(rnn.input)[-1] if k < rnn.directions else out * rnn.directions
        expected: list[tuple[SSAValue, tuple[int, ...]]] = [(cell.w_ih, (gates * hidden, features)),
                                                            (cell.w_hh, (gates * hidden, out))]
        if cell.b_ih is not None and cell.b_hh is not None:
            expected += [(cell.b_ih, (gates * hidden,)), (cell.b_hh, (gates * hidden,))]
        for value, shape in expected:
            if _shape(value) != shape:
                return f"a weight of shape {_shape(value)} where {shape} is expected"
    states = len(rnn.cells)
    if _shape(rnn.h0) != (states, batch, out):
        return f"h0 of shape {_shape(rnn.h0)}"
    if rnn.c0 is not None and _shape(rnn.c0) != (states, batch, hidden):
        return f"c0 of shape {_shape(rnn.c0)}"
    return None


def lstm_step(e: Emitter, x_t: SSAValue, h: SSAValue, c: SSAValue, w: CellWeights) -> tuple[SSAValue, SSAValue]:
    hidden = _shape(c)[-1]
    gates = e(AtenAddTensorOp, self=e(AtenLinear_Op, input=h, weight=w.w_hh, bias=w.b_hh), other=x_t, alpha=1)
    i, f, g, o = e.results(AtenSplitTensorOp, self=gates, split_size=hidden, dim=1)
    i, f, o = (e(AtenSigmoid_Op, self=v) for v in (i, f, o))
    g = e(AtenTanh_Op, self=g)
    c = e(AtenAddTensorOp, self=e(AtenMulTensorOp, self=f, other=c),
          other=e(AtenMulTensorOp, self=i, other=g), alpha=1)
    h = e(AtenMulTensorOp, self=o, other=e(AtenTanh_Op, self=c))
    if w.w_hr is not None:
        h = e(AtenLinear_Op, input=h, weight=w.w_hr)
    return h, c


def gru_step(e: Emitter, x_t: SSAValue, h: SSAValue, w: CellWeights) -> SSAValue:
    hidden = _shape(h)[-1]
    xr, xz, xn = e.results(AtenSplitTensorOp, self=x_t, split_size=hidden, dim=1)
    hr, hz, hn = e.results(AtenSplitTensorOp, self=e(AtenLinear_Op, input=h, weight=w.w_hh, bias=w.b_hh),
                           split_size=hidden, dim=1)
    r = e(AtenSigmoid_Op, self=e(AtenAddTensorOp, self=hr, other=xr, alpha=1))
    z = e(AtenSigmoid_Op, self=e(AtenAddTensorOp, self=hz, other=xz, alpha=1))
    n = e(AtenTanh_Op, self=e(AtenAddTensorOp, self=xn, other=e(AtenMulTensorOp, self=hn, other=r), alpha=1))
    return e(AtenAddTensorOp, self=e(AtenMulTensorOp, self=e(AtenSubTensorOp, self=h, other=n, alpha=1),
                                         other=z), other=n, alpha=1)


def simple_step(e: Emitter, x_t: SSAValue, h: SSAValue, w: CellWeights, kind: RnnKind) -> SSAValue:
    """eager's ``SimpleCell``: the nonlinearity of ``linear(h, w_hh, b_hh) + x_t``."""
    pre = e(AtenAddTensorOp, self=e(AtenLinear_Op, input=h, weight=w.w_hh, bias=w.b_hh), other=x_t, alpha=1)
    return e(AtenTanh_Op if kind == "rnn_tanh" else AtenRelu_Op, self=pre)


def direction(e: Emitter, rnn: Rnn, x: SSAValue, k: int, reverse: bool) -> tuple[list[SSAValue], SSAValue, SSAValue | None]:
    """One layer and direction over the sequence ``x``: its outputs in time order, last h and c."""
    w = rnn.cells[k]
    projected = e(AtenLinear_Op, input=x, weight=w.w_ih, bias=w.b_ih)
    h = e(AtenSelectIntOp, self=rnn.h0, dim=0, index=k)
    c = e(AtenSelectIntOp, self=rnn.c0, dim=0, index=k) if rnn.c0 is not None else None
    steps = _shape(x)[rnn.time_dim]
    outputs: list[SSAValue] = [h] * steps
    for t in reversed(range(steps)) if reverse else range(steps):
        x_t = e(AtenSelectIntOp, self=projected, dim=rnn.time_dim, index=t)
        if c is not None:
            h, c = lstm_step(e, x_t, h, c, w)
        elif rnn.kind == "gru":
            h = gru_step(e, x_t, h, w)
        else:
            h = simple_step(e, x_t, h, w, rnn.kind)
        outputs[t] = h
    return outputs, h, c


def decompose(e: Emitter, rnn: Rnn) -> list[SSAValue]:
    """The op's results: output, h_n (and c_n for an LSTM).

    A layer's output is the stack of its steps' outputs, the two directions' concatenated per
    step (``stack`` of ``cat``s: the kernel that realizes it copies one step at a time)."""
    x = rnn.input
    last_h: list[SSAValue] = []
    last_c: list[SSAValue] = []
    for layer in range(rnn.num_layers):
        outs: list[list[SSAValue]] = []
        for d in range(rnn.directions):
            steps, h, c = direction(e, rnn, x, layer * rnn.directions + d, reverse=d == 1)
            outs.append(steps)
            last_h.append(h)
            if c is not None:
                last_c.append(c)
        per_step = outs[0] if len(outs) == 1 else [e(AtenCat_Op, tensors=[f, b], dim=1)
                                                   for f, b in zip(outs[0], outs[1], strict=True)]
        x = e(AtenStack_Op, tensors=per_step, dim=rnn.time_dim)
    results = [x, e(AtenStack_Op, tensors=last_h, dim=0)]
    if rnn.kind == "lstm":
        results.append(e(AtenStack_Op, tensors=last_c, dim=0))
    return results


def _decline(op: TorchOp, reason: str, rewriter: PatternRewriter) -> None:
    text = StringAttr(f"{NAME}: {reason}")
    if op.attributes.get(DECLINED_ATTR) != text:
        op.attributes[DECLINED_ATTR] = text
        rewriter.notify_op_modified(op)
        record(NAME, "left alone")


@dataclass
class DecomposeRecurrent(RewritePattern):
    """The full-sequence op of ``kind`` -> input projections, unrolled cells, stacks (a
    ``torch.operator``: matched by schema key, see :data:`KEYS`)."""

    kind: ClassVar[RnnKind]
    max_steps: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TorchOp, rewriter: PatternRewriter) -> None:
        key = _op_key(op)
        if key is None or KEYS.get(key) != self.kind:
            return
        rnn = bind(op, self.kind, self.max_steps)
        if isinstance(rnn, str):
            _decline(op, rnn, rewriter)
            return
        e = Emitter(op)
        results = decompose(e, rnn)
        rewriter.replace(op, e.ops, results)
        record(NAME, self.kind)
        record(NAME, "cell steps", len(rnn.cells) * _shape(rnn.input)[rnn.time_dim])


class DecomposeLstm(DecomposeRecurrent):
    """``aten::lstm.input``."""

    kind = "lstm"


class DecomposeGru(DecomposeRecurrent):
    """``aten::gru.input``."""

    kind = "gru"


class DecomposeRnnTanh(DecomposeRecurrent):
    """``aten::rnn_tanh.input``."""

    kind = "rnn_tanh"


class DecomposeRnnRelu(DecomposeRecurrent):
    """``aten::rnn_relu.input``."""

    kind = "rnn_relu"


@dataclass(frozen=True)
class DecomposeRnnPass(ModulePass):
    name = NAME

    max_steps: int = 256

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([
                DecomposeLstm(self.max_steps), DecomposeGru(self.max_steps),
                DecomposeRnnTanh(self.max_steps), DecomposeRnnRelu(self.max_steps)])),
        ).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
