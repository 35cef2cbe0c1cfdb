# RUN: not ziggurat-opt %s -f torchscript-ir --input-types 'tensor<4x4xf32>' 2>&1 | filecheck %s
# A write through an expanded view cannot be functionalized (several view elements are one
# element of the base): refused naming the op, its schema and the reason.
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %sizes : int[] = prim::Constant[value=[4, 4]]()
  %two : float = prim::Constant[value=2.]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::slice(%y, %0, %0, %1, %1)
  %e : Tensor = aten::expand(%row, %sizes, %false)
  %m : Tensor = aten::mul_(%e, %two)
  return (%y)

# CHECK: aten::mul_: writes in place through a view made by aten::expand: expand makes several view elements one element of the base; the TorchScript frontend cannot functionalize this in-place write
# CHECK: schema: aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
