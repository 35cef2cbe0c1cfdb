"""The int8 GEMM's AMX-INT8 products (``kernels/gemm_int8_amx.py``, ``Int8GemmSpec(kernel="amx")``)
against its AVX512-VNNI ones: both sum the same integers exactly in int32 and share the
epilogue, so their outputs are the same bits, on every row count around the 16-row tiles and
32-row blocks, every column count around the 32-column panels, every K around the 64-byte
tile steps (the shorter last step), and every epilogue, A and schedule the kernel has.  Plus
the kernel's choice for a host, its fallback when the OS refuses the tiles, and a PT2E model
compiled through the normal API.  The kernel tests skip on hosts without AMX-INT8."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch

from tests.support.sweep import each_choice
from ziggurat.backends.cpu.isa import Isa, host_features
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.dialects.fused.pack_int8 import conv_rows, pack_quantized_linear

AMX = amx.host_int8_kernel() == "amx"
needs_amx = pytest.mark.skipif(not AMX, reason="this host has no AMX-INT8 (or the OS refused the tile state)")
needs_vnni = pytest.mark.skipif(not host_features().get("avx512vnni"), reason="this host has no AVX512-VNNI")

M_SIZES = (1, 15, 16, 17, 31, 32, 33, 100)  # around the 16-row tiles and the 32-row blocks
N_SIZES = (1, 31, 32, 33, 70)  # around the 32-column panels
K_SIZES = (1, 3, 4, 60, 64, 65, 127, 128, 200, 777)  # around the 4-k groups and the 64-k tile steps


def _both(spec: dict[str, Any], *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The AMX kernel's output and the VNNI kernel's for the same spec and operands."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    amx_out = int8_gemm_callable(Int8GemmSpec(kernel="amx", **spec))(*args, **kwargs).clone()
    vnni_out = int8_gemm_callable(Int8GemmSpec(kernel="vnni", **spec))(*args, **kwargs).clone()
    return amx_out, vnni_out


def _same_bits(got: torch.Tensor, want: torch.Tensor, what: object = "") -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype == torch.float32:
        got, want = got.contiguous().view(torch.int32), want.contiguous().view(torch.int32)
    assert torch.equal(got, want), (what, int((got != want).sum()))


def _weight(g: torch.Generator, n: int, k: int, a_scale: float, zp: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A random int8 ``W[n, k]`` and its ``KN32n4k`` operand."""
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
    return w, pack_quantized_linear(w, torch.rand(n, generator=g) * 0.01 + 1e-3, a_scale, zp)


def _activations(g: torch.Generator, shape: tuple[int, ...], a_scale: float, zp: int) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 integers and their dequantized float32 values."""
    u = torch.randint(0, 256, shape, generator=g)
    return u, (u - zp).to(torch.float32) * torch.tensor(a_scale, dtype=torch.float32)


# -- the choice of kernel (on any host) ----------------------------------------------------------
SPR = {"avx512f": True, "avx512bw": True, "avx512vnni": True, "amx-tile": True, "amx-int8": True, "amx-bf16": True}


@pytest.mark.parametrize(("features", "granted", "disabled", "kernel"), [
    (SPR, True, False, "amx"),
    (SPR, False, False, "vnni"),  # the OS refused the tile state
    (SPR, True, True, "vnni"),  # ZIGGURAT_DISABLE_AMX
    ({**SPR, "amx-int8": False}, True, False, "vnni"),  # tiles without their int8 products
    ({**SPR, "amx-tile": False}, True, False, "vnni"),
    ({**SPR, "avx512bw": False}, True, False, None),  # the epilogue's byte ops
    ({**SPR, "avx512vnni": False}, True, False, "amx"),
    ({**SPR, "avx512vnni": False}, False, False, None),
    ({"avx512vnni": True}, True, False, None),  # no avx512f
    ({}, True, False, None),
], ids=["spr", "refused", "disabled", "no-amx-int8", "no-amx-tile", "no-avx512bw", "amx-only", "amx-only-refused",
        "vnni-without-avx512f", "nothing"])
def test_choose_int8_kernel(features: dict[str, bool], granted: bool, disabled: bool, kernel: str | None) -> None:
    assert amx.choose_int8_kernel(features, granted, disabled) == kernel


def test_spec_takes_the_two_kernels_only() -> None:
    base: dict[str, Any] = dict(m=3, n=5, k=7, a_scale=0.1, a_zero_point=3)
    with pytest.raises(GemmSpecError, match="kernel must be one of"):
        Int8GemmSpec(kernel="avx512vnni", **base)
    vnni, tiles = Int8GemmSpec(**base), Int8GemmSpec(kernel="amx", **base)
    assert vnni.kernel == "vnni" and vnni.entry_symbol == vnni.symbol
    # the suffix makes loading the object code ask for the tile permission (jit)
    assert tiles.entry_symbol == tiles.symbol + "__amx" and tiles.symbol != vnni.symbol


@needs_vnni
def test_refused_tile_permission_falls_back_to_vnni(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the OS refuses the tile state (or ``ZIGGURAT_DISABLE_AMX`` forbids it) the lowering
    records the VNNI kernel: an AMX instruction without the permission would be SIGILL."""
    from ziggurat.backends.cpu.lowering.gemm_int8 import int8_kernel

    monkeypatch.setattr(amx, "request_tile_permission", lambda: (False, "refused by the test"))
    assert amx.host_int8_kernel() == "vnni"
    assert int8_kernel(Isa.AVX512, 768) == "vnni"
    monkeypatch.undo()
    monkeypatch.setenv(amx.DISABLE_ENV, "1")
    assert amx.host_int8_kernel() == "vnni"
    assert int8_kernel(Isa.AVX512, 768) == "vnni"
    monkeypatch.delenv(amx.DISABLE_ENV)
    assert int8_kernel(Isa.AVX512, 768) == ("amx" if AMX else "vnni")
    assert int8_kernel(Isa.AVX2, 768) == "vnni"


