# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<3xf32>,tensor<3xf32>' | filecheck %s
# A while loop on a run-time condition imports as torch.loop: the carried tensor and int keep
# their types, the weight the body reads from outside is a capture.
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %big : int = prim::Constant[value=9223372036854775807]()
  %limit : int = prim::Constant[value=100]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::sum(%x, %none)
  %lt : Tensor = aten::lt(%s, %limit)
  %go : bool = aten::Bool(%lt)
  %y : Tensor, %n : int = prim::Loop(%big, %go, %x, %zero)
    block0(%i : int, %a : Tensor, %k : int):
      %b : Tensor = aten::mul(%a, %w)
      %k2 : int = aten::add(%k, %one)
      %s2 : Tensor = aten::sum(%b, %none)
      %lt2 : Tensor = aten::lt(%s2, %limit)
      %go2 : bool = aten::Bool(%lt2)
      -> (%go2, %b, %k2)
  return (%y, %n)

# CHECK:      %[[GO:.*]] = torch.aten.Bool.Tensor
# CHECK:      %[[ZERO:.*]] = arith.constant 0 : i64
# CHECK-NEXT: %[[TRIP:.*]] = arith.constant 9223372036854775807 : i64
# CHECK-NEXT: %[[Y:.*]], %[[N:.*]] = torch.loop %[[TRIP]], %[[GO]] iter_args(%x : tensor<3xf32>, %[[ZERO]] : i64) captures(%w : tensor<3xf32>) -> (tensor<3xf32>, i64) {
# CHECK-NEXT: ^{{.*}}(%i: i64, %a: tensor<3xf32>, %k: i64, %[[W:.*]]: tensor<3xf32>):
# CHECK-NEXT:   %[[B:.*]] = torch.aten.mul.Tensor %a, %[[W]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
# CHECK-NEXT:   %[[K2:.*]] = torch.operator "aten::add.int"(%k)
# CHECK:        torch.loop_yield %{{.*}}, %[[B]], %[[K2]] : tensor<3xf32>, i64
# CHECK-NEXT: }
# CHECK-NEXT: func.return %[[Y]], %[[N]] : tensor<3xf32>, i64
