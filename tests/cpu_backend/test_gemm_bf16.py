"""The bf16 GEMM kernels (AMX tiles, AVX512-BF16) against float32 products of the same bf16
values, the kernel choice by CPU feature, and the AMX permission check at load."""

from __future__ import annotations

import pytest
import torch

from tests.support.sweep import each_choice
from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_bf16 import K_PASS_STEPS, chunk_rows, k_passes, pass_blocks
from ziggurat.backends.cpu.kernels.gemm_bf16_callable import bf16_gemm_callable
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.kernels.pack_bf16 import pack_b_bf16, pack_linear_weight_bf16, unpack_b_bf16

FEATS = host_features()
HAS_AMX = amx.host_has_amx_bf16(FEATS) and amx.request_tile_permission()[0]
HAS_AVX512BF16 = bool(FEATS.get("avx512bf16"))
KERNELS = [
    pytest.param("amx", marks=pytest.mark.skipif(not HAS_AMX, reason="this host has no AMX-BF16 (or the OS refused the tiles)")),
    pytest.param("avx512bf16", marks=pytest.mark.skipif(not HAS_AVX512BF16, reason="this host has no AVX512-BF16")),
]
SHAPES = [(1, 1, 1), (16, 32, 32), (33, 47, 70), (5, 100, 31), (64, 64, 64), (31, 33, 65), (7, 3, 1000), (97, 160, 96)]


def _operands(m: int, n: int, k: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, k, generator=g).bfloat16(), torch.randn(k, n, generator=g).bfloat16()


def test_pack_round_trip() -> None:
    for k, n in [(1, 1), (31, 33), (64, 32), (70, 100)]:
        b = torch.randn(k, n).bfloat16()
        assert torch.equal(unpack_b_bf16(pack_b_bf16(b), k, n), b)
    for n, k in [(5, 7), (96, 64)]:  # (96, 64): no padding, packed from the transposed view
        w = torch.randn(n, k).bfloat16()
        assert torch.equal(unpack_b_bf16(pack_linear_weight_bf16(w), k, n), w.t())
    b = torch.randn(64, 64)  # float32, rounded as it is packed
    assert torch.equal(unpack_b_bf16(pack_b_bf16(b), 64, 64), b.bfloat16())


def test_pack_is_vnni2_panels() -> None:
    b = torch.arange(64 * 40, dtype=torch.float32).reshape(64, 40).bfloat16()
    p = pack_b_bf16(b)
    # element (k, j) at ((j // 32) * (Kp // 2) + k // 2) * 64 + (j % 32) * 2 + k % 2, Kp = 64
    for k, j in [(0, 0), (1, 0), (2, 5), (63, 31), (3, 33), (62, 39)]:
        assert p[((j // 32) * 32 + k // 2) * 64 + (j % 32) * 2 + k % 2] == b[k, j]
    assert p.numel() == 2 * 64 * 32 and p.view(2, 32, 32, 2)[1, :, 8:].abs().sum() == 0


def test_kernel_choice() -> None:
    spr = {"avx512f": True, "avx512bw": True, "avx512bf16": True, "amx-tile": True, "amx-bf16": True}
    zen5 = {"avx512f": True, "avx512bw": True, "avx512bf16": True}
    assert amx.choose_bf16_kernel(spr, amx_granted=True) == "amx"
    assert amx.choose_bf16_kernel(spr, amx_granted=False) == "avx512bf16"
    assert amx.choose_bf16_kernel(spr, amx_granted=True, amx_disabled=True) == "avx512bf16"
    assert amx.choose_bf16_kernel(zen5, amx_granted=True) == "avx512bf16"
    assert amx.choose_bf16_kernel({"avx512f": True, "avx2": True}, amx_granted=False) is None
    assert amx.choose_bf16_kernel({"avx2": True, "amx-tile": True, "amx-bf16": True}, amx_granted=True) is None


def test_host_kernel_follows_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(amx.DISABLE_ENV, "1")
    assert amx.host_bf16_kernel() != "amx"


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", SHAPES)
def test_products_in_float32(kernel: str, shape: tuple[int, int, int]) -> None:
    m, n, k = shape
    a, b = _operands(m, n, k)
    f = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=1))
    got = f(a, pack_b_bf16(b))
    ref = a.double() @ b.double()
    # products of bf16 values are exact in float32; only the order of the float32 sums differs
    tol = 1e-6 * (a.double().abs() @ b.double().abs()).max().item() * max(1, k) ** 0.5 + 1e-30
    assert (got.double() - ref).abs().max().item() <= tol


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("epilogue", [
    {"bias": True},
    {"bias": True, "unary": "gelu_erf"},
    {"unary": "silu", "binary": "add", "other_strides": (47, 1)},
    {"bias": True, "binary": "sub", "alpha": 0.5, "other_strides": (0, 1)},
    {"bias": True, "unary": "relu", "binary": "add", "other_strides": (1, 0), "binary_first": True},
    {"binary": "add", "other_strides": (47, 1), "other_bf16": False},
])
def test_epilogue_and_bf16_output(kernel: str, epilogue: dict[str, object]) -> None:
    m, n, k = 33, 47, 70
    a, b = _operands(m, n, k, seed=1)
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, threads=2, **epilogue)  # type: ignore[arg-type]
    bias = torch.randn(n)
    rs, cs = spec.other_strides or (0, 0)
    odt = torch.bfloat16 if spec.other_bf16 else torch.float32
    other = torch.randn(max(m * rs, 1) + n).to(odt) if spec.binary else None
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b), bias if spec.bias else None, other)
    x = a.float() @ b.float()
    if spec.bias:
        x = x + bias
    o = None
    if other is not None:
        o = torch.as_strided(other, (m, n), (rs, cs)).float()

    def binary(v: torch.Tensor) -> torch.Tensor:
        assert o is not None
        return v + spec.alpha * o if spec.binary == "add" else v - spec.alpha * o

    if spec.binary_first:
        x = binary(x)
    if spec.unary is not None:
        x = {"gelu_erf": torch.nn.functional.gelu, "silu": torch.nn.functional.silu, "relu": torch.relu}[spec.unary](x)
    if spec.binary is not None and not spec.binary_first:
        x = binary(x)
    assert got.dtype == torch.bfloat16
    # the result is the float32 value rounded once to bf16: within one bf16 ulp of it
    ulp = torch.where(x == 0, torch.tensor(1e-30), x.abs() * 2.0 ** -7)
    assert bool(((got.float() - x).abs() <= ulp + 1e-5 * x.abs().max()).all())


