# RUN: not ziggurat-opt %s -f torchscript-ir 2>&1 | filecheck %s
# Importing runs the graph on example inputs of the annotated types: 4 TiB of them is a
# diagnostic, not an internal error.
graph(%x : Float(1099511627776, strides=[1], requires_grad=0, device=cpu)):
  %y : Tensor = aten::relu(%x)
  return (%y)

# CHECK: ziggurat-opt: error: import: importing {{.*}}huge_example_input.ts runs its graph on example inputs of the given types, and this process cannot allocate them ({{.*}}can't allocate memory{{.*}})
# CHECK-NOT: internal error
