"""Which imported values share memory in eager, and which of them an in-place write made stale.

The TorchScript importer turns ``x.add_(y)`` into ``add(x, y)`` and lets every later read of
``x`` see the result. That is eager's semantics only for ``x`` itself: a view of ``x`` taken
before the write (``v = x[0]``), or the base a view was taken from (``x[2:].fill_(0)``, then
``x``), would still read the old value. This tracker groups the values that may alias
(a view op's results join the group of the tensor they view, as its schema's ``Tensor(a)``
annotation says), marks every other member of a group stale when one member is written in
place, and lets the importer refuse a read of a stale value with a clear error instead of
returning a number eager would not.

Values are keyed by their SSA value in the module being built, so lists, tuples and unpacking
(which pass the same imported values around) are tracked for free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import torch
from xdsl.ir import SSAValue


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


@dataclass
class AliasTracker:
    group: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    members: dict[int, list[SSAValue]] = field(default_factory=dict[int, list[SSAValue]])
    #: group -> the positions of the graph inputs whose storage it is
    inputs: dict[int, set[int]] = field(default_factory=dict[int, set[int]])
    #: value -> why reading it would not give eager's value
    stale: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    #: graph inputs (positions) written in place
    written_inputs: set[int] = field(default_factory=set[int])

    def _group_of(self, value: SSAValue) -> int:
        if value not in self.group:
            gid = len(self.members)
            self.group[value] = gid
            self.members[gid] = [value]
        return self.group[value]

    def add_input(self, value: SSAValue, position: int) -> None:
        self.inputs.setdefault(self._group_of(value), set()).add(position)

    def join(self, result: SSAValue, base: SSAValue) -> None:
        """``result`` may share memory with ``base``: their groups become one."""
        keep, gone = self._group_of(base), self._group_of(result)
        if keep == gone:
            return
        for member in self.members.pop(gone):
            self.group[member] = keep
            self.members[keep].append(member)
        self.inputs.setdefault(keep, set()).update(self.inputs.pop(gone, set()))

    def write(self, target: SSAValue, result: SSAValue, why: str) -> None:
        """``target`` was written in place; ``result`` is its new value. Every value that may
        share its memory, ``target`` itself included, now reads stale data."""
        gid = self._group_of(target)
        for member in self.members[gid]:
            self.stale.setdefault(member, why)
        self.join(result, target)
        self.written_inputs.update(self.inputs.get(gid, set()))

    def why_stale(self, value: SSAValue) -> str | None:
        return self.stale.get(value)
