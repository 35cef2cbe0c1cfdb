"""Seeded mutations of valid inputs: text (.mlir, TorchScript IR), zip archives (.pt) and
saved modules (.zig).  Each mutation returns a short description and the mutated bytes.

Saved modules are also *forged*: a section is mutated and the checksums recomputed, as a
buggy or malicious writer would, so the mutation reaches the IR parser, the payload readers
and the object-code checks behind the hashes.
"""

from __future__ import annotations

import copy
import io
import json
import random
import re
import zipfile
from collections.abc import Callable
from typing import Any

from tests.support.saved_files import join, object_of, rewrite_header, split, with_object

Mutation = Callable[[bytes, random.Random], tuple[str, bytes]]

_TOKEN = re.compile(rb"%[\w.#-]+|@[\w.]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_][\w.:]*|\S")
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?![\w.])")
_TENSOR = re.compile(rb"tensor<([0-9x?]*?)x?(f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8)>")
_ELEMENTS = (b"f32", b"f64", b"f16", b"i1", b"i32", b"i64", b"i8", b"bf16")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def delete_line(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    return f"delete line {i + 1}", b"\n".join(lines[:i] + lines[i + 1:])


def duplicate_line(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    return f"duplicate line {i + 1}", b"\n".join(lines[:i + 1] + lines[i:])


def swap_lines(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return f"swap lines {i + 1} and {j + 1}", b"\n".join(lines)


def swap_tokens(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    tokens = list(_TOKEN.finditer(data))
    if len(tokens) < 2:
        return "no tokens to swap", data
    a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
    out = data[:a.start()] + b.group() + data[a.end():b.start()] + a.group() + data[b.end():]
    return f"swap tokens {a.group()[:20]!r} and {b.group()[:20]!r}", out


def drop_token(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    tokens = list(_TOKEN.finditer(data))
    if not tokens:
        return "no token to drop", data
    t = rng.choice(tokens)
    return f"drop token {t.group()[:20]!r}", data[:t.start()] + data[t.end():]


def change_number(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    numbers = list(_NUMBER.finditer(data))
    if not numbers:
        return "no number to change", data
    m = rng.choice(numbers)
    old = int(m.group())
    new = rng.choice([0, 1, -1, old + 1, old - 1, old * 2, 2**31, -(2**63), 10**6])
    return f"number {old} -> {new}", data[:m.start()] + str(new).encode() + data[m.end():]


def edit_type(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A tensor type with one dimension or its element type changed, at one occurrence or
    everywhere that exact type is written (which keeps uses and definitions consistent)."""
    found = list(_TENSOR.finditer(data))
    if not found:
        return "no tensor type", data
    m = rng.choice(found)
    dims = [d for d in m.group(1).split(b"x") if d]
    element = m.group(2)
    if dims and rng.random() < 0.6:
        k = rng.randrange(len(dims))
        dims[k] = str(rng.choice([0, 1, 3, 7, 64, int(dims[k]) + 1 if dims[k].isdigit() else 2])).encode()
    else:
        element = rng.choice([e for e in _ELEMENTS if e != element])
    new = b"tensor<" + b"x".join(dims + [element]) + b">"
    if rng.random() < 0.5:
        return f"type {m.group().decode()} -> {new.decode()} everywhere", data.replace(m.group(), new)
    return f"type {m.group().decode()} -> {new.decode()} once", data[:m.start()] + new + data[m.end():]


def truncate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    cut = rng.randrange(len(data)) if data else 0
    return f"truncate at {cut} of {len(data)}", data[:cut]


def flip_bytes(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    out = bytearray(data)
    n = rng.choice([1, 1, 2, 4, 16])
    for _ in range(n):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return f"flip {n} bit(s)", bytes(out)


def replace_char(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    if not data:
        return "empty", data
    i = rng.randrange(len(data))
    c = rng.choice(b"()<>{}[],:%@#\"=x0123456789-")
    return f"char {i} -> {chr(c)!r}", data[:i] + bytes([c]) + data[i + 1:]


TEXT_MUTATIONS: tuple[Mutation, ...] = (
    delete_line, duplicate_line, swap_lines, swap_tokens, drop_token, change_number,
    edit_type, edit_type, truncate, replace_char,
)


# -- .pt (zip archives) ----------------------------------------------------------------------
def _rezip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {n: archive.read(n) for n in archive.namelist()}


def forge_entry(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One entry's content mutated, the archive rewritten with valid CRCs."""
    entries = _entries(data)
    name = rng.choice(sorted(n for n, c in entries.items() if c))
    how, content = rng.choice((*TEXT_MUTATIONS, flip_bytes))(entries[name], rng)
    entries[name] = content
    return f"forged {name.split('/', 1)[-1]}: {how}", _rezip(entries)


def forge_code_and_debug(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A code entry and its debug pickle both damaged (CRCs valid): the loader reads the
    debug pickle to report the code's error."""
    entries = _entries(data)
    code = rng.choice(sorted(n for n in entries if n.endswith(".py") and n + ".debug_pkl" in entries))
    how, entries[code] = replace_char(entries[code], rng)
    how2, entries[code + ".debug_pkl"] = flip_bytes(entries[code + ".debug_pkl"], rng)
    return f"forged {code.split('/', 1)[-1]} ({how}) and its debug pickle ({how2})", _rezip(entries)


def drop_entry(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    entries = _entries(data)
    name = rng.choice(sorted(entries))
    del entries[name]
    return f"drop entry {name.split('/', 1)[-1]}", _rezip(entries)


PT_MUTATIONS: tuple[Mutation, ...] = (
    flip_bytes, flip_bytes, truncate, forge_entry, forge_entry, forge_code_and_debug, drop_entry,
)


# -- saved modules (.zig) --------------------------------------------------------------------
def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():  # pyright: ignore[reportUnknownVariableType]
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):  # pyright: ignore[reportUnknownVariableType]
            out += _paths(v, (*prefix, i))
    return out


def _parent(header: Any, path: tuple[Any, ...]) -> Any:
    for k in path[:-1]:
        header = header[k]
    return header


def header_delete_key(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    header = copy.deepcopy(split(data)[0])
    path = rng.choice([p for p in _paths(header) if isinstance(p[-1], str)])
    del _parent(header, path)[path[-1]]
    return f"header: delete {'.'.join(map(str, path))}", rewrite_header(data, header)


def header_change_type(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    header = copy.deepcopy(split(data)[0])
    path = rng.choice(_paths(header))
    value = rng.choice([None, 0, -1, 1.5, True, "x", [], {}, [1, "a"], {"k": None}, 2**70])
    _parent(header, path)[path[-1]] = value
    return f"header: {'.'.join(map(str, path))} = {json.dumps(value)}", rewrite_header(data, header)


def header_not_json(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    header = split(data)[0]
    text = json.dumps(header).encode()
    _, bad = rng.choice((truncate, replace_char, swap_tokens))(text, rng)
    try:
        parsed = json.loads(bad)
    except ValueError:
        parsed = None
    if parsed is None:  # write the damaged text itself
        from tests.support.saved_files import _LEN  # pyright: ignore[reportPrivateUsage]
        from ziggurat.backends.serialization import MAGIC

        start = len(MAGIC) + _LEN.size
        (n,) = _LEN.unpack_from(data, len(MAGIC))
        return "header: damaged JSON", MAGIC + _LEN.pack(len(bad)) + bad + data[start + n:]
    return "header: edited JSON", rewrite_header(data, parsed)


def forge_ir(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    header, sections = split(data)
    how, sections["ir"] = rng.choice(TEXT_MUTATIONS)(sections["ir"], rng)
    return f"forged IR: {how}", join(header, sections)


def forge_payload(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    header, sections = split(data)
    how, sections["payload"] = rng.choice((*TEXT_MUTATIONS, flip_bytes))(sections["payload"], rng)
    return f"forged payload: {how}", join(header, sections)


def forge_object(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """The object code of a cpu module damaged where LLVM's loader reads: the ELF and section
    headers, the symbol, string and relocation tables, ``.eh_frame`` (checksums forged)."""
    from ziggurat.backends.cpu.elf_object import ObjectCodeError, parse_object

    obj = bytearray(object_of(data))
    if rng.random() < 0.15:
        how, cut = truncate(bytes(obj), rng)
        return f"forged object: {how}", with_object(data, cut)
    try:
        sections = parse_object(bytes(obj)).sections
    except ObjectCodeError:
        sections = ()
    regions = [(0, 64)] + [(s.offset, s.offset + s.size) for s in sections
                           if s.type in (2, 3, 4) or s.name == ".eh_frame"]
    if sections:
        (shoff,) = __import__("struct").unpack_from("<Q", obj, 40)
        regions.append((shoff, shoff + 64 * len(sections)))
    n = rng.choice([1, 1, 2, 3, 8])
    for _ in range(n):
        lo, hi = rng.choice([r for r in regions if r[1] > r[0]])
        i = rng.randrange(lo, min(hi, len(obj)))
        obj[i] = rng.randrange(256) if rng.random() < 0.5 else obj[i] ^ (1 << rng.randrange(8))
    return f"forged object: {n} byte(s) in its tables", with_object(data, bytes(obj))


ZIG_MUTATIONS: tuple[Mutation, ...] = (
    header_delete_key, header_change_type, header_not_json, truncate, flip_bytes, forge_ir, forge_ir,
    forge_payload,
)
CPU_ZIG_MUTATIONS: tuple[Mutation, ...] = (*ZIG_MUTATIONS, forge_object, forge_object, forge_object)


def mutations_for(kind: str) -> tuple[Mutation, ...]:
    return {"mlir": TEXT_MUTATIONS, "ts": TEXT_MUTATIONS, "pt": PT_MUTATIONS,
            "zig": ZIG_MUTATIONS, "zig-cpu": CPU_ZIG_MUTATIONS}[kind]


def mutate(kind: str, data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One or (sometimes) two seeded mutations of ``data``; the result differs from it."""
    for _ in range(10):
        how, out = rng.choice(mutations_for(kind))(data, rng)
        if kind in ("mlir", "ts") and rng.random() < 0.2:
            how2, out = rng.choice(TEXT_MUTATIONS)(out, rng)
            how = f"{how}; {how2}"
        if out != data:
            return how, out
    return "unchanged", data
