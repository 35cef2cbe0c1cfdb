"""Delta-debugging a failing program while the failure persists.

The failure is pinned to one configuration and outcome kind (and, for crashes and
refusals, the normalized reason).  Reductions, each kept only if the failure persists:

1. keep one output (then dead-code elimination);
2. remove nodes: a node's results are replaced by constants holding their example values
   (exactly what the failing op saw), by new inputs of the same shape and dtype, or by
   one of the node's operands of the same shape and dtype (the node bypassed);
3. simplify inputs: contiguous layout, no aliasing, a plainer value domain;
4. shrink: halve or trim an input's dims (programs that no longer type-check in eager
   are rejected by the predicate itself, since the oracle marks them invalid).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from tests.fuzz.execute import build_module, example_inputs, namespace
from tests.fuzz.program import Node, Program, TensorSpec, dtype_name

Predicate = Callable[[Program], bool]


@dataclass
class Stats:
    trials: int = 0
    kept: int = 0
    seconds: float = 0.0


def dead_code(program: Program) -> Program:
    """Drop nodes, inputs and constants the outputs do not depend on."""
    live = set(program.outputs)
    nodes: list[Node] = []
    for node in reversed(program.nodes):
        if live & set(node.outs):
            nodes.append(node)
            live |= set(node.uses)
    p = copy.deepcopy(program)
    p.nodes = list(reversed(nodes))
    used = live
    aliased = {i.alias for i in p.inputs if i.name in used and i.alias}
    p.inputs = [i for i in p.inputs if i.name in used or i.name in aliased]
    p.consts = [c for c in p.consts if c.name in used]
    return p


def _values(program: Program) -> dict[str, torch.Tensor]:
    """Every named value's example tensor (to turn a result into a constant)."""
    env = namespace()
    module = build_module(program)
    for spec, t in zip(program.inputs, example_inputs(program)):
        env[spec.name] = t.clone()
    for c in program.consts:
        env[c.name] = getattr(module, c.name)
    with torch.no_grad():
        for node in program.nodes:
            exec("\n".join(node.lines), env)
    return {k: v for k, v in env.items() if isinstance(v, torch.Tensor)}


def _replace_uses(program: Program, start: int, old: str, new: str) -> None:
    import re

    pattern = re.compile(rf"\b{re.escape(old)}\b")
    for node in program.nodes[start:]:
        if old in node.uses:
            node.lines = [pattern.sub(new, line) for line in node.lines]
            node.uses = sorted({new if u == old else u for u in node.uses})
    program.outputs = [new if o == old else o for o in program.outputs]


def _fresh_name(program: Program, prefix: str) -> str:
    taken = {i.name for i in program.inputs} | {c.name for c in program.consts}
    k = 0
    while f"{prefix}{k}" in taken:
        k += 1
    return f"{prefix}{k}"


def _as_const(program: Program, name: str, value: torch.Tensor) -> TensorSpec:
    literal = value.detach().reshape(-1).tolist()
    return TensorSpec(_fresh_name(program, "c"), list(value.shape), dtype_name(value.dtype), "literal", 0,
                      literal=literal)


def _as_input(program: Program, value: torch.Tensor) -> TensorSpec:
    dtype = value.dtype
    domain = "normal" if dtype.is_floating_point else "small"
    return TensorSpec(_fresh_name(program, "x"), list(value.shape), dtype_name(dtype), domain, 12345)


def _node_replacements(program: Program, k: int, values: dict[str, torch.Tensor]) -> list[Program]:
    """Candidates without node ``k``: its results become constants, inputs, or an operand."""
    node = program.nodes[k]
    out: list[Program] = []
    needed = [o for o in node.outs if o in values]
    if len(needed) != len(node.outs):
        return out
    for mode in ("const", "input", "bypass"):
        p = copy.deepcopy(program)
        ok = True
        for name in node.outs:
            v = values[name]
            if mode == "const" and v.numel() <= 4096:
                spec = _as_const(p, name, v)
                p.consts.append(spec)
            elif mode == "input":
                spec = _as_input(p, v)
                p.inputs.append(spec)
            elif mode == "bypass":
                same = [u for u in node.uses if u in values and values[u].shape == v.shape
                        and values[u].dtype == v.dtype]
                if not same:
                    ok = False
                    break
                _replace_uses(p, k + 1, name, same[0])
                continue
            else:
                ok = False
                break
            _replace_uses(p, k + 1, name, spec.name)
        if ok:
            del p.nodes[k]
            out.append(dead_code(p))
    return out


def _input_simplifications(program: Program) -> list[Program]:
    out: list[Program] = []
    for i, spec in enumerate(program.inputs):
        for change in ({"layout": "contiguous"}, {"alias": None},
                       {"domain": "grid"} if spec.dtype == "float32" else {}):
            if change and any(getattr(spec, k) != v for k, v in change.items()):
                p = copy.deepcopy(program)
                for k, v in change.items():
                    setattr(p.inputs[i], k, v)
                out.append(p)
    return out


def _shrinks(program: Program) -> list[Program]:
    out: list[Program] = []
    for i, spec in enumerate(program.inputs):
        for d, size in enumerate(spec.shape):
            for new in sorted({size // 2, size - 1, 1} - {size, 0}, reverse=True):
                p = copy.deepcopy(program)
                p.inputs[i].shape[d] = new
                for other in p.inputs:  # aliased inputs keep one shape
                    if other.alias == spec.name or spec.alias == other.name:
                        other.shape[d] = new
                out.append(p)
    return out


def minimize(program: Program, fails: Predicate, budget_s: float = 300.0, max_trials: int = 400) -> tuple[Program, Stats]:
    """The smallest program found (within the budget) on which ``fails`` still holds."""
    stats = Stats()
    start = time.perf_counter()

    def attempt(candidate: Program) -> bool:
        if stats.trials >= max_trials or time.perf_counter() - start > budget_s:
            return False
        stats.trials += 1
        try:
            kept = fails(candidate)
        except Exception:
            kept = False
        stats.kept += kept
        return kept

    best = dead_code(program)
    if len(best.outputs) > 1:
        for name in list(best.outputs):
            candidate = dead_code(Program(best.name, best.inputs, best.consts, best.nodes, [name]))
            if attempt(candidate):
                best = candidate
                break
    changed = True
    while changed and stats.trials < max_trials and time.perf_counter() - start < budget_s:
        changed = False
        try:
            values = _values(best)
        except Exception:
            break
        for k in reversed(range(len(best.nodes))):
            if k >= len(best.nodes):
                continue
            for candidate in _node_replacements(best, k, values):
                if attempt(candidate):
                    best, changed = candidate, True
                    break
            if changed:
                break
        if changed:
            continue
        for candidate in _input_simplifications(best) + _shrinks(best):
            if attempt(candidate):
                best, changed = dead_code(candidate), True
                break
    stats.seconds = time.perf_counter() - start
    return best, stats