@pytest.mark.parametrize("kernel", KERNELS)
def test_never_reads_past_a_row(kernel: str) -> None:
    """A's rows are followed by NaNs (lda > k, and the K tail): a kernel that read past k
    would multiply a NaN by the zero padding of B."""
    m, n, k, lda = 19, 20, 45, 64
    full = torch.full((m, lda), float("nan")).bfloat16()
    a, b = _operands(m, n, k, seed=2)
    full[:, :k] = a
    f = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, lda=lda, out_bf16=False, threads=1))
    got = f(full, pack_b_bf16(b))
    assert bool(torch.isfinite(got).all())
    torch.testing.assert_close(got, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_spec_errors() -> None:
    with pytest.raises(GemmSpecError, match="kernel"):
        Bf16GemmSpec(4, 4, 4, kernel="sse")
    with pytest.raises(GemmSpecError, match="other_strides"):
        Bf16GemmSpec(4, 4, 4, kernel="amx", binary="add", other_strides=(4, 2))
    with pytest.raises(GemmSpecError, match="lda"):
        Bf16GemmSpec(4, 4, 8, kernel="amx", lda=4)


@pytest.mark.skipif(not HAS_AMX, reason="this host has no AMX-BF16 (or the OS refused the tiles)")
def test_amx_code_needs_the_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading object code with an AMX kernel in a process the OS refused is a clear error,
    not SIGILL at the first tile instruction."""
    from llvmlite import ir

    from ziggurat.backends.cpu import jit
    from ziggurat.backends.cpu.isa import Isa
    from ziggurat.backends.cpu.kernels.gemm_bf16 import emit_bf16_gemm

    module = ir.Module("amx_refused")
    emit_bf16_gemm(module, Bf16GemmSpec(16, 16, 32, kernel="amx", threads=1, name="refused"))
    obj = jit.compile_object(str(module), Isa.AVX512)
    monkeypatch.setattr(amx, "request_tile_permission", lambda: (False, "refused by the test"))
    with pytest.raises(jit.JitError, match="AMX tiles.*refused by the test"):
        jit.load_object(obj, Isa.AVX512)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("transposed", [False, True], ids=["kn", "nk"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (33, 47, 70), (17, 64, 33), (40, 5, 64), (130, 40, 530)])
def test_run_time_b_batched_and_scaled(kernel: str, transposed: bool, shape: tuple[int, int, int]) -> None:
    """B computed at run time (attention's K^T and V), packed by the kernel a panel at a time
    (never reading outside B: its neighbours here are NaN), three batches, and a scale; 130 x
    530: a long sequence's P @ V, whose K the AMX kernel splits in passes."""
    m, n, k = shape
    batch = 3
    g = torch.Generator().manual_seed(3)
    a = torch.randn(batch, m, k, generator=g).bfloat16()
    b = torch.randn(batch, k, n, generator=g).bfloat16()
    stored = b.transpose(1, 2).contiguous() if transposed else b.contiguous()
    ld = k + 3 if transposed else n + 3
    rows = n if transposed else k
    padded = torch.full((batch + 1, rows, ld), float("nan")).bfloat16()  # NaN around every B
    padded[:batch, :, : stored.shape[2]] = stored
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=2, b_packed=False, b_transposed=transposed,
                        ldb=ld, batch=batch, batch_stride_a=m * k, batch_stride_b=rows * ld,
                        batch_stride_c=m * n, scale=0.125, bias=True, other_strides=(0, 1), binary="add",
                        other_batch_stride=n, other_bf16=False)
    bias = torch.randn(n, generator=g)
    other = torch.randn(batch, n, generator=g)
    f = bf16_gemm_callable(spec)
    out = f(a, padded, bias, other)
    for i in range(batch):
        ref = 0.125 * (a[i].double() @ b[i].double()) + bias.double() + other[i].double()
        got = f.matrix(out, i).double()
        assert bool(torch.isfinite(got).all())
        torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-4 * max(1.0, k ** 0.5))


