// RUN: ziggurat-opt %s -p 'convert-kernel-to-loop{isa=avx512 threads=1}' | filecheck %s
// The loops follow the kernel level's decisions: the same exp -> mul -> tanh chain is one
// loop kernel where kernel-fuse left it one kernel, and two, the exp realized in memory,
// where the exp is a kernel of its own whose result is realized ("read twice").

builtin.module {
  func.func @fused(%x: tensor<64xf32>) -> tensor<64xf32> attributes {kernel.level = "fused"} {
    %0 = kernel.pointwise ins(%x : tensor<64xf32>) {realize = ["graph output"]} -> tensor<64xf32> {
    ^bb0(%x1: tensor<64xf32>):
      %e = torch.aten.exp %x1 : (tensor<64xf32>) -> tensor<64xf32>
      %m = torch.aten.mul.Tensor %e, %x1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      %t = torch.aten.tanh %m : (tensor<64xf32>) -> tensor<64xf32>
      kernel.yield %t : tensor<64xf32>
    }
    func.return %0 : tensor<64xf32>
  }
  func.func @split(%x: tensor<64xf32>) -> tensor<64xf32> attributes {kernel.level = "fused"} {
    %0 = kernel.pointwise ins(%x : tensor<64xf32>) {realize = ["read twice"]} -> tensor<64xf32> {
    ^bb0(%x1: tensor<64xf32>):
      %e = torch.aten.exp %x1 : (tensor<64xf32>) -> tensor<64xf32>
      kernel.yield %e : tensor<64xf32>
    }
    %1 = kernel.pointwise ins(%0, %x : tensor<64xf32>, tensor<64xf32>) {realize = ["graph output"]} -> tensor<64xf32> {
    ^bb0(%e1: tensor<64xf32>, %x2: tensor<64xf32>):
      %m = torch.aten.mul.Tensor %e1, %x2 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      %t = torch.aten.tanh %m : (tensor<64xf32>) -> tensor<64xf32>
      kernel.yield %t : tensor<64xf32>
    }
    func.return %1 : tensor<64xf32>
  }
}

// CHECK-LABEL: func.func @fused(%x: memref<64xf32>) -> memref<64xf32>
// CHECK:         loop.kernel @fused_exp_mul_tanh_0 ins(%x : memref<64xf32>)
// CHECK-NOT:     loop.kernel
// CHECK:         func.return
// CHECK-LABEL: func.func @split(%x: memref<64xf32>) -> memref<64xf32>
// CHECK:         loop.kernel @exp_0 ins(%x : memref<64xf32>)
// CHECK:         loop.kernel @fused_mul_tanh_{{[0-9]+}} ins(%{{.*}}, %x : memref<64xf32>, memref<64xf32>)
// CHECK:         func.return
