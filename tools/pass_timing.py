"""``ziggurat-opt --time-passes``: wall time per pass, as a table.

Pipelines that run other passes (``graph-opt``) are expanded, so each of their passes has
its own row, indented under the pipeline's (whose time is the sum of its passes'). The
verifier's runs between passes have a row of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.passes import ModulePass

_RULE = "===" + "-" * 73 + "==="


@dataclass
class _Row:
    name: str
    seconds: float = 0.0
    children: list[_Row] = field(default_factory=list["_Row"])

    def total(self) -> float:
        return self.seconds + sum(c.total() for c in self.children)


class PassTimes:
    """Times of the passes of an expanded pipeline (``ir.pipeline.expand_pipeline``)."""

    def __init__(self, expanded: Sequence[tuple[tuple[ModulePass, ...], ModulePass]]) -> None:
        self._root = _Row("Total")
        self._leaves: list[_Row] = []
        open_: list[tuple[ModulePass, _Row]] = []  # the pipelines the last pass ran in
        for parents, p in expanded:
            depth = 0
            while depth < min(len(open_), len(parents)) and open_[depth][0] is parents[depth]:
                depth += 1
            del open_[depth:]
            for parent in parents[depth:]:
                row = _Row(parent.name)
                (open_[-1][1] if open_ else self._root).children.append(row)
                open_.append((parent, row))
            leaf = _Row(p.name)
            (open_[-1][1] if open_ else self._root).children.append(leaf)
            self._leaves.append(leaf)
        self._verifier = _Row("(verifier)")

    def record(self, index: int, seconds: float) -> None:
        """Pass ``index`` of the expanded pipeline ran for ``seconds``."""
        self._leaves[index].seconds += seconds

    def record_verifier(self, seconds: float) -> None:
        self._verifier.seconds += seconds

    def format(self) -> str:
        rows = [*self._root.children, self._verifier]
        total = sum(r.total() for r in rows)
        lines = [_RULE, "... Pass execution timing report ...".center(len(_RULE)).rstrip(), _RULE,
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]

        def emit(row: _Row, depth: int) -> None:
            t = row.total()
            share = 100.0 * t / total if total > 0 else 0.0
            lines.append(f"  {t:8.4f} ({share:5.1f}%)  {'  ' * depth}{row.name}")
            for child in row.children:
                emit(child, depth + 1)

        for row in rows:
            emit(row, 0)
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines)


__all__ = ["PassTimes"]