@pytest.mark.parametrize("kernel", KERNELS)
def test_bias_per_row(kernel: str) -> None:
    """A 1x1 convolution's bias: one per row (output channel), before the activation."""
    m, n, k = 37, 45, 20
    a, b = _operands(m, n, k, seed=4)
    bias = torch.randn(m)
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=1, bias=True, bias_rows=True,
                        unary="relu")
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b), bias)
    torch.testing.assert_close(got, torch.relu(a.float() @ b.float() + bias[:, None]), rtol=1e-5, atol=1e-4)
    with pytest.raises(GemmSpecError, match="bias_rows"):
        Bf16GemmSpec(m, n, k, kernel=kernel, bias_rows=True)



@pytest.mark.skipif(not HAS_AVX512BF16, reason="this host has no AVX512-BF16")
@pytest.mark.parametrize("shape", [(300, 37, 448), (257, 70, 512)], ids=["300x37x448", "257x70x512"])
def test_weights_prefetched_a_block_ahead(shape: tuple[int, int, int]) -> None:
    """With a run-time B, an A of at least ``PREFETCH_A_BYTES`` (a convolution's weights) is
    prefetched a block ahead, the last block's rows (a tail of 12 or 1) then the next panel's
    first.  The kernel emits the prefetches only then, and its products are still right."""
    from llvmlite import ir

    from ziggurat.backends.cpu.kernels.gemm_bf16 import PREFETCH_A_BYTES, emit_bf16_gemm

    m, n, k = shape
    assert m * k * 2 >= PREFETCH_A_BYTES
    a, b = _operands(m, n, k, seed=6)
    spec = Bf16GemmSpec(m, n, k, kernel="avx512bf16", out_bf16=False, threads=2, b_packed=False, bias=True,
                        bias_rows=True, unary="relu")

    def prefetches(s: Bf16GemmSpec) -> int:
        module = ir.Module()
        emit_bf16_gemm(module, s)
        return sum("call" in line and "llvm.prefetch" in line for line in str(module).splitlines())

    small = Bf16GemmSpec(m, n, 64, kernel="avx512bf16", b_packed=False)
    assert prefetches(spec) > 0 and prefetches(small) == 0
    bias = torch.randn(m)
    got = bf16_gemm_callable(spec)(a, b.contiguous(), bias)
    torch.testing.assert_close(got, torch.relu(a.float() @ b.float() + bias[:, None]), rtol=1e-5,
                               atol=1e-4 * k ** 0.5)



@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", [(37, 45, 147), (5, 70, 3), (33, 40, 8), (64, 33, 95)],
                         ids=["stem-k147", "k3", "k8", "k95"])
def test_a_padded_reads_the_tail_in_place(kernel: str, shape: tuple[int, int, int]) -> None:
    """``a_padded``: A's rows zero-padded to whole 32-deep steps (a weight padded at compile
    time) are read in place through the last, partial step; bit for bit the kernel that copies
    each block's tail into a zero-padded buffer, with a run-time B and with a convolution's."""
    import dataclasses

    m, n, k = shape
    a, b = _operands(m, n, k, seed=8)
    kp = -(-k // 32) * 32
    a_pad = torch.nn.functional.pad(a, (0, kp - k)).contiguous()
    bias = torch.randn(m)
    plain = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=2, b_packed=False, bias=True,
                         bias_rows=True, unary="relu")
    padded = dataclasses.replace(plain, lda=kp, a_padded=True)
    want = bf16_gemm_callable(plain)(a, b.contiguous(), bias)
    assert torch.equal(bf16_gemm_callable(padded)(a_pad, b.contiguous(), bias), want)
    torch.testing.assert_close(want, torch.relu(a.float() @ b.float() + bias[:, None]), rtol=1e-5, atol=1e-4 * k ** 0.5)
    # a 1-channel 7x7 convolution by its weight rows (K = 49): the implicit im2col B
    x = torch.randn(1, 1, 13, 12).bfloat16()
    wt = torch.randn(m, 1, 7, 7).bfloat16()
    image = torch.nn.functional.pad(x, (3, 3, 3, 3)).reshape(-1).contiguous()
    conv = Bf16GemmSpec(m, 12 * 18 - 6, 49, kernel=kernel, ldc=13 * 18, out_bf16=False, threads=2, b_packed=False,
                        b_conv=(19 * 18, 18, 7, 7, 1, 1, 1, 1))
    rows = wt.reshape(m, 49).contiguous()
    got = bf16_gemm_callable(dataclasses.replace(conv, lda=64, a_padded=True))(
        torch.nn.functional.pad(rows, (0, 15)).contiguous(), image)
    assert torch.equal(got, bf16_gemm_callable(conv)(rows, image))
    with pytest.raises(GemmSpecError, match="a_padded"):
        dataclasses.replace(plain, a_padded=True)  # lda = K is not whole steps


