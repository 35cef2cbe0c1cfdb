"""Functionalization of the TorchScript frontend's in-place writes, as torch's does it.

The importer turns ``x.add_(y)`` into ``add(x, y)`` and rebinds ``x`` to the result. That is
eager's semantics for ``x`` itself; the tensors sharing ``x``'s memory (its views, its base,
the other views of that base) are this module's business. Values that may share memory form
a :class:`Storage`: its current *root* value (the tensor that owns the memory) and a version,
bumped by each write. Each member records how it was made from the root, one
:class:`~ziggurat.ir.importer.view_steps.ViewStep` per view op, and the version its value is
of. Then:

* a **write** through a member rebuilds the root with the inverse ("scatter") of each step,
  from the member out (``y[1:, ::2][0].mul_(2)``: ``select_scatter`` into the ``::2`` slice,
  ``slice_scatter`` into the ``1:`` slice, ``slice_scatter`` into ``y``), and bumps the version;
* a **read** of a member whose version is older replays its steps on the current root, so a
  view taken before a write sees it, as in eager;
* an alias made by an op the importer cannot replay (``contiguous``, ``reshape`` where it is a
  view only for some strides, ``view(dtype)`` ...) is the root of a storage of its own, tied to
  the storage of its base: a write to either makes the other unreadable (a later read of it
  is refused, with both lines);
* a write through a view that makes several of its elements one element of the base
  (``expand``, ``unfold``, an overlapping ``as_strided``) is refused.

The storage's graph inputs are recorded, so the compiled module copies the final root back into
the caller's tensor.  Values are keyed by their SSA value in the module being built, so lists,
tuples and unpacking (which pass the same imported values around) are tracked for free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from xdsl.ir import SSAValue

from ziggurat.ir.importer.values import Dynamic
from ziggurat.ir.importer.view_steps import Emit, Inverse, ViewStep, replay, scatter

Chain = tuple[ViewStep, ...]


@lru_cache(maxsize=4096)
def aliased_arguments(schema_text: str) -> tuple[str, ...]:
    """The tensor arguments the op's results may alias (a view, ``contiguous``, ``reshape``,
    ``to``, ``split`` ...): those annotated ``Tensor(a)`` that the op does not write."""
    try:
        schema = torch._C.parse_schema(schema_text)  # pyright: ignore[reportPrivateUsage]
    except RuntimeError:
        return ("*",)  # unknown: every argument
    return tuple(arg.name for arg in schema.arguments
                 if arg.alias_info is not None and not arg.alias_info.is_write
                 and arg.alias_info.before_set)


class StaleRead(Exception):
    """Reading the value would not give eager's number (the message says why)."""


class UnsupportedWrite(Exception):
    """An in-place write the importer cannot functionalize (the message says why)."""


@dataclass(eq=False)
class Storage:
    """The memory a group of values shares."""

    root: Dynamic
    #: the first root (the value the storage was found through)
    origin: Dynamic
    #: the root's strides are the example's whatever the caller's layouts
    fixed_layout: bool = False
    version: int = 0
    #: the positions of the graph inputs whose memory this is
    inputs: set[int] = field(default_factory=set[int])
    #: the graph constant whose memory this is (a frozen buffer, a tensor captured by tracing)
    constant: str = ""
    #: the last write ("aten::fill_ at model.py:12 [%5]")
    last_write: str = ""
    #: why nothing of it can be read any more (a write to memory it may share)
    dead: str = ""
    #: storages that may share memory with this one in a way the importer cannot replay, and
    #: the op that made the alias: a write to one makes the others unreadable
    partners: list[tuple[Storage, str]] = field(default_factory=list[tuple["Storage", str]])
    #: the current value of each view chain known at this version
    views: dict[Chain, Dynamic] = field(default_factory=dict[Chain, Dynamic])


@dataclass(frozen=True)
class Member:
    storage: Storage
    #: how it was made from the root
    chain: Chain
    version: int


