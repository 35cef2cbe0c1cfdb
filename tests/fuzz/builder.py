"""The generator's state: a pool of typed values with concrete example tensors.

Like NNSmith, a program grows by inserting one op at a time whose operands come from
the pool (or are new inputs/constants of the shape the op needs).  Shapes and attributes
are chosen so that the op is valid; torch itself is the final judge: every candidate
statement runs on the example values, and one that raises, or makes NaN/Inf out of
finite operands, or leaves the supported dtypes, is rejected and another op is tried.
So every program is valid on its example inputs by construction.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from tests.fuzz.execute import namespace
from tests.fuzz.materialize import FLOAT_DOMAINS, LAYOUTS, make_const, make_input
from tests.fuzz.program import Node, Program, TensorSpec, dtype_name

#: dtypes a value may have (the CPU backend's native ones)
VALUE_DTYPES = (torch.float32, torch.int32, torch.int64, torch.bool)
#: sizes: 1, primes (masked vector tails), and a few powers of two
SIZES = (1, 1, 2, 2, 3, 3, 4, 5, 5, 7, 7, 8, 11, 13, 16, 17, 19, 23, 31, 37)
RANK_WEIGHTS = (0.04, 0.18, 0.3, 0.22, 0.2, 0.06)  # ranks 0..5
_NAME = re.compile(r"\b([xcv]\d+)\b")


class Reject(Exception):
    """This op cannot be placed here (no valid operands or attributes); try another."""


@dataclass
class Value:
    name: str
    tensor: torch.Tensor
    origin: str  # "input", "const" or "op"

    @property
    def shape(self) -> list[int]:
        return list(self.tensor.shape)

    @property
    def rank(self) -> int:
        return self.tensor.dim()

    @property
    def dtype(self) -> torch.dtype:
        return self.tensor.dtype

    @property
    def numel(self) -> int:
        return self.tensor.numel()

    @property
    def is_float(self) -> bool:
        return self.tensor.dtype == torch.float32

    @property
    def is_int(self) -> bool:
        return self.tensor.dtype in (torch.int32, torch.int64)

    @property
    def is_bool(self) -> bool:
        return self.tensor.dtype == torch.bool

    def __str__(self) -> str:
        return self.name


@dataclass
class Stmts:
    """Several statements; ``outs`` are the names they define that join the pool."""

    lines: list[str]
    outs: list[str]


Emit = str | Stmts
Pred = Callable[[Value], bool]


def _nonfinite(t: torch.Tensor) -> bool:
    return t.is_floating_point() and not bool(torch.isfinite(t).all())


class Builder:
    def __init__(self, rng: random.Random, name: str, max_numel: int = 4096, opinfo: bool = False) -> None:
        self.rng = rng
        #: whether the OpInfo-sample spec may be used (loading the samples takes seconds)
        self.opinfo = opinfo
        self.program = Program(name)
        self.env: dict[str, Any] = namespace()
        self.pool: list[Value] = []
        self.uses: dict[str, int] = {}
        self.max_numel = max_numel
        self._counter = 0

    # ---- names and random choices ------------------------------------------------------
    def fresh(self) -> str:
        self._counter += 1
        return f"v{self._counter}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, items: Sequence[Any]) -> Any:
        if not items:
            raise Reject("nothing to choose from")
        return items[self.rng.randrange(len(items))]

    def seed(self) -> int:
        return self.rng.randrange(1, 2**31)

    def size(self, lo: int = 1, hi: int = 37) -> int:
        options = [s for s in SIZES if lo <= s <= hi]
        return self.choice(options) if options else lo

    def shape(self, min_rank: int = 0, max_rank: int = 5, max_numel: int | None = None) -> list[int]:
        ranks = list(range(min_rank, max_rank + 1))
        rank = self.rng.choices(ranks, weights=[RANK_WEIGHTS[min(r, 5)] for r in ranks])[0]
        cap = max_numel or self.max_numel
        dims = [self.size() for _ in range(rank)]
        while math.prod(dims) > cap:
            i = max(range(rank), key=lambda k: dims[k])
            dims[i] = max(1, dims[i] // 2)
        return dims

    def broadcast_shape(self, shape: Sequence[int]) -> list[int]:
        """A shape that broadcasts against ``shape`` to ``shape``: leading dims dropped, some set to 1."""
        dims = list(shape)
        if dims and self.chance(0.4):
            dims = dims[self.rng.randrange(len(dims) + 1):]
        return [1 if self.chance(0.3) else d for d in dims]

    def dims_subset(self, rank: int, allow_empty: bool = False) -> list[int]:
        """A random combination of dims (any order, negative spellings too)."""
        if rank == 0:
            return [] if allow_empty or self.chance(0.5) else [self.choice([0, -1])]
        k = self.rng.randint(0 if allow_empty else 1, rank)
        dims = self.rng.sample(range(rank), k)
        return [d - rank if self.chance(0.3) else d for d in dims]

    def dim(self, rank: int) -> int:
        if rank == 0:
            return self.choice([0, -1])
        d = self.rng.randrange(rank)
        return d - rank if self.chance(0.3) else d

    # ---- operands ----------------------------------------------------------------------
    def _add(self, name: str, tensor: torch.Tensor, origin: str) -> Value:
        value = Value(name, tensor, origin)
        self.env[name] = tensor
        self.pool.append(value)
        self.uses.setdefault(name, 0)
        return value

    def new_input(self, shape: Sequence[int], dtype: torch.dtype, domain: str | None = None,
                  layout: str | None = None) -> Value:
        domain = domain or self.default_domain(dtype)
        if layout is None:
            layout = "contiguous" if self.chance(0.6) else self.choice(LAYOUTS)
        name = f"x{len(self.program.inputs)}"
        twin = [s for s in self.program.inputs if s.alias is None and s.shape == list(shape)
                and s.dtype == dtype_name(dtype)]
        if twin and self.chance(0.3):  # aliased example inputs: one tensor passed twice
            first = twin[0]
            spec = TensorSpec(name, list(shape), first.dtype, first.domain, self.seed(), first.layout, alias=first.name)
            tensor = self.env[first.name]
        else:
            spec = TensorSpec(name, list(shape), dtype_name(dtype), domain, self.seed(), layout)
            tensor = make_input(spec.shape, dtype, domain, layout, spec.seed)
        self.program.inputs.append(spec)
        return self._add(name, tensor, "input")

    def new_literal_input(self, values: torch.Tensor) -> Value:
        """An input holding exactly ``values`` (moved values at call time, never aliased)."""
        name = f"x{len(self.program.inputs)}"
        spec = TensorSpec(name, list(values.shape), dtype_name(values.dtype), "literal", 0,
                          literal=values.reshape(-1).tolist())
        self.program.inputs.append(spec)
        return self._add(name, values.clone(), "input")

    def new_const(self, shape: Sequence[int], dtype: torch.dtype, domain: str | None = None,
                  literal: list[Any] | None = None) -> Value:
        name = f"c{len(self.program.consts)}"
        spec = TensorSpec(name, list(shape), dtype_name(dtype), domain or self.default_domain(dtype),
                          self.seed(), literal=literal)
        if literal is not None:
            tensor = torch.tensor(literal, dtype=dtype).reshape(list(shape))
        else:
            tensor = make_const(spec.shape, dtype, spec.domain, spec.seed)
        self.program.consts.append(spec)
        return self._add(name, tensor, "const")

    def new_tensor(self, shape: Sequence[int], dtype: torch.dtype, domain: str | None = None,
                   const: float = 0.5) -> Value:
        if self.chance(const):
            return self.new_const(shape, dtype, domain)
        return self.new_input(shape, dtype, domain)

    def default_domain(self, dtype: torch.dtype) -> str:
        if dtype.is_floating_point:
            return self.rng.choices(FLOAT_DOMAINS, weights=(0.55, 0.25, 0.1, 0.05, 0.05))[0]
        return "small"

    def index_const(self, n: int, shape: Sequence[int], negative: bool = True,
                    unique: bool = False) -> Value:
        """A constant int64 index tensor into a dim of size ``n`` (negative entries where allowed)."""
        count = math.prod(shape)
        if unique:
            if count > n:
                raise Reject("more unique indices than the dim has")
            picks = self.rng.sample(range(n), count)
        else:
            picks = [self.rng.randrange(n) for _ in range(count)]
        values = [p - n if negative and self.chance(0.5) else p for p in picks]
        return self.new_const(list(shape), torch.int64, "literal", literal=values)

    def candidates(self, dtypes: Sequence[torch.dtype], pred: Pred | None = None,
                   min_rank: int = 0, max_rank: int = 5) -> list[Value]:
        return [v for v in self.pool if v.dtype in dtypes and min_rank <= v.rank <= max_rank
                and (pred is None or pred(v))]

    def pick(self, dtypes: Sequence[torch.dtype] = (torch.float32,), pred: Pred | None = None,
             min_rank: int = 0, max_rank: int = 5, new: float = 0.1,
             shape: Callable[[], list[int]] | None = None) -> Value:
        """An operand from the pool (unused and recent values preferred), or a new input
        (of ``shape()`` when given, else of a random shape that ``pred`` accepts)."""
        fits = self.candidates(dtypes, pred, min_rank, max_rank)
        if fits and not self.chance(new):
            weights = [(3.0 if self.uses.get(v.name, 0) == 0 else 1.0) * (1.0 + i / len(fits))
                       for i, v in enumerate(fits)]
            return self.rng.choices(fits, weights=weights)[0]
        if shape is not None:
            return self.new_input(shape(), self.choice(list(dtypes)))
        for _ in range(8):
            dims = self.shape(min_rank, max_rank)
            dtype = self.choice(list(dtypes))
            if len(dims) < min_rank:
                continue
            if pred is None or pred(Value("probe", torch.zeros(dims, dtype=dtype), "input")):
                return self.new_input(dims, dtype)
        raise Reject("no operand fits")

    def pick_float(self, min_rank: int = 0, max_rank: int = 5, pred: Pred | None = None,
                   shape: Callable[[], list[int]] | None = None) -> Value:
        return self.pick((torch.float32,), pred, min_rank, max_rank, shape=shape)

    def pick_int(self, min_rank: int = 0, max_rank: int = 5, pred: Pred | None = None) -> Value:
        return self.pick((torch.int64, torch.int32), pred, min_rank, max_rank)

    def pick_number(self, min_rank: int = 0, max_rank: int = 5, pred: Pred | None = None) -> Value:
        return self.pick((torch.float32, torch.int64, torch.int32), pred, min_rank, max_rank)

    def partner(self, x: Value, dtype: torch.dtype | None = None, domain: str | None = None) -> Value:
        """A second operand that broadcasts with ``x`` (the same value, a pool value, or new)."""
        dtype = dtype or x.dtype
        r = self.rng.random()
        if r < 0.1 and dtype == x.dtype:
            return x
        if r < 0.5:
            fits = [v for v in self.candidates([dtype]) if v is not x and _broadcasts(v.shape, x.shape)]
            if fits:
                return self.choice(fits)
        return self.new_tensor(self.broadcast_shape(x.shape) if self.chance(0.6) else x.shape, dtype, domain)

    # ---- statements ----------------------------------------------------------------------
    def emit(self, op: str, code: Emit) -> list[Value]:
        """Run ``code`` on the example values; on success add its results to the program."""
        if isinstance(code, str):
            tmp = self.fresh()
            lines, outs = [f"{tmp} = {code}"], [tmp]
        else:
            lines, outs = code.lines, code.outs
        uses = sorted({m for line in lines for m in _NAME.findall(line) if m in self.env and m not in outs})
        versions = {u: self.env[u]._version for u in uses if isinstance(self.env[u], torch.Tensor)}
        scratch = dict(self.env)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec("\n".join(lines), scratch)
        except Reject:
            raise
        except Exception as e:
            raise Reject(f"eager refuses: {type(e).__name__}: {e}") from None
        for u, ver in versions.items():
            assert self.env[u]._version == ver, f"spec {op} mutated its operand {u} in place"
        results: list[tuple[str, torch.Tensor]] = []
        for name in outs:
            value = scratch.get(name)
            if isinstance(value, list | tuple) and isinstance(code, str):
                raise Reject("unpacked by emit_multi")
            if not isinstance(value, torch.Tensor):
                raise Reject(f"{op} produced {type(value).__name__}")
            results.append((name, value))
        operands_nonfinite = any(_nonfinite(self.env[u]) for u in versions)
        for _, t in results:
            if t.dtype not in VALUE_DTYPES:
                raise Reject(f"dtype {t.dtype}")
            if not 1 <= t.numel() <= self.max_numel or t.dim() > 5:
                raise Reject(f"shape {list(t.shape)}")
            if t.is_floating_point() and not operands_nonfinite and _nonfinite(t):
                raise Reject("NaN/Inf from finite operands")
            if t.is_floating_point() and float(t.nan_to_num(0, 0, 0).abs().max()) > 1e15:
                raise Reject("values too large")
            if t.dtype in (torch.int32, torch.int64) and int(t.abs().max()) > (2**30 if t.dtype == torch.int32 else 2**40):
                raise Reject("integers near overflow")
        for u in uses:
            self.uses[u] = self.uses.get(u, 0) + 1
        self.program.nodes.append(Node(lines, outs, uses, op))
        return [self._add(name, t, "op") for name, t in results]

    def probe(self, expr: str) -> Any:
        """The value of ``expr`` on copies of the example values (a rejection if eager refuses
        it, or if it writes an operand in place: an OpInfo sample of ``instance_norm`` with
        running stats updates them, which changed the example values under the program)."""
        scratch = dict(self.env)
        copies = {m: scratch[m].clone() for m in set(_NAME.findall(expr))
                  if isinstance(scratch.get(m), torch.Tensor)}
        scratch.update(copies)
        versions = {m: t._version for m, t in copies.items()}
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = eval(expr, scratch)
        except Exception as e:
            raise Reject(f"eager refuses: {type(e).__name__}: {e}") from None
        if any(copies[m]._version != v for m, v in versions.items()):
            raise Reject("the expression writes an operand in place")
        return value

    def emit_multi(self, op: str, expr: str) -> list[Value]:
        """An expression returning a tuple/list of tensors: every element joins the pool."""
        result = self.probe(expr)
        if not isinstance(result, list | tuple) or not result:
            raise Reject("not a sequence")
        names = [self.fresh() for _ in result]  # pyright: ignore[reportUnknownVariableType]
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        return self.emit(op, Stmts([f"{target} = {expr}"], names))

    def outputs(self, max_outputs: int = 4) -> None:
        computed = [v for v in self.pool if v.origin == "op"]
        leaves = [v for v in computed if self.uses.get(v.name, 0) == 0]
        chosen = leaves[-max_outputs:] or computed[-1:]
        extra = [v for v in computed if v not in chosen]
        if extra and self.chance(0.2):
            chosen.append(self.choice(extra))
        self.program.outputs = [v.name for v in chosen]


def _broadcasts(small: Sequence[int], big: Sequence[int]) -> bool:
    """``small`` broadcasts to exactly ``big``."""
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(reversed(small), reversed(big)))