@pytest.mark.parametrize("k, kernel", [(1, "vnni"), (16, "vnni"), (64, "vnni"), (65, "vnni"), (96, "vnni"),
                                       (128, "amx"), (147, "vnni"), (160, "vnni"), (191, "vnni"), (192, "amx"),
                                       (193, "amx"), (224, "amx"), (256, "amx"), (3072, "amx")])
def test_shallow_gemms_take_vnni_on_an_amx_host(k: int, kernel: str) -> None:
    """On an AMX host, K up to 64, or under 192 and no multiple of 64, takes the VNNI kernel (the
    tile steps' padding of K and the block's sums through memory cost more than the tiles gain);
    a host without AMX keeps its own kernel at every depth."""
    assert amx.int8_kernel_for_depth("amx", k) == kernel
    assert amx.int8_kernel_for_depth("vnni", k) == "vnni"
    assert amx.int8_kernel_for_depth(None, k) is None


@pytest.mark.parametrize("k, amx_ldq, vnni_ldq", [(3072, 3136, 3072), (1024, 1088, 1024), (768, 832, 768),
                                                 (256, 320, 256), (640, 704, 640), (576, 576, 576), (777, 784, 784),
                                                 (128, 128, 128), (7, 16, 16)])
def test_the_amx_workspace_rows_are_an_odd_number_of_lines(k: int, amx_ldq: int, vnni_ldq: int) -> None:
    """The AMX kernel's requantized rows of A are 64 bytes longer where K rounded up to 16 is an
    even number of 64-byte lines, 4 or more (``amx.tile_row_stride``: a tile load's 16 rows then
    spread over L1's sets); the workspace grows with them.  The VNNI kernel's are K rounded up
    to 16."""
    base: dict[str, Any] = dict(m=5, n=3, k=k, a_scale=0.1, a_zero_point=3)
    tiles, vnni = Int8GemmSpec(kernel="amx", **base), Int8GemmSpec(kernel="vnni", **base)
    assert (tiles.ldq, vnni.ldq) == (amx_ldq, vnni_ldq)
    assert tiles.workspace_bytes == 5 * amx_ldq + 64


@needs_amx
@pytest.mark.parametrize("m, n, k", [(33, 70, 3072), (17, 31, 1024), (100, 33, 768)])
def test_padded_workspace_rows_give_the_exact_sums(m: int, n: int, k: int) -> None:
    """At the AMX kernel's longer workspace rows, its sums are still the integers' own and the
    VNNI kernel's, bit for bit, on 1 and 2 threads."""
    g = torch.Generator().manual_seed(m + n + k)
    zp = 131
    u, a = _activations(g, (m, k), 1.0, zp)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
    packed = pack_quantized_linear(w, torch.ones(n), 1.0, zp)
    exact = ((u - zp) @ w.to(torch.int64).t()).to(torch.float32)
    for threads in (1, 2):
        got, vnni = _both(dict(m=m, n=n, k=k, a_scale=1.0, a_zero_point=zp, threads=threads), a, packed)
        _same_bits(got, exact, (m, n, k, threads))
        _same_bits(got, vnni, (m, n, k, threads))


