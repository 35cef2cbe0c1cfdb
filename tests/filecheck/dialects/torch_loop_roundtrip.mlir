// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// torch.loop prints and parses back; torch_loop_verify.mlir checks its verifier.

func.func @loop(%x: tensor<3xf32>, %w: tensor<3xf32>, %go: i1) -> (tensor<3xf32>, i64) {
  %zero = arith.constant 0 : i64
  %trip = arith.constant 10 : i64
  %y, %n = torch.loop %trip, %go iter_args(%x : tensor<3xf32>, %zero : i64) captures(%w : tensor<3xf32>) -> (tensor<3xf32>, i64) {
  ^bb0(%i: i64, %a: tensor<3xf32>, %k: i64, %v: tensor<3xf32>):
    %b = torch.aten.mul.Tensor %a, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %t = arith.constant true
    torch.loop_yield %t, %b, %k : tensor<3xf32>, i64
  }
  func.return %y, %n : tensor<3xf32>, i64
}

// CHECK:      %y, %n = torch.loop %trip, %go iter_args(%x : tensor<3xf32>, %zero : i64) captures(%w : tensor<3xf32>) -> (tensor<3xf32>, i64) {
// CHECK-NEXT: ^bb0(%i: i64, %a: tensor<3xf32>, %k: i64, %v: tensor<3xf32>):
// CHECK-NEXT:   %b = torch.aten.mul.Tensor %a, %v
// CHECK-NEXT:   %t = arith.constant true
// CHECK-NEXT:   torch.loop_yield %t, %b, %k : tensor<3xf32>, i64
// CHECK-NEXT: }
