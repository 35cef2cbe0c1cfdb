"""Folders are layers: ``ir`` and ``dialects`` at the bottom, then ``passes``, then
``backends``, then ``tools`` and the API at the package root.  No module imports from a
layer above its own, not even inside a function (issue 18).

``KNOWN_UPWARD`` lists the upward imports that predate this test, each to be removed by
the issue-18 refactor; it may only shrink: a new upward import fails, and so does an entry
that no longer exists (delete it from the list)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"ir": 0, "dialects": 0, "passes": 1, "backends": 2, "tools": 3}
API = 3  # the package root (``ziggurat``, ``ziggurat.__init__``) and anything not a layer folder

#: (importing file, imported module) pairs that predate the rule
KNOWN_UPWARD: set[tuple[str, str]] = {
    # prepack-weights picks the panel width of the host ISA's microkernel
    ("passes/prepack_weights.py", "ziggurat.backends.cpu.isa"),
    ("passes/prepack_weights.py", "ziggurat.backends.cpu.kernels.tiles"),
}


def _layer_of_module(name: str) -> int | None:
    parts = name.split(".")
    if parts[0] != "ziggurat":
        return None
    return LAYERS.get(parts[1], API) if len(parts) > 1 else API


def _imports(path: Path) -> list[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = ["ziggurat", *path.relative_to(ROOT).parent.parts]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                names.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def upward_imports() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for folder, layer in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _imports(path):
                target = _layer_of_module(name)
                if target is not None and target > layer:
                    found.add((path.relative_to(ROOT).as_posix(), name))
    return found


def test_no_new_upward_imports() -> None:
    new = upward_imports() - KNOWN_UPWARD
    assert not new, "imports from a higher layer:\n" + "\n".join(f"  {f} -> {m}" for f, m in sorted(new))


def test_known_upward_imports_still_exist() -> None:
    gone = KNOWN_UPWARD - upward_imports()
    assert not gone, "fixed upward imports: delete them from KNOWN_UPWARD:\n" + "\n".join(
        f"  {f} -> {m}" for f, m in sorted(gone))


def test_the_check_sees_an_upward_import_inside_a_function() -> None:
    module = ROOT / "passes" / "graph_opt.py"
    names = _imports(module)
    assert "ziggurat.passes.constant_fold" in names  # module level
    assert "ziggurat.passes.prepack_weights" in names  # inside a function
    assert _layer_of_module("ziggurat.backends.cpu.isa") == 2 and _layer_of_module("ziggurat") == API