CONVS = [  # (n, cin, cout, h, w, kh, kw, ph, pw, dh, dw, sh, sw)
    (2, 64, 64, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1),
    (1, 32, 48, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1),
    (3, 3, 5, 11, 13, 5, 3, 2, 0, 1, 1, 1, 1),
    (1, 16, 70, 20, 17, 3, 3, 2, 2, 2, 2, 1, 1),
    (1, 33, 17, 6, 40, 1, 7, 0, 3, 1, 1, 1, 1),
    (1, 1, 1, 3, 3, 3, 3, 0, 0, 1, 1, 1, 1),
    (2, 3, 64, 23, 19, 7, 7, 3, 3, 1, 1, 2, 2),
    (1, 64, 40, 15, 14, 3, 3, 1, 1, 1, 1, 2, 2),
    (1, 8, 9, 17, 16, 3, 5, 1, 0, 2, 1, 3, 2),
    (2, 64, 100, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1),  # AMX: K = 576 in passes over 4 blocks, a 4-row tail, 2 images
    (1, 64, 128, 9, 8, 3, 3, 1, 1, 1, 1, 2, 2),  # the same with a stride of 2
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("conv", CONVS, ids=["x".join(map(str, c)) for c in CONVS])
def test_implicit_gemm_convolution(kernel: str, conv: tuple[int, ...]) -> None:
    """``b_conv``: B is the im2col matrix of a zero-padded image split into its stride's phases,
    gathered panel by panel; the
    products in float32 against torch's float32 convolution of the same bf16 values, with the
    bias per output channel and a relu; the padded-width columns past the output's are computed
    and lie outside the ``[..., :OW]`` view.  The image is followed by NaNs: nothing past it is read."""
    n, cin, cout, h, w, kh, kw, ph, pw, dh, dw, sh, sw = conv
    g = torch.Generator().manual_seed(5)
    x = torch.randn(n, cin, h, w, generator=g).bfloat16()
    wt = torch.randn(cout, cin, kh, kw, generator=g).bfloat16()
    bias = torch.randn(cout, generator=g)
    hp, wp = h + 2 * ph, w + 2 * pw
    hq, wq = -(-hp // sh), -(-wp // sw)
    oh, ow = (hp - (kh - 1) * dh - 1) // sh + 1, (wp - (kw - 1) * dw - 1) // sw + 1
    k = cin * kh * kw
    # the phases: [n, cin, sh, sw, hq, wq], padded pixel (sh*y + a, sw*z + b)
    padded = torch.nn.functional.pad(x, (pw, pw + wq * sw - wp, ph, ph + hq * sh - hp))
    phases = padded.reshape(n, cin, hq, sh, wq, sw).permute(0, 1, 3, 5, 2, 4).reshape(-1)
    image = torch.full((phases.numel() + 64,), float("nan")).bfloat16()
    image[: phases.numel()] = phases
    spec = Bf16GemmSpec(cout, (oh - 1) * wq + ow, k, kernel=kernel, ldc=oh * wq, b_packed=False,
                        b_conv=(hq * wq, wq, kh, kw, dh, dw, sh, sw), batch=n, batch_stride_b=cin * sh * sw * hq * wq,
                        batch_stride_c=cout * oh * wq, out_bf16=False, bias=True, bias_rows=True, unary="relu",
                        threads=1)
    out = torch.zeros(n * cout * oh * wq)
    bf16_gemm_callable(spec)(wt.reshape(cout, k).contiguous(), image, bias, out=out)
    got = out.view(n, cout, oh, wq)[..., :ow]
    ref = torch.relu(torch.nn.functional.conv2d(x.float(), wt.float(), bias, stride=(sh, sw), padding=(ph, pw),
                                                dilation=(dh, dw)))
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-4 * max(1.0, k ** 0.5))


def test_implicit_gemm_spec_errors() -> None:
    with pytest.raises(GemmSpecError, match="b_conv"):
        Bf16GemmSpec(4, 4, 9, kernel="amx", b_conv=(16, 4, 3, 3, 1, 1, 1, 1))  # b_packed defaults to True
    with pytest.raises(GemmSpecError, match="taps"):
        Bf16GemmSpec(4, 4, 10, kernel="amx", b_packed=False, b_conv=(16, 4, 3, 3, 1, 1, 1, 1))
    with pytest.raises(GemmSpecError, match="b_conv"):
        Bf16GemmSpec(4, 4, 9, kernel="amx", b_packed=False, b_conv=(16, 4, 3, 3, 1, 1))  # type: ignore[arg-type]
    with pytest.raises(GemmSpecError, match="sh"):
        Bf16GemmSpec(4, 4, 9, kernel="amx", b_packed=False, b_conv=(16, 4, 3, 3, 1, 1, 0, 1))


@each_choice("kind, epilogue, kernel", ["gelu_erf", "gelu_tanh", "silu", "sigmoid", "tanh"], [
    {"bias": True},
    {"bias": True, "bias_rows": True, "scale": 0.125},
    {"binary": "add", "alpha": 0.5, "other_strides": (47, 1), "other_bf16": False, "binary_first": True},
    {"bias": True, "binary": "sub", "other_strides": (47, 1), "other_bf16": False},
], KERNELS, ids=[None, ["bias", "bias-rows-scale", "add-first", "sub-after"], None])
def test_staged_activation_is_the_activation_of_the_plain_kernel(kernel: str, kind: str, epilogue: dict[str, object]) -> None:
    """A transcendental activation runs over the staged block a few rows at a time as one wide
    value: bit for bit the kernel without it (float32 out) followed by the same vecmath
    activation, then a binary op after it; rows cover the 2-row groups' remainder."""
    from tests.support.vector_activation import activated

    m, n, k = 37, 47, 70
    a, b = _operands(m, n, k, seed=2)
    bias = torch.randn(m if epilogue.get("bias_rows") else n)
    other = torch.randn(m, n) * 3
    after = epilogue.get("binary") is not None and not epilogue.get("binary_first")
    plain_epilogue = {key: v for key, v in epilogue.items() if not after or key not in ("binary", "other_strides", "other_bf16")}
    plain = Bf16GemmSpec(m, n, k, kernel=kernel, threads=1, out_bf16=False, **plain_epilogue)  # type: ignore[arg-type]
    fused = Bf16GemmSpec(m, n, k, kernel=kernel, threads=1, out_bf16=False, unary=kind, **epilogue)  # type: ignore[arg-type]
    packed = pack_b_bf16(b)
    want = activated(kind, bf16_gemm_callable(plain)(a, packed, bias if plain.bias else None,
                                                     other if plain.binary else None).contiguous())
    if after:
        want = want - other if epilogue["binary"] == "sub" else want + other
    got = bf16_gemm_callable(fused)(a, packed, bias if fused.bias else None, other if fused.binary else None)
    assert torch.equal(got, want)
    rounded = Bf16GemmSpec(m, n, k, kernel=kernel, threads=1, unary=kind, **epilogue)  # type: ignore[arg-type]
    got16 = bf16_gemm_callable(rounded)(a, packed, bias if rounded.bias else None, other if rounded.binary else None)
    assert torch.equal(got16, want.bfloat16())


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", [(3136, 384, 96), (100, 64, 4096), (1000, 40, 1000)])
def test_chunks_of_equal_rows(kernel: str, shape: tuple[int, int, int]) -> None:
    """Rows of A split into chunks of equal size (a thread takes a run of (chunk, panel)
    tasks: ConvNeXt's 3136x384x96 GEMM was chunks of 2720 and 416 rows, one of two threads
    idle most of the time), and the product of a split A on two threads is right."""
    m, n, k = shape
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=2)
    rows = chunk_rows(spec)
    chunks = -(-m // rows)
    assert rows % 32 == 0 and chunks * rows - m < 32 * chunks, (rows, chunks)
    if shape == (3136, 384, 96):
        assert rows == 1568
    a, b = _operands(m, n, k)
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b))
    ref = a.double() @ b.double()
    tol = 1e-6 * (a.double().abs() @ b.double().abs()).max().item() * max(1, k) ** 0.5 + 1e-30
    assert (got.double() - ref).abs().max().item() <= tol


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("epilogue", [
    {"bias": True, "unary": "gelu_erf"},
    {"bias": True, "unary": "leaky_relu", "unary_params": {"negative_slope": 0.1}, "binary": "add",
     "other_strides": (47, 1)},
    {"bias": True, "unary": "silu", "binary": "sub", "alpha": 0.5, "other_strides": (47, 1), "binary_first": True},
    {"binary": "add", "other_strides": (47, 1), "other_bf16": False},
    {"scale": 0.3, "unary": "tanh"},
    {"bias": True, "unary": "relu", "binary": "add", "other_strides": (47, 1), "binary_first": True},
    {"unary": "hardtanh", "unary_params": {"min_val": -0.5, "max_val": 2.0}, "binary": "add", "other_strides": (47, 1)},
])
def test_rounded_steps_are_eager_separate_bf16_ops(kernel: str, epilogue: dict[str, object]) -> None:
    """``rounded_steps``: the product (with its bias; a scale applied after rounding it), the
    binary's and the unary's results each rounded to bf16, as eager's separate bf16 ops: the
    kernel gives eager's bits for those ops applied to its own product."""
    m, n, k = 33, 47, 70
    a, b = _operands(m, n, k, seed=3)
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, threads=2, rounded_steps=True, **epilogue)  # type: ignore[arg-type]
    plain = Bf16GemmSpec(m, n, k, kernel=kernel, threads=2, out_bf16=False)
    bias = torch.randn(n, generator=torch.Generator().manual_seed(4)).bfloat16().float()
    odt = torch.bfloat16 if spec.other_bf16 else torch.float32
    other = (torch.randn(m * 47 + n, generator=torch.Generator().manual_seed(5)) * 4).to(odt) if spec.binary else None
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b), bias if spec.bias else None, other)
    product = bf16_gemm_callable(plain)(a, pack_b_bf16(b), None, None)  # the same sums, in float32
    F = torch.nn.functional
    if spec.scale != 1.0:
        y = product.bfloat16() * spec.scale
    else:
        y = (product + bias).bfloat16() if spec.bias else product.bfloat16()
    o = torch.as_strided(other, (m, n), (47, 1)) if other is not None else None

    def binary(v: torch.Tensor) -> torch.Tensor:
        assert o is not None
        return torch.add(v, o, alpha=spec.alpha) if spec.binary == "add" else torch.sub(v, o, alpha=spec.alpha)

    unary = {"gelu_erf": F.gelu, "silu": F.silu, "tanh": torch.tanh, "relu": torch.relu,
             "leaky_relu": lambda v: F.leaky_relu(v, 0.1), "hardtanh": lambda v: F.hardtanh(v, -0.5, 2.0)}
    if spec.binary_first:
        y = binary(y)
    # eager's float32 GELU is off in its negative tail (ATen's erf; README, Low precision),
    # where the kernel's is accurate: those values are not compared
    tail = (y < -3) if spec.unary == "gelu_erf" else torch.zeros(m, n, dtype=torch.bool)
    if spec.unary is not None:
        y = unary[spec.unary](y)
    if spec.binary is not None and not spec.binary_first:
        y = binary(y)
    y = y.bfloat16()  # (a float32 residual promotes the sum to float32: rounded once, stored)
    assert got.dtype == torch.bfloat16
    differ = (got.view(torch.int16) != y.view(torch.int16)) & ~tail
    assert int(differ.sum()) == 0, (int(differ.sum()), got[differ][:4], y[differ][:4], product[differ][:4])


