# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<3x4xf32>' | filecheck %s
# A loop with a static trip count unrolls at import: the iteration number folds into each copy
# of the body, and appending to a list inside the loop builds the list stack() reads.
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %list : Tensor[] = prim::ListConstruct()
  %sizes : int[] = aten::size(%x)
  %n : int = aten::__getitem__(%sizes, %zero)
  %out : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %carried : Tensor):
      %row : Tensor = aten::select(%x, %zero, %i)
      %scaled : Tensor = aten::mul(%row, %i)
      %l2 : Tensor[] = aten::append(%list, %scaled)
      -> (%true, %carried)
  %y : Tensor = aten::stack(%list, %zero)
  return (%y)

# CHECK-NOT:  torch.loop
# CHECK:      torch.aten.select.int %x {dim = 0 : i64, index = 0 : i64}
# CHECK:      torch.aten.mul.Scalar {{.*}} {other = 0 : i64}
# CHECK:      torch.aten.select.int %x {dim = 0 : i64, index = 2 : i64}
# CHECK:      torch.aten.mul.Scalar {{.*}} {other = 2 : i64}
# CHECK:      torch.aten.stack [{{%.*}}, {{%.*}}, {{%.*}}] {dim = 0 : i64}
# CHECK-NOT:  torch.loop
