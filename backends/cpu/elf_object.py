"""The structure of a relocatable x86-64 ELF object, checked before LLVM sees it.

Object code reaches MCJIT from the object cache and from saved modules.  LLVM's loader
trusts the file: a truncated object, a section or symbol table pointing outside it, a
relocation of a kind RuntimeDyld does not implement or an ``.eh_frame`` whose records do
not chain crash or abort the process.  :func:`parse_object` reads the headers in Python
and raises :class:`ObjectCodeError` for anything LLVM could trip on:

* the ELF header: 64-bit little-endian, ``ET_REL``, ``EM_X86_64``, no program headers;
* every section inside the file, its name inside the section-name table, a power-of-two
  alignment of at most a page, zero-filled sections of bounded size;
* one symbol table: whole entries, its string table a ``STRTAB``, every name inside it,
  every defined symbol inside an allocated section (no common, TLS or indirect symbols),
  every section symbol naming a section, every undefined named symbol global or weak;
* every ``RELA`` section: whole entries, linked to the symbol table, applied to an
  allocated section, each entry of a kind RuntimeDyld implements for x86-64, inside its
  section and naming an existing symbol that is not a file name;
* ``.eh_frame``: records that chain to its end, each FDE pointing back at a CIE whose
  augmentation the unwinder understands.

What the machine code does once called is not checked (that is the program itself).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

ET_REL, EM_X86_64 = 1, 62
SHT_NULL, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 0, 2, 3, 4, 8, 9
SHF_ALLOC = 0x2
SHN_UNDEF, SHN_LORESERVE, SHN_ABS = 0, 0xFF00, 0xFFF1
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 0, 1, 2, 3, 4

#: x86-64 relocation kinds RuntimeDyldELF implements (an unknown kind aborts the process),
#: with the width of the field each one writes.
RELOCATION_WIDTHS: dict[int, int] = {
    1: 8,    # R_X86_64_64
    2: 4,    # R_X86_64_PC32
    4: 4,    # R_X86_64_PLT32
    9: 4,    # R_X86_64_GOTPCREL
    10: 4,   # R_X86_64_32
    11: 4,   # R_X86_64_32S
    24: 8,   # R_X86_64_PC64
    25: 8,   # R_X86_64_GOTOFF64
    26: 4,   # R_X86_64_GOTPC32
    27: 8,   # R_X86_64_GOT64
    29: 8,   # R_X86_64_GOTPC64
    41: 4,   # R_X86_64_GOTPCRELX
    42: 4,   # R_X86_64_REX_GOTPCRELX
}
MAX_ALIGN = 4096
MAX_ZERO_FILL = 256 << 20
#: Augmentations of ``.eh_frame`` CIEs LLVM emits for this code, and the FDE pointer
#: encodings they may carry (absptr, udata4/sdata4/sdata8, pc-relative or not).
CIE_AUGMENTATIONS = (b"", b"zR")
FDE_ENCODINGS = {0x00, 0x03, 0x04, 0x0B, 0x0C, 0x10, 0x13, 0x14, 0x1B, 0x1C}


class ObjectCodeError(ValueError):
    """Object code that is not a well-formed relocatable x86-64 ELF file."""


@dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int

    @property
    def allocated(self) -> bool:
        return bool(self.flags & SHF_ALLOC)


@dataclass(frozen=True)
class Symbol:
    name: str
    binding: int
    type: int
    shndx: int
    value: int
    size: int

    @property
    def defined(self) -> bool:
        return self.shndx != SHN_UNDEF


@dataclass(frozen=True)
class ElfObject:
    sections: tuple[Section, ...]
    symbols: tuple[Symbol, ...]

    def undefined_globals(self) -> list[Symbol]:
        """The global and weak symbols this object needs from elsewhere."""
        return [s for s in self.symbols
                if not s.defined and s.name and s.binding in (STB_GLOBAL, STB_WEAK)]

    def defined_functions(self) -> set[str]:
        return {s.name for s in self.symbols
                if s.defined and s.type == STT_FUNC and s.binding in (STB_GLOBAL, STB_WEAK)}

    def require_functions(self, names: Iterable[str]) -> None:
        missing = sorted(set(names) - self.defined_functions())
        if missing:
            raise ObjectCodeError(f"the object defines no function {', '.join(missing)}")


def _c_string(table: bytes, offset: int, what: str) -> str:
    end = table.find(b"\x00", offset)
    if offset >= len(table) or end < 0:
        raise ObjectCodeError(f"{what}: name offset {offset} outside its string table")
    try:
        return table[offset:end].decode()
    except UnicodeDecodeError:
        raise ObjectCodeError(f"{what}: name is not UTF-8") from None


def _header(data: bytes) -> tuple[int, int, int]:
    """(section table offset, number of sections, index of the section-name table)."""
    if len(data) < _EHDR.size:
        raise ObjectCodeError(f"{len(data)} bytes, shorter than an ELF header")
    (ident, e_type, machine, version, _entry, phoff, shoff, _flags, ehsize, _phentsize, phnum,
     shentsize, shnum, shstrndx) = _EHDR.unpack_from(data)
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1 or ident[6] != 1:
        raise ObjectCodeError("not a 64-bit little-endian ELF file")
    if e_type != ET_REL or machine != EM_X86_64 or version != 1:
        raise ObjectCodeError(f"not a relocatable x86-64 object (type {e_type}, machine {machine})")
    if ehsize != _EHDR.size or shentsize != _SHDR.size or phnum != 0 or phoff != 0:
        raise ObjectCodeError("unexpected ELF header sizes or program headers")
    if not 0 < shnum < SHN_LORESERVE or not 0 < shstrndx < shnum:
        raise ObjectCodeError(f"{shnum} sections, section-name table {shstrndx}")
    if shoff < _EHDR.size or shoff + shnum * _SHDR.size > len(data):
        raise ObjectCodeError(f"the section table ({shnum} x {_SHDR.size} bytes at {shoff}) "
                              f"leaves the {len(data)}-byte file")
    return shoff, shnum, shstrndx


def _sections(data: bytes) -> tuple[Section, ...]:
    shoff, shnum, shstrndx = _header(data)
    raw = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
    for i, (_name, kind, _flags, _addr, offset, size, _link, _info, align, _entsize) in enumerate(raw):
        if kind == SHT_NULL:
            continue
        if kind == SHT_NOBITS:
            if size > MAX_ZERO_FILL:
                raise ObjectCodeError(f"section {i} asks for {size} zero bytes")
        elif offset + size > len(data):
            raise ObjectCodeError(f"section {i} ({size} bytes at {offset}) leaves the {len(data)}-byte file")
        if align > MAX_ALIGN or align & (align - 1):
            raise ObjectCodeError(f"section {i} has alignment {align}")
    names = raw[shstrndx]
    if names[1] != SHT_STRTAB:
        raise ObjectCodeError("the section-name table is not a string table")
    table = data[names[4]:names[4] + names[5]]
    return tuple(
        Section(i, _c_string(table, r[0], f"section {i}") if r[1] != SHT_NULL else "", *r[1:3], *r[4:])
        for i, r in enumerate(raw)
    )


def _symbols(data: bytes, sections: tuple[Section, ...]) -> tuple[Symbol, ...]:
    tables = [s for s in sections if s.type == SHT_SYMTAB]
    if len(tables) != 1:
        raise ObjectCodeError(f"{len(tables)} symbol tables")
    symtab = tables[0]
    if symtab.entsize != _SYM.size or symtab.size % _SYM.size or not 0 < symtab.link < len(sections):
        raise ObjectCodeError("malformed symbol table header")
    strtab = sections[symtab.link]
    if strtab.type != SHT_STRTAB:
        raise ObjectCodeError("the symbol table's string table is not a string table")
    names = data[strtab.offset:strtab.offset + strtab.size]
    symbols: list[Symbol] = []
    for k in range(symtab.size // _SYM.size):
        st_name, info, _other, shndx, value, size = _SYM.unpack_from(data, symtab.offset + k * _SYM.size)
        sym = Symbol(_c_string(names, st_name, f"symbol {k}"), info >> 4, info & 0xF, shndx, value, size)
        if sym.binding not in (STB_LOCAL, STB_GLOBAL, STB_WEAK) or sym.type > STT_FILE:
            raise ObjectCodeError(f"symbol {k} '{sym.name}' has binding {sym.binding}, type {sym.type}")
        if not sym.defined and sym.name and sym.binding == STB_LOCAL:
            raise ObjectCodeError(f"symbol {k} '{sym.name}' is local and undefined (nothing can resolve it)")
        if sym.type == STT_SECTION and shndx in (SHN_UNDEF, SHN_ABS):
            raise ObjectCodeError(f"symbol {k} names section {shndx}, which does not exist")
        if sym.defined and shndx != SHN_ABS:
            if shndx >= len(sections) or not sections[shndx].allocated:
                raise ObjectCodeError(f"symbol {k} '{sym.name}' is defined in section {shndx}, "
                                      "which is not loaded")
            if value + size > sections[shndx].size:
                raise ObjectCodeError(f"symbol {k} '{sym.name}' leaves its section")
        symbols.append(sym)
    return tuple(symbols)


def _check_relocations(data: bytes, sections: tuple[Section, ...], symbols: tuple[Symbol, ...]) -> None:
    symtab = next(s.index for s in sections if s.type == SHT_SYMTAB)
    for rel in sections:
        if rel.type == SHT_REL:
            raise ObjectCodeError(f"section {rel.name}: REL relocations (x86-64 uses RELA)")
        if rel.type != SHT_RELA:
            continue
        if rel.entsize != _RELA.size or rel.size % _RELA.size or rel.link != symtab:
            raise ObjectCodeError(f"section {rel.name}: malformed relocation table header")
        if not 0 < rel.info < len(sections) or not sections[rel.info].allocated \
                or sections[rel.info].type == SHT_NOBITS:
            raise ObjectCodeError(f"section {rel.name} relocates section {rel.info}, which is not loaded")
        target = sections[rel.info]
        for k in range(rel.size // _RELA.size):
            offset, info, _addend = _RELA.unpack_from(data, rel.offset + k * _RELA.size)
            kind, sym = info & 0xFFFFFFFF, info >> 32
            width = RELOCATION_WIDTHS.get(kind)
            if width is None:
                raise ObjectCodeError(f"section {rel.name}: relocation {k} of unsupported kind {kind}")
            if offset + width > target.size or sym >= len(symbols):
                raise ObjectCodeError(f"section {rel.name}: relocation {k} leaves {target.name} "
                                      "or names no symbol")
            if symbols[sym].type == STT_FILE:  # RuntimeDyld cannot relocate against a file name
                raise ObjectCodeError(f"section {rel.name}: relocation {k} refers to a file symbol")


def _check_eh_frame(data: bytes, section: Section) -> None:
    """The records of ``.eh_frame`` chain to its end (or to a zero terminator; RuntimeDyld
    pads the section with one); every FDE points back at a CIE whose augmentation and
    pointer encoding the unwinder understands, and holds its two pointers."""
    frame = data[section.offset:section.offset + section.size]
    pointer_widths: dict[int, int] = {}  # CIE offset -> width of its FDEs' pointers
    at = 0
    while at < len(frame):
        if at + 4 > len(frame):
            raise ObjectCodeError(f".eh_frame: {len(frame) - at} stray bytes at its end")
        (length,) = struct.unpack_from("<I", frame, at)
        if length == 0:
            return  # the terminator: the unwinder reads no further
        if length == 0xFFFFFFFF or length < 8 or at + 4 + length > len(frame):
            raise ObjectCodeError(f".eh_frame: record at {at} of length {length} leaves the section")
        (cie_pointer,) = struct.unpack_from("<I", frame, at + 4)
        if cie_pointer == 0:
            pointer_widths[at] = _cie_pointer_width(frame[at + 8:at + 4 + length], at)
        else:
            width = pointer_widths.get(at + 4 - cie_pointer)
            if width is None or length < 4 + 2 * width:
                raise ObjectCodeError(f".eh_frame: FDE at {at} points at no CIE or is too short")
        at += 4 + length


def _skip_leb128(body: bytes, pos: int) -> int:
    while pos < len(body) and body[pos] & 0x80:
        pos += 1
    return pos + 1


def _cie_pointer_width(body: bytes, at: int) -> int:
    """The width of the pointers of the CIE's FDEs (its ``R`` augmentation's encoding)."""
    version, end = body[0], body.find(b"\x00", 1)
    augmentation = body[1:end] if end > 0 else None
    if version not in (1, 3) or augmentation not in CIE_AUGMENTATIONS:
        raise ObjectCodeError(f".eh_frame: CIE at {at} has version {version} or an unknown augmentation")
    if augmentation != b"zR":
        return 8
    pos = _skip_leb128(body, _skip_leb128(body, end + 1))  # code and data alignment factors
    pos = pos + 1 if version == 1 else _skip_leb128(body, pos)  # the return-address register
    pos = _skip_leb128(body, pos)  # the length of the augmentation data
    if pos >= len(body) or body[pos] not in FDE_ENCODINGS:
        raise ObjectCodeError(f".eh_frame: CIE at {at} has an unknown pointer encoding")
    return 4 if body[pos] & 0x0F in (0x03, 0x0B) else 8


def parse_object(data: bytes) -> ElfObject:
    """The sections and symbols of ``data``, or :class:`ObjectCodeError` saying what is wrong."""
    sections = _sections(data)
    symbols = _symbols(data, sections)
    _check_relocations(data, sections, symbols)
    for section in sections:
        if section.name == ".eh_frame":
            _check_eh_frame(data, section)
    return ElfObject(sections, symbols)


__all__ = ["ElfObject", "ObjectCodeError", "Section", "Symbol", "parse_object"]
