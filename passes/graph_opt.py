"""``graph-opt``: the default graph-level pipeline both backends consume, target-independent.

    torch-canonicalize -> decompose (big fused torch ops) -> decompose-rnn (LSTM/GRU)
    -> decompose-quantize (PT2E's quantize/dequantize pairs) -> fold-batchnorm -> constant-fold
    -> fold-batchnorm -> fuse-post-ops -> fuse-sibling-linears -> torch-canonicalize

Option: ``duplicate`` (for fuse-post-ops).  Weight prepacking is the CPU backend's
``prepack-weights{isa=...}`` pass, which that backend runs after this pipeline; the
``prepack`` and ``isa`` options this pipeline had are refused with a message saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from ziggurat.passes.constant_fold import ConstantFoldPass
from ziggurat.passes.decompose_quantize import DecomposeQuantizePass
from ziggurat.passes.decompose_rnn import DecomposeRnnPass
from ziggurat.passes.fold_batchnorm import FoldBatchNormPass
from ziggurat.passes.fuse_post_ops import FusePostOpsPass
from ziggurat.passes.fuse_sibling_linears import FuseSiblingLinearsPass
from ziggurat.passes.torch_canonicalize import TorchCanonicalizePass

#: Options graph-opt had while it ran prepack-weights at its end.
MOVED_OPTIONS = ("prepack", "isa")


def graph_opt_passes(duplicate: bool = False) -> list[ModulePass]:
    passes: list[ModulePass] = [TorchCanonicalizePass()]
    from ziggurat.passes.decompose_torch_ops import DecomposeTorchOpsPass

    passes.append(DecomposeTorchOpsPass())
    # fold-batchnorm before constant-fold too: it folds a float32 weight that precision= casts to
    # 16 bits from the float32 values, before constant-fold rounds the cast
    passes += [DecomposeRnnPass(), DecomposeQuantizePass(), FoldBatchNormPass(), ConstantFoldPass(), FoldBatchNormPass(),
               FusePostOpsPass(duplicate=duplicate), FuseSiblingLinearsPass(), TorchCanonicalizePass()]
    return passes


@dataclass(frozen=True)
class GraphOptPass(ModulePass):
    name = "graph-opt"

    duplicate: bool = False

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        """As xDSL's, but an option of the old graph-opt says where prepacking went."""
        moved = [o for o in MOVED_OPTIONS if o in spec.normalize_parameter_names().parameters]
        if moved:
            raise ValueError(
                f"graph-opt has no option '{moved[0]}' any more: weight prepacking moved to the "
                "prepack-weights pass of the CPU backend; write 'graph-opt,prepack-weights{isa=...}' "
                "to prepack, plain 'graph-opt' not to")
        return super().from_spec(spec)

    def expand(self) -> list[ModulePass]:
        """The passes this pipeline runs (``ziggurat.bisect`` checks after each)."""
        return graph_opt_passes(self.duplicate)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.expand():
            p.apply(ctx, op)