def test_which_activations_commute_with_16_bit_rounding() -> None:
    from ziggurat.backends.cpu.kernels.unary import commutes_with_rounding

    assert commutes_with_rounding("relu", [], "bf16") and commutes_with_rounding("relu6", [], "f16")
    assert commutes_with_rounding("hardtanh", [-1.0, 6.5], "bf16")
    assert commutes_with_rounding("clamp", [None, 0.5], "bf16")
    assert not commutes_with_rounding("hardtanh", [0.0, 6.3], "bf16")
    assert commutes_with_rounding("hardtanh", [0.0, 6.3125], "bf16")
    assert not commutes_with_rounding("hardtanh", [0.0, 6.3125 + 2 ** -10], "bf16")
    assert commutes_with_rounding("hardtanh", [0.0, 6.3125 + 2 ** -8], "f16")  # float16's ulp at 6
    assert not commutes_with_rounding("hardtanh", [0.0, 6.3125 + 2 ** -10], "f16")
    assert not commutes_with_rounding("clamp", [1e39, None], "bf16")
    assert not commutes_with_rounding("clamp", [70000.0, None], "f16")
    assert commutes_with_rounding("clamp", [-float("inf"), 2.0 ** 100], "bf16")
    assert not commutes_with_rounding("leaky_relu", [0.01], "bf16")
    assert not commutes_with_rounding("gelu_erf", [], "bf16")


