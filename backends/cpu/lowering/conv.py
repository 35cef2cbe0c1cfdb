"""Convolution (1-3 spatial dims, groups, stride, padding, dilation) and transposed convolution.

* Regular convolutions are implicit GEMMs in channels-last order: an im2col buffer
  ``A[n, (oy, ox), (g, ky, kx, ci)]`` (a kernel with guarded loads for the padding; a 1x1
  stride-1 convolution of a channels-last input reads the input directly) times the weight
  as GEMM panels ``KN{nr}n`` over ``K = (ky, kx, ci)`` (the layout ``prepack-weights``
  produces; other constant weights are packed here), one ``loop.gemm`` per group,
  writing a channels-last buffer with bias, activation and residual in the epilogue.
  The NCHW result is a view of it, so the next convolution's im2col reads channels
  contiguously.
* Depthwise convolutions (one input channel per group) are direct window reductions.
* Transposed convolutions are direct reductions over (input channel, kernel offset) with
  the stride's divisibility as a mask.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.conv_native import ConvGeometry, conv_native
from ziggurat.backends.cpu.lowering.gemm_operands import matrix_view
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.gemm_operands import residual_view
from ziggurat.backends.cpu.lowering.linalg import Epilogue
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, index, load_or, mul, where
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import BufferValue, Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Const, Value
from ziggurat.backends.cpu.lowering.views import expand, permute, reshape, slice_dim
from ziggurat.backends.padded_taps import PADDED_TAPS_DIFFER, nonfinite_weight_reason
from ziggurat.dialects.fused.pack import pack_gemm_b

F32 = torch.float32


def _list(v: object, k: int) -> list[int]:
    vals = [int(x) for x in v] if isinstance(v, list | tuple) else [int(v)]  # type: ignore[arg-type]
    return vals * k if len(vals) == 1 else vals


def _im2col(ctx: LoweringContext, x: TensorValue, g: ConvGeometry) -> TensorValue:
    """``[N, *out_sp, G, *ks, Cg]``: the input patch of every output position, channels last."""
    k = g.k
    shape = (g.n, *g.out_sp, g.groups, *g.ks, g.cg)

    def element(idx: Index) -> Value:
        n = IndexExpr.of(idx[0])
        o = [IndexExpr.of(i) for i in idx[1:1 + k]]
        grp = IndexExpr.of(idx[1 + k])
        r = [IndexExpr.of(i) for i in idx[2 + k:2 + 2 * k]]
        ci = IndexExpr.of(idx[-1])
        sub = [n, grp * g.cg + ci] + [o[d] * g.stride[d] + r[d] * g.dilation[d] - g.padding[d] for d in range(k)]
        return cast(load_or(x, sub, 0.0), F32)

    return ctx.lazy(shape, F32, element, [x])


def _channels_last_input(ctx: LoweringContext, x: TensorValue, g: ConvGeometry) -> TensorValue:
    """``x`` as ``[N, P, C]`` (a view; a 1x1 stride-1 unpadded convolution needs no im2col)."""
    k = g.k
    nhwc = permute(ctx, x, [0, *range(2, 2 + k), 1])
    return reshape(ctx, nhwc, (g.n, g.p, g.c))


def _packed_weight(ctx: LoweringContext, w: TensorValue, g: ConvGeometry) -> tuple[BufferValue | None, int]:
    """Constant weights as per-group ``KN{nr}n`` panels over ``K = (*ks, ci)``."""
    tensor = weight_tensor(w)
    if tensor is None or not ctx.options.prepack or tensor.dtype != F32:
        return None, 0
    nr = choose_nr(ctx.options.isa)
    k = g.k
    per_group = []
    for grp in range(g.groups):
        wg = tensor[grp * g.og:(grp + 1) * g.og]
        b_kn = wg.permute(*range(2, 2 + k), 1, 0).reshape(g.kk, g.og)
        per_group.append(pack_gemm_b(b_kn, nr))
    packed = torch.stack(per_group)
    name = (w.buffer.name if w.buffer else "weight") + f"_KN{nr}n"
    return BufferValue(ctx.constant(packed, name)), nr


def conv_gemm(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None, g: ConvGeometry,
              out_shape: Sequence[int], epi: Epilogue, packed: tuple[TensorValue, int] | None) -> TensorValue:
    k = g.k
    direct = all(s == 1 for s in g.ks) and all(s == 1 for s in g.stride) and all(p == 0 for p in g.padding)
    if direct:
        a_full = _channels_last_input(ctx, x, g)
        av = matrix_view(ctx, a_full, (g.n,), allow_transposed=False)
        a_buf, a_off, a_bstride, lda = av.buffer, av.offset, av.batch_stride, av.row_stride
        group_stride = g.cg
    else:
        cols = _im2col(ctx, x, g)
        a_buf = ctx.realize(cols, "im2col")
        a_off, a_bstride, lda = 0, g.p * g.groups * g.kk, g.groups * g.kk
        group_stride = g.kk
    if packed is None:
        packed = _packed_weight(ctx, w, g) if w.buffer is not None else (None, 0)  # type: ignore[assignment]
    out = ctx.new_buffer((g.n, *g.out_sp, g.o), F32, "conv")
    use_epilogue = g.groups == 1
    other_view = None
    if use_epilogue and epi.binary is not None and epi.other is not None:
        # broadcast to the NCHW output first (an other of [N, 1, 1, W] permuted and reshaped as
        # it stood was read as [N, H*W, C] with the wrong elements), then channels-last
        o_full = epi.other
        if o_full.rank > len(out_shape) or \
                tuple(torch.broadcast_shapes(o_full.shape, tuple(out_shape))) != tuple(out_shape):
            use_epilogue = False
        else:
            if o_full.shape != tuple(out_shape):
                o_full = expand(ctx, o_full, out_shape)
            o_nhwc = permute(ctx, o_full, [0, *range(2, 2 + k), 1])
            other_view = residual_view(ctx, reshape(ctx, o_nhwc, (g.n, g.p, g.o)), (g.n,), g.p, g.o)
    bias_buf = ctx.realize(bias, "bias") if bias is not None else None
    for grp in range(g.groups):
        spec: dict[str, object] = {"m": g.p, "n": g.og, "k": g.kk, "lda": lda, "ldc": g.o}
        if g.n > 1:
            spec.update(batch=g.n, batch_stride_a=a_bstride, batch_stride_c=g.p * g.o)
        pk, nr = packed if packed is not None else (None, 0)
        if pk is not None and pk.buffer is not None:
            panels = -(-g.og // nr)
            b_operand = GemmOperand(pk.buffer, grp * panels * g.kk * nr)
            spec.update(b_packed=True, nr=nr)
            if g.n > 1:
                spec["batch_stride_b"] = 0
        else:
            wg = w if g.groups == 1 else _group_slice(ctx, w, grp, g.og)
            b_kn = reshape(ctx, permute(ctx, wg, [*range(2, 2 + k), 1, 0]), (g.kk, g.og))
            bv = matrix_view(ctx, b_kn, (), allow_transposed=True)
            b_operand = bv.operand
            spec.update(b_packed=False, b_transposed=bv.transposed, ldb=bv.ld)
            if g.n > 1:
                spec["batch_stride_b"] = 0
        bias_operand = GemmOperand(bias_buf, grp * g.og) if bias_buf is not None else None
        other_operand = None
        if use_epilogue:
            if epi.unary is not None:
                spec["unary"] = epi.unary
                params = {n: v for n, v in epi.unary_params.items() if v is not None}
                if params:
                    spec["unary_params"] = params
            if other_view is not None:
                other_operand = other_view.operand
                spec.update(binary=epi.binary, alpha=float(epi.alpha),
                            other_strides=(other_view.row_stride, other_view.col_stride))
                if g.n > 1 and other_view.batch_stride:
                    spec["other_batch_stride"] = other_view.batch_stride
                if epi.binary_first:
                    spec["binary_first"] = True
        a_operand = GemmOperand(a_buf, a_off + grp * group_stride)
        ctx.nodes.append(GemmNode(ctx.unique_name(f"gemm_{ctx.current_origin or 'conv'}"), a_operand, b_operand,
                                  GemmOperand(out, grp * g.og), bias_operand, other_operand, spec,
                                  (ctx.current_origin,)))
    base: TensorValue = permute(ctx, BufferValue(out), [0, 1 + k, *range(1, 1 + k)])
    if use_epilogue or (epi.unary is None and epi.binary is None):
        return base
    other = epi.other

    def element(idx: Index) -> Value:
        from ziggurat.backends.cpu.lowering.pointwise import broadcast_index

        ov = cast(other.load(broadcast_index(idx, other.shape, out_shape)), F32) if other is not None else None
        return epi.apply(base.load(idx), ov)

    return ctx.lazy(out_shape, F32, element, [base])


def _group_slice(ctx: LoweringContext, w: TensorValue, grp: int, og: int) -> TensorValue:
    from ziggurat.backends.cpu.lowering.views import slice_dim

    return slice_dim(ctx, w, 0, grp * og, 1, og)


def conv_direct(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None, g: ConvGeometry,
                out_shape: Sequence[int], epi: Epilogue) -> TensorValue:
    """Depthwise (one input channel per group) convolution as a window reduction per output,
    computed channels-last (``[N, *out_sp, O]``, vectorized over channels; a constant weight is
    stored ``[*ks, Cg, O]`` so its lanes are contiguous too) and returned as an NCHW view."""
    k = g.k
    mult = g.og
    nhwc_shape = (g.n, *g.out_sp, g.o)
    tensor = weight_tensor(w)
    w_last = None
    if tensor is not None and tensor.dtype == F32:
        w_last = BufferValue(ctx.constant(tensor.permute(*range(2, 2 + k), 1, 0).contiguous(),
                                          (w.buffer.name if w.buffer else "weight") + "_khwio"))

    def weight(oc: IndexExpr, ci: IndexExpr, r: list[IndexExpr]) -> Value:
        if w_last is not None:
            return w_last.load([*r, ci, oc])
        return cast(w.load([oc, ci, *r]), F32)

    def body(out: Index, red: Index) -> Value:
        n, oc = IndexExpr.of(out[0]), IndexExpr.of(out[-1])
        o = [IndexExpr.of(i) for i in out[1:1 + k]]
        ci = IndexExpr.of(red[0])
        r = [IndexExpr.of(i) for i in red[1:]]
        grp = oc // mult
        sub = [n, grp * g.cg + ci] + [o[d] * g.stride[d] + r[d] * g.dilation[d] - g.padding[d] for d in range(k)]
        xv = cast(load_or(x, sub, 0.0), F32)
        return mul(xv, weight(oc, ci, r), F32)

    total = ctx.reduction("sum", F32, nhwc_shape, (g.cg, *g.ks), body, [x])
    other = epi.other

    def element(idx: Index) -> Value:
        from ziggurat.backends.cpu.lowering.pointwise import broadcast_index

        y = total.load(idx)
        oc = IndexExpr.of(idx[-1])
        if bias is not None:
            y = add(y, cast(bias.load([oc]), F32), F32)
        nchw = [IndexExpr.of(idx[0]), oc, *[IndexExpr.of(i) for i in idx[1:1 + k]]]
        ov = cast(other.load(broadcast_index(nchw, other.shape, out_shape)), F32) if other is not None else None
        return epi.apply(y, ov)

    buf = ctx.realize(ctx.lazy(nhwc_shape, F32, element, [x]), "dwconv")
    return permute(ctx, BufferValue(buf), [0, 1 + k, *range(1, 1 + k)])


def conv_transposed(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                    stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
                    out_shape: Sequence[int]) -> TensorValue:
    """``out[n, o, y] = sum_{ci, r} x[n, g*Cg + ci, (y + p - r*d) / s] * w[g*Cg + ci, o % Og, r]``
    over the offsets where the division is exact and in range."""
    k = len(out_shape) - 2
    cg = x.shape[1] // groups
    og = w.shape[1]
    ks = list(w.shape[2:])

    def body(out: Index, red: Index) -> Value:
        n, oc = IndexExpr.of(out[0]), IndexExpr.of(out[1])
        o = [IndexExpr.of(i) for i in out[2:]]
        ci = IndexExpr.of(red[0])
        r = [IndexExpr.of(i) for i in red[1:]]
        grp = oc // og
        sub = [n, grp * cg + ci]
        conds: list[Value] = []
        for d in range(k):
            t = o[d] + padding[d] - r[d] * dilation[d]
            if stride[d] > 1:
                conds.append(compare("eq", index(t % stride[d]), 0))
                sub.append(t // stride[d])
            else:
                sub.append(t)
        xv = cast(load_or(x, sub, 0.0), F32)
        prod = mul(xv, cast(w.load([grp * cg + ci, oc % og, *r]), F32), F32)
        # a tap with no input element contributes nothing (0 * an infinite weight would be NaN;
        # eager's col2im never forms that product)
        from ziggurat.backends.cpu.lowering.ops import in_bounds, logical_and

        valid = logical_and(*conds, in_bounds([IndexExpr.of(s_) for s_ in sub], x.shape))
        if not (isinstance(valid, Const) and valid.value):
            prod = where(valid, prod, 0.0, F32)
        return prod

    total = ctx.reduction("sum", F32, tuple(out_shape), (cg, *ks), body, [x])
    if bias is None:
        return total

    def element(idx: Index) -> Value:
        return add(total.load(idx), cast(bias.load([IndexExpr.of(idx[1])]), F32), F32)

    return ctx.lazy(out_shape, F32, element, [x])


def convolution(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
                out_shape: Sequence[int], epi: Epilogue | None = None,
                packed: tuple[TensorValue, int] | None = None, w_shape: Sequence[int] | None = None) -> TensorValue:
    epi = epi or Epilogue()
    shape = tuple(w_shape) if w_shape is not None else w.shape
    if x.rank - 2 != len(shape) - 2 or x.rank < 3:
        raise NotLowerable("convolution input must be batched (N, C, *spatial)")
    if any(padding):
        problem = padded_taps_problem(packed[0] if packed is not None else w)
        if problem is not None:
            raise NotLowerable(problem)
        if _constant(packed[0] if packed is not None else w) is None:
            w = _finite_checked(ctx, w)
    if any(n == 0 for n in out_shape) or x.numel == 0:
        raise NotLowerable("empty convolution")
    g = ConvGeometry(x, shape, stride, padding, dilation, groups, out_shape)
    if _strided_pointwise(g):
        # A strided 1x1 convolution with deep input reads every s-th pixel: take those pixels
        # once (a small copy, 1/s^2 of the input) and run the plain GEMM, with its K blocking,
        # instead of the implicit GEMM, whose whole-K register tiles stream 12 rows of A
        # (48 KiB at K = 1024) through L1 beside B.
        for d, s in enumerate(g.stride):
            if s > 1:
                x = slice_dim(ctx, x, 2 + d, 0, s, g.out_sp[d])
        stride = [1] * g.k
        g = ConvGeometry(x, shape, stride, padding, dilation, groups, out_shape)
    if not _pointwise_direct(g):
        native = conv_native(ctx, x, w, bias, g, epi, packed)
        if native is not None:
            return native
    if groups > 1 and g.cg == 1 and packed is None:
        return conv_direct(ctx, x, w, bias, g, out_shape, epi)
    return conv_gemm(ctx, x, w, bias, g, out_shape, epi, packed)


def _constant(w: TensorValue) -> torch.Tensor | None:
    buf = w.buffer
    return getattr(buf, "tensor", None) if buf is not None and buf.role == "constant" else None


def padded_taps_problem(w: TensorValue) -> str | None:
    """Why a padded convolution by the constant ``w`` cannot be native: eager's kernels differ
    on the taps that fall on the padding.  Its direct convolution skips them, while the native
    kernels multiply them by the zero they load, which is NaN for an infinite or NaN weight (fuzz
    seed 3 program 1633: eager -0.39, NaN native); its bf16 depthwise kernel multiplies them where
    the native one skipped them (seed 144 program 33: eager NaN, the bias native). Weights given
    at run time are checked at each call instead (:func:`_finite_checked`)."""
    tensor = _constant(w)
    return nonfinite_weight_reason(tensor) if tensor is not None else None


def _finite_checked(ctx: LoweringContext, w: TensorValue) -> TensorValue:
    """``w`` copied with a run-time check that every weight is finite: a padded convolution by
    an infinite or NaN weight given at run time is an error at the call, never a NaN eager
    does not give."""
    from ziggurat.backends.cpu.lowering.ops import predicate
    from ziggurat.backends.cpu.lowering.pointwise import pointwise
    from ziggurat.backends.cpu.lowering.values import Assert

    where = ctx.current_origin or "convolution"
    site = ctx.error_site(f"{where}: a padded convolution by an inf or NaN weight given at run time "
                          f"({PADDED_TAPS_DIFFER}); pass the weights as constants (parameters), or list the op "
                          "in torch_executed_ops")
    checked = pointwise(ctx, [w], w.shape, w.dtype, lambda v: Assert(v, predicate("isfinite", v), site), w.dtype)
    return BufferValue(ctx.realize(checked))


#: Lower strided 1x1 convolutions with at least this many input channels as a pixel subsample
#: + GEMM (see ``convolution``).  Change in time against the implicit GEMM, per-site medians of
#: both forms compiled in one process and timed alternately, resnet50's stride-2 downsamples:
#: 14x14x1024 -> 7x7x2048 1 thread -9 % / -33 % (two runs), 2 threads -8 %; 28x28x512 ->
#: 14x14x1024 1 thread -12 % / -7 %, 2 threads -20 %; 56x56x256 -> 28x28x512 1 thread
#: +8 % / +9 % (the implicit GEMM stays there).
SUBSAMPLE_MIN_CHANNELS = 512


def _strided_pointwise(g: ConvGeometry) -> bool:
    """A 1x1, unpadded, ungrouped convolution with a stride > 1 and a deep input."""
    return (g.groups == 1 and all(k == 1 for k in g.ks) and not any(g.padding)
            and any(s > 1 for s in g.stride) and g.cg >= SUBSAMPLE_MIN_CHANNELS)


def _pointwise_direct(g: ConvGeometry) -> bool:
    """A 1x1, stride-1, unpadded, ungrouped convolution: a plain GEMM over the channels-last input."""
    return g.groups == 1 and all(s == 1 for s in (*g.ks, *g.stride)) and not any(g.padding)


def _float32(args: LoweringArgs) -> str | None:
    from ziggurat.backends.cpu.lowering.linalg import all_float32

    return all_float32(args)


def _padding(args: LoweringArgs, w: TensorValue, k: int, dilation: Sequence[int]) -> list[int]:
    pad = args.static("padding", 0)
    if isinstance(pad, str):
        if pad == "valid":
            return [0] * k
        if pad == "same":
            total = [dilation[d] * (w.shape[2 + d] - 1) for d in range(k)]
            if any(t % 2 for t in total):
                raise NotLowerable("asymmetric 'same' padding")
            return [t // 2 for t in total]
    return _list(pad, k)


@lowering("aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::conv1d.padding", "aten::conv2d.padding",
          "aten::conv3d.padding", validator=_float32)
def conv_nd(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, w = args.tensor("input"), args.tensor("weight")
    k = w.rank - 2
    stride = _list(args.static("stride", 1), k)
    dilation = _list(args.static("dilation", 1), k)
    padding = _padding(args, w, k, dilation)
    groups = int(args.static("groups", 1))
    if x.rank == k + 1:
        y = convolution(ctx, reshape(ctx, x, (1, *x.shape)), w, args.optional_tensor("bias"), stride, padding,
                        dilation, groups, (1, *args.out_shape))
        return reshape(ctx, y, args.out_shape)
    return convolution(ctx, x, w, args.optional_tensor("bias"), stride, padding, dilation, groups, args.out_shape)


@lowering("aten::_convolution", "aten::convolution", "aten::_convolution.deprecated", validator=_float32)
def convolution_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, w = args.tensor("input"), args.tensor("weight")
    k = w.rank - 2
    stride = _list(args.static("stride"), k)
    padding = _list(args.static("padding"), k)
    dilation = _list(args.static("dilation"), k)
    groups = int(args.static("groups"))
    bias = args.optional_tensor("bias")
    if bool(args.static("transposed")):
        return conv_transposed(ctx, x, w, bias, stride, padding, dilation, groups, args.out_shape)
    return convolution(ctx, x, w, bias, stride, padding, dilation, groups, args.out_shape)


@lowering("aten::conv_transpose1d", "aten::conv_transpose2d.input", "aten::conv_transpose3d.input",
          validator=_float32)
def conv_transpose(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, w = args.tensor("input"), args.tensor("weight")
    k = w.rank - 2
    params = (_list(args.static("stride", 1), k), _list(args.static("padding", 0), k),
              _list(args.static("dilation", 1), k), int(args.static("groups", 1)))
    if x.rank == k + 1:
        y = conv_transposed(ctx, reshape(ctx, x, (1, *x.shape)), w, args.optional_tensor("bias"), *params,
                            (1, *args.out_shape))
        return reshape(ctx, y, args.out_shape)
    return conv_transposed(ctx, x, w, args.optional_tensor("bias"), *params, args.out_shape)


__all__ = ["conv_direct", "conv_gemm", "conv_transposed", "convolution"]
