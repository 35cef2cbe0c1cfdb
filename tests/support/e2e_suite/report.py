"""The closing-note table of ``test_e2e_suite_ops.py --e2e-suite-report``."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any


def _reason_kind(reason: str) -> str:
    """A fallback reason without the op's own name (``no native lowering of aten::x`` -> ``no native lowering``)."""
    return re.sub(r" of aten::\S+$", "", reason)


def format_report(outcomes: list[dict[str, Any]], suite: list[tuple[str, int]], header: str) -> str:
    uses = dict(suite)
    by_op = {o["op"]: o for o in outcomes}
    groups: dict[str, list[str]] = {"native": [], "fallback": [], "error": [], "not run": []}
    for op, _ in suite:
        groups[by_op[op]["status"] if op in by_op else "not run"].append(op)
    lines = [f"{'':12}{'ops':>6}{'suite uses':>12}"]
    for name, ops in groups.items():
        lines.append(f"{name:12}{len(ops):6}{sum(uses[o] for o in ops):12}")
    lines.append(f"{'total':12}{len(suite):6}{sum(uses.values()):12}")

    folded = [o for o in groups["native"] + groups["fallback"] if not by_op[o].get("imported", True)]
    if folded:
        lines += ["", f"compiled, folded by the importer (no op in the imported IR): {' '.join(folded)}"]
    if groups["fallback"]:
        lines += ["", "through the fallback (suite op, its uses: the ops that fall back and why):"]
        for op in sorted(groups["fallback"], key=lambda o: (-uses[o], o)):
            reasons = "; ".join(f"{k}: {v}" for k, v in sorted(by_op[op]["reasons"].items()))
            lines.append(f"  {op} ({uses[op]}): {reasons}")
        kinds: dict[str, set[str]] = defaultdict(set)
        for op in groups["fallback"]:
            for reason in by_op[op]["reasons"].values():
                kinds[_reason_kind(reason)].add(op)
        lines += ["", "fallback reasons (suite ops, their uses):"]
        for kind, ops in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {len(ops):3} ops, {sum(uses[o] for o in ops):4} uses: {kind}")
    if groups["error"] or groups["not run"]:
        lines += ["", "not compiling (suite op, its uses: error):"]
        for op in sorted(groups["error"], key=lambda o: (-uses[o], o)):
            lines.append(f"  {op} ({uses[op]}): {by_op[op]['error']}")
        for op in groups["not run"]:
            lines.append(f"  {op} ({uses[op]}): its test failed before compiling (see the failures above)")

    total = re.search(r"~\s*([\d,]+)", header)
    if total:
        n = int(total.group(1).replace(",", ""))
        broken = sum(uses[o] for o in groups["error"] + groups["not run"])
        slow = broken + sum(uses[o] for o in groups["fallback"])
        lines += ["", f"of the suite's ~{n} tests, at least {n - broken} use only ops that compile "
                      f"(at most {broken} use one that does not), and at least {n - slow} use only ops "
                      f"that compile natively (usage counts summed: a test using two such ops is counted twice)"]
    return "\n".join(lines)