def test_row_groups_are_even_and_cover_the_block() -> None:
    """The AVX512-BF16 kernel's groups of accumulator rows: at most 8, sizes within one of
    each other, covering the block in order (a 17-row tail is 6 + 6 + 5, not 8 + 8 + 1)."""
    from ziggurat.backends.cpu.kernels.gemm_bf16 import ROW_GROUP, row_groups

    assert row_groups(17) == [(0, 6), (6, 6), (12, 5)]
    assert row_groups(32) == [(0, 8), (8, 8), (16, 8), (24, 8)]
    for rows in range(1, 33):
        groups = row_groups(rows)
        sizes = [g for _, g in groups]
        assert [first for first, _ in groups] == [sum(sizes[:i]) for i in range(len(sizes))]
        assert sum(sizes) == rows and max(sizes) <= ROW_GROUP and max(sizes) - min(sizes) <= 1
        assert len(groups) == -(-rows // ROW_GROUP)


@pytest.mark.parametrize("out_bf16", [True, False], ids=["bf16", "f32"])
def test_amx_prefetches_c_for_writing_and_the_next_weight_panel(out_bf16: bool) -> None:
    """The AMX kernel asks for each block's lines of a float32 C for writing before its
    products (the epilogue's stores waited for each line's read for ownership in turn: 1024^3
    at 677 against 792 GFLOP/s), not for a bf16 C's (slower with them: 3136x256x64 + relu 415
    against 332 GFLOP/s), and for the next panel of packed weights into L2 at each step of K.
    The code is generated on any host; this checks the requests, the numbers are the other
    tests'.  The weights are plain constants (``b_specials=0``): no exact path's code."""
    from llvmlite import ir as lir

    from ziggurat.backends.cpu.kernels.gemm_bf16 import emit_bf16_gemm

    def prefetches(spec: Bf16GemmSpec) -> tuple[int, int]:
        module = lir.Module(name="t")
        emit_bf16_gemm(module, spec)
        text = str(module)
        return text.count("i32 1, i32 3, i32 1)"), text.count("i32 0, i32 2, i32 1)")

    spec = Bf16GemmSpec(40, 64, 96, kernel="amx", out_bf16=out_bf16, b_specials=0)
    writes, l2_reads = prefetches(spec)
    # a full block of 32 rows and the 8-row tail block; 32 float32 columns of C: 128 bytes
    assert writes == (0 if out_bf16 else (32 + 8) * 2)
    # the chunk's blocks (here 2) share the next panel's 32 lines a step of K out, in each block
    # function (32 and 8 rows)
    assert chunk_rows(spec) == 64 and l2_reads == 2 * (32 // 2)
    big = Bf16GemmSpec(512, 64, 96, kernel="amx", out_bf16=out_bf16, b_specials=0)
    assert chunk_rows(big) >= 8 * 32 and prefetches(big)[1] == 32 // 8  # eighths; no tail block
    run_time_b = Bf16GemmSpec(40, 64, 96, kernel="amx", out_bf16=out_bf16, b_packed=False)
    assert prefetches(run_time_b)[1] == 0  # a run-time B is packed a panel at a time: no next panel
    assert prefetches(Bf16GemmSpec(40, 64, 96, kernel="avx512bf16", out_bf16=out_bf16))[0] == 0


@pytest.mark.parametrize("other_bf16", [True, False], ids=["bf16", "f32"])
def test_amx_prefetches_a_residual_for_reading(other_bf16: bool) -> None:
    """With a float32 C, a residual's lines of the block (written layers ago, cold) are asked
    for before the block's products too; a broadcast row (row stride 0) is not.  With a bf16 C
    (whose own lines are not asked for: slower with them) only a residual of at least
    ``PREFETCH_BF16_RESIDUAL_BYTES`` is: ResNet-50's layer-1 256x3136x64 + add + relu
    convolutions, whose residual the blocks before evicted, 1.94 -> 1.35 ms for the three; a
    smaller one stays in L2 (BERT's 128x768)."""
    from llvmlite import ir as lir

    from ziggurat.backends.cpu.kernels.gemm_bf16 import PREFETCH_BF16_RESIDUAL_BYTES, emit_bf16_gemm

    def reads(strides: tuple[int, int], out_bf16: bool = False, m: int = 40, n: int = 64) -> int:
        module = lir.Module(name="t")
        emit_bf16_gemm(module, Bf16GemmSpec(m, n, 96, kernel="amx", binary="add", other_strides=strides,
                                            other_bf16=other_bf16, out_bf16=out_bf16))
        return str(module).count("i32 0, i32 3, i32 1)")

    assert reads((64, 1)) == (32 + 8) * (1 if other_bf16 else 2)
    assert reads((0, 1)) == 0
    assert reads((64, 1), out_bf16=True) == 0
    big_n = -(-PREFETCH_BF16_RESIDUAL_BYTES // (40 * (2 if other_bf16 else 4)))
    assert reads((big_n, 1), out_bf16=True, n=big_n) == (32 + 8) * (1 if other_bf16 else 2)
    assert reads((big_n - 64, 1), out_bf16=True, n=big_n - 64) == 0


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", [(300, 70, 96), (520, 40, 1000), (64, 33, 64)], ids=["300x70x96", "520x40x1000", "64x33x64"])
@pytest.mark.parametrize("unary", ["relu", "gelu_erf"])
def test_epilogues_of_many_blocks_are_the_plain_kernel_then_the_ops(kernel: str, shape: tuple[int, int, int],
                                                                     unary: str) -> None:
    """Many 32-row blocks a call (the AMX kernel runs a block's epilogue after the next block's
    products, a staged activation's after the group's), on two threads, with a bias, a
    residual of full strides and a bf16 C: bit for bit the float32 kernel's products followed by
    the same float32 ops and one rounding to bf16."""
    from tests.support.vector_activation import activated

    m, n, k = shape
    a, b = _operands(m, n, k, seed=5)
    g = torch.Generator().manual_seed(6)
    bias, other = torch.randn(n, generator=g), torch.randn(m, n, generator=g).bfloat16()
    packed = pack_b_bf16(b)
    plain = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, threads=2, out_bf16=False))(a, packed)
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, threads=2, bias=True, unary=unary, binary="add",
                        other_strides=(n, 1))
    got = bf16_gemm_callable(spec)(a, packed, bias, other)
    x = plain.contiguous() + bias
    x = torch.relu(x) if unary == "relu" else activated(unary, x)
    want = (x + other.float()).bfloat16()
    assert torch.equal(got.contiguous(), want)