# -- the kernel: AMX against VNNI, bit for bit -------------------------------------------------
@needs_amx
@each_choice("m, k", M_SIZES, K_SIZES)
def test_amx_sums_are_the_exact_integer_sums(m: int, k: int) -> None:
    """Unit scales: the output is the int32 sum ``sum_k (u - zp) * w`` itself (in float32: exact
    below 2**24), the integers' own product and the VNNI kernel's, for every N."""
    g = torch.Generator().manual_seed(m * 1000 + k)
    for n in N_SIZES:
        zp = (m * 7 + n * 13 + k) % 256
        u, a = _activations(g, (m, k), 1.0, zp)
        w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
        packed = pack_quantized_linear(w, torch.ones(n), 1.0, zp)
        got, vnni = _both(dict(m=m, n=n, k=k, a_scale=1.0, a_zero_point=zp, threads=1), a, packed)
        exact = ((u - zp) @ w.to(torch.int64).t()).to(torch.float32)
        _same_bits(got, exact, (m, n, k))
        _same_bits(got, vnni, (m, n, k))


EPILOGUES: dict[str, dict[str, Any]] = {
    "bias": dict(bias=True),
    "relu": dict(bias=True, unary="relu"),
    "gelu": dict(unary="gelu_erf"),  # staged over the rows, a transcendental
    "residual": dict(bias=True, unary="relu", binary="add", alpha=0.5),
    "residual-first": dict(unary="hardtanh", unary_params={"min_val": -0.5, "max_val": 0.5}, binary="add",
                           binary_first=True),
    "row-broadcast": dict(binary="sub", row_broadcast=True),
    "requantize": dict(bias=True, requantize=(0.05, 3, 0, 255)),
    "store-u8": dict(bias=True, unary="relu", requantize=(0.05, 3, 0, 255), store_u8=True),
    "a-u8": dict(a_u8=True, bias=True),
    "residual-u8": dict(binary="add", other_quantization=(0.02, 9), requantize=(0.05, 3, 0, 255), store_u8=True),
}


@needs_amx
@each_choice(["epilogue", "m, n, k", "threads"], sorted(EPILOGUES), [(17, 31, 3), (33, 70, 65), (100, 33, 777)], [1, 2])
def test_every_epilogue_is_the_vnni_kernels(epilogue: str, m: int, n: int, k: int, threads: int) -> None:
    g = torch.Generator().manual_seed(m + n + k)
    zp, a_scale = 11, 0.03
    options = dict(EPILOGUES[epilogue])
    u, a = _activations(g, (m, k), a_scale, zp)
    _, packed = _weight(g, n, k, a_scale, zp)
    bias = torch.randn(n, generator=g) if options.get("bias") else None
    other = None
    if options.get("binary"):
        rows = 1 if options.pop("row_broadcast", False) else m
        options["other_strides"] = (0 if rows == 1 else n, 1)
        if options.get("other_quantization"):
            other = torch.randint(0, 256, (rows, n), dtype=torch.uint8, generator=g)
        else:
            other = torch.randn(rows, n, generator=g)
    x = u.to(torch.uint8) if options.get("a_u8") else a
    spec = dict(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, threads=threads, **options)
    got, want = _both(spec, x, packed, bias, other)
    _same_bits(got, want, epilogue)


@needs_amx
@pytest.mark.parametrize(("n", "c", "h", "w", "o", "kk", "s", "p", "u8"), [
    (1, 3, 5, 6, 4, 3, 1, 1, False), (2, 17, 9, 7, 33, 3, 2, 1, False), (1, 3, 20, 20, 16, 7, 2, 3, True),
    (1, 64, 14, 14, 70, 3, 1, 1, True), (3, 5, 11, 10, 7, 5, 2, 2, False)])
