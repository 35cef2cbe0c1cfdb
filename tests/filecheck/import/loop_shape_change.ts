# RUN: not ziggurat-opt %s -f torchscript-ir --input-types 'tensor<3xf32>' 2>&1 | filecheck %s
# A carried value whose shape changes between the iterations of a run-time loop is a clear
# error naming the loop, not a wrongly typed torch.loop.
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %big : int = prim::Constant[value=9223372036854775807]()
  %limit : int = prim::Constant[value=100]()
  %zero : int = prim::Constant[value=0]()
  %s : Tensor = aten::sum(%x, %none)
  %lt : Tensor = aten::lt(%s, %limit)
  %go : bool = aten::Bool(%lt)
  %y : Tensor = prim::Loop(%big, %go, %x)
    block0(%i : int, %a : Tensor):
      %parts : Tensor[] = prim::ListConstruct(%a, %a)
      %b : Tensor = aten::cat(%parts, %zero)
      %s2 : Tensor = aten::sum(%b, %none)
      %lt2 : Tensor = aten::lt(%s2, %limit)
      %go2 : bool = aten::Bool(%lt2)
      -> (%go2, %b)
  return (%y)
# CHECK: ziggurat-opt: error: {{.*}}prim::Loop: changes the type of loop-carried value #0 from tensor<3xf32> to tensor<6xf32>