@pytest.mark.parametrize("kernel", KERNELS)
def test_bf16_c_rounds_nan_and_subnormal_sums_as_eager(kernel: str) -> None:
    """A bf16 C stores eager's bits for every float32 value, NaNs (``0xFFFF``) and float32
    subnormals (rounded, not flushed) among them.  (The products' sums are never subnormal, the
    bf16 instructions flush them: a bias makes the subnormals here.)  A store by
    ``vcvtneps2bf16`` with those lanes fixed up in a branch was tried: level or slower
    (bf16 MobileNetV2 +3 %, ConvNeXt +2 %)."""
    m, n, k = 40, 35, 64
    a, b = _operands(m, n, k, seed=8)
    a[3, :] = 0.0
    a[3, 0] = 2.0 ** -63
    b[0, :] = 2.0 ** -63  # row 3's sums: 2^-126, the smallest normal float32
    bias = torch.randn(n)
    bias[::2] = -(2.0 ** -127)  # row 3, even columns: 2^-127, a subnormal
    bias[1::4] = -(2.0 ** -126 + 3 * 2.0 ** -130)  # and negative ones
    a[7, 1], b[1, 9] = float("inf"), float("-inf")  # row 7: +-inf
    a[11, 1], a[11, 2] = float("inf"), float("-inf")  # row 11: inf - inf = NaN where b's rows agree in sign
    b[2, :] = b[1, :].abs()
    b[1, :] = b[1, :].abs()
    a[20, 4] = float("nan")  # row 20: NaN
    packed = pack_b_bf16(b)
    plain = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, threads=1, out_bf16=False, bias=True))(a, packed, bias)
    got = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, threads=1, bias=True))(a, packed, bias)
    want = plain.contiguous().bfloat16()
    assert bool(plain.isnan().any()) and bool(((plain != 0) & (plain.abs() < 2.0 ** -126)).any())
    assert torch.equal(got.contiguous().view(torch.int16), want.view(torch.int16))


