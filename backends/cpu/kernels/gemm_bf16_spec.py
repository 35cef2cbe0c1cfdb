"""The static description of one bf16 GEMM call site: :class:`Bf16GemmSpec`.

``C[i, j] = epilogue( sum_k A[i, k] * B[k, j] )`` for ``i < m``, ``j < n`` with

* ``A`` bf16, row-major: ``A[i, k]`` at ``a + i*lda + k``;
* ``B`` bf16, prepacked (:mod:`~ziggurat.backends.cpu.kernels.pack_bf16`), or a run-time
  matrix (``b_packed=False``): ``B[k, j]`` at ``b + k*ldb + j``, or with ``b_transposed`` at
  ``b + j*ldb + k`` (``Q @ K^T``), packed by each task into its panel as it goes;
* or, with ``b_conv = (plane, wq, kh, kw, dh, dw, sh, sw)``, ``B`` the implicit im2col matrix
  of a convolution over a zero-padded image split into ``sh x sw`` phases: channel ``c``,
  phase ``(a, b)`` is the plane ``(c*sh + a)*sw + b`` of ``plane = Hq*Wq`` elements holding the
  padded pixels ``(sh*y + a, sw*x + b)`` in rows ``wq`` wide (stride 1: one phase, the padded
  channel itself).  Row ``k = (c*kh + i)*kw + t`` (tap position ``p = i*dh``, ``q = t*dw``)
  starts at ``((c*sh + p % sh)*sw + q % sw)*plane + (p // sh)*wq + q // sw``, and ``B[k, j]`` is
  ``j`` elements on; column ``j`` is the output pixel ``(j // wq, j % wq)`` (those with
  ``j % wq`` past the output's width are computed and not part of it);
* ``batch`` products, operand ``b`` of each at ``batch_stride_*`` elements from the last (0
  broadcasts a prepacked B or ``other``);
* the product scaled by ``scale`` before the epilogue (``alpha`` of ``baddbmm``);
* products accumulated in float32 (``tdpbf16ps`` / ``vdpbf16ps``), the epilogue in float32:
  ``+ bias[j]`` (float32; ``bias[i]`` with ``bias_rows``), then ``unary``, then ``binary`` with ``other`` (``x + alpha*other``
  / ``x - alpha*other``; bf16 or float32, element ``(i, j)`` at ``other + i*rs + j*cs``, ``cs``
  0 or 1), or binary before unary with ``binary_first``;
* ``C`` bf16 (rounded to nearest even, as torch rounds) or float32, ``C[i, j]`` at
  ``c + i*ldc + j``;
* with ``rounded_steps`` (``C`` bf16), each step rounded to bf16 as eager's separate bf16 ops
  round their results: the product (scaled, plus bias), the binary's and the unary's results
  (a ``scale`` multiplies the rounded product: eager's ``matmul * c``), so the activation reads
  the bf16 value eager's activation reads;
* with ``round_out`` (``C`` float32), ``C`` holds the bf16 result widened: rounded to bf16 as a
  bf16 ``C`` is, then stored as float32 (a bf16 GEMM whose only reader casts it to float32:
  GPT-2's logits);
* with ``unary_table`` (``rounded_steps``, a transcendental ``unary``), the activation's result
  is looked up in a table of eager's own answers for every bf16 input
  (:mod:`~ziggurat.backends.cpu.kernels.bf16_tables`) instead of computed;
* with ``a_padded``, every row of ``A`` holds ``K`` rounded up to 32 elements, zero past ``K``
  (a weight padded at compile time): the AVX512-BF16 kernel then reads the last, partial step of
  K in place, in the same loop, instead of copying each block's tail into a zero-padded buffer
  (the AMX kernel still copies it);
* ``a_specials`` / ``b_specials``: what a constant operand holds that the bf16 dot products
  would multiply differently from eager (:mod:`~ziggurat.backends.cpu.kernels.bf16_specials`),
  or ``SCAN`` (the default) for one read at run time, which the kernel scans when called.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ziggurat.backends.cpu.kernels.bf16_specials import SCAN, checked_specials, needs_exact_path
from ziggurat.backends.cpu.kernels.bf16_tables import TABLED, has_table
from ziggurat.backends.cpu.kernels.gemm_spec import (
    GemmSpecError,
    checked_positive,
    checked_epilogue,
    checked_leading_dims,
    checked_other_strides,
    spec_symbol,
)
from ziggurat.backends.cpu.kernels.pack_bf16 import padded_k
from ziggurat.backends.cpu.threads import default_threads

KERNELS = ("amx", "avx512bf16")
#: A run-time B is packed a panel at a time into the task's stack (``K * 64`` bytes): up to a
#: 3x3 convolution of 512 channels.
MAX_RUNTIME_K = 4608


def _positive(name: str, v: object) -> int:
    return checked_positive("Bf16GemmSpec", name, v)


@dataclass(frozen=True)
class Bf16GemmSpec:
    m: int
    n: int
    k: int
    kernel: str
    lda: int | None = None
    ldc: int | None = None
    threads: int | None = None
    out_bf16: bool = True
    bias: bool = False
    unary: str | None = None
    unary_params: Mapping[str, float | None] | tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    other_strides: tuple[int, int] | None = None
    other_bf16: bool = True
    binary_first: bool = False
    b_packed: bool = True
    b_transposed: bool = False
    ldb: int | None = None
    batch: int = 1
    batch_stride_a: int = 0
    batch_stride_b: int = 0
    batch_stride_c: int = 0
    other_batch_stride: int = 0
    scale: float = 1.0
    bias_rows: bool = False
    b_conv: tuple[int, int, int, int, int, int, int, int] | None = None
    a_padded: bool = False
    rounded_steps: bool = False
    round_out: bool = False
    unary_table: bool = False
    a_specials: int = SCAN
    b_specials: int = SCAN
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        m, n, k = _positive("m", self.m), _positive("n", self.n), _positive("k", self.k)
        del m
        if self.kernel not in KERNELS:
            raise GemmSpecError(f"Bf16GemmSpec.kernel must be one of {KERNELS}, got {self.kernel!r}")
        lda, ldc = checked_leading_dims("Bf16GemmSpec", self.lda, self.ldc, k, n)
        if self.a_padded and lda < padded_k(k):
            raise GemmSpecError(f"Bf16GemmSpec.a_padded needs lda >= K rounded up to 32 ({padded_k(k)}), got {lda}")
        s(self, "lda", lda)
        s(self, "ldc", ldc)
        s(self, "threads", default_threads() if self.threads is None else _positive("threads", self.threads))
        params, alpha = checked_epilogue("Bf16GemmSpec", self.unary, self.unary_params, self.binary, self.alpha)
        s(self, "unary_params", params)
        s(self, "alpha", alpha)
        s(self, "other_strides", checked_other_strides("Bf16GemmSpec", self.binary, self.other_strides, n))
        if self.bias_rows and not self.bias:
            raise GemmSpecError("Bf16GemmSpec.bias_rows needs bias=True")
        _positive("batch", self.batch)
        for stride in ("batch_stride_a", "batch_stride_b", "batch_stride_c", "other_batch_stride"):
            v = getattr(self, stride)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise GemmSpecError(f"Bf16GemmSpec.{stride} must be a non-negative int, got {v!r}")
        if self.b_packed:
            if self.b_transposed or self.ldb is not None:
                raise GemmSpecError("Bf16GemmSpec: b_transposed/ldb describe a run-time B; they need b_packed=False")
        else:
            if k > MAX_RUNTIME_K:
                raise GemmSpecError(f"Bf16GemmSpec: a run-time B has K={k} > {MAX_RUNTIME_K} rows")
            inner = k if self.b_transposed else n
            s(self, "ldb", inner if self.ldb is None else _positive("ldb", self.ldb))
            if self.ldb < inner:  # type: ignore[operator]
                raise GemmSpecError(f"Bf16GemmSpec.ldb={self.ldb} is smaller than {inner}")
        if self.b_conv is not None:
            conv = tuple(self.b_conv)
            if len(conv) != 8:
                raise GemmSpecError(f"Bf16GemmSpec.b_conv must be (plane, wq, kh, kw, dh, dw, sh, sw), got {self.b_conv!r}")
            for what, v in zip(("plane", "wq", "kh", "kw", "dh", "dw", "sh", "sw"), conv, strict=True):
                _positive(f"b_conv.{what}", v)
            if self.b_packed or self.b_transposed:
                raise GemmSpecError("Bf16GemmSpec.b_conv describes a run-time B read by rows: b_packed and b_transposed must be False")
            if k % (conv[2] * conv[3]):
                raise GemmSpecError(f"Bf16GemmSpec: K={k} is not channels x {conv[2]}x{conv[3]} taps")
            s(self, "b_conv", conv)
        if not isinstance(self.scale, (int, float)) or isinstance(self.scale, bool) or not math.isfinite(self.scale):
            raise GemmSpecError(f"Bf16GemmSpec.scale must be a finite number, got {self.scale!r}")
        s(self, "scale", float(self.scale))
        if self.round_out and self.out_bf16:
            raise GemmSpecError("Bf16GemmSpec.round_out stores a float32 C: it needs out_bf16=False")
        if self.rounded_steps and not (self.out_bf16 or self.round_out):
            raise GemmSpecError("Bf16GemmSpec.rounded_steps rounds to bf16: it needs out_bf16=True or round_out")
        if self.unary_table and not (self.rounded_steps and has_table(self.unary)):
            raise GemmSpecError(f"Bf16GemmSpec.unary_table needs rounded_steps and an activation with a table "
                                f"({', '.join(sorted(TABLED))}), got unary={self.unary!r}")
        for operand in ("a_specials", "b_specials"):
            checked_specials("Bf16GemmSpec", operand, getattr(self, operand))
        if self.binary_first and (self.binary is None or self.unary is None):
            s(self, "binary_first", False)
        if self.name is not None and (not self.name or not all(c.isalnum() or c in "_." for c in self.name)):
            raise GemmSpecError(f"Bf16GemmSpec.name must be a non-empty identifier, got {self.name!r}")

    @property
    def symbol(self) -> str:
        return self.name if self.name is not None else spec_symbol("zig_bf16_gemm_", self)

    @property
    def exact_path(self) -> bool:
        """Whether the kernel needs its exact products for a subnormal met by a huge value."""
        return needs_exact_path(self.a_specials, self.b_specials)

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.m * self.n * self.k
