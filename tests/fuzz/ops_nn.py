"""Neural-network ops: convolutions (transposed too), pooling, normalization, padding,
resampling, attention, recurrent cells, ``prelu``/``glu``."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit, Reject, Value
from tests.fuzz.registry import spec


def _spatial_input(b: Builder, nd: int, batched: bool = True, min_size: int = 1) -> Value:
    """A float (N, C, *spatial) value with ``nd`` spatial dims (or (C, *spatial) unbatched)."""
    rank = nd + (2 if batched else 1)

    def shape() -> list[int]:
        lead = [b.size(1, 3)] if batched else []
        return lead + [b.size(1, 7)] + [b.size(min_size, 13 if nd < 3 else 7) for _ in range(nd)]

    return b.pick_float(rank, rank, pred=lambda v: min(v.shape[-nd:]) >= min_size and v.numel <= 2048) \
        if b.chance(0.6) else b.new_input(shape(), torch.float32)


def _weight(b: Builder, shape: list[int]) -> Value:
    return b.new_const(shape, torch.float32) if b.chance(0.85) else b.new_input(shape, torch.float32)


def conv_call(b: Builder, x: Value, nd: int) -> str:
    """``F.convNd`` over ``x`` with random stride/padding/dilation/groups and a constant weight."""
    c_in = x.shape[-nd - 1]
    groups = b.choice([g for g in (1, 1, 1, 2, 3, c_in) if c_in % g == 0])
    c_out = groups * b.size(1, 5)
    k = [b.choice([1, 1, 2, 3, 5]) for _ in range(nd)]
    dil = [b.choice([1, 1, 1, 2]) for _ in range(nd)]
    stride = [b.choice([1, 1, 2, 3]) for _ in range(nd)]
    w = _weight(b, [c_out, c_in // groups] + k)
    bias = b.new_const([c_out], torch.float32) if b.chance(0.7) else None
    r = b.rng.random()
    if r < 0.15 and all(s == 1 for s in stride):
        padding: object = "'same'"
    elif r < 0.25:
        padding = "'valid'"
    else:
        padding = tuple(b.rng.randint(0, (kk - 1) * d // 2 + 1) for kk, d in zip(k, dil))
    bias_text = f", {bias}" if bias is not None else ", None"
    return (f"F.conv{nd}d({x}, {w}{bias_text}, stride={tuple(stride)!r}, padding={padding}, "
            f"dilation={tuple(dil)!r}, groups={groups})")


@spec("conv", weight=3.0)
def _conv(b: Builder) -> Emit:
    nd = b.rng.choices([1, 2, 3], weights=[0.3, 0.55, 0.15])[0]
    x = _spatial_input(b, nd, batched=b.chance(0.9))
    return conv_call(b, x, nd)


@spec("conv_many_channels", weight=0.0)
def _conv_many_channels(b: Builder) -> Emit:
    """A 2-d convolution to 32 or 64 channels of an image of at most 7x7 (1x1 or 3x3 taps,
    stride 1 or 2): in bf16 the kernels compute it as pixel rows (``conv_bf16._pixel_rows_conv``,
    the GEMM's rows the pixels), which the ``conv`` spec (at most 5 channels a group) never
    reaches; a second one reads the first's channels-last result.  Of weight 0 but in the
    ``gemm`` profile (the -bf16 configurations' programs), so other profiles' programs stay
    as they were."""
    x = b.pick_float(4, 4, pred=lambda v: 2 <= min(v.shape[-2:]) and max(v.shape[-2:]) <= 7 and v.shape[1] <= 64,
                     shape=lambda: [b.size(1, 2), b.size(1, 16), b.size(2, 7), b.size(2, 7)])
    n, c_in, h, w = x.shape
    c_out = b.choice([32, 64]) if n * 64 * h * w <= 4096 else 32
    k = b.choice([1, 3, 3])
    stride = b.choice([1, 1, 2])
    padding = k // 2 if b.chance(0.7) or k > min(h, w) else 0
    weight = _weight(b, [c_out, c_in, k, k])
    bias = b.new_const([c_out], torch.float32) if b.chance(0.7) else None
    return f"F.conv2d({x}, {weight}, {bias if bias is not None else 'None'}, stride={stride}, padding={padding})"


@spec("conv_layer_entry", weight=0.0)
def _conv_layer_entry(b: Builder) -> Emit:
    """ResNet's layer-4 entry in small: a convolution of a 12-16 pixel image to 16-32 channels
    (its bf16 result channel-major: channel rows use its panels' lanes), then a stride-2 3x3
    convolution of that result to a 6-8 pixel image, which in bf16 computes pixel rows from a
    channel-major image and so copies it channels-last first
    (``conv_bf16.CHANNELS_LAST_COPY_MIN_CHANNELS``); the ``conv_many_channels`` images (graph
    inputs of at most 16 channels, or its own channels-last results) seldom reach that copy.
    Of weight 0 but in the ``pixel-rows`` profile."""
    side = b.choice([12, 13, 14, 16])
    x = b.new_input([1, b.size(1, 4), side, side], torch.float32)
    mid = b.choice([16, 32])
    w0, w1 = _weight(b, [mid, x.shape[1], 1, 1]), _weight(b, [b.choice([32, 64]), mid, 3, 3])
    first = f"F.relu(F.conv2d({x}, {w0}))"
    if b.chance(0.3):  # the middle joins the pool: other ops may read it
        first = str(b.emit("conv_layer_entry", first)[0])
    bias = b.new_const([w1.shape[0]], torch.float32) if b.chance(0.7) else None
    return f"F.conv2d({first}, {w1}, {bias if bias is not None else 'None'}, stride=2, padding=1)"


@spec("nonfinite_padded_conv", weight=0.0)
def _nonfinite_padded_conv(b: Builder) -> Emit:
    """A padded 2-d convolution (plain, grouped or depthwise) by a constant weight holding inf
    and NaN.  Eager's kernels differ on the taps that fall on the padding (its float32 and bf16
    ones multiply the padding's zero by the weight, NaN; its float16 ones skip them), so the
    compiled convolution runs as eager's op: fuzz seed 144, program 33, where the bf16 depthwise
    kernel skipped those taps and gave the bias.  Of weight 0 but in the ``gemm`` and
    ``nonfinite`` profiles."""
    c_in, h, w = b.size(1, 8), b.size(2, 9), b.size(2, 9)
    x = b.new_input([b.size(1, 2), c_in, h, w], torch.float32)
    groups = b.choice([1, c_in, c_in] + [g for g in (2, 3) if c_in % g == 0])
    c_out = groups * b.choice([1, 1, 2])
    k = b.choice([1, 3])
    padding = (b.size(0, 2), b.size(1, 2)) if b.chance(0.5) else (b.size(1, 2), b.size(0, 2))
    stride, dilation = (b.choice([1, 2, 3]), b.choice([1, 2])), (b.choice([1, 2]), b.choice([1, 2]))
    weight = b.new_const([c_out, c_in // groups, k, k], torch.float32, "special")
    bias = b.new_const([c_out], torch.float32) if b.chance(0.7) else None
    return (f"F.conv2d({x}, {weight}, {bias if bias is not None else 'None'}, stride={stride!r}, "
            f"padding={padding!r}, dilation={dilation!r}, groups={groups})")


@spec("conv_transpose", weight=1.5)
def _conv_transpose(b: Builder) -> Emit:
    nd = b.rng.choices([1, 2, 3], weights=[0.3, 0.55, 0.15])[0]
    x = _spatial_input(b, nd)
    c_in = x.shape[1]
    groups = b.choice([g for g in (1, 1, 2, c_in) if c_in % g == 0])
    c_out_g = b.size(1, 5)
    k = [b.choice([1, 2, 3, 4]) for _ in range(nd)]
    stride = [b.choice([1, 2, 3]) for _ in range(nd)]
    dil = [b.choice([1, 1, 2]) for _ in range(nd)]
    pad = [b.rng.randint(0, (kk - 1) * d) for kk, d in zip(k, dil)]
    outpad = [b.rng.randint(0, max(s, d) - 1) for s, d in zip(stride, dil)]
    w = _weight(b, [c_in, c_out_g] + k)
    bias = b.new_const([c_out_g * groups], torch.float32) if b.chance(0.6) else None
    return (f"F.conv_transpose{nd}d({x}, {w}, {bias if bias is not None else 'None'}, stride={tuple(stride)!r}, "
            f"padding={tuple(pad)!r}, output_padding={tuple(outpad)!r}, groups={groups}, dilation={tuple(dil)!r})")


@spec("max_pool", weight=1.5)
def _max_pool(b: Builder) -> Emit | list[Value]:
    nd = b.rng.choices([1, 2, 3], weights=[0.3, 0.55, 0.15])[0]
    x = _spatial_input(b, nd, min_size=2)
    k = b.choice([2, 3])
    stride = b.choice([None, 1, 2, 3])
    pad = b.rng.randint(0, k // 2)
    dil = b.choice([1, 1, 2])
    ceil = b.chance(0.3)
    call = (f"F.max_pool{nd}d({x}, {k}, stride={stride}, padding={pad}, dilation={dil}, ceil_mode={ceil}"
            + (", return_indices=True)" if b.chance(0.25) else ")"))
    if "return_indices" in call:
        return b.emit_multi("max_pool", call)
    return call


#: the fewest output elements of a ``wide_window`` (``loopgen/borders.py``'s MIN_ELEMENTS)
WIDE_WINDOW_ELEMENTS = 4096


@spec("wide_window", weight=0.0)
def _wide_window(b: Builder) -> Emit | list[Value]:
    """A max or average pool of 4096 or more outputs whose taps read the padding: the CPU
    kernel runs its interior, unchecked, in loop nests of their own (``loopgen/borders.py``),
    which the other specs' values (at most 4096 elements) never reach.  Of weight 0 but in the
    ``windows`` profile."""
    nd = b.rng.choices([1, 2, 3], weights=[0.25, 0.6, 0.15])[0]
    k = b.choice([2, 3, 3, 4, 5])
    pad = b.rng.randint(1, k // 2)
    stride = b.choice([1, 1, 2, 3])
    lead = {1: [b.size(1, 4), b.choice([4, 8, 16])], 2: [b.size(1, 2), b.size(1, 8)], 3: [1, b.size(1, 3)]}[nd]
    maximum = b.chance(0.6)
    dil = b.choice([1, 1, 2]) if maximum else 1
    need = -(-WIDE_WINDOW_ELEMENTS // (lead[0] * lead[1]))
    per_dim = int(round(need ** (1 / nd)))
    outs = [b.rng.randint(per_dim, per_dim + per_dim // 2 + 1) for _ in range(nd)]
    # input sizes giving those outputs (and up to stride - 1 more, which no window reads)
    spatial = [(o - 1) * stride + dil * (k - 1) + 1 - 2 * pad + b.rng.randint(0, stride - 1) for o in outs]
    if min(spatial) < 1:
        raise Reject("an empty input")
    outs = [(n + 2 * pad - dil * (k - 1) - 1) // stride + 1 for n in spatial]
    total = lead[0] * lead[1]
    for o in outs:
        total *= max(o, 0)
    if not WIDE_WINDOW_ELEMENTS <= total <= b.max_numel:
        raise Reject(f"{total} outputs")
    x = b.new_input(lead + spatial, torch.float32)
    ceil = b.chance(0.3)
    if maximum:
        call = (f"F.max_pool{nd}d({x}, {k}, stride={stride}, padding={pad}, dilation={dil}, ceil_mode={ceil}"
                + (", return_indices=True)" if b.chance(0.2) else ")"))
        return b.emit_multi("wide_window", call) if "return_indices" in call else call
    extra = f", divisor_override={b.choice([2, 5])}" if nd > 1 and b.chance(0.2) else ""
    return (f"F.avg_pool{nd}d({x}, {k}, stride={stride}, padding={pad}, ceil_mode={ceil}, "
            f"count_include_pad={b.chance(0.5)}{extra})")


@spec("avg_pool", weight=1.2)
def _avg_pool(b: Builder) -> Emit:
    nd = b.rng.choices([1, 2, 3], weights=[0.3, 0.55, 0.15])[0]
    x = _spatial_input(b, nd, min_size=2)
    k = b.choice([1, 2, 3])
    stride = b.choice([None, 1, 2])
    pad = b.rng.randint(0, k // 2)
    extra = f", divisor_override={b.choice([2, 5])}" if nd > 1 and b.chance(0.2) else ""
    return (f"F.avg_pool{nd}d({x}, {k}, stride={stride}, padding={pad}, ceil_mode={b.chance(0.3)}, "
            f"count_include_pad={b.chance(0.5)}{extra})")


@spec("adaptive_pool", weight=1.2)
def _adaptive_pool(b: Builder) -> Emit | list[Value]:
    nd = b.rng.choices([1, 2, 3], weights=[0.3, 0.55, 0.15])[0]
    x = _spatial_input(b, nd)
    out = tuple(b.choice([1, 2, 3, 5, None if nd > 1 else 1]) for _ in range(nd))
    out_text = str(out[0]) if nd == 1 else repr(out)
    kind = b.choice(["avg", "max"])
    if kind == "max" and b.chance(0.3):
        return b.emit_multi("adaptive_pool", f"F.adaptive_max_pool{nd}d({x}, {out_text}, return_indices=True)")
    return f"F.adaptive_{kind}_pool{nd}d({x}, {out_text})"


@spec("batch_norm", weight=1.2)
def _batch_norm(b: Builder) -> Emit:
    x = b.pick_float(2, 5, pred=lambda v: v.shape[1] > 0)
    c = x.shape[1]
    mean = b.new_const([c], torch.float32, "normal")
    var = b.new_const([c], torch.float32, "positive")
    w = b.new_const([c], torch.float32) if b.chance(0.7) else None
    bias = b.new_const([c], torch.float32) if b.chance(0.7) else None
    return (f"F.batch_norm({x}, {mean}, {var}, {w if w else 'None'}, {bias if bias else 'None'}, False, 0.1, "
            f"{b.choice([1e-5, 1e-3])})")


@spec("instance_norm", weight=0.7)
def _instance_norm(b: Builder) -> Emit:
    x = b.pick_float(3, 5, pred=lambda v: v.numel // (v.shape[0] * v.shape[1]) > 1)
    c = x.shape[1]
    w = b.new_const([c], torch.float32) if b.chance(0.5) else None
    return f"F.instance_norm({x}, weight={w if w else 'None'}, eps=1e-5)"


@spec("group_norm", weight=0.8)
def _group_norm(b: Builder) -> Emit:
    x = b.pick_float(2, 5)
    c = x.shape[1]
    g = b.choice([d for d in range(1, c + 1) if c % d == 0])
    w = b.new_const([c], torch.float32) if b.chance(0.7) else None
    bias = b.new_const([c], torch.float32) if b.chance(0.7) else None
    return f"F.group_norm({x}, {g}, {w if w else 'None'}, {bias if bias else 'None'}, 1e-5)"


@spec("layer_norm", weight=1.2)
def _layer_norm(b: Builder) -> Emit:
    x = b.pick_float(1, 5)
    k = b.rng.randint(1, min(3, x.rank))
    shape = x.shape[-k:]
    w = b.new_const(shape, torch.float32) if b.chance(0.7) else None
    bias = b.new_const(shape, torch.float32) if w is not None and b.chance(0.7) else None
    if b.chance(0.3):
        return f"F.rms_norm({x}, {tuple(shape)!r}, {w if w else 'None'}, eps={b.choice(['None', '1e-6'])})"
    return f"F.layer_norm({x}, {tuple(shape)!r}, {w if w else 'None'}, {bias if bias else 'None'}, 1e-5)"


@spec("normalize", weight=0.5)
def _normalize(b: Builder) -> Emit:
    x = b.pick_float(1)
    return f"F.normalize({x}, p={b.choice([1.0, 2.0])}, dim={b.dim(x.rank)})"


@spec("pad", weight=1.5)
def _pad(b: Builder) -> Emit:
    mode = b.choice(["constant", "constant", "reflect", "replicate", "circular"])
    if mode == "constant":
        x = b.pick((torch.float32, torch.int64, torch.int32), min_rank=1)
        n = b.rng.randint(1, min(3, x.rank))
        pads = []
        for i in range(n):
            size = x.shape[-1 - i]
            pads += [b.rng.randint(-(size - 1) // 2, 3), b.rng.randint(-(size - 1) // 2, 3)]
        fn = b.choice(["F.pad({x}, {p}, value={v})", "torch.constant_pad_nd({x}, {p}, {v})"])
        return fn.format(x=x, p=tuple(pads), v=b.choice([0, 1, -2]) if not x.is_float else b.choice([0.0, 1.5]))
    nd = b.rng.choice([1, 2, 3])
    x = _spatial_input(b, nd, min_size=2)
    pads = []
    for i in range(nd):
        size = x.shape[-1 - i]
        hi = size - 1 if mode == "reflect" else size if mode == "circular" else 4
        pads += [b.rng.randint(0, hi), b.rng.randint(0, hi)]
    return f"F.pad({x}, {tuple(pads)!r}, mode={mode!r})"


@spec("interpolate_nonfinite", weight=0.0)
def _interpolate_nonfinite(b: Builder) -> Emit:
    """Linear upsampling of a small image holding infinities and NaNs (dims of 1-3 elements, to
    3-10): where an output's source coordinate is a tiny positive number (eager computes it
    with one rounding, an FMA), the neighbour's weight is tiny, not 0, and an inf stays inf
    instead of ``inf * 0 = NaN`` (fuzz seed 148, program 22).  Of weight 0 but in the
    ``nonfinite`` profile."""
    mode = b.choice(["linear", "bilinear", "bilinear", "trilinear"])
    nd = {"linear": 1, "bilinear": 2, "trilinear": 3}[mode]
    x = b.new_input([b.size(1, 2), b.size(1, 4)] + [b.size(1, 3) for _ in range(nd)], torch.float32, "special")
    size = tuple(b.size(3, 10) for _ in range(nd))
    return f"F.interpolate({x}, size={size[0] if nd == 1 else size}, mode={mode!r})"


@spec("interpolate", weight=1.5)
def _interpolate(b: Builder) -> Emit:
    mode = b.choice(["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"])
    nd = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode, b.choice([1, 2, 3]))
    x = _spatial_input(b, nd)
    if b.chance(0.5):
        size = tuple(b.size(1, 13) for _ in range(nd))
        how = f"size={size[0] if nd == 1 else size}"
    else:
        how = f"scale_factor={b.choice([2, 3, 0.5, 1.5, 2.5])}"
    align = ""
    if mode in ("linear", "bilinear", "bicubic", "trilinear") and b.chance(0.5):
        align = f", align_corners={b.chance(0.5)}"
    return f"F.interpolate({x}, {how}, mode={mode!r}{align})"


@spec("grid_sample", weight=0.7)
def _grid_sample(b: Builder) -> Emit:
    x = _spatial_input(b, 2)
    n = x.shape[0]
    grid = b.new_input([n, b.size(1, 7), b.size(1, 7), 2], torch.float32, "normal")
    mode = b.choice(["bilinear", "nearest", "bicubic"])
    pad = b.choice(["zeros", "border", "reflection"])
    return (f"F.grid_sample({x}, {grid}.clamp(-1.25, 1.25), mode={mode!r}, padding_mode={pad!r}, "
            f"align_corners={b.chance(0.5)})")


@spec("prelu", weight=0.7)
def _prelu(b: Builder) -> Emit:
    x = b.pick_float(1)
    c = x.shape[1] if x.rank >= 2 else 1
    w = b.new_const([b.choice([1, c])], torch.float32)
    return f"F.prelu({x}, {w})"


@spec("glu", weight=0.6)
def _glu(b: Builder) -> Emit:
    x = b.pick_float(1, pred=lambda v: any(s % 2 == 0 for s in v.shape))
    dims = [d for d, s in enumerate(x.shape) if s % 2 == 0]
    if not dims:
        raise Reject("no even dim")
    return f"F.glu({x}, {b.choice(dims)})"


@spec("sdpa", weight=1.5)
def _sdpa(b: Builder) -> Emit:
    batch = [b.size(1, 3) for _ in range(b.rng.randint(0, 2))]
    lq, lk, e, ev = b.size(1, 13), b.size(1, 13), b.size(1, 16), b.size(1, 16)
    q = b.new_input(batch + [lq, e], torch.float32)
    k = b.new_tensor(batch + [lk, e], torch.float32)
    v = b.new_tensor(batch + [lk, ev], torch.float32)
    extra = ""
    r = b.rng.random()
    if r < 0.3:
        mask = b.new_tensor([lq, lk], torch.bool, "small")
        if b.chance(0.3):  # a fully masked row: torch returns zeros there
            extra = f", attn_mask={mask}.clone().index_fill_(0, torch.tensor([0]), False)"
        else:
            extra = f", attn_mask={mask}"
    elif r < 0.5:
        extra = f", attn_mask={b.new_tensor([lq, lk], torch.float32)}"
    elif r < 0.65 and lq <= lk:
        extra = ", is_causal=True"
    if b.chance(0.3):
        extra += f", scale={b.choice([0.125, 1.0, 2.0])}"
    return f"F.scaled_dot_product_attention({q}, {k}, {v}{extra})"


@spec("rnn_cell", weight=0.8)
def _rnn_cell(b: Builder) -> list[Value]:
    n, i, h = b.size(1, 5), b.size(1, 11), b.size(1, 11)
    kind = b.choice(["lstm", "gru", "rnn_tanh", "rnn_relu"])
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)
    x = b.pick_float(2, 2, pred=lambda v: v.shape[0] == n and v.shape[1] == i, shape=lambda: [n, i])
    hx = b.new_tensor([n, h], torch.float32)
    w_ih, w_hh = b.new_const([gates * h, i], torch.float32), b.new_const([gates * h, h], torch.float32)
    b_ih, b_hh = b.new_const([gates * h], torch.float32), b.new_const([gates * h], torch.float32)
    if kind == "lstm":
        cx = b.new_tensor([n, h], torch.float32)
        return b.emit_multi("rnn_cell", f"torch.ops.aten.lstm_cell({x}, [{hx}, {cx}], {w_ih}, {w_hh}, {b_ih}, {b_hh})")
    return b.emit("rnn_cell", f"torch.ops.aten.{kind}_cell({x}, {hx}, {w_ih}, {w_hh}, {b_ih}, {b_hh})")
