# RUN: not ziggurat-opt %s -f torchscript-ir --input-types 'tensor<3xf32>' 2>&1 | filecheck %s
# Control flow on a run-time value is a clear error naming the node, not a crash.
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sum(%x, %none)
  %b : bool = aten::Bool(%s)
  %r : Tensor = prim::If(%b)
    block0():
      -> (%x)
    block1():
      %n : Tensor = aten::neg(%x)
      -> (%n)
  return (%r)
# CHECK: ziggurat-opt: error: {{.*}}prim::If: is control flow on a run-time value