@dataclass
class AliasTracker:
    members: dict[SSAValue, Member] = field(default_factory=dict[SSAValue, Member])
    #: values that may not be read at all (their tensor changed shape in place), and why
    retired: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    #: graph inputs (positions) written in place
    written_inputs: set[int] = field(default_factory=set[int])
    input_storages: dict[int, Storage] = field(default_factory=dict[int, Storage])

    # -- registering values ---------------------------------------------------------------
    def member(self, value: Dynamic) -> Member:
        """``value``'s membership; a value seen for the first time owns its memory."""
        found = self.members.get(value.ssa)
        if found is None:
            storage = Storage(value, value)
            storage.views[()] = value
            found = self.members[value.ssa] = Member(storage, (), 0)
        return found

    def add_root(self, value: Dynamic, fixed_layout: bool, constant: str = "") -> None:
        """A fresh tensor (``fixed_layout``: contiguous whatever the inputs' layouts;
        ``constant``: the name of the graph constant it is, which must not be written)."""
        storage = self.member(value).storage
        storage.fixed_layout = fixed_layout
        storage.constant = constant

    def add_input(self, value: Dynamic, position: int) -> None:
        storage = self.member(value).storage
        storage.inputs.add(position)
        self.input_storages[position] = storage

    def fixed_layout(self, value: Dynamic) -> bool:
        """Whether ``value``'s strides are its example's whatever the caller's layouts."""
        return self.member(value).storage.fixed_layout

    def add_view(self, result: Dynamic, base: Dynamic, step: ViewStep) -> None:
        """``result`` is the view ``step`` makes of ``base`` (which is current)."""
        m = self.member(base)
        chain = m.chain + (step,)
        self.members[result.ssa] = Member(m.storage, chain, m.storage.version)
        m.storage.views.setdefault(chain, result)

    def add_alias(self, result: Dynamic, bases: list[Dynamic], made_by: str) -> None:
        """``result`` may share memory with ``bases`` in a way the importer cannot replay
        (``made_by``: "aten::contiguous at model.py:3"): the root of a storage tied to theirs."""
        storage = self.member(result).storage
        for base in bases:
            other = self.member(base).storage
            if other is not storage and all(other is not s for s, _ in storage.partners):
                storage.partners.append((other, made_by))
                other.partners.append((storage, made_by))
                storage.constant = storage.constant or other.constant

    # -- reading ----------------------------------------------------------------------------
    def current(self, value: Dynamic, emit: Emit) -> Dynamic:
        """``value`` as eager would read it now: itself, or its view chain replayed on the
        storage's current root. Raises :class:`StaleRead` when that cannot be known."""
        if value.ssa in self.retired:
            raise StaleRead(self.retired[value.ssa])
        m = self.members.get(value.ssa)
        if m is None:
            return value
        storage = m.storage
        if storage.dead:
            raise StaleRead(storage.dead)
        if m.version == storage.version:
            return value
        return self._view(storage, m.chain, emit)

    def _view(self, storage: Storage, chain: Chain, emit: Emit) -> Dynamic:
        """The current value of ``chain`` (replayed from the longest prefix known now)."""
        known = storage.views.get(chain)
        if known is not None:
            return known
        base = self._view(storage, chain[:-1], emit)
        view = replay(chain[-1], base, emit)
        storage.views[chain] = view
        if view.ssa not in self.members:
            self.members[view.ssa] = Member(storage, chain, storage.version)
        return view

    # -- writing ------------------------------------------------------------------------------
    def write(self, target: Dynamic, result: Dynamic, why: str, emit: Emit) -> Dynamic:
        """``target`` (current) was written in place and now holds ``result``. Rebuilds the
        root with scatters and returns ``result`` with its example as eager lays it out.
        Raises :class:`UnsupportedWrite` for a write through a view that cannot be inverted."""
        m = self.member(target)
        storage = m.storage
        if storage.constant:
            raise UnsupportedWrite(
                f"writes in place into the constant tensor {storage.constant} (a frozen buffer, or a tensor "
                "the tracer captured): tracing records such a tensor as it was after the writes it saw, "
                "and eager keeps a buffer's writes from one call to the next")
        if result.example.shape != target.example.shape:  # resize_, set_: a tensor of another shape
            if m.chain:
                raise UnsupportedWrite(f"{why} changes the shape of a view in place")
            storage.dead = storage.dead or f"{why} changed the shape of this tensor's memory in place"
            self.written_inputs.update(storage.inputs)
            self._kill_partners(storage, why)
            self.member(result)  # a tensor of its own from now on
            return result
        self._check_invertible(storage, m.chain, why)
        chain = m.chain
        bases = [self._view(storage, chain[:k], emit) for k in range(len(chain))]
        # the examples as eager has them: the root's copy keeps its strides
        root_example = storage.root.example.clone()
        examples = [root_example]
        for step in chain:
            examples.append(step.apply(examples[-1]))
        with torch.no_grad():
            examples[-1].copy_(result.example)
        written = Dynamic(result.ssa, examples[-1])
        values = {chain: written}
        src = written
        for k in reversed(range(len(chain))):
            src = scatter(chain[k], bases[k], src, examples[k], emit)
            if src.example is not examples[k]:
                src = Dynamic(src.ssa, examples[k])
            values[chain[:k]] = src
        storage.version += 1
        storage.root = values[()]
        storage.views = values
        storage.last_write = why
        for view_chain, value in values.items():
            self.members[value.ssa] = Member(storage, view_chain, storage.version)
        self.written_inputs.update(storage.inputs)
        self._kill_partners(storage, why)
        return written

    def _check_invertible(self, storage: Storage, chain: Chain, why: str) -> None:
        for k, step in enumerate(chain):
            if step.inverse is Inverse.NONE:
                raise UnsupportedWrite(f"writes in place through a view made by {step.op}: {step.refuse}")
            if step.inverse is Inverse.AS_STRIDED:
                root = storage.root.example
                if k != 0 or not storage.fixed_layout or not root.is_contiguous() or root.storage_offset():
                    raise UnsupportedWrite(
                        "writes in place through as_strided of a tensor whose memory layout is not known "
                        "at compile time (as_strided addresses the memory of its base's root, which may "
                        "be laid out as the caller's inputs are)")

    def retire(self, old: Dynamic, new: Dynamic, why: str) -> None:
        """``old``'s tensor became ``new`` by an in-place view op (``t_``, ``unsqueeze_``):
        another name still holding ``old`` would see the new shape in eager."""
        self.retired[old.ssa] = (f"{why} changed the shape of this tensor in place; the TorchScript "
                                 "frontend only follows that through the name it was called on")
        m = self.members.get(old.ssa)
        if m is not None and m.storage.inputs and m.chain == ():
            raise UnsupportedWrite(f"{why} changes the shape of a graph input in place, which a compiled "
                                   "module cannot do to the caller's tensor")

    def _kill_partners(self, storage: Storage, why: str) -> None:
        """After a write to ``storage``: every storage that may share its memory (also through
        other such storages) can no longer be read."""
        todo = [(p, made_by) for p, made_by in storage.partners]
        while todo:
            partner, made_by = todo.pop()
            if partner is storage or partner.dead:
                continue
            partner.dead = (f"{why} wrote to memory this tensor may share through {made_by}, an alias "
                            "the importer cannot replay")
            self.written_inputs.update(partner.inputs)
            todo.extend(partner.partners)

    # -- results --------------------------------------------------------------------------
    def input_value(self, position: int) -> Dynamic:
        """The final value of graph input ``position``, written in place through ``self``."""
        storage = self.input_storages[position]
        if storage.dead:
            raise StaleRead(storage.dead)
        return storage.root

    # -- loops ----------------------------------------------------------------------------
    def forget(self, visible: Callable[[SSAValue], bool]) -> Storage | None:
        """After a region (a ``torch.loop`` body) was imported: drop the values the region
        defines from the caches, and return a storage from outside the region that the region
        wrote (its root is defined in the region)."""
        escaped: Storage | None = None
        for storage in {id(m.storage): m.storage for m in self.members.values()}.values():
            if not visible(storage.origin.ssa):
                continue
            if not visible(storage.root.ssa):
                escaped = escaped or storage
            storage.views = {c: v for c, v in storage.views.items() if visible(v.ssa)}
        return escaped
