// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// torch.loop's verifier: the body takes the iteration number, the carried values and the captures.

func.func @wrong_args(%x: tensor<3xf32>, %go: i1) -> tensor<3xf32> {
  %trip = arith.constant 10 : i64
  %y = torch.loop %trip, %go iter_args(%x : tensor<3xf32>) -> (tensor<3xf32>) {
  ^bb0(%a: tensor<3xf32>):
    %t = arith.constant true
    torch.loop_yield %t, %a : tensor<3xf32>
  }
  func.return %y : tensor<3xf32>
}
// CHECK: torch.loop: the body takes (tensor<3xf32>); the loop gives (i64 iteration, carried, captures) = (i64, tensor<3xf32>)
