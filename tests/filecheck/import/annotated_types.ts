# RUN: ziggurat-opt %s -f torchscript-ir | filecheck %s
# Without --input-types the complete tensor types annotated in the graph are used;
# aten::size on a static shape folds, and prim::If on it picks one branch.
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %n : int = aten::size(%x, %zero)
  %c : bool = aten::eq(%n, %two)
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::sigmoid(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::tanh(%x)
      -> (%b)
  return (%r)

# CHECK:     func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32>
# CHECK:     torch.aten.sigmoid %x
# CHECK-NOT: torch.aten.tanh
# CHECK-NOT: aten.size
