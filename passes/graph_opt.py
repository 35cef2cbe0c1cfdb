"""``graph-opt``: the default graph-level pipeline both backends consume.

    torch-canonicalize -> decompose (big fused torch ops) -> decompose-rnn (LSTM/GRU) -> constant-fold
    -> fold-batchnorm -> fuse-post-ops -> fuse-sibling-linears -> prepack-weights (when prepack)
    -> torch-canonicalize

Options: ``prepack`` (default true), ``isa`` (for prepack-weights), ``duplicate`` (for
fuse-post-ops).  The TensorRT backend runs it with ``prepack=false``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.passes.constant_fold import ConstantFoldPass
from ziggurat.passes.decompose_rnn import DecomposeRnnPass
from ziggurat.passes.fold_batchnorm import FoldBatchNormPass
from ziggurat.passes.fuse_post_ops import FusePostOpsPass
from ziggurat.passes.fuse_sibling_linears import FuseSiblingLinearsPass
from ziggurat.passes.torch_canonicalize import TorchCanonicalizePass


def graph_opt_passes(prepack: bool = True, isa: str = "auto", duplicate: bool = False) -> list[ModulePass]:
    passes: list[ModulePass] = [TorchCanonicalizePass()]
    from ziggurat.passes.decompose_torch_ops import DecomposeTorchOpsPass

    passes.append(DecomposeTorchOpsPass())
    passes += [DecomposeRnnPass(), ConstantFoldPass(), FoldBatchNormPass(), FusePostOpsPass(duplicate=duplicate),
               FuseSiblingLinearsPass()]
    if prepack:
        from ziggurat.passes.prepack_weights import PrepackWeightsPass

        passes.append(PrepackWeightsPass(isa=isa))
    passes.append(TorchCanonicalizePass())
    return passes


@dataclass(frozen=True)
class GraphOptPass(ModulePass):
    name = "graph-opt"

    prepack: bool = True
    isa: str = "auto"
    duplicate: bool = False

    def expand(self) -> list[ModulePass]:
        """The passes this pipeline runs (``ziggurat.bisect`` checks after each)."""
        return graph_opt_passes(self.prepack, self.isa, self.duplicate)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.expand():
            p.apply(ctx, op)
