"""The calls a function of an x86-64 ELF object makes, with what each argument register holds.

    for event in function_events(image, "_ZN8tensorrt9bindGraphERN8pybind117module_E"):
        ...   # Load(address) for each rip-relative address loaded, Call(target, args, slots)

A linear sweep (capstone) tracks constant addresses (``lea reg, [rip + d]``) through register
moves and stack slots (``[rbp/rsp + d]``), so that at a call the System V argument registers
``rdi, rsi, rdx, rcx, r8, r9`` read as an address in the object, a pointer to a stack slot,
or unknown.  That is all a pybind11 module's binding code needs: names, docstrings and
signature tables are constant addresses passed to pybind11's registration functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import capstone

from ziggurat.tools.elf_image import ElfImage

ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
_CALLER_SAVED = ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11")
_WIDE = {
    **{f"e{r}": f"r{r}" for r in ("ax", "bx", "cx", "dx", "si", "di", "bp", "sp")},
    **{r: "r" + r[1:] for r in ("ax", "bx", "cx", "dx", "si", "di")},
    **{f"r{n}{s}": f"r{n}" for n in range(8, 16) for s in ("d", "w", "b")},
    **{r: "r" + r[0] + "x" for r in ("al", "bl", "cl", "dl")},
    **{r: "r" + r[:2] for r in ("sil", "dil")},
}


@dataclass(frozen=True)
class Address:
    """A constant address in the object (a string, a symbol, a table)."""

    value: int


@dataclass(frozen=True)
class StackSlot:
    """A pointer to the stack slot ``base + offset``."""

    base: str
    offset: int


Value = Address | StackSlot


@dataclass(frozen=True)
class Load:
    """``lea reg, [rip + d]``: the code takes the address of something in the object."""

    at: int
    address: int


@dataclass(frozen=True)
class Call:
    at: int
    target: int
    args: dict[str, Value]
    #: what the tracked stack slots held at the call: (base, offset) -> value
    slots: dict[tuple[str, int], Value]

    def arg(self, register: str) -> Value | None:
        return self.args.get(register)

    def slot(self, pointer: Value | None, field_offset: int = 0) -> Value | None:
        """What the stack slot ``pointer`` points at (plus ``field_offset`` bytes) held."""
        if not isinstance(pointer, StackSlot):
            return None
        return self.slots.get((pointer.base, pointer.offset + field_offset))


Event = Load | Call


_MD = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
_MEMORY = re.compile(r"^(?:[a-z]+ ptr )?\[(rip|rbp|rsp)(?: ([+-]) (0x[0-9a-f]+|\d+))?\]$")
_REGISTER = re.compile(r"^[a-z][a-z0-9]*$")
#: instructions that write no register operand
_NO_WRITE = {"cmp", "test", "push", "jmp", "nop", "ucomiss", "ucomisd", "comiss", "comisd", "bt", "endbr64", "ud2", "ret", "leave"}
#: instructions that also write registers they do not name
_IMPLICIT = {
    "mul": ("rax", "rdx"), "imul": ("rax", "rdx"), "div": ("rax", "rdx"), "idiv": ("rax", "rdx"),
    "cqo": ("rdx",), "cdq": ("rdx",), "cdqe": ("rax",), "cmpxchg": ("rax",), "xchg": (),
    "cpuid": ("rax", "rbx", "rcx", "rdx"), "rdtsc": ("rax", "rdx"), "syscall": ("rax", "rcx", "r11"),
}
_STRING_OPS = ("rep", "stos", "movs", "scas", "cmps", "lods")


def function_events(image: ElfImage, symbol: str) -> list[Event]:
    address, size = image.symbol(symbol)
    return list(events(image, address, size))


def _memory(operand: str, next_address: int) -> tuple[str, int] | None:
    """``("rip", absolute address)`` or ``(frame register, offset)`` of a simple memory operand."""
    m = _MEMORY.match(operand)
    if m is None:
        return None
    base, sign, number = m.groups()
    offset = int(number, 0) if number else 0
    offset = -offset if sign == "-" else offset
    return ("rip", next_address + offset) if base == "rip" else (base, offset)


def _wide(register: str) -> str:
    return _WIDE.get(register, register)


def events(image: ElfImage, address: int, size: int) -> Iterator[Event]:
    """The loads and calls of the code at ``address`` (``size`` bytes), in address order."""
    regs: dict[str, Value] = {}
    slots: dict[tuple[str, int], Value] = {}
    for at, length, mnemonic, op_str in _MD.disasm_lite(image.code(address, size), address):
        ops = [o.strip() for o in op_str.split(", ")] if op_str else []
        if mnemonic == "call":
            if ops and ops[0].startswith("0x"):
                yield Call(at, int(ops[0], 16), {r: regs[r] for r in ARGUMENT_REGISTERS if r in regs}, dict(slots))
            for r in _CALLER_SAVED:
                regs.pop(r, None)
            continue
        if mnemonic == "lea" and len(ops) == 2:
            mem = _memory(ops[1], at + length)
            dst = _wide(ops[0])
            if mem is not None and mem[0] == "rip":
                regs[dst] = Address(mem[1])
                yield Load(at, mem[1])
            elif mem is not None:
                regs[dst] = StackSlot(*mem)
            else:
                regs.pop(dst, None)
            continue
        if mnemonic == "mov" and len(ops) == 2 and _move(ops, at + length, regs, slots):
            continue
        _clobber(mnemonic, ops, regs, slots, at + length)


def _is_wide_register(operand: str) -> bool:
    return operand in _WIDE.values() or operand in ("rbp", "rsp")


def _move(ops: list[str], next_address: int, regs: dict[str, Value], slots: dict[tuple[str, int], Value]) -> bool:
    """Track a 64-bit register/stack-slot move; False for any other mov."""
    dst, src = ops
    if _is_wide_register(dst) and _is_wide_register(src):
        _set(regs, dst, regs.get(src))
        return True
    mem = _memory(dst, next_address)
    if mem is not None and mem[0] != "rip" and dst.startswith("qword") and _is_wide_register(src):
        _set(slots, mem, regs.get(src))
        return True
    mem = _memory(src, next_address)
    if mem is not None and mem[0] != "rip" and _is_wide_register(dst):
        _set(regs, dst, slots.get(mem))
        return True
    return False


def _set(table: dict[Any, Value], key: object, value: Value | None) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


def _clobber(mnemonic: str, ops: list[str], regs: dict[str, Value], slots: dict[tuple[str, int], Value],
             next_address: int) -> None:
    """Forget what an instruction may overwrite (its first operand and its implicit outputs)."""
    if mnemonic.startswith(_STRING_OPS):
        for r in ("rdi", "rsi", "rcx", "rax"):
            regs.pop(r, None)
        return
    for r in _IMPLICIT.get(mnemonic, ()):
        regs.pop(r, None)
    if mnemonic in _NO_WRITE or mnemonic.startswith("j") or not ops:
        return
    targets = ops if mnemonic in ("xchg", "xadd") else ops[:1]
    for op in targets:
        if _REGISTER.match(op):
            regs.pop(_wide(op), None)
        else:
            mem = _memory(op, next_address)
            if mem is not None:
                slots.pop(mem, None)
