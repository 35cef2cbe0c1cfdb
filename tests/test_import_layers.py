"""Folders are layers: ``ir`` and ``dialects`` at the bottom, then ``passes``, then
``backends``, then ``tools`` and the API at the package root.  No module imports from a
layer above its own, not even inside a function (issue 18).

``KNOWN_UPWARD`` listed the upward imports that predated this test; the issue-18 refactor
removed the last of them (prepack-weights moved into the CPU backend), so it is empty and
stays so: a new upward import fails, and so would an entry that no longer exists."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"ir": 0, "dialects": 0, "passes": 1, "backends": 2, "tools": 3}
API = 3  # the package root (``ziggurat``, ``ziggurat.__init__``) and anything not a layer folder

#: (importing file, imported module) pairs that predate the rule: none left
KNOWN_UPWARD: set[tuple[str, str]] = set()


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


@functools.cache
def upward_imports() -> frozenset[tuple[str, str]]:
    """Every upward import of the layer folders (parsed once per process: every file of them)."""
    found: set[tuple[str, str]] = set()
    for folder, layer in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _imports(path):
                target = _layer_of_module(name)
                if target is not None and target > layer:
                    found.add((path.relative_to(ROOT).as_posix(), name))
    return frozenset(found)


def test_no_new_upward_imports() -> None:
    new = upward_imports() - KNOWN_UPWARD
    assert not new, "imports from a higher layer:\n" + "\n".join(f"  {f} -> {m}" for f, m in sorted(new))


def test_known_upward_imports_still_exist() -> None:
    # with KNOWN_UPWARD empty nothing can be gone: no need to parse the tree
    gone = KNOWN_UPWARD - upward_imports() if KNOWN_UPWARD else set()
    assert not gone, "fixed upward imports: delete them from KNOWN_UPWARD:\n" + "\n".join(
        f"  {f} -> {m}" for f, m in sorted(gone))


def test_the_check_sees_an_upward_import_inside_a_function() -> None:
    module = ROOT / "passes" / "graph_opt.py"
    names = _imports(module)
    assert "ziggurat.passes.constant_fold" in names  # module level
    assert "ziggurat.passes.decompose_torch_ops" in names  # inside a function
    in_functions = {node.module for f in ast.walk(ast.parse(module.read_text())) if isinstance(f, ast.FunctionDef)
                    for node in ast.walk(f) if isinstance(node, ast.ImportFrom)}
    assert "ziggurat.passes.decompose_torch_ops" in in_functions, "pick another import made inside a function"
    assert _layer_of_module("ziggurat.backends.cpu.isa") == 2 and _layer_of_module("ziggurat") == API
