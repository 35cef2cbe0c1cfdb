# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<4x8xf32>,tensor<16x8xf32>' | filecheck %s
# TorchScript IR text imports with the given input types; constants fold into properties.
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::linear(%x, %w, %none)
  %z : Tensor = aten::relu(%y)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%z, %z, %one)
  return (%s)

# CHECK:      func.func @forward(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32>
# CHECK-NEXT:   %[[Y:.*]] = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
# CHECK-NEXT:   %[[Z:.*]] = torch.aten.relu %[[Y]] : (tensor<4x16xf32>) -> tensor<4x16xf32>
# CHECK-NEXT:   %[[S:.*]] = torch.aten.add.Tensor %[[Z]], %[[Z]] {alpha = 1 : i64}
# CHECK-NEXT:   func.return %[[S]] : tensor<4x16xf32>
