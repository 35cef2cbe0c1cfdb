"""``compiled.ir``: the IR text of each level a compile went through, printed when first read.

A level is kept as a clone of its module (about a tenth of printing's cost: 0.3 against 2.8 ms
for a three-op model, 3 against 31 ms for ResNet-18 at the torch level) and printed the first
time its text is read, so a compile no longer pays for printing IR that nobody reads.  Text
given as a string (``ir["llvm"] = str(llvm_module)``) is kept as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping

from xdsl.dialects.builtin import ModuleOp

from ziggurat.ir.pipeline import print_module


class IRLevels(MutableMapping[str, str]):
    """Level name -> IR text; a :meth:`snapshot` level is printed on its first read."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str | Callable[[], str]] = {}
        if texts is not None:
            self.merge(texts)

    def snapshot(self, level: str, module: ModuleOp) -> None:
        """Keep ``module`` as it is now as ``level`` (a clone: later passes do not change it)."""
        copy = module.clone()
        self._values[level] = lambda: print_module(copy)

    def merge(self, other: Mapping[str, str], skip: tuple[str, ...] = ()) -> None:
        """Add ``other``'s levels but ``skip``, without printing the ones it has not printed yet."""
        values = other._values if isinstance(other, IRLevels) else other
        self._values.update({level: value for level, value in values.items() if level not in skip})

    def __getitem__(self, level: str) -> str:
        value = self._values[level]
        if not isinstance(value, str):
            value = self._values[level] = value()
        return value

    def __setitem__(self, level: str, text: str) -> None:
        self._values[level] = text

    def __delitem__(self, level: str) -> None:
        del self._values[level]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"IRLevels({list(self._values)})"
