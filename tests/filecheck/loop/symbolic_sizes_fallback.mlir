// RUN: ziggurat-opt %s -p 'annotate-symbolic-shapes,convert-torch-to-loop' | filecheck %s --check-prefix=ANNOTATED
// RUN: ziggurat-opt %s --emit=loop | filecheck %s --check-prefix=EMIT
// The CPU backend lowers static sizes: on a level with shape symbols an op with ? sizes runs in
// torch, and the reason says that the size is a declared symbol, not data-dependent (compile
// builds one static module per size); unannotated, the reason names both possibilities.

// ANNOTATED: loop.fallback_ops = {"aten::relu" = ["a size declared dynamic (a shape symbol): the CPU backend lowers static sizes only (compile(dynamic_shapes=...) builds one per size)"]}
// EMIT:      loop.fallback_ops = {"aten::relu" = ["a run-time size (a shape symbol, or data-dependent): the CPU backend lowers static sizes only
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %0 = torch.aten.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