def test_convolution_a_is_the_vnni_kernels(n: int, c: int, h: int, w: int, o: int, kk: int, s: int, p: int,
                                          u8: bool) -> None:
    """``a_conv``: A the implicit im2col of an NHWC input (of the NCHW planes for a few channels,
    ``a_nchw``), requantized or copied as bytes, with a bias, relu and a requantized output."""
    g = torch.Generator().manual_seed(n * 100 + c + o)
    a_scale, zp = 0.02, 77
    u, x = _activations(g, (n, c, h, w), a_scale, zp)
    wt = torch.randint(-128, 128, (o, c, kk, kk), generator=g, dtype=torch.int8)
    packed = pack_quantized_linear(conv_rows(wt), torch.rand(o, generator=g) * 0.01 + 1e-3, a_scale, zp)
    oh, ow = (h + 2 * p - kk) // s + 1, (w + 2 * p - kk) // s + 1
    planar = c <= 4
    spec = dict(m=n * oh * ow, n=o, k=c * kk * kk, a_scale=a_scale, a_zero_point=zp, bias=True, unary="relu",
                requantize=(0.05, 3, 0, 255), threads=2, a_conv=(h, w, c, kk, kk, s, s, p, p, 1, 1, oh, ow),
                a_nchw=planar, a_u8=u8)
    source = u.to(torch.uint8) if u8 else x
    source = source if planar else source.permute(0, 2, 3, 1)
    got, want = _both(spec, source.contiguous(), packed, torch.randn(o, generator=g))
    _same_bits(got, want, (n, c, h, w, o, kk))


@needs_amx
@each_choice(["n, k", "threads", "blocked"], [(70, 200), (33, 65), (1, 1)], [1, 2], [None, True, False],
             ids=[None, None, ["by-size", "row-blocks", "two-phases"]])
def test_runtime_m_is_the_vnni_kernels(n: int, k: int, threads: int, blocked: bool | None) -> None:
    """``m_runtime``: one kernel planned for 100 rows, called with every row count of
    ``M_SIZES`` (the run-time tile shapes of the last block), gives the VNNI kernel's bits and
    writes no row past its ``m``."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    g = torch.Generator().manual_seed(n + k + threads)
    zp, a_scale, top = 9, 0.03, max(M_SIZES)
    _, packed = _weight(g, n, k, a_scale, zp)
    bias = torch.randn(n, generator=g)
    common: dict[str, Any] = dict(m=top, n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True, threads=threads,
                                  binary="add", requantize=(0.05, 3, 0, 255), m_runtime=True, blocked=blocked)
    tiles = int8_gemm_callable(Int8GemmSpec(kernel="amx", **common))
    vnni = int8_gemm_callable(Int8GemmSpec(kernel="vnni", **common))
    for m in M_SIZES:
        _, x = _activations(g, (m, k), a_scale, zp)
        other = torch.randn(m, n, generator=g)
        out = torch.full((top + 8, n), 7.0)
        got = tiles(x, packed, bias, other, m=m, out=out)
        _same_bits(got, vnni(x, packed, bias, other, m=m), m)
        assert bool((out[m:] == 7.0).all()), f"rows past m={m} written"


@needs_amx
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("m", "n", "k", "conv"), [
    (1000, 70, 133, None),  # row blocks of 256: whole 32-row blocks
    (600, 45, 1600, None),  # row blocks of 240: each ends in a 16-row block
    (2 * 31 * 29, 64, 3 * 49, (61, 57, 3, 7, 7, 2, 2, 3, 3, 1, 1, 31, 29)),
], ids=["linear-1000", "linear-600x1600", "conv7x7s2"])
def test_row_blocks_are_the_vnni_kernels(threads: int, m: int, n: int, k: int, conv: tuple[int, ...] | None) -> None:
    """The row-block schedule (each block requantized, then every panel over its 32-row blocks)
    gives the VNNI kernel's bits, and the two-phase AMX schedule's."""
    g = torch.Generator().manual_seed(m + n + k)
    zp, a_scale = 7, 0.025
    _, packed = _weight(g, n, k, a_scale, zp)
    if conv is None:
        _, x = _activations(g, (m, k), a_scale, zp)
    else:
        _, x = _activations(g, (m // (conv[11] * conv[12]), conv[0], conv[1], conv[2]), a_scale, zp)
    bias, other = torch.randn(n, generator=g), torch.randn(m, n, generator=g)
    common: dict[str, Any] = dict(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True, threads=threads,
                                  binary="add", unary="relu", requantize=(0.05, 3, 0, 255), a_conv=conv)
    assert Int8GemmSpec(blocked=True, **common).block_rows == {133: 256, 1600: 240, 147: 256}[k]
    got, want = _both(dict(blocked=True, **common), x, packed, bias, other)
    _same_bits(got, want, "row blocks")
    two_phases, _ = _both(dict(blocked=False, **common), x, packed, bias, other)
    _same_bits(got, two_phases, "two phases")


# -- through the normal API ------------------------------------------------------------------
class _ConvNet(torch.nn.Module):
    """3x3 (padded), 1x1 and strided 3x3 convolutions, then two linears: implicit im2col, plain
    and uint8 A, row counts that are no multiple of 32."""

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 32, 1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 24, 3, stride=2), torch.nn.Flatten(), torch.nn.Linear(24 * 5 * 5, 40),
            torch.nn.ReLU(), torch.nn.Linear(40, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def _pt2e_quantized(model: torch.nn.Module, x: torch.Tensor) -> torch.nn.Module:
    """The bench's PT2E quantization (X86InductorQuantizer, calibrated on ``x``)."""
    pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e",
                        reason="torchao (the test extra) holds PT2E quantization since torch 2.10")
    from ziggurat.bench.quantize import quantize_x86

    return quantize_x86(model, (x,))


