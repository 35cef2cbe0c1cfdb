"""A 64-bit little-endian ELF shared object read as data: sections, symbols, C strings.

    image = ElfImage.read(Path("tensorrt.so"))
    image.symbol("_ZN8tensorrt9bindGraphERN8pybind117module_E")   # (address, size)
    image.c_string(address)                                      # the NUL-terminated text there

Nothing is loaded or executed; a file that is not such an object is an :class:`ElfFormatError`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from ziggurat.ir.errors import ZigguratError

_SHT_SYMTAB = 2
_SHT_RELA = 4
_SHT_NOBITS = 8
_SHT_DYNSYM = 11
_R_X86_64_64 = 1
_R_X86_64_RELATIVE = 8


class ElfFormatError(ZigguratError):
    """A file that is not a readable 64-bit little-endian ELF object."""


@dataclass(frozen=True)
class Section:
    name: str
    kind: int
    address: int
    offset: int
    size: int
    link: int


@dataclass
class ElfImage:
    data: bytes
    sections: list[Section]
    #: address -> every symbol name defined there (identical code folding gives several)
    names_at: dict[int, list[str]] = field(default_factory=dict[int, list[str]])
    #: symbol name -> (address, size)
    symbols: dict[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    #: address of a pointer the loader fills -> the address it points to (local) or the symbol name
    pointers: dict[int, int | str] = field(default_factory=dict[int, int | str])

    @staticmethod
    def read(path: Path) -> ElfImage:
        data = path.read_bytes()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ElfFormatError(f"{path} is not a 64-bit little-endian ELF object", op="check-tensorrt-api")
        try:
            image = ElfImage(data, _sections(data))
            for section in image.sections:
                if section.kind in (_SHT_SYMTAB, _SHT_DYNSYM):
                    image._read_symbols(section)
            for section in image.sections:
                if section.kind == _SHT_RELA:
                    image._read_relocations(section)
        except (struct.error, IndexError, UnicodeDecodeError) as e:
            raise ElfFormatError(f"{path} is a damaged ELF object ({e})", op="check-tensorrt-api") from e
        return image

    def _read_symbols(self, table: Section) -> None:
        strings = self.sections[table.link]
        for i in range(table.size // 24):
            name_offset, _info, _other, _shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, table.offset + 24 * i)
            if value == 0 or name_offset == 0:
                continue
            name = _c_string(self.data, strings.offset + name_offset)
            if name not in self.symbols:
                self.symbols[name] = (value, size)
                self.names_at.setdefault(value, []).append(name)

    def _read_relocations(self, table: Section) -> None:
        symbols = self.sections[table.link]
        names = self.sections[symbols.link]
        for i in range(table.size // 24):
            offset, info, addend = struct.unpack_from("<QQq", self.data, table.offset + 24 * i)
            kind, index = info & 0xFFFFFFFF, info >> 32
            if kind == _R_X86_64_RELATIVE:
                self.pointers[offset] = addend
            elif kind == _R_X86_64_64 and index:
                name_offset = struct.unpack_from("<I", self.data, symbols.offset + 24 * index)[0]
                self.pointers[offset] = _c_string(self.data, names.offset + name_offset)

    def section(self, name: str) -> Section:
        for s in self.sections:
            if s.name == name:
                return s
        raise ElfFormatError(f"the object has no {name} section", op="check-tensorrt-api")

    def file_offset(self, address: int) -> int | None:
        for s in self.sections:
            if s.kind != _SHT_NOBITS and s.address and s.address <= address < s.address + s.size:
                return address - s.address + s.offset
        return None

    def symbol(self, name: str) -> tuple[int, int]:
        try:
            return self.symbols[name]
        except KeyError:
            raise ElfFormatError(f"the object defines no symbol {name}", op="check-tensorrt-api") from None

    def code(self, address: int, size: int) -> bytes:
        offset = self.file_offset(address)
        if offset is None:
            raise ElfFormatError(f"address {address:#x} is not in the file", op="check-tensorrt-api")
        return self.data[offset:offset + size]

    def c_string(self, address: int, section: str = ".rodata") -> str | None:
        """The UTF-8 text at ``address`` if it lies in ``section``, else None."""
        s = self.section(section)
        if not s.address <= address < s.address + s.size:
            return None
        try:
            return _c_string(self.data, address - s.address + s.offset)
        except UnicodeDecodeError:
            return None


def _c_string(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    return data[offset:end].decode("utf-8")


def _sections(data: bytes) -> list[Section]:
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names_offset = raw[names_index][4]
    return [
        Section(_c_string(data, names_offset + r[0]), r[1], r[3], r[4], r[5], r[6])
        for r in raw
    ]
