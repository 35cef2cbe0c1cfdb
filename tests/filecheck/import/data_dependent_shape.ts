# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<5x3xf32>' | filecheck %s
# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<5x3xf32>' | ziggurat-opt | filecheck %s
# nonzero's result shape depends on the data: its sizes are ?, and so are those of what is
# computed from it (its size becomes a run-time int, zeros of that size has a ? size);
# x + 1 beside it stays static, and so does the rank-0 sum of the data-dependent tensor.
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %m : Tensor = aten::gt(%x, %zero)
  %idx : Tensor = aten::nonzero(%m)
  %n : int = aten::size(%idx, %zero)
  %sizes : int[] = prim::ListConstruct(%n)
  %z : Tensor = aten::zeros(%sizes, %none, %none, %none, %none)
  %s : Tensor = aten::sum(%idx, %none)
  %y : Tensor = aten::add(%x, %one, %one)
  return (%idx, %z, %s, %y)

# CHECK:      func.func @forward(%x: tensor<5x3xf32>) -> (tensor<?x?xi64>, tensor<?xf32>, tensor<i64>, tensor<5x3xf32>)
# CHECK:      %[[IDX:.*]] = torch.operator "aten::nonzero"(%{{.*}}) {{.*}} : (tensor<5x3xi1>) -> tensor<?x?xi64>
# CHECK-NEXT: %[[N:.*]] = torch.aten.size.int %[[IDX]] {dim = 0 : i64} : (tensor<?x?xi64>) -> i64
# CHECK-NEXT: %[[Z:.*]] = torch.operator "aten::zeros"(%[[N]]) {{.*}} : (i64) -> tensor<?xf32>
# CHECK-NEXT: %[[S:.*]] = torch.aten.sum %[[IDX]] : (tensor<?x?xi64>) -> tensor<i64>
# CHECK-NEXT: %[[Y:.*]] = torch.aten.add.Scalar %x {{.*}} : (tensor<5x3xf32>) -> tensor<5x3xf32>
# CHECK-NEXT: func.return %[[IDX]], %[[Z]], %[[S]], %[[Y]]
