"""The static description of one GEMM call site: :class:`GemmSpec`.

``C[b, i, j] = epilogue( sum_k A[b, i, k] * B[b, k, j] )`` for ``b < batch``,
``i < m``, ``j < n``, all f32, with

* ``A[b, i, k]`` at ``a + b*batch_stride_a + i*lda + k``;
* ``B`` either prepacked (``b_packed=True``, layout :class:`GemmPackedLayout`
  ``KN{nr}n``, batch ``b`` at ``b + b*batch_stride_b``), or a plain row-major
  ``[K, N]`` operand with row stride ``ldb`` (``b_transposed=False``) or its
  transpose, stored ``[N, K]`` with row stride ``ldb`` (``b_transposed=True``,
  e.g. ``Q @ K^T``);
* ``C[b, i, j]`` at ``c + b*batch_stride_c + i*ldc + j``;
* ``m_runtime`` / ``batch_runtime``: ``m`` / ``batch`` are given at each call (an ``i64``
  argument each, after the pointers, in that order), up to the spec's value, which the
  blocking, the thread split and the workspace are planned for (one build serving a
  dynamic range);
* ``runtime``: more fields given at each call, after those (in :data:`RUNTIME_FIELDS`
  order): ``n``, ``k`` (at most the spec's), the leading dims and the batch strides, as
  attention over a dynamic sequence needs (``Q @ K^T`` has ``n = ldc = seq``, ``P @ V`` has
  ``k = lda = seq``, their batch strides ``seq * 64`` and ``seq * seq``).  Such a GEMM reads a
  plain (not prepacked) ``B``, packed on the fly, packs ``A`` when ``lda`` is given at run
  time, stages each C tile in the workspace when ``n`` or ``ldc`` is (the tile's columns
  copied out under a run-time mask), and has no bias or binary epilogue;
* the epilogue: ``+ bias[j]``, then ``unary``, then ``binary`` with ``other``
  (``x + alpha*other`` / ``x - alpha*other``), or binary before unary with
  ``binary_first``.  ``other[b, i, j]`` is at
  ``other + b*other_batch_stride + i*other_strides[0] + j*other_strides[1]``;
  a stride of 0 broadcasts.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from ziggurat.backends.cpu.isa import Isa, parse_isa, vector_width
from ziggurat.backends.cpu.kernels.microkernel import Epilogue
from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.backends.cpu.kernels.unary import UnaryError, normalize_unary_params
from ziggurat.backends.cpu.threads import default_threads
from ziggurat.dialects.fused.pack import GemmPackedLayout


class GemmSpecError(ValueError):
    """A GEMM specification is inconsistent."""


#: the fields ``GemmSpec.runtime`` may name, in the order the entry takes them: the sizes and
#: strides of A, B and C (a plain B and no bias or binary epilogue), then ``other``'s strides
#: (``other_strides`` as a row and a column stride, and its batch stride)
RUNTIME_FIELDS = ("n", "k", "lda", "ldb", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c",
                  "other_row_stride", "other_col_stride", "other_batch_stride")
OTHER_FIELDS = RUNTIME_FIELDS[-3:]


def _positive(name: str, v: object) -> int:
    return checked_positive("GemmSpec", name, v)


def _nonneg(name: str, v: object) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise GemmSpecError(f"GemmSpec.{name} must be a non-negative int, got {v!r}")
    return v


def checked_leading_dims(owner: str, lda: object, ldc: object, k: int, n: int) -> tuple[int, int]:
    """A row-major A's and C's leading dimensions (defaults ``k`` and ``n``), checked."""
    lda_ = k if lda is None else checked_positive(owner, "lda", lda)
    ldc_ = n if ldc is None else checked_positive(owner, "ldc", ldc)
    if lda_ < k:
        raise GemmSpecError(f"{owner}.lda={lda_} is smaller than k={k}")
    if ldc_ < n:
        raise GemmSpecError(f"{owner}.ldc={ldc_} is smaller than n={n}")
    return lda_, ldc_


def checked_positive(owner: str, name: str, v: object) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise GemmSpecError(f"{owner}.{name} must be a positive int, got {v!r}")
    return v


def checked_other_strides(owner: str, binary: str | None, other_strides: tuple[int, int] | None,
                          n: int) -> tuple[int, int] | None:
    """The ``(row, column)`` strides of a binary post-op's operand (row-major ``[m, n]`` when
    not given; the column stride 0 broadcasts a row), None without a binary op."""
    if binary is None:
        if other_strides is not None:
            raise GemmSpecError(f"{owner}.other_strides given without a binary op")
        return None
    rs, cs = (n, 1) if other_strides is None else tuple(other_strides)
    if not isinstance(rs, int) or rs < 0 or cs not in (0, 1):
        raise GemmSpecError(f"{owner}.other_strides must be (row >= 0, 0 or 1), got {other_strides!r}")
    return (rs, cs)


def spec_symbol(prefix: str, spec: object) -> str:
    """A kernel's symbol from its spec's fields (all but ``name``): equal specs, equal code."""
    text = repr(tuple((f.name, getattr(spec, f.name)) for f in fields(spec) if f.name != "name"))  # pyright: ignore[reportArgumentType]
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:16]


def checked_epilogue(owner: str, unary: str | None,
                     unary_params: Mapping[str, float | None] | tuple[tuple[str, float | None], ...],
                     binary: str | None, alpha: object) -> tuple[tuple[tuple[str, float | None], ...], float]:
    """A GEMM spec's epilogue fields checked: the activation's parameters (sorted, defaults
    filled in) and ``alpha`` as a float; a :class:`GemmSpecError` naming ``owner`` otherwise."""
    params: tuple[tuple[str, float | None], ...] = ()
    if unary is not None:
        try:
            params = tuple(sorted(normalize_unary_params(unary, dict(unary_params)).items()))
        except UnaryError as exc:
            raise GemmSpecError(f"{owner}.unary: {exc}") from None
    elif unary_params:
        raise GemmSpecError(f"{owner}.unary_params given without a unary kind")
    if binary not in (None, "add", "sub"):
        raise GemmSpecError(f"{owner}.binary must be 'add', 'sub' or None, got {binary!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not math.isfinite(alpha):
        raise GemmSpecError(f"{owner}.alpha must be a finite number, got {alpha!r}")
    return params, float(alpha)


def checked_quantizer(owner: str, value: object) -> tuple[float, int, int, int]:
    """``(scale, zero_point, quant_min, quant_max)`` of a per-tensor quantizer: a positive finite
    scale and integer bounds around the zero point, or a GemmSpecError naming ``owner``."""
    if not isinstance(value, tuple | list) or len(value) != 4:  # pyright: ignore[reportUnknownArgumentType]
        raise GemmSpecError(f"{owner} must be (scale, zero_point, quant_min, quant_max), got {value!r}")
    scale, zero_point, low, high = value  # pyright: ignore[reportUnknownVariableType]
    ints = (zero_point, low, high)  # pyright: ignore[reportUnknownVariableType]
    if (not isinstance(scale, float) or not math.isfinite(scale) or scale <= 0
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in ints)  # pyright: ignore[reportUnknownVariableType]
            or not low <= zero_point <= high):
        raise GemmSpecError(f"{owner} {value!r} is not a positive scale and quant_min <= zero_point <= quant_max")
    return (scale, zero_point, low, high)  # pyright: ignore[reportUnknownVariableType]


def checked_quantized_output(owner: str, requantize: object, store_u8: bool) -> tuple[float, int, int, int] | None:
    """A kernel's ``requantize`` (None, or a quantizer), and ``store_u8`` only with one whose range
    holds uint8 values: the fields an int8 GEMM and a depthwise convolution share."""
    checked = None if requantize is None else checked_quantizer(f"{owner}.requantize", requantize)
    if store_u8 and (checked is None or not 0 <= checked[2] <= checked[3] <= 255):
        raise GemmSpecError(f"{owner}.store_u8 needs a requantize into a range of uint8 values")
    return checked


def checked_dequantization(owner: str, value: object) -> tuple[float, int] | None:
    """``(scale, zero_point)`` reading uint8 values (None: the operand is float32)."""
    if value is None:
        return None
    if not isinstance(value, tuple | list) or len(value) != 2:  # pyright: ignore[reportUnknownArgumentType]
        raise GemmSpecError(f"{owner} must be (scale, zero_point), got {value!r}")
    scale, zero_point, _, _ = checked_quantizer(owner, (*value, 0, 255))  # pyright: ignore[reportUnknownArgumentType]
    return scale, zero_point


@dataclass(frozen=True)
class GemmSpec:
    m: int
    n: int
    k: int
    lda: int | None = None
    ldc: int | None = None
    isa: Isa | str = "auto"
    threads: int | None = None
    b_packed: bool = True
    nr: int | None = None
    b_transposed: bool = False
    ldb: int | None = None
    batch: int = 1
    batch_stride_a: int | None = None
    batch_stride_b: int | None = None
    batch_stride_c: int | None = None
    bias: bool = False
    unary: str | None = None
    unary_params: Mapping[str, float | None] | tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    other_strides: tuple[int, int] | None = None
    other_batch_stride: int = 0
    binary_first: bool = False
    pack_a: bool | None = None
    m_runtime: bool = False
    batch_runtime: bool = False
    runtime: tuple[str, ...] = ()
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        m, n, k = _positive("m", self.m), _positive("n", self.n), _positive("k", self.k)
        try:
            isa = parse_isa(self.isa, host=False)
        except ValueError as exc:
            raise GemmSpecError(f"GemmSpec.isa: {exc}") from None
        s(self, "isa", isa)
        lda, ldc = checked_leading_dims("GemmSpec", self.lda, self.ldc, k, n)
        s(self, "lda", lda)
        s(self, "ldc", ldc)
        s(self, "threads", default_threads() if self.threads is None else _positive("threads", self.threads))
        _positive("batch", self.batch)
        w = vector_width(isa, 32)
        if self.b_packed:
            if self.b_transposed or self.ldb is not None:
                raise GemmSpecError("GemmSpec: b_transposed/ldb describe an unpacked B; they need b_packed=False")
            nr = choose_nr(isa) if self.nr is None else _positive("nr", self.nr)
            if nr % w:
                raise GemmSpecError(f"GemmSpec.nr={nr} must be a multiple of the {isa.value} vector width {w}")
            s(self, "nr", nr)
            natural_b = self.b_layout.panels * k * nr
        else:
            if self.nr is not None:
                raise GemmSpecError("GemmSpec.nr is the prepacked panel width; it needs b_packed=True")
            inner = k if self.b_transposed else n
            s(self, "ldb", inner if self.ldb is None else _positive("ldb", self.ldb))
            if self.ldb < inner:  # type: ignore[operator]
                what = "k (B given as [N, K])" if self.b_transposed else "n"
                raise GemmSpecError(f"GemmSpec.ldb={self.ldb} is smaller than {what}={inner}")
            natural_b = (n if self.b_transposed else k) * self.ldb  # type: ignore[operator]
        given_strides = next((f for f in ("batch_stride_a", "batch_stride_c") if getattr(self, f) is None), None)
        s(self, "batch_stride_a", m * self.lda if self.batch_stride_a is None  # type: ignore[operator]
          else _nonneg("batch_stride_a", self.batch_stride_a))
        s(self, "batch_stride_b", natural_b if self.batch_stride_b is None
          else _nonneg("batch_stride_b", self.batch_stride_b))
        s(self, "batch_stride_c", m * self.ldc if self.batch_stride_c is None  # type: ignore[operator]
          else _positive("batch_stride_c", self.batch_stride_c) if self.batch > 1
          else _nonneg("batch_stride_c", self.batch_stride_c))
        params, alpha = checked_epilogue("GemmSpec", self.unary, self.unary_params, self.binary, self.alpha)
        s(self, "unary_params", params)
        s(self, "alpha", alpha)
        if self.binary is None:
            if self.other_strides is not None or self.other_batch_stride:
                raise GemmSpecError("GemmSpec.other_strides/other_batch_stride given without a binary op")
        else:
            strides = (n, 1) if self.other_strides is None else tuple(self.other_strides)
            if len(strides) != 2:
                raise GemmSpecError(f"GemmSpec.other_strides must be (row, col), got {self.other_strides!r}")
            s(self, "other_strides", (_nonneg("other_strides[0]", strides[0]), _nonneg("other_strides[1]", strides[1])))
            _nonneg("other_batch_stride", self.other_batch_stride)
        runtime = tuple(self.runtime)
        unknown = [f for f in runtime if f not in RUNTIME_FIELDS]
        if unknown or len(set(runtime)) != len(runtime):
            raise GemmSpecError(f"GemmSpec.runtime names {list(runtime)}: each at most once, of {list(RUNTIME_FIELDS)}")
        s(self, "runtime", tuple(f for f in RUNTIME_FIELDS if f in runtime))
        plain = [f for f in runtime if f not in OTHER_FIELDS]
        if plain and (self.b_packed or self.bias or self.binary is not None):
            raise GemmSpecError("GemmSpec.runtime: a GEMM with run-time n, k or strides reads a plain (not "
                                "prepacked) B and has no bias or binary epilogue")
        if any(f in OTHER_FIELDS for f in runtime) and self.binary is None:
            raise GemmSpecError("GemmSpec.runtime: other's strides need a binary epilogue")
        if self.m_runtime and (self.batch > 1 or self.batch_runtime) and given_strides is not None:
            raise GemmSpecError("GemmSpec.m_runtime: a batched GEMM takes a run-time m only with the batch strides "
                                f"of A and C given (their defaults follow the planned m): {given_strides} is not")
        if self.pack_a not in (None, True, False):
            raise GemmSpecError(f"GemmSpec.pack_a must be True, False or None (auto), got {self.pack_a!r}")
        if self.name is not None and (not self.name or not all(c.isalnum() or c in "_." for c in self.name)):
            raise GemmSpecError(f"GemmSpec.name must be a non-empty identifier, got {self.name!r}")

    # -- derived -----------------------------------------------------------
    @property
    def b_layout(self) -> GemmPackedLayout:
        if not self.b_packed:
            raise GemmSpecError("GemmSpec.b_layout: B is not prepacked (b_packed=False)")
        assert self.nr is not None
        return GemmPackedLayout(nr=self.nr, k=self.k, n=self.n)

    @property
    def epilogue(self) -> Epilogue:
        other_rs, other_cs = self.other_strides if self.other_strides is not None else (0, 1)
        return Epilogue(
            bias=self.bias,
            unary=self.unary,
            unary_params=self.unary_params,  # type: ignore[arg-type]
            binary=self.binary,
            alpha=self.alpha,
            other_rs=other_rs,
            other_cs=other_cs,
            binary_first=self.binary_first,
            other_runtime="other_row_stride" in self.runtime or "other_col_stride" in self.runtime,
        )

    @property
    def symbol(self) -> str:
        """The C symbol of the emitted entry function."""
        if self.name is not None:
            return self.name
        return "zig_gemm_" + self.digest()[:16]

    def digest(self) -> str:
        text = repr(tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "name"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def runtime_sizes(self) -> tuple[str, ...]:
        """The sizes the entry takes as ``i64`` arguments, in order."""
        return tuple(name for name, on in (("m", self.m_runtime), ("batch", self.batch_runtime)) if on) + self.runtime

    @property
    def stages_c(self) -> bool:
        """C tiles are staged in the workspace (a run-time ``n`` or ``ldc``)."""
        return "n" in self.runtime or "ldc" in self.runtime

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.m * self.n * self.k
