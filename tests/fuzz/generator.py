"""The seeded random-program generator: ``generate(seed, index)`` is deterministic.

A program starts from one to three inputs of random rank (0-5), dtype and layout, then
places ``n_ops`` op specs drawn by weight; each spec picks its operands from the pool
and every candidate is checked by running it (see ``builder.py``).  A graph is either a
float graph (float32 inputs, ints and bools appear through comparisons, casts and
indices) or, one time in five, an integer/bool graph.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from tests.fuzz.builder import Builder, Reject
from tests.fuzz.program import Program
from tests.fuzz.registry import OpSpec, all_specs


@dataclass(frozen=True)
class Profile:
    """Size of the generated programs."""

    min_ops: int = 2
    max_ops: int = 10
    max_numel: int = 4096
    attempts: int = 40
    #: draw ops with OpInfo sample arguments too (loads op_db once per process, seconds)
    opinfo: bool = True
    #: (spec name, factor) pairs multiplying those specs' weights
    boost: tuple[tuple[str, float], ...] = ()
    #: (spec name, weight) pairs replacing those specs' weights (a spec of weight 0 is drawn
    #: only by a profile that gives it one)
    weights: tuple[tuple[str, float], ...] = ()


DEFAULT = Profile()
#: the GEMM and convolution specs: what low-precision kernels compute (``gemm`` profile)
GEMM_SPECS = ("conv", "conv_transpose", "linear", "matmul", "fused_gemm", "fused_conv", "conv_bn", "linear_bn",
              "sibling_linears", "mm_family", "einsum", "bilinear")
#: named profiles: ``default`` for make fuzz, ``dev`` (smaller) for quick runs, ``slice`` for make
#: test, ``gemm`` for the -bf16 configurations (GEMMs and convolutions drawn 12 times as often,
#: ``conv_many_channels``: bf16's pixel-row convolutions, and ``wide_linear_chain``: linears wide
#: enough for the AMX kernel's wide rows, ``subnormal_gemm``: bf16 subnormals against infinities,
#: ``deep_linear``: a K the AMX kernel splits in passes), ``pixel-rows`` for the bf16 pixel-row
#: convolutions (``conv_many_channels``, and ``conv_layer_entry``: a stride-2 3x3 of a
#: channel-major bf16 result, which pixel rows copy channels-last first),
#: ``windows`` for pools of 4096 or more outputs over padding (``wide_window``: border splits),
#: ``half-activations`` for transcendental functions of bf16 and float16 values
#: (``half_activation``: the CPU kernels' ``loop.lookup`` tables),
#: ``quantized`` for PT2E patterns (``ops_quantized.py``'s specs, of weight 0 elsewhere: most
#: programs hold one or more), ``quantized-chain`` for int8 GEMMs back to back (``quantized_block``)
PROFILES: dict[str, Profile] = {
    "default": DEFAULT,
    "dev": Profile(min_ops=2, max_ops=8, max_numel=2048),
    "slice": Profile(min_ops=2, max_ops=7, max_numel=1024, opinfo=False),
    "gemm": Profile(boost=tuple((name, 12.0) for name in GEMM_SPECS),
                    weights=(("conv_many_channels", 12.0), ("wide_linear_chain", 30.0), ("subnormal_gemm", 12.0),
                             ("nonfinite_padded_conv", 6.0), ("deep_linear", 12.0))),
    # special values where eager's kernels round or order in particular ways (fuzz seeds 134,
    # 144, 146 and 148): specs of weight 0 elsewhere, so the other profiles draw as before
    "nonfinite": Profile(weights=(("subnormal_gemm", 10.0), ("nonfinite_padded_conv", 10.0), ("prod_past_float32", 10.0),
                                  ("interpolate_nonfinite", 10.0))),
    "quantized": Profile(weights=(("quantized_linear", 40.0), ("quantized_conv", 40.0), ("quantize_pair", 10.0))),
    "pixel-rows": Profile(opinfo=False, boost=tuple((name, 4.0) for name in GEMM_SPECS),
                          weights=(("conv_many_channels", 40.0), ("conv_layer_entry", 80.0))),
    # pools of 4096+ outputs over padding (``wide_window``): the CPU kernels' border splits
    "windows": Profile(max_numel=24576, opinfo=False, weights=(("wide_window", 300.0),)),
    # transcendental functions of 16-bit values (``half_activation``): the CPU kernels' tables
    "half-activations": Profile(weights=(("half_activation", 60.0),)),
    # int8 linears back to back with residuals: the values fuse-requantize stores as uint8
    "quantized-chain": Profile(weights=(("quantized_block", 40.0), ("quantized_linear", 20.0), ("quantized_conv", 20.0),
                                        ("quantize_pair", 5.0))),
}
#: spec name -> the last unexpected error it raised (bugs in specs; should stay empty)
SPEC_ERRORS: dict[str, str] = {}


def program_name(seed: int, index: int) -> str:
    return f"s{seed}_g{index}"


def generate(seed: int, index: int, profile: Profile = DEFAULT,
             only: list[str] | None = None, strict: bool = False) -> Program:
    """The ``index``-th program of ``seed`` (``only``: restrict to these spec names).

    A spec that fails with anything but :class:`Reject` has a bug: ``strict`` raises it,
    otherwise it is skipped like a rejection (and listed in ``SPEC_ERRORS``)."""
    rng = random.Random(f"ziggurat-fuzz:{seed}:{index}")
    b = Builder(rng, program_name(seed, index), profile.max_numel, profile.opinfo)
    specs = all_specs()
    pool: list[OpSpec] = [s for s in specs.values() if (only is None or s.name in only)
                          and (profile.opinfo or s.family != "opinfo")]
    boost, given = dict(profile.boost), dict(profile.weights)
    weights = [given.get(s.name, s.weight) * boost.get(s.name, 1.0) for s in pool]
    integer_graph = rng.random() < 0.2
    for _ in range(rng.randint(1, 3)):
        dtype = rng.choice([torch.int64, torch.int32, torch.bool]) if integer_graph else torch.float32
        b.new_input(b.shape(), dtype)
    n_ops = rng.randint(profile.min_ops, profile.max_ops)
    placed = 0
    for _ in range(n_ops * profile.attempts):
        if placed >= n_ops:
            break
        op = rng.choices(pool, weights=weights)[0]
        mark = _mark(b)
        try:
            op.place(b)
            placed += 1
        except Reject:
            _rollback(b, mark)
        except Exception as e:
            if strict:
                raise
            SPEC_ERRORS[op.name] = f"{type(e).__name__}: {e}"
            _rollback(b, mark)
    _drop_unused_inputs(b)
    b.outputs()
    return b.program


def _mark(b: Builder) -> tuple[int, int, int, int]:
    return len(b.program.inputs), len(b.program.consts), len(b.program.nodes), len(b.pool)


def _rollback(b: Builder, mark: tuple[int, int, int, int]) -> None:
    """Forget the inputs/constants/values a rejected spec created."""
    n_in, n_const, n_nodes, n_pool = mark
    for v in b.pool[n_pool:]:
        b.env.pop(v.name, None)
        b.uses.pop(v.name, None)
    del b.program.inputs[n_in:], b.program.consts[n_const:], b.program.nodes[n_nodes:], b.pool[n_pool:]


def _drop_unused_inputs(b: Builder) -> None:
    used = {u for n in b.program.nodes for u in n.uses}
    kept = [i for i in b.program.inputs if i.name in used]
    if not kept and b.program.inputs:
        kept = b.program.inputs[:1]
    aliased = {i.alias for i in kept if i.alias}
    b.program.inputs = [i for i in b.program.inputs if i in kept or i.name in aliased]
