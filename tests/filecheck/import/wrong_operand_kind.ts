# RUN: not ziggurat-opt %s -f torchscript-ir 2>&1 | filecheck %s
# Operands that match no schema of the operator are a diagnostic naming the node, its line and
# the schemas it has, not an internal error from TorchScript's graph passes.
graph(%x : Float(4, 8)):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::sum(%none, %x)
  return (%y)
# CHECK: ziggurat-opt: error: <torchscript-ir>:6: aten::sum: no schema of aten::sum takes these operands ({{.*}}NoneType, %x : Tensor); its schemas: aten::sum.dim_IntList(Tensor self
# CHECK-NOT: internal error
