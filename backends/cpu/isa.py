"""Instruction-set selection for the native CPU backend.

An :class:`Isa` names the widest vector unit generated code may use.  The
target machine built by :func:`target_machine` keeps the host CPU name (so
instruction scheduling matches the real machine) but its feature string really
switches off what the chosen ISA excludes: ``Isa.AVX2`` on an AVX-512 host
produces ``ymm`` code only, ``Isa.SCALAR`` no AVX at all (SSE2, the x86-64
baseline, stays).
"""

from __future__ import annotations

import threading
from enum import Enum
from functools import cache

import llvmlite.binding as llvm


class Isa(Enum):
    AVX512 = "avx512"
    AVX2 = "avx2"
    SCALAR = "scalar"


class IsaError(ValueError):
    """An ISA name is unknown, or the host cannot run the requested ISA."""


# Features an ISA needs on the host; FMA is required for both vector ISAs
# because the GEMM microkernels are built on fused multiply-add.
_REQUIRED: dict[Isa, tuple[str, ...]] = {
    Isa.AVX512: ("avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"),
    Isa.AVX2: ("avx2", "fma", "avx"),
    Isa.SCALAR: (),
}

# Prefixes of feature names that are switched off for the narrower ISAs.  LLVM
# also drops features implied by a disabled one, but listing them keeps the
# string honest when read in a log.
_AVX512_PREFIXES: tuple[str, ...] = ("avx512", "avx10", "amx-avx512", "evex512")
_AVX_FAMILY: tuple[str, ...] = (
    "avx", "avx2", "fma", "fma4", "f16c", "xop", "vaes", "vpclmulqdq", "gfni",
    "avxvnni", "avxifma", "avxneconvert", "avxvnniint8", "avxvnniint16",
    "amx-tile", "amx-int8", "amx-bf16", "amx-fp16", "amx-complex",
    "amx-fp8", "amx-tf32", "amx-movrs", "sha512", "sm3", "sm4",
)

#: LLVM command-line options set once per process.  LLVM 22's loop-idiom pass looks for CRC
#: loops (HashRecognize) in every loop of 8, 16, 32 or 64 steps, and on an 8-step scalar loop of
#: remainder, sigmoid, logit and a max (fuzz seed 111, program 59) ran 250 s where the whole
#: pipeline takes 0.1 s without it.  No kernel computes a CRC.
LLVM_OPTIONS = ("-disable-loop-idiom-hashrecognize",)

_init_lock = threading.Lock()
_initialized = False


