"""Source locations: from TorchScript nodes and FX nodes to xDSL locations, and back to text.

An imported op's location is ``NameLoc("<debug name> <module path>", FileLineColLoc(file, line, 0))``
with the innermost frame of *user* code (frames inside torch itself are skipped), so an
error can say ``model.py:12: aten::conv2d (%input.3, layer1.0.conv1): ...``.
"""

from __future__ import annotations

import re
import sysconfig
import traceback
from pathlib import Path

import torch
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, LocationAttr, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Operation

_FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<func>.*)$")
_TORCH_DIR = torch.__file__.rsplit("/", 1)[0] + "/"


def is_library_file(path: str) -> bool:
    """A file of torch itself (frames users do not want to see)."""
    return path.startswith(_TORCH_DIR) or "/site-packages/torch/" in path


def user_frame(stack: str) -> tuple[str, int] | None:
    """The innermost frame outside torch in a TorchScript source range / FX stack trace."""
    frames: list[tuple[str, int]] = []
    for line in stack.splitlines():
        m = _FRAME.match(line.strip())
        if m:
            frames.append((m.group("file"), int(m.group("line"))))
            continue
        fx = re.match(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', line)
        if fx:
            frames.insert(0, (fx.group("file"), int(fx.group("line"))))
    for file, line in frames:
        if not is_library_file(file):
            return file, line
    return frames[0] if frames else None


_ZIGGURAT_DIRS = tuple(str(Path(__file__).resolve().parent.parent / d) + "/"
                       for d in ("ir", "backends", "dialects", "passes", "tools"))
_STDLIB = sysconfig.get_paths()["stdlib"] + "/"


def user_line(error: BaseException) -> str | None:
    """``file.py:12 (code)``: the innermost frame of the user's code (not torch's, Python's or
    Ziggurat's own) in the traceback of ``error``, which says where a frontend failed."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        file = str(Path(frame.filename).resolve()) if frame.filename and not frame.filename.startswith("<") else ""
        if file and not is_library_file(file) and not file.startswith(_ZIGGURAT_DIRS + (_STDLIB,)):
            code = f" ({frame.line.strip()[:120]})" if frame.line else ""
            return f"{frame.filename}:{frame.lineno}{code}"
    return None


def make_location(name: str, file_line: tuple[str, int] | None) -> LocationAttr:
    child: LocationAttr = (
        FileLineColLoc(StringAttr(file_line[0]), IntAttr(file_line[1]), IntAttr(0))
        if file_line
        else UnknownLoc()
    )
    return NameLoc(StringAttr(name), child) if name else child


def node_location(node: torch._C.Node) -> LocationAttr:
    """The location of a TorchScript node (its outputs' debug names, scope, source line)."""
    frame: tuple[str, int] | None = None
    try:
        source = str(node.sourceRange())
        frame = user_frame(source) if source else None
    except RuntimeError:
        frame = None
    names = " ".join("%" + o.debugName() for o in node.outputs())
    scope = node.scopeName().split("/")[-1].removeprefix("__module.") if node.scopeName() else ""
    label = f"{names} ({scope})" if scope else names
    if frame is None:
        text = str(node).strip().split("\n")[0][:160]
        return make_location(label + " " + text if label else text, None)
    return make_location(label, frame)


def describe_location(loc: LocationAttr) -> str | None:
    """``file.py:12 (%x.3, layer1.conv)``: a location as users read it."""
    if isinstance(loc, NameLoc):
        inner = describe_location(loc.location)  # pyright: ignore[reportArgumentType]
        return f"{inner} [{loc.desc.data}]" if inner else loc.desc.data
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}"
    return None


def op_location(op: Operation) -> str | None:
    return describe_location(op.location)
