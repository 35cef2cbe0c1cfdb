"""The index-expression simplifier: exact against brute force, and closed on reshape chains."""

from __future__ import annotations

import itertools
import random

from ziggurat.backends.cpu.lowering.index import FloorDiv, IndexExpr, Mod, Var, flat_index, unflatten


def _eval(e: IndexExpr, env: dict[Var, int]) -> int:
    total = e.const
    for atom, c in e.terms:
        if isinstance(atom, Var):
            total += c * env[atom]
        elif isinstance(atom, FloorDiv):
            total += c * (_eval(atom.inner, env) // atom.d)
        elif isinstance(atom, Mod):
            total += c * (_eval(atom.inner, env) % atom.d)
    return total


def test_floordiv_mod_match_python() -> None:
    rng = random.Random(0)
    for _ in range(200):
        vs = [Var(f"v{i}", rng.randint(1, 7)) for i in range(3)]
        cs = [rng.randint(-20, 20) for _ in vs]
        k, d = rng.randint(-30, 30), rng.randint(1, 40)
        e = sum((IndexExpr.of(v) * c for v, c in zip(vs, cs)), IndexExpr.of(k))
        q, r = e // d, e % d
        for vals in itertools.product(*[range(v.extent) for v in vs]):
            env = dict(zip(vs, vals))
            raw = sum(c * x for c, x in zip(cs, vals)) + k
            assert _eval(q, env) == raw // d and _eval(r, env) == raw % d


def test_reshape_chain_is_affine_again() -> None:
    n, c, h, w = Var("n", 2), Var("c", 3), Var("h", 4), Var("w", 5)
    flat = flat_index([IndexExpr.of(v) for v in (n, c, h, w)], (2, 3, 4, 5))
    two = unflatten(flat, (6, 20))
    back = flat_index(unflatten(flat_index(two, (6, 20)), (2, 3, 4, 5)), (2, 3, 4, 5))
    assert back == flat
    assert all(not isinstance(a, FloorDiv | Mod) for a, _ in back.terms)


def test_channels_last_view_of_nchw_reshape() -> None:
    # [N, H*W, C] view of an NHWC buffer [1, 32, 32, 16]: 16*p + o after simplification
    p, o = Var("p", 1024), Var("o", 16)
    e = IndexExpr.of(p) * 16 + IndexExpr.of(o)
    subs = [IndexExpr.of(0), (e // 512) % 32, (e // 16) % 32, e % 16]
    assert flat_index(subs, (1, 32, 32, 16)) == IndexExpr.of(p) * 16 + IndexExpr.of(o)


def test_ranges() -> None:
    h, k = Var("h", 8), Var("k", 3)
    e = IndexExpr.of(h) * 2 + IndexExpr.of(k) - 1
    assert e.range() == (-1, 15)
    assert e.coeff(h) == 2 and e.coeff(k) == 1
    assert (e // 4).coeff(h) is None


def test_reshape_across_unaligned_dims_is_the_flat_index() -> None:
    # [15, 11, 13] read as [3, 715]: 143*(r // 143) + 13*((r // 13) % 11) + r % 13 == r
    r0, r1 = Var("r0", 3), Var("r1", 715)
    flat = flat_index([IndexExpr.of(r0), IndexExpr.of(r1)], (3, 715))
    back = flat_index(unflatten(flat, (15, 11, 13)), (15, 11, 13))
    assert back == flat


def test_nested_split_recombines_exactly() -> None:
    rng = random.Random(1)
    for _ in range(100):
        x = Var("x", rng.randint(1, 200))
        d, m, c = rng.randint(1, 9), rng.randint(1, 9), rng.randint(1, 5)
        shift = rng.randint(-20, 20)
        e = IndexExpr.of(x) + shift
        got = ((e // d) % m) * (c * d) + (e % d) * c
        for v in range(x.extent):
            assert _eval(got, {x: v}) == c * ((v + shift) % (d * m))