def ensure_llvm_initialized() -> None:
    """Initialise LLVM's native target, asm printer and asm parser once."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _make_process_symbols_visible()
            for option in LLVM_OPTIONS:
                llvm.set_option("ziggurat", option)
            _initialized = True


def _make_process_symbols_visible() -> None:
    """Let JIT symbol lookup see the symbols of the running process (libc,
    libm, ...), as an MCJIT engine would after its creation."""
    from llvmlite.binding import ffi

    with ffi.OutputString() as err:
        if ffi.lib.LLVMPY_LoadLibraryPermanently(None, err):
            raise RuntimeError(f"LLVM cannot open the process for symbol lookup: {err}")


@cache
def host_cpu_name() -> str:
    return llvm.get_host_cpu_name()


@cache
def host_features() -> dict[str, bool]:
    """Host CPU features as LLVM reports them, ``name -> enabled``."""
    return dict(llvm.get_host_cpu_features())


def host_supports(isa: Isa) -> bool:
    feats = host_features()
    return all(feats.get(f, False) for f in _REQUIRED[isa])


@cache
def host_isa() -> Isa:
    """The widest ISA this host can run."""
    for isa in (Isa.AVX512, Isa.AVX2):
        if host_supports(isa):
            return isa
    return Isa.SCALAR


def vector_width(isa: Isa, dtype_bits: int = 32) -> int:
    """Lanes of one vector register for elements of ``dtype_bits`` bits."""
    if dtype_bits not in (8, 16, 32, 64):
        raise IsaError(f"vector_width: unsupported element width {dtype_bits} bits")
    bits = {Isa.AVX512: 512, Isa.AVX2: 256, Isa.SCALAR: dtype_bits}[isa]
    return bits // dtype_bits


def vector_registers(isa: Isa) -> int:
    """Architectural vector registers available to one function."""
    return {Isa.AVX512: 32, Isa.AVX2: 16, Isa.SCALAR: 16}[isa]


def parse_isa(name: str | Isa, *, host: bool = True) -> Isa:
    """``"auto" | "avx512" | "avx2" | "scalar"`` -> :class:`Isa`.

    Raises :class:`IsaError` for an unknown name and, with ``host`` (code about to run here),
    for an ISA the host lacks.  Without, an ISA is a target the IR is lowered for, as
    ``llc -mattr`` takes one: the passes and ``ziggurat-opt`` write avx512 IR on an AVX2 host;
    the JIT and the object loader refuse it.
    """
    if isinstance(name, Isa):
        isa = name
    elif not isinstance(name, str):
        raise IsaError(f"isa must be a string or Isa, got {type(name).__name__}")
    elif name.strip().lower() == "auto":
        return host_isa()
    else:
        key = name.strip().lower()
        try:
            isa = Isa(key)
        except ValueError:
            choices = ", ".join(["auto"] + [i.value for i in Isa])
            raise IsaError(f"unknown isa {name!r}; expected one of: {choices}") from None
    if host and not host_supports(isa):
        missing = [f for f in _REQUIRED[isa] if not host_features().get(f, False)]
        raise IsaError(
            f"isa {isa.value!r} is not supported by this host CPU "
            f"({host_cpu_name()}); missing features: {', '.join(missing)}"
        )
    return isa


@cache
def feature_string(isa: Isa) -> str:
    """LLVM feature string for ``isa`` on this host (host features, minus
    everything ``isa`` excludes)."""
    feats = dict(host_features())
    if isa in (Isa.AVX2, Isa.SCALAR):
        for name in list(feats):
            if name.startswith(_AVX512_PREFIXES):
                feats[name] = False
    if isa is Isa.SCALAR:
        for name in list(feats):
            if name in _AVX_FAMILY or name.startswith("avx"):
                feats[name] = False
        for name in _AVX_FAMILY:
            feats.setdefault(name, False)
            feats[name] = False
    parts = [("+" if on else "-") + name for name, on in sorted(feats.items())]
    if isa is Isa.AVX512:
        # Intel cores since Skylake-SP default to 256-bit auto-vectorisation;
        # on this ISA we want the full 512-bit registers everywhere.
        parts.append("-prefer-256-bit")
    return ",".join(parts)


def pass_isa(option: str | Isa, pass_name: str) -> Isa:
    """:func:`parse_isa` of a pass's ``isa`` option, the target it lowers for (the host need
    not run it); a bad one is a ``ZigguratError`` naming the pass."""
    return _isa_or_error(option, pass_name, host=False)


def host_run_isa(option: str | Isa, op: str = "compile") -> Isa:
    """:func:`parse_isa` of an ISA code will run with here: one the host lacks (or an unknown
    name) is a ``ZigguratError`` naming ``op``."""
    return _isa_or_error(option, op, host=True)


def _isa_or_error(option: str | Isa, op: str, host: bool) -> Isa:
    from ziggurat.ir.errors import ZigguratError

    try:
        return parse_isa(option, host=host)
    except IsaError as e:
        raise ZigguratError(str(e), op=op) from None


def isa_has(isa: Isa, feature: str) -> bool:
    """Whether code for ``isa`` on this host may use ``feature`` (an LLVM feature name, as in
    :func:`feature_string`: the host has it and ``isa`` does not exclude it)."""
    return f"+{feature}" in feature_string(isa).split(",")


def target_machine(isa: Isa, opt: int = 3) -> llvm.TargetMachine:
    """A new target machine for the host CPU restricted to ``isa``.

    A fresh object is returned on every call: an MCJIT execution engine takes
    ownership of the target machine it is created with, so they are not shared.
    """
    if not isinstance(isa, Isa):
        raise IsaError(f"target_machine: expected an Isa, got {isa!r}")
    if opt not in (0, 1, 2, 3):
        raise IsaError(f"optimisation level must be 0..3, got {opt!r}")
    ensure_llvm_initialized()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=host_cpu_name(),
        features=feature_string(isa),
        opt=opt,
        reloc="pic",
        codemodel="jitdefault",
    )