@needs_amx
def test_quantized_model_takes_the_amx_kernel(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PT2E model (X86InductorQuantizer) compiled on this host runs its deep int8 GEMMs on AMX
    and its shallow ones on VNNI, the all-VNNI build's output bit for bit; saved, it loads and runs in a process with the tile
    permission, and loading it where the OS refused the tiles is a clear error, not SIGILL."""
    import ziggurat
    import ziggurat.ir.errors as ziggurat_errors

    torch.manual_seed(0)
    x = torch.randn(4, 3, 12, 12)
    quantized = _pt2e_quantized(_ConvNet(), x)
    with torch.no_grad():
        compiled = ziggurat.compile(quantized, (x,), backend="cpu", isa="avx512")
        assert not compiled.report.fallback_ops, compiled.report.format()
        chosen = [(int(m.group(2)), m.group(1)) for m in
                  re.finditer(r'int8_kernel = "(\w+)".*?\bk = (\d+) : i64', compiled.ir["loop"])]
        # the deep GEMMs on AMX, the shallow ones (K = 27, 16 and 40) on VNNI: amx.int8_kernel_for_depth
        assert sorted(chosen) == [(16, "vnni"), (27, "vnni"), (40, "vnni"), (288, "amx"), (600, "amx")], chosen
        assert compiled.report.stats.get("int8 gemm calls (amx)") == 2, compiled.report.stats
        gemms = len(chosen)
        monkeypatch.setenv(amx.DISABLE_ENV, "1")
        fallback = ziggurat.compile(quantized, (x,), backend="cpu", isa="avx512")
        monkeypatch.delenv(amx.DISABLE_ENV)
        assert fallback.report.stats.get("int8 gemm calls (vnni)") == gemms, fallback.report.stats
        got = compiled(x)
        _same_bits(got, fallback(x))
        want = quantized(x)
        assert float((got - want).abs().max()) <= 0.02 * float(want.abs().max())
        path = tmp_path / "int8_amx.zig"
        compiled.save(path)
        _same_bits(ziggurat.load(path)(x), got)
        monkeypatch.setattr(amx, "request_tile_permission", lambda: (False, "refused by the test"))
        with pytest.raises(ziggurat_errors.ZigguratError, match="AMX tiles.*refused by the test"):
            ziggurat.load(path)


@needs_vnni
def test_a_module_saved_before_the_amx_kernel_loads(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved modules from before the kernel choice was recorded name VNNI's products
    ``"avx512vnni"``: they load (as ``"vnni"``, whose entry symbol they define) and run."""
    import ziggurat
    from tests.support.quantized_models import QuantizedMlp
    from tests.support.saved_files import join, split

    monkeypatch.setenv(amx.DISABLE_ENV, "1")
    x = torch.randn(5, 133, generator=torch.Generator().manual_seed(3))
    compiled = ziggurat.compile(QuantizedMlp(), (x,), backend="cpu", isa="avx512")
    path = tmp_path / "vnni.zig"
    compiled.save(path)
    header, sections = split(path.read_bytes())
    assert sections["ir"].count(b'int8_kernel = "vnni"') == 2
    sections["ir"] = sections["ir"].replace(b'int8_kernel = "vnni"', b'int8_kernel = "avx512vnni"')
    path.write_bytes(join(header, sections))
    _same_bits(ziggurat.load(path)(x), compiled(x))
