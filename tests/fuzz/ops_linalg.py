"""Matrix products and the fused patterns: conv/linear/matmul followed by an activation
and/or an add/sub of a broadcastable tensor, matmul scaled by a constant, conv/linear
followed by an eval batch norm, sibling linears reading one input."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit, Value
from tests.fuzz.ops_nn import _spatial_input, conv_call
from tests.fuzz.registry import spec

#: post-ops the fuse-post-ops pass folds into a GEMM/conv epilogue
ACTIVATIONS = ("torch.relu({y})", "F.relu6({y})", "F.gelu({y})", "F.gelu({y}, approximate='tanh')",
               "F.silu({y})", "torch.sigmoid({y})", "torch.tanh({y})", "F.hardtanh({y}, -0.5, 1.5)",
               "F.hardswish({y})", "F.hardsigmoid({y})", "F.leaky_relu({y}, 0.2)", "torch.clamp({y}, -1.0, 2.0)")


def _matrix(b: Builder, rows: int, cols: int, const: float = 0.6) -> Value:
    return b.new_tensor([rows, cols], torch.float32, const=const)


def linear_call(b: Builder, x: Value) -> str:
    k = x.shape[-1]
    n = b.size(1, 37)
    w = b.new_const([n, k], torch.float32) if b.chance(0.85) else b.new_input([n, k], torch.float32)
    bias = b.new_const([n], torch.float32) if b.chance(0.7) else None
    return f"F.linear({x}, {w}" + (f", {bias})" if bias is not None else ")")


def matmul_call(b: Builder, x: Value) -> str:
    """``x @ y`` for a ``y`` whose shape makes it valid (1-d, 2-d or batched, broadcasting)."""
    k = x.shape[-1]
    n = b.size(1, 37)
    if x.rank == 1:
        shape = [k, n] if b.chance(0.7) else [k]
    elif b.chance(0.6):
        shape = [k, n]
    else:
        batch = x.shape[:-2]
        shape = [1 if b.chance(0.3) else s for s in batch][b.rng.randrange(len(batch) + 1):] + [k, n]
    y = b.new_tensor(shape, torch.float32, const=0.5)
    return b.choice([f"torch.matmul({x}, {y})", f"{x} @ {y}"])


def _result_shape(b: Builder, call: str) -> list[int]:
    return list(b.probe(call).shape)


def _post(b: Builder, call: str) -> str:
    """``call`` followed by an add/sub of a broadcastable tensor and/or an activation."""
    expr = call
    if b.chance(0.5):
        shape = _result_shape(b, call)
        other = b.new_tensor(b.broadcast_shape(shape) if b.chance(0.5) else shape, torch.float32)
        expr = f"{expr} {b.choice(['+', '-'])} {other}"
    if b.chance(0.75):
        expr = b.choice(ACTIVATIONS).format(y=expr)
    return expr


@spec("linear", weight=2.0, family="linalg")
def _linear(b: Builder) -> Emit:
    return linear_call(b, b.pick_float(1, 4, pred=lambda v: v.shape[-1] <= 64))


@spec("matmul", weight=2.0, family="linalg")
def _matmul(b: Builder) -> Emit:
    return matmul_call(b, b.pick_float(1, 4, pred=lambda v: v.shape[-1] <= 64))


@spec("fused_gemm", weight=4.0, family="fused")
def _fused_gemm(b: Builder) -> Emit:
    x = b.pick_float(1, 4, pred=lambda v: v.shape[-1] <= 64)
    call = linear_call(b, x) if b.chance(0.5) else matmul_call(b, x)
    if ("matmul" in call or "@" in call) and b.chance(0.3):
        return f"({call}) * {b.choice([0.5, 0.125, 2.0])}"
    return _post(b, call)


@spec("fused_conv", weight=4.0, family="fused")
def _fused_conv(b: Builder) -> Emit:
    nd = b.rng.choices([1, 2, 3], weights=[0.25, 0.6, 0.15])[0]
    x = _spatial_input(b, nd)
    return _post(b, conv_call(b, x, nd))


@spec("conv_bn", weight=2.0, family="fused")
def _conv_bn(b: Builder) -> Emit:
    nd = b.rng.choices([1, 2, 3], weights=[0.25, 0.6, 0.15])[0]
    x = _spatial_input(b, nd)
    call = conv_call(b, x, nd)
    c = _result_shape(b, call)[1]
    mean, var = b.new_const([c], torch.float32, "normal"), b.new_const([c], torch.float32, "positive")
    w, bias = b.new_const([c], torch.float32), b.new_const([c], torch.float32)
    expr = f"F.batch_norm({call}, {mean}, {var}, {w}, {bias}, False, 0.1, 1e-5)"
    return b.choice(ACTIVATIONS).format(y=expr) if b.chance(0.6) else expr


@spec("wide_linear_chain", weight=0.0, family="fused")
def _wide_linear_chain(b: Builder) -> Emit:
    """Two linears back to back at widths the AMX bf16 kernel stores one 64-byte line wider
    (rows of 128, 192 or 256 bf16: an even number of lines, 4 or more; 64 and 37 keep theirs): the first one's input
    computed by a kernel (a layer norm or an activation: realized in wide rows,
    ``gemm_operands.matrix_view(padded_row=)``), its result read by the second, and then only by
    it (stored wide and read there: ``gemm_bf16._tile_row_width``) unless the first is emitted
    alone and a later op reads it too.  The fuzzer's other GEMMs are at most 64 deep.  Of weight
    0 but in the ``gemm`` profile."""
    k = b.choice([128, 256, 192])
    x = b.pick_float(2, 3, pred=lambda v: v.shape[-1] == k and v.numel <= 2048, shape=lambda: [b.size(1, 7), k])
    pre = f"F.layer_norm({x}, [{k}])" if b.chance(0.5) else b.choice(ACTIVATIONS).format(y=x)
    n = b.choice([128, 256, 192, 64])
    w1, w2 = b.new_const([n, k], torch.float32), b.new_const([b.choice([128, 64, 37]), n], torch.float32)
    bias = b.new_const([n], torch.float32) if b.chance(0.7) else None
    first = f"F.linear({pre}, {w1}" + (f", {bias})" if bias is not None else ")")
    if b.chance(0.6):
        first = b.choice(ACTIVATIONS).format(y=first)
    if b.chance(0.3):  # the middle joins the pool: other ops may read it
        first = str(b.emit("wide_linear_chain", first)[0])
    return f"F.linear({first}, {w2})"


@spec("deep_linear", weight=0.0, family="fused")
def _deep_linear(b: Builder) -> Emit:
    """A linear 513 to 1000 deep over 40 to 130 rows: deep enough, and with rows enough (2
    blocks of 32 or more), that the AMX bf16 kernel splits K in passes whose partial sums wait
    between them (``gemm_bf16.k_passes``: uneven passes, a K tail in the last one, an M tail
    block).  The deep input is computed by a first, shallow linear from a narrow one.  Of
    weight 0 but in the ``gemm`` profile."""
    m, k = b.choice([40, 64, 97, 128, 130]), b.choice([513, 520, 1000])
    x = b.pick_float(2, 2, pred=lambda v: v.shape[0] == m and v.shape[1] <= 24,
                     shape=lambda: [m, b.size(1, 24)])
    w0 = b.new_const([k, x.shape[1]], torch.float32)
    deep = f"F.linear({x}, {w0})"
    if b.chance(0.5):
        deep = b.choice(ACTIVATIONS).format(y=deep)
    w1 = b.new_const([b.choice([16, 33, 64]), k], torch.float32)
    bias = b.new_const([w1.shape[0]], torch.float32) if b.chance(0.5) else None
    out = f"F.linear({deep}, {w1}" + (f", {bias})" if bias is not None else ")")
    return b.choice(ACTIVATIONS).format(y=out) if b.chance(0.4) else out


@spec("subnormal_gemm", weight=0.0, family="linalg")
def _subnormal_gemm(b: Builder) -> Emit:
    """A GEMM or convolution whose one operand holds bf16 subnormals and the other infinities
    (positive values both, so that sums of infinities stay infinite): the bf16 dot-product
    instructions read a subnormal as zero (``0 * inf = NaN`` where eager gives inf, fuzz seed
    134), so the kernels take exact products for such operands (``kernels/bf16_specials.py``).
    Run-time operands on both sides, or a constant weight classified at compile time.  Of
    weight 0 but in the ``gemm`` and ``nonfinite`` profiles."""
    tiny, inf = ("subnormal", "infinite") if b.chance(0.5) else ("infinite", "subnormal")
    # eager's bf16 products of one or two columns or rows multiply subnormals; its oneDNN ones
    # read them as zero, as the bf16 instructions do, and the oracle masks what those give
    m, k, n = b.choice([1, 2, b.size(1, 16)]), b.size(1, 40), b.choice([1, 2, b.size(1, 16)])
    form = b.rng.choices(range(4), weights=(3, 3, 2, 2))[0]
    if form == 0:
        return f"torch.matmul({b.new_input([m, k], torch.float32, tiny)}, {b.new_tensor([k, n], torch.float32, inf)})"
    if form == 1:
        batch = b.size(1, 3)
        return f"torch.bmm({b.new_input([batch, m, k], torch.float32, tiny)}, {b.new_input([batch, k, n], torch.float32, inf)})"
    if form == 2:
        return f"F.linear({b.new_input([m, k], torch.float32, tiny)}, {b.new_const([n, k], torch.float32, inf)})"
    cin, cout, h, w = b.size(1, 9), b.size(1, 9), b.size(3, 12), b.size(3, 12)
    x, weight = b.new_input([1, cin, h, w], torch.float32, tiny), b.new_const([cout, cin, 3, 3], torch.float32, inf)
    return f"F.conv2d({x}, {weight}, padding=1)"


@spec("linear_bn", weight=1.0, family="fused")
def _linear_bn(b: Builder) -> Emit:
    x = b.pick_float(2, 2, pred=lambda v: v.shape[-1] <= 64)
    call = linear_call(b, x)
    c = _result_shape(b, call)[1]
    mean, var = b.new_const([c], torch.float32, "normal"), b.new_const([c], torch.float32, "positive")
    w, bias = b.new_const([c], torch.float32), b.new_const([c], torch.float32)
    return f"F.batch_norm({call}, {mean}, {var}, {w}, {bias}, False, 0.1, 1e-5)"


@spec("sibling_linears", weight=1.0, family="fused")
def _sibling_linears(b: Builder) -> list[Value]:
    x = b.pick_float(1, 3, pred=lambda v: v.shape[-1] <= 64)
    first = b.emit("sibling_linears", linear_call(b, x))
    return first + b.emit("sibling_linears", linear_call(b, x))


@spec("mm_family", weight=2.0, family="linalg")
def _mm_family(b: Builder) -> Emit:
    m, k, n, batch = b.size(1, 23), b.size(1, 23), b.size(1, 23), b.size(1, 5)
    form = b.rng.randrange(11)
    if form == 0:
        return f"torch.mm({_matrix(b, m, k, 0.3)}, {_matrix(b, k, n)})"
    if form == 1:
        a = b.new_input([batch, m, k], torch.float32)
        return f"torch.bmm({a}, {b.new_tensor([batch, k, n], torch.float32)})"
    if form == 2:
        return f"torch.mv({_matrix(b, m, k, 0.3)}, {b.new_input([k], torch.float32)})"
    if form == 3:
        x = b.new_input([k], torch.float32)
        fn = b.choice(["dot", "vdot", "inner"])
        return f"torch.{fn}({x}, {b.new_tensor([k], torch.float32)})"
    if form == 4:
        x = b.new_input([m], torch.float32)
        return f"torch.{b.choice(['outer', 'ger'])}({x}, {b.new_tensor([n], torch.float32)})"
    if form == 5:
        c = b.new_tensor(b.broadcast_shape([m, n]), torch.float32)
        return (f"torch.addmm({c}, {b.new_input([m, k], torch.float32)}, {_matrix(b, k, n)}, "
                f"beta={b.choice([1, 0.5, 0])}, alpha={b.choice([1, 2.0])})")
    if form == 6:
        c = b.new_tensor([m], torch.float32)
        return f"torch.addmv({c}, {b.new_input([m, k], torch.float32)}, {b.new_tensor([k], torch.float32)}, beta=0.5)"
    if form == 7:
        c = b.new_tensor([m, n], torch.float32)
        return f"torch.addr({c}, {b.new_input([m], torch.float32)}, {b.new_tensor([n], torch.float32)}, alpha=2)"
    if form == 8:
        c = b.new_tensor([m, n], torch.float32)
        return (f"torch.addbmm({c}, {b.new_input([batch, m, k], torch.float32)}, "
                f"{b.new_tensor([batch, k, n], torch.float32)}, beta=0.5)")
    if form == 9:
        c = b.new_tensor(b.broadcast_shape([batch, m, n]), torch.float32)
        return (f"torch.baddbmm({c}, {b.new_input([batch, m, k], torch.float32)}, "
                f"{b.new_tensor([batch, k, n], torch.float32)}, alpha={b.choice([1, 0.5])})")
    x = b.pick_float(2, 2)
    return f"torch.matmul({x}, {x}.t())"


EINSUMS = (("ij,jk->ik", ["i", "j"], ["j", "k"]), ("bij,bjk->bik", ["b", "i", "j"], ["b", "j", "k"]),
           ("ij->ji", ["i", "j"], None), ("ii->i", ["i", "i"], None), ("ij->", ["i", "j"], None),
           ("i,i->", ["i"], ["i"]), ("i,j->ij", ["i"], ["j"]), ("bhqd,bhkd->bhqk", ["b", "h", "q", "d"], ["b", "h", "k", "d"]),
           ("ijk->kji", ["i", "j", "k"], None), ("ij,ij->i", ["i", "j"], ["i", "j"]), ("...ij,jk->...ik", ["b", "i", "j"], ["j", "k"]))


@spec("einsum", weight=1.0, family="linalg")
def _einsum(b: Builder) -> Emit:
    eq, lhs, rhs = b.choice(list(EINSUMS))
    sizes = {c: b.size(1, 11) for c in "bhijkqd"}
    x = b.new_input([sizes[c] for c in lhs], torch.float32)
    if rhs is None:
        return f"torch.einsum({eq!r}, {x})"
    return f"torch.einsum({eq!r}, {x}, {b.new_tensor([sizes[c] for c in rhs], torch.float32)})"


@spec("cross", weight=0.6, family="linalg")
def _cross(b: Builder) -> Emit:
    x = b.pick_float(1, 4, pred=lambda v: 3 in v.shape)
    d = b.choice([i for i, s in enumerate(x.shape) if s == 3])
    y = b.new_tensor(x.shape, torch.float32)
    return f"torch.linalg.cross({x}, {y}, dim={d})" if b.chance(0.5) else f"torch.cross({x}, {y}, dim={d})"


@spec("cosine_similarity", weight=0.6, family="linalg")
def _cosine_similarity(b: Builder) -> Emit:
    x = b.pick_float(1)
    return f"F.cosine_similarity({x}, {b.partner(x)}, dim={b.dim(x.rank)}, eps=1e-6)"


@spec("bilinear", weight=0.5, family="linalg")
def _bilinear(b: Builder) -> Emit:
    n, i1, i2, o = b.size(1, 5), b.size(1, 7), b.size(1, 7), b.size(1, 7)
    x1, x2 = b.new_input([n, i1], torch.float32), b.new_tensor([n, i2], torch.float32)
    w, bias = b.new_const([o, i1, i2], torch.float32), b.new_const([o], torch.float32)
    return f"F.bilinear({x1}, {x2}, {w}, {bias})"
