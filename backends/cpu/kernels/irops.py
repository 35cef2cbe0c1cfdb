"""Typed forms of llvmlite's ``IRBuilder`` arithmetic.

llvmlite builds ``IRBuilder.add``/``mul``/``fadd``/... with ``functools.wraps``
decorators around bodies that hold only a docstring, so a type checker sees
them return ``None``.  Each wrapper here states what the builder really returns:
the new instruction, an ``ir.Value``.
"""

from __future__ import annotations

from typing import cast

from llvmlite import ir


def add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.add(x, y))


def sub(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.sub(x, y))


def mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.mul(x, y))


def udiv(b: ir.IRBuilder, x: ir.Value, y: ir.Value, name: str = "") -> ir.Value:
    return cast(ir.Value, b.udiv(x, y, name=name))


def urem(b: ir.IRBuilder, x: ir.Value, y: ir.Value, name: str = "") -> ir.Value:
    return cast(ir.Value, b.urem(x, y, name=name))


def and_(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.and_(x, y))


def or_(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.or_(x, y))


def shl(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.shl(x, y))


def fadd(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.fadd(x, y))


def fsub(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.fsub(x, y))


def fmul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.fmul(x, y))


def fdiv(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return cast(ir.Value, b.fdiv(x, y))


def zext(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return cast(ir.Value, b.zext(x, ty))


def trunc(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return cast(ir.Value, b.trunc(x, ty))


def value_type(v: ir.Value) -> ir.Type:
    """``v.type``: every llvmlite value has one; the ``ir.Value`` base class does not declare it."""
    return cast(ir.Type, getattr(v, "type"))
