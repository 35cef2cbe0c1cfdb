"""pyproject's explicit package list (the root maps to ``ziggurat``) covers every source directory."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = ("ir", "dialects", "passes", "backends", "tools")


def test_every_source_package_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"ziggurat"}
    for top in SOURCE_DIRS:
        for directory in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in directory.parts or not any(directory.glob("*.py")):
                continue
            found.add("ziggurat." + ".".join(directory.relative_to(ROOT).parts))
    assert found <= listed, f"add to pyproject packages: {sorted(found - listed)}"
