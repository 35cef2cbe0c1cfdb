# RUN: not ziggurat-opt %s -f torchscript-ir 2>&1 | filecheck %s
graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)
# CHECK: ziggurat-opt: error: graph input: the type of graph input %x (Tensor) is not fully known; give the input types, e.g. --input-types