def test_k_passes_are_even_and_cover_k() -> None:
    """Every split covers K once: passes of at most K_PASS_STEPS steps, as even as possible, the
    last 1 .. size steps; a short K or a chunk of fewer blocks than ``pass_blocks`` is one pass."""
    assert k_passes(18, 128) == (6, 2) and k_passes(32, 64) == (8, 3) and k_passes(33, 128) == (7, 4)
    assert k_passes(15, 1024) == (15, 0)  # too short to split
    assert k_passes(33, 64) == (33, 0)  # past 1024 deep, 2 blocks are too few
    assert k_passes(24, 32) == (24, 0)  # one block
    for steps in range(1, 300):
        for chunk in (32, 64, 96, 128, 256):
            size, before = k_passes(steps, chunk)
            need = pass_blocks(steps)
            if need is None or chunk // 32 < need:
                assert (size, before) == (steps, 0)
                continue
            last = steps - size * before
            assert before >= 1 and 1 <= last <= size <= K_PASS_STEPS
            passes = before + 1
            assert passes == -(-steps // K_PASS_STEPS) and size == -(-steps // passes)  # the fewest, even


PASS_SHAPES = [(128, 40, 520), (200, 64, 1024), (130, 33, 513), (97, 100, 1000), (64, 40, 520), (49, 33, 700)]


@pytest.mark.skipif(not HAS_AMX, reason="this host has no AMX-BF16 (or the OS refused the tiles)")
@pytest.mark.parametrize("shape", PASS_SHAPES, ids=["x".join(map(str, s)) for s in PASS_SHAPES])
@pytest.mark.parametrize("variant", ["float32", "bias_gelu_bf16", "add_relu_float32", "run_time_b"])
def test_amx_k_in_passes(shape: tuple[int, int, int], variant: str) -> None:
    """A long K over a chunk of 4 blocks or more (2 up to 1024 deep) runs in passes whose
    partial sums wait in the scratch (:func:`k_passes`): uneven passes, a K tail (zero-padded
    copy) in the last pass, an M tail block, the epilogues that overlap the next block's
    products and GELU's that does not, and a run-time B packed per panel.  Float32 products
    against float64."""
    m, n, k = shape
    spec = Bf16GemmSpec(m, n, k, kernel="amx", threads=2, out_bf16=variant == "bias_gelu_bf16",
                        bias=variant == "bias_gelu_bf16", unary={"bias_gelu_bf16": "gelu_erf",
                                                                 "add_relu_float32": "relu"}.get(variant),
                        binary="add" if variant == "add_relu_float32" else None,
                        other_strides=(n, 1) if variant == "add_relu_float32" else None,
                        other_bf16=False, b_packed=variant != "run_time_b")
    steps = -(-k // 32)
    size, before = k_passes(steps, chunk_rows(spec))
    assert before >= 1 and 1 <= steps - size * before <= size, "the shape must split K in passes"
    a, b = _operands(m, n, k, seed=7)
    bias, other = torch.randn(n), torch.randn(m, n)
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b) if spec.b_packed else b.contiguous(),
                                   bias if spec.bias else None, other if spec.binary else None)
    x = a.double() @ b.double()
    bound = (a.double().abs() @ b.double().abs()).max().item() * 1e-6 * k ** 0.5
    if variant in ("float32", "run_time_b"):
        assert (got.double() - x).abs().max().item() <= bound
    elif variant == "add_relu_float32":
        assert (got.double() - (torch.relu(x) + other.double())).abs().max().item() <= bound  # unary, then add
    else:
        want = torch.nn.functional.gelu((x + bias.double()).float())
        ulp = want.abs() * 2.0 ** -7
        assert bool(((got.float() - want).abs() <= ulp + bound).all())


@pytest.mark.skipif(not HAS_AMX, reason="this host has no AMX-BF16 (or the OS refused the tiles)")
def test_amx_convolution_k_in_passes() -> None:
    """An implicit-GEMM convolution whose K (64 x 3 x 3 = 576: 18 steps, passes of 6) is split
    over its 128 output channels (one chunk of 4 blocks)."""
    n, cin, cout, h, w = 1, 64, 128, 9, 11
    g = torch.Generator().manual_seed(11)
    x = torch.randn(n, cin, h, w, generator=g).bfloat16()
    wt = torch.randn(cout, cin, 3, 3, generator=g).bfloat16()
    hp, wp = h + 2, w + 2
    k = cin * 9
    image = torch.nn.functional.pad(x, (1, 1, 1, 1)).reshape(-1)
    spec = Bf16GemmSpec(cout, (h - 1) * wp + w, k, kernel="amx", ldc=h * wp, b_packed=False,
                        b_conv=(hp * wp, wp, 3, 3, 1, 1, 1, 1), out_bf16=False, threads=1)
    assert k_passes(-(-k // 32), chunk_rows(spec)) == (6, 2)
    out = torch.zeros(cout * h * wp)
    bf16_gemm_callable(spec)(wt.reshape(cout, k).contiguous(), torch.cat([image, torch.zeros(64).bfloat16()]), out=out)
    ref = torch.nn.functional.conv2d(x.float(), wt.float(), padding=1)
    torch.testing.assert_close(out.view(n, cout, h, wp)[..., :w], ref, rtol=1e-5, atol=1e-4 * k ** 0.5)
