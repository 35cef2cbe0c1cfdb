// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// torch.loop's verifier: the body's arguments and its torch.loop_yield must fit the loop.


func.func @wrong_yield(%x: tensor<3xf32>, %go: i1) -> tensor<3xf32> {
  %trip = arith.constant 10 : i64
  %y = torch.loop %trip, %go iter_args(%x : tensor<3xf32>) -> (tensor<3xf32>) {
  ^bb0(%i: i64, %a: tensor<3xf32>):
    %t = arith.constant true
    torch.loop_yield %t, %i : i64
  }
  func.return %y : tensor<3xf32>
}
// CHECK: torch.loop: torch.loop_yield gives (i64), the loop carries (tensor<3xf32>)

