"""Writes a damaged copy of a torch.jit.save file (for the lit tests of malformed .pt input).

    damage_archive.py IN OUT MODE

MODE: ``flip`` (one byte of a code entry flipped in place: its CRC no longer matches),
``forged`` (a code entry and its debug pickle damaged, the archive rewritten with valid
CRCs: torch.jit.load aborts the process on it), ``debug-pickle`` (the debug pickles damaged,
CRCs valid: read lazily, when the importer locates ops), ``deflate`` (a compressed entry whose
deflate stream is damaged), ``torch-save`` (a torch.save archive, no
code), ``truncated`` (the first half of the file).
"""
import io
import sys
import zipfile


def rezip(entries: dict) -> bytes:
    """A stored zip of ``entries``, with the CRCs of their (damaged) contents."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as forged:
        for name, content in entries.items():
            forged.writestr(name, content)
    return buffer.getvalue()


source, target, mode = sys.argv[1:4]
data = open(source, "rb").read()
archive = zipfile.ZipFile(io.BytesIO(data))
names = archive.namelist()

if mode == "flip":
    info = archive.getinfo(next(n for n in names if n.endswith("/code/__torch__.py")))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    out = bytearray(data)
    out[start + info.file_size // 2] ^= 0x20
    data = bytes(out)
elif mode == "forged":
    entries = {n: archive.read(n) for n in names}
    conv = next(n for n in names if n.endswith("/code/__torch__/torch/nn/modules/conv.py"))
    # A syntax error makes the loader read the entry's debug pickle, whose format marker is
    # damaged: libtorch throws from where it cannot (std::terminate, SIGABRT).
    entries[conv] = entries[conv][:-2] + b"t" + entries[conv][-1:]
    entries[conv + ".debug_pkl"] = entries[conv + ".debug_pkl"].replace(
        b"FORMAT_WITH_STRING_TABLE", b"FORMATfWITH_STRING_TABLE")
    data = rezip(entries)
elif mode == "debug-pickle":
    entries = {n: archive.read(n) for n in names}
    for n in names:
        if n.endswith(".debug_pkl"):  # an opcode TorchScript's unpickler does not know
            entries[n] = entries[n][:2] + b"P" + entries[n][3:]
    data = rezip(entries)
elif mode == "deflate":
    entries = {n: archive.read(n) for n in names}
    code = next(n for n in names if n.endswith("/code/__torch__.py"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as forged:
        for n in names:  # the code entry compressed, then its deflate stream damaged
            forged.writestr(n, entries[n], compress_type=zipfile.ZIP_DEFLATED if n == code else None)
    info = zipfile.ZipFile(io.BytesIO(buffer.getvalue())).getinfo(code)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    out = bytearray(buffer.getvalue())
    out[start + 2] ^= 0xFF
    data = bytes(out)
elif mode == "torch-save":
    import torch  # only here: importing it costs 2 s per lit RUN line

    buffer = io.BytesIO()
    torch.save({"weight": torch.ones(3)}, buffer)
    data = buffer.getvalue()
elif mode == "truncated":
    data = data[: len(data) // 2]
else:
    raise SystemExit(f"unknown mode {mode}")
open(target, "wb").write(data)
