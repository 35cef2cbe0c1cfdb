"""``annotate-symbolic-shapes``: write each value's size expressions on the op that makes it,
in a function of a dynamic-shape ``torch`` level (one with ``ziggurat.shape_symbols``).

    %reshape = torch.operator "aten::reshape"(...) {..., ziggurat.shapes = ["batch x 15"]} : ... -> tensor<?x15xf32>
    %cat_1 = torch.aten.cat [%x, %x] {dim = 0 : i64, ziggurat.shapes = ["2*batch x 5 x 4"]} : ...

Only ops with a ``?`` result (or a run-time size scalar) are annotated; the expressions come
from :func:`ziggurat.ir.symbolic_shapes.infer_symbolic_shapes`, which also stops the pass
with an error naming an op that does not hold over the declared ranges (a size baked in).
A size that depends on the data is ``u0``, ``u1``...  Where the analysis ends early (an op
torch cannot run on fake tensors) the function says so in
``ziggurat.shapes_incomplete``.  The annotations are read-only documentation: passes that
rewrite an op drop them, and running the pass again refreshes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR
from ziggurat.ir.statistics import record
from ziggurat.ir.symbolic_shapes import infer_symbolic_shapes
from ziggurat.ir.types import has_dynamic_dims

NAME = "annotate-symbolic-shapes"
SHAPES_ATTR = "ziggurat.shapes"
INCOMPLETE_ATTR = "ziggurat.shapes_incomplete"


@dataclass(frozen=True)
class AnnotateSymbolicShapesPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, FuncOp) and SHAPE_SYMBOLS_ATTR in f.attributes]:
            shapes = infer_symbolic_shapes(op, fn.sym_name.data)
            fn.attributes.pop(INCOMPLETE_ATTR, None)
            if shapes.incomplete is not None:
                fn.attributes[INCOMPLETE_ATTR] = StringAttr(shapes.incomplete)
            for inner in fn.body.walk():
                inner.attributes.pop(SHAPES_ATTR, None)
                symbolic = [r for r in inner.results
                            if has_dynamic_dims(r.type) or (isinstance(r.type, IntegerType) and r in shapes.scalars)]
                if not symbolic or any(shapes.text(r) is None for r in symbolic):
                    continue
                inner.attributes[SHAPES_ATTR] = ArrayAttr([StringAttr(shapes.text(r) or "") for r in inner.results])
                record(NAME, "ops annotated")
