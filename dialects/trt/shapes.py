"""Output shapes of TensorRT layers, as documented for nvinfer1.

Pure functions over shapes (tuples of ints; ``DYNAMIC`` (-1) is a run-time size, as in
``nvinfer1::Dims``).  Only the layers whose ops set ``DYNAMIC_DIMS`` are given dynamic dims,
and their rules here say what is known before run time: a dynamic dim broadcast against n is
n, a reshape of a dynamic dim needs a 0 (copy) or the one -1 (inferred); the sizes are
checked again at run time on the specialized function (``dialects/trt/specialize.py``).  The ``trt`` ops' verifiers
check declared result types against them, op builders use them to infer result
types, and the reference executor relies on the same padding resolution.  A
rule that TensorRT enforces raises :class:`ShapeError` with the reason; the op
adds its layer name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

Shape = tuple[int, ...]

#: a run-time size (``-1`` in ``nvinfer1::Dims``, ``?`` in the IR)
DYNAMIC = -1

#: TensorRT's largest supported tensor rank.
MAX_RANK = 8
#: ITopKLayer's largest K.
MAX_TOPK_K = 3840


class ShapeError(ValueError):
    """A TensorRT layer rule that the given shapes or parameters break."""


# -- axes bitmasks -------------------------------------------------------------


def axes_from_mask(mask: int, rank: int) -> tuple[int, ...]:
    """The axes set in a TensorRT axes bitmask (bit i = axis i)."""
    if mask <= 0:
        raise ShapeError(f"axes bitmask must select at least one axis, got {mask}")
    if mask >> rank:
        raise ShapeError(f"axes bitmask {mask:#b} selects an axis >= rank {rank}")
    return tuple(i for i in range(rank) if mask >> i & 1)


def mask_from_axes(axes: Sequence[int], rank: int | None = None) -> int:
    """The TensorRT bitmask of ``axes`` (negative axes need ``rank``)."""
    mask = 0
    for axis in axes:
        if axis < 0:
            if rank is None:
                raise ShapeError(f"negative axis {axis} needs the rank")
            axis += rank
        mask |= 1 << axis
    return mask


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


# -- broadcasting ----------------------------------------------------------------


def broadcast_shapes(*shapes: Shape) -> Shape:
    """TensorRT broadcasting: equal ranks, and per dim equal sizes or a size 1.  A dynamic dim
    against n is n (at run time it must be n or 1), against 1 or another dynamic dim dynamic."""
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise ShapeError(
            "inputs must have equal rank (TensorRT broadcasts only over size-1 dims), got shapes "
            + ", ".join(str(list(s)) for s in shapes)
        )
    result: list[int] = []
    for dims in zip(*shapes, strict=True):
        sizes = {d for d in dims if d not in (1, DYNAMIC)}
        if len(sizes) > 1:
            raise ShapeError(
                "dims are neither equal nor 1 in shapes " + ", ".join(str(list(s)) for s in shapes)
            )
        result.append(sizes.pop() if sizes else DYNAMIC if DYNAMIC in dims else 1)
    return tuple(result)


# -- convolution, deconvolution and pooling ----------------------------------------------


def resolve_padding(
    mode: str,
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    pre: Sequence[int],
    post: Sequence[int],
) -> tuple[Shape, Shape, Shape]:
    """(pre padding, post padding, output spatial dims) of a conv/pooling window.

    ``kEXPLICIT_ROUND_DOWN``/``UP``: O = floor/ceil((I + pre + post - DK) / S) + 1 with
    DK = 1 + D*(K-1).  ``kSAME_UPPER``/``LOWER``: O = ceil(I / S) and the padding
    needed is split with the odd element after (UPPER) or before (LOWER).
    """
    n = len(spatial)
    for what, values in (("stride", stride), ("dilation", dilation), ("pre_padding", pre), ("post_padding", post)):
        if len(values) != n:
            raise ShapeError(f"{what} has {len(values)} dims, the window has {n}")
    if any(s < 1 for s in stride):
        raise ShapeError(f"stride must be positive, got {list(stride)}")
    if any(d < 1 for d in dilation):
        raise ShapeError(f"dilation must be positive, got {list(dilation)}")
    if any(k < 1 for k in kernel):
        raise ShapeError(f"window/kernel dims must be positive, got {list(kernel)}")
    if any(p < 0 for p in (*pre, *post)):
        raise ShapeError(f"padding must not be negative, got pre {list(pre)} post {list(post)}")
    out: list[int] = []
    pres: list[int] = []
    posts: list[int] = []
    for i in range(n):
        dk = 1 + dilation[i] * (kernel[i] - 1)
        if mode in ("kSAME_UPPER", "kSAME_LOWER"):
            o = -(-spatial[i] // stride[i])
            total = max(0, (o - 1) * stride[i] + dk - spatial[i])
            small, big = total // 2, total - total // 2
            p0, p1 = (small, big) if mode == "kSAME_UPPER" else (big, small)
        else:
            p0, p1 = pre[i], post[i]
            m = spatial[i] + p0 + p1
            if m < dk:
                raise ShapeError(
                    f"window extent {dk} is larger than the padded input extent {m} in spatial dim {i}"
                )
            if mode == "kEXPLICIT_ROUND_UP":
                o = -(-(m - dk) // stride[i]) + 1
            elif mode == "kEXPLICIT_ROUND_DOWN":
                o = (m - dk) // stride[i] + 1
            else:
                raise ShapeError(f"unknown padding mode {mode}")
        out.append(o)
        pres.append(p0)
        posts.append(p1)
    return tuple(pres), tuple(posts), tuple(out)


def _check_spatial(what: str, input_shape: Shape, window: Sequence[int]) -> None:
    if len(window) not in (2, 3):
        raise ShapeError(f"{what} supports 2-D and 3-D windows only, got {len(window)}-D {list(window)}")
    if len(input_shape) != len(window) + 2:
        raise ShapeError(
            f"input must have rank {len(window) + 2} (N, C and {len(window)} spatial dims) "
            f"for a {len(window)}-D window, got shape {list(input_shape)}"
        )
    if any(d == DYNAMIC for d in input_shape[1:]):
        raise ShapeError(f"{what} is modelled with a dynamic batch dim only, got shape {list(input_shape)}")


def convolution_output_shape(
    input_shape: Shape,
    kernel_shape: Shape,
    num_output_maps: int,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    dilation: Sequence[int],
    num_groups: int,
    padding_mode: str,
) -> Shape:
    """IConvolutionLayer: kernel [K, C/groups, *kernel_size] on input [N, C, *spatial]."""
    _check_spatial("IConvolutionLayer", input_shape, kernel_size)
    channels = input_shape[1]
    if num_groups < 1 or channels % num_groups or num_output_maps % num_groups:
        raise ShapeError(
            f"num_groups {num_groups} must divide the input channels {channels} "
            f"and num_output_maps {num_output_maps}"
        )
    expected = (num_output_maps, channels // num_groups, *kernel_size)
    if tuple(kernel_shape) != expected:
        raise ShapeError(f"kernel weights must have shape {list(expected)}, got {list(kernel_shape)}")
    _, _, out = resolve_padding(
        padding_mode, input_shape[2:], kernel_size, stride, dilation, pre_padding, post_padding
    )
    return (input_shape[0], num_output_maps, *out)


def deconvolution_output_shape(
    input_shape: Shape,
    kernel_shape: Shape,
    num_output_maps: int,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    dilation: Sequence[int],
    num_groups: int,
    padding_mode: str,
) -> Shape:
    """IDeconvolutionLayer: kernel [C, K/groups, *kernel_size]; O = (I-1)*S + DK - pre - post."""
    _check_spatial("IDeconvolutionLayer", input_shape, kernel_size)
    channels = input_shape[1]
    if num_groups < 1 or channels % num_groups or num_output_maps % num_groups:
        raise ShapeError(
            f"num_groups {num_groups} must divide the input channels {channels} "
            f"and num_output_maps {num_output_maps}"
        )
    expected = (channels, num_output_maps // num_groups, *kernel_size)
    if tuple(kernel_shape) != expected:
        raise ShapeError(f"kernel weights must have shape {list(expected)}, got {list(kernel_shape)}")
    if padding_mode != "kEXPLICIT_ROUND_DOWN":
        raise ShapeError(f"only kEXPLICIT_ROUND_DOWN padding is modelled for deconvolution, got {padding_mode}")
    n = len(kernel_size)
    for what, values in (("stride", stride), ("dilation", dilation), ("pre_padding", pre_padding), ("post_padding", post_padding)):
        if len(values) != n:
            raise ShapeError(f"{what} has {len(values)} dims, the kernel has {n}")
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ShapeError("stride and dilation must be positive")
    if any(p < 0 for p in (*pre_padding, *post_padding)):
        raise ShapeError("padding must not be negative")
    out: list[int] = []
    for i in range(n):
        o = (input_shape[2 + i] - 1) * stride[i] + 1 + dilation[i] * (kernel_size[i] - 1)
        o -= pre_padding[i] + post_padding[i]
        if o < 1:
            raise ShapeError(f"padding leaves no output in spatial dim {i}")
        out.append(o)
    return (input_shape[0], num_output_maps, *out)


def pooling_output_shape(
    input_shape: Shape,
    window: Sequence[int],
    stride: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    padding_mode: str,
) -> Shape:
    _check_spatial("IPoolingLayer", input_shape, window)
    for i, (p0, p1) in enumerate(zip(pre_padding, post_padding, strict=False)):
        if p0 >= window[i] or p1 >= window[i]:
            raise ShapeError(f"padding ({p0}, {p1}) must be smaller than the window {window[i]} in dim {i}")
    _, _, out = resolve_padding(
        padding_mode, input_shape[2:], window, stride, [1] * len(window), pre_padding, post_padding
    )
    return (*input_shape[:2], *out)


# -- matrix multiply ---------------------------------------------------------------


def matrix_multiply_output_shape(a: Shape, op_a: str, b: Shape, op_b: str) -> Shape:
    """IMatrixMultiplyLayer: op(A) * op(B), batch dims broadcast over size 1."""

    def split(shape: Shape, op: str, which: str) -> tuple[Shape, Shape]:
        need = 1 if op == "kVECTOR" else 2
        if len(shape) < need:
            raise ShapeError(f"input {which} with {op} needs rank >= {need}, got {list(shape)}")
        core = shape[len(shape) - need :]
        if op == "kTRANSPOSE":
            core = (core[1], core[0])
        return shape[: len(shape) - need], core

    batch_a, core_a = split(a, op_a, "0")
    batch_b, core_b = split(b, op_b, "1")
    if len(batch_a) != len(batch_b):
        raise ShapeError(
            f"inputs must have the same number of batch dims, got {list(a)} ({op_a}) and {list(b)} ({op_b})"
        )
    batch = broadcast_shapes(batch_a, batch_b) if batch_a else ()
    k_a = core_a[-1]
    k_b = core_b[0]
    if k_a != k_b and DYNAMIC not in (k_a, k_b):
        raise ShapeError(
            f"contraction dims differ: {k_a} in {list(a)} ({op_a}) and {k_b} in {list(b)} ({op_b})"
        )
    rows = core_a[:-1]
    cols = core_b[1:]
    return (*batch, *rows, *cols)


# -- reductions ----------------------------------------------------------------------


def reduce_output_shape(shape: Shape, axes_mask: int, keep_dims: bool) -> Shape:
    axes = axes_from_mask(axes_mask, len(shape))
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def single_axis(mask: int, rank: int, what: str) -> int:
    axes = axes_from_mask(mask, rank)
    if len(axes) != 1:
        raise ShapeError(f"{what} needs exactly one axis in its bitmask, got {mask:#b}")
    return axes[0]


def topk_output_shape(shape: Shape, k: int, axes_mask: int) -> Shape:
    axis = single_axis(axes_mask, len(shape), "ITopKLayer")
    if not 1 <= k <= MAX_TOPK_K:
        raise ShapeError(f"k must be in [1, {MAX_TOPK_K}], got {k}")
    if k > shape[axis]:
        raise ShapeError(f"k = {k} exceeds the size {shape[axis]} of axis {axis}")
    return tuple(k if i == axis else d for i, d in enumerate(shape))


# -- shuffles and data movement --------------------------------------------------------------


def _check_permutation(perm: Sequence[int], rank: int, what: str) -> None:
    if sorted(perm) != list(range(rank)):
        raise ShapeError(f"{what} {list(perm)} is not a permutation of {rank} dims")


def reshape_dims(shape: Shape, dims: Sequence[int], zero_is_placeholder: bool) -> Shape:
    """Resolve IShuffleLayer reshape dims: 0 copies the input dim, -1 is inferred.  Dynamic input
    dims not copied by a 0 make the inferred dim dynamic; without a -1 they are an error (the
    element count could not be checked before run time)."""
    resolved: list[int] = []
    copied: set[int] = set()
    infer = -1
    for i, d in enumerate(dims):
        if d == 0 and zero_is_placeholder:
            if i >= len(shape):
                raise ShapeError(f"reshape dim {i} is 0 (copy) but the input has only {len(shape)} dims")
            resolved.append(shape[i])
            copied.add(i)
        elif d == -1:
            if infer >= 0:
                raise ShapeError(f"reshape dims {list(dims)} have more than one -1")
            infer = i
            resolved.append(1)
        elif d < 0:
            raise ShapeError(f"reshape dim {d} is invalid (only -1 may be negative)")
        else:
            resolved.append(d)
    if DYNAMIC in shape:
        left = [d for i, d in enumerate(shape) if i not in copied]
        if DYNAMIC in left:
            if infer < 0:
                raise ShapeError(f"reshaping {list(shape)} to {list(dims)}: a dynamic dim needs 0 (copy) or -1 "
                                 "(inferred) in the reshape dims")
            resolved[infer] = DYNAMIC
            return tuple(resolved)
        shape = tuple(left)
        resolved_known = [d for i, d in enumerate(resolved) if i not in copied]
    else:
        resolved_known = resolved
    volume = math.prod(shape)
    known = math.prod(resolved_known)
    if infer >= 0:
        if known == 0 or volume % known:
            raise ShapeError(f"cannot infer -1 reshaping {list(shape)} to {list(dims)}")
        resolved[infer] = volume // known
    elif known != volume:
        raise ShapeError(
            f"reshape changes the element count: {list(shape)} has {volume}, {list(dims)} has {known}"
        )
    return tuple(resolved)


def shuffle_output_shape(
    shape: Shape,
    first_transpose: Sequence[int] | None,
    reshape: Sequence[int] | None,
    second_transpose: Sequence[int] | None,
    zero_is_placeholder: bool,
) -> Shape:
    """second_transpose(reshape(first_transpose(input)))."""
    current = shape
    if first_transpose is not None:
        _check_permutation(first_transpose, len(current), "first_transpose")
        current = tuple(current[p] for p in first_transpose)
    if reshape is not None:
        if len(reshape) > MAX_RANK:
            raise ShapeError(f"reshape to rank {len(reshape)} exceeds TensorRT's maximum rank {MAX_RANK}")
        current = reshape_dims(current, reshape, zero_is_placeholder)
    if second_transpose is not None:
        _check_permutation(second_transpose, len(current), "second_transpose")
        current = tuple(current[p] for p in second_transpose)
    return current


def concatenation_output_shape(shapes: Sequence[Shape], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("needs at least one input")
    rank = len(shapes[0])
    if not 0 <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    for s in shapes:
        if len(s) != rank or any(s[i] != shapes[0][i] and DYNAMIC not in (s[i], shapes[0][i])
                                 for i in range(rank) if i != axis):
            raise ShapeError(
                f"inputs must agree on every dim except axis {axis}, got "
                + ", ".join(str(list(x)) for x in shapes)
            )
    def joined(i: int) -> int:
        sizes = [s[i] for s in shapes]
        if i == axis:
            return DYNAMIC if DYNAMIC in sizes else sum(sizes)
        return next((d for d in sizes if d != DYNAMIC), DYNAMIC)

    return tuple(joined(i) for i in range(rank))


def slice_output_shape(
    shape: Shape, start: Sequence[int], size: Sequence[int], stride: Sequence[int], mode: str
) -> Shape:
    rank = len(shape)
    for what, values in (("start", start), ("size", size), ("stride", stride)):
        if len(values) != rank:
            raise ShapeError(f"{what} has {len(values)} dims, the input has rank {rank}")
    if any(s < 0 for s in size):
        raise ShapeError(f"size must not be negative, got {list(size)}")
    if mode == "kSTRICT_BOUNDS":
        for i in range(rank):
            if size[i] == 0:
                continue
            last = start[i] + (size[i] - 1) * stride[i]
            if not (0 <= start[i] < shape[i] and 0 <= last < shape[i]):
                raise ShapeError(
                    f"kSTRICT_BOUNDS slice reads out of bounds in dim {i}: "
                    f"start {start[i]}, size {size[i]}, stride {stride[i]}, input size {shape[i]}"
                )
    elif mode in ("kWRAP", "kCLAMP", "kREFLECT"):
        if any(shape[i] == 0 and size[i] > 0 for i in range(rank)):
            raise ShapeError(f"{mode} needs non-empty input dims")
    return tuple(size)


def gather_output_shape(data: Shape, indices: Shape, axis: int, mode: str, num_elementwise_dims: int) -> Shape:
    r, q = len(data), len(indices)
    if mode == "kELEMENT":
        if not 0 <= axis < r:
            raise ShapeError(f"axis {axis} is out of range for rank {r}")
        if q != r:
            raise ShapeError(f"kELEMENT needs indices of the data's rank {r}, got {list(indices)}")
        if num_elementwise_dims != 0:
            raise ShapeError("kELEMENT takes num_elementwise_dims = 0")
        for i in range(r):
            if i != axis and indices[i] != data[i]:
                raise ShapeError(
                    f"kELEMENT indices {list(indices)} must match data {list(data)} except on axis {axis}"
                )
        return indices
    if mode == "kDEFAULT":
        if not 0 <= axis < r:
            raise ShapeError(f"axis {axis} is out of range for rank {r}")
        if num_elementwise_dims not in (0, 1):
            raise ShapeError(f"kDEFAULT takes num_elementwise_dims 0 or 1, got {num_elementwise_dims}")
        if num_elementwise_dims == 1:
            if axis == 0 or q < 1 or indices[0] != data[0]:
                raise ShapeError(
                    "num_elementwise_dims = 1 needs axis > 0 and indices and data sharing dim 0, "
                    f"got data {list(data)}, indices {list(indices)}, axis {axis}"
                )
            return (data[0], *data[1:axis], *indices[1:], *data[axis + 1 :])
        return (*data[:axis], *indices, *data[axis + 1 :])
    if mode == "kND":
        b = num_elementwise_dims
        if q < 1:
            raise ShapeError("kND needs indices of rank >= 1")
        depth = indices[-1]
        if not 0 <= b < min(r, q):
            raise ShapeError(f"num_elementwise_dims {b} must be below the ranks of data and indices")
        if tuple(indices[:b]) != tuple(data[:b]):
            raise ShapeError(f"the first {b} dims of data {list(data)} and indices {list(indices)} must match")
        if not 1 <= depth <= r - b:
            raise ShapeError(f"indices' last dim {depth} must be in [1, {r - b}]")
        return (*indices[:-1], *data[b + depth :])
    raise ShapeError(f"unknown gather mode {mode}")


def check_scatter(data: Shape, indices: Shape, updates: Shape, mode: str, axis: int) -> Shape:
    r = len(data)
    if mode == "kELEMENT":
        if not 0 <= axis < r:
            raise ShapeError(f"axis {axis} is out of range for rank {r}")
        if len(indices) != r or tuple(updates) != tuple(indices):
            raise ShapeError(
                f"kELEMENT needs indices and updates of one shape and the data's rank, "
                f"got data {list(data)}, indices {list(indices)}, updates {list(updates)}"
            )
        for i in range(r):
            if i != axis and indices[i] > data[i]:
                raise ShapeError(f"indices dim {i} ({indices[i]}) exceeds the data's ({data[i]})")
        return data
    if mode == "kND":
        if len(indices) < 1:
            raise ShapeError("kND needs indices of rank >= 1")
        depth = indices[-1]
        if not 1 <= depth <= r:
            raise ShapeError(f"indices' last dim {depth} must be in [1, {r}]")
        expected = (*indices[:-1], *data[depth:])
        if tuple(updates) != expected:
            raise ShapeError(f"kND updates must have shape {list(expected)}, got {list(updates)}")
        return data
    raise ShapeError(f"unknown scatter mode {mode}")


def grid_sample_output_shape(input_shape: Shape, grid: Shape) -> Shape:
    """IGridSampleLayer: input [N, C, H, W], grid [N, H', W', 2] -> [N, C, H', W']."""
    if len(input_shape) != 4:
        raise ShapeError(f"input must be [N, C, H, W], got {list(input_shape)}")
    if len(grid) != 4 or grid[3] != 2 or grid[0] != input_shape[0]:
        raise ShapeError(f"grid must be [N={input_shape[0]}, H', W', 2], got {list(grid)}")
    return (input_shape[0], input_shape[1], grid[1], grid[2])


def padding_output_shape(shape: Shape, pre: Sequence[int], post: Sequence[int]) -> Shape:
    """IPaddingLayer: zero padding (negative: trimming) of the two innermost dims."""
    if len(shape) < 4:
        raise ShapeError(f"input must have rank >= 4, got {list(shape)}")
    if len(pre) != 2 or len(post) != 2:
        raise ShapeError(f"pads the two innermost dims: pre/post padding need 2 values, got {list(pre)}, {list(post)}")
    out = list(shape)
    for j in range(2):
        i = len(shape) - 2 + j
        out[i] = shape[i] + pre[j] + post[j]
        if out[i] < 0:
            raise ShapeError(f"trimming removes more than all of dim {i}")
    return tuple(out)


def resize_output_shape(
    shape: Shape, output_dims: Sequence[int] | None, scales: Sequence[float] | None, mode: str
) -> Shape:
    if (output_dims is None) == (scales is None):
        raise ShapeError("needs exactly one of output_dims and scales")
    if output_dims is not None:
        if len(output_dims) != len(shape):
            raise ShapeError(f"output_dims has {len(output_dims)} dims, the input has rank {len(shape)}")
        out = tuple(output_dims)
    else:
        assert scales is not None
        if len(scales) != len(shape):
            raise ShapeError(f"scales has {len(scales)} values, the input has rank {len(shape)}")
        if any(s <= 0 for s in scales):
            raise ShapeError(f"scales must be positive, got {list(scales)}")
        out = tuple(int(math.floor(d * s)) for d, s in zip(shape, scales, strict=True))
    if any(d < 1 for d in out):
        raise ShapeError(f"output dims must be positive, got {list(out)}")
    if mode == "kLINEAR":
        changed = [i for i in range(len(shape)) if out[i] != shape[i]]
        if changed and changed[0] < len(shape) - 3:
            raise ShapeError("kLINEAR resizes at most the 3 innermost dims")
    return out


# -- einsum ---------------------------------------------------------------------------


def parse_einsum(equation: str, num_inputs: int) -> tuple[list[str], str]:
    """Input subscripts and output subscripts of a TensorRT einsum equation."""
    eq = equation.replace(" ", "")
    if not re.fullmatch(r"[a-z,]*(->[a-z]*)?", eq):
        raise ShapeError(
            f"equation {equation!r} may use only lower-case letters, ',' and '->' (no ellipsis)"
        )
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != num_inputs:
        raise ShapeError(f"equation {equation!r} has {len(inputs)} operands, the layer has {num_inputs}")
    if num_inputs not in (1, 2):
        raise ShapeError(f"IEinsumLayer takes 1 or 2 inputs, got {num_inputs}")
    for term in inputs:
        if len(set(term)) != len(term):
            raise ShapeError(f"subscripts {term!r} repeat a letter (diagonals are not supported)")
    if not arrow:
        counts: dict[str, int] = {}
        for term in inputs:
            for ch in term:
                counts[ch] = counts.get(ch, 0) + 1
        rhs = "".join(sorted(ch for ch, n in counts.items() if n == 1))
    if len(set(rhs)) != len(rhs) or any(ch not in lhs for ch in rhs):
        raise ShapeError(f"output subscripts {rhs!r} must be distinct letters that appear in the inputs")
    return inputs, rhs


def einsum_output_shape(equation: str, shapes: Sequence[Shape]) -> Shape:
    inputs, rhs = parse_einsum(equation, len(shapes))
    sizes: dict[str, int] = {}
    for term, shape in zip(inputs, shapes, strict=True):
        if len(term) != len(shape):
            raise ShapeError(f"subscripts {term!r} do not match an input of rank {len(shape)}")
        for ch, d in zip(term, shape, strict=True):
            if sizes.setdefault(ch, d) != d:
                raise ShapeError(f"subscript {ch!r} has sizes {sizes[ch]} and {d} (no broadcasting)")
    return tuple(sizes[ch] for ch in rhs)
