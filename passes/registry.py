"""The list of every pass: name -> module:class (one pass per module)."""

from ziggurat.passes import register_pass

# Lines are added as passes land.
register_pass("torch-canonicalize", "torch_canonicalize:TorchCanonicalizePass")
register_pass("constant-fold", "constant_fold:ConstantFoldPass")
register_pass("fold-batchnorm", "fold_batchnorm:FoldBatchNormPass")
register_pass("fuse-post-ops", "fuse_post_ops:FusePostOpsPass")
register_pass("fuse-sibling-linears", "fuse_sibling_linears:FuseSiblingLinearsPass")
register_pass("graph-opt", "graph_opt:GraphOptPass")
register_pass("decompose-torch-ops", "decompose_torch_ops:DecomposeTorchOpsPass")
register_pass("decompose-rnn", "decompose_rnn:DecomposeRnnPass")
register_pass("decompose-quantize", "decompose_quantize:DecomposeQuantizePass")
register_pass("annotate-symbolic-shapes", "annotate_symbolic_shapes:AnnotateSymbolicShapesPass")
