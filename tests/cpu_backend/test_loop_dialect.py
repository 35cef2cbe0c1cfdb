"""The loop dialect from Python: builders, accessors, printing and the verifiers."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IndexType, MemRefType, VectorType, f32, i1, i64
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects import loop


def test_offset_prints_as_an_affine_sum() -> None:
    block = Block(arg_types=[IndexType(), IndexType()])
    op = loop.OffsetOp([(block.args[0], 1000), (block.args[1], 1)], -3)
    assert str(op).endswith("loop.offset 1000 * %1 + %2 + -3")
    assert op.coefficients == [1000, 1] and op.const == -3


def test_vfor_tail_accessors() -> None:
    op = loop.VForOp(0, 1000, 16)
    assert op.full_iterations == 62 and op.tail == 8
    assert isinstance(op.body.block.last_op, loop.YieldOp)


def test_kernel_requires_an_output() -> None:
    block = Block(arg_types=[MemRefType(f32, [4])])
    kernel = loop.KernelOp("k", [block.args[0]], [], isa="avx2", vector_width=8, vectorized=False)
    with pytest.raises(VerifyException, match="writes at least one buffer"):
        kernel.verify()


def test_cmp_select_cast_types() -> None:
    block = Block(arg_types=[VectorType(f32, [16]), VectorType(i64, [16])])
    cmp = loop.CmpOp("olt", block.args[0], block.args[0])
    assert cmp.result.type == VectorType(i1, [16])
    sel = loop.SelectOp(cmp, block.args[0], block.args[0])
    assert sel.result.type == block.args[0].type
    cast = loop.CastOp("sitofp", block.args[1], VectorType(f32, [16]))
    cast.verify()
    with pytest.raises(VerifyException, match="unknown kind"):
        loop.CastOp("bitcast", block.args[1], VectorType(f32, [16])).verify()


def test_check_index_on_vectors_keeps_the_type() -> None:
    block = Block(arg_types=[VectorType(i64, [8]), i64])
    assert loop.CheckIndexOp(block.args[0], 10, 1).result.type == VectorType(i64, [8])
    assert isinstance(loop.CheckIndexOp(block.args[1], 10, 1).result.type, IndexType)
