// RUN: ziggurat-opt %s -p 'convert-kernel-to-loop{isa=avx512 threads=1}' | filecheck %s
// The loops follow the kernel level's decisions: the same exp -> mul -> tanh chain is one
// loop kernel where kernel-fuse left it one kernel, and two, the exp realized in memory,
// where the exp is a kernel of its own whose result is realized ("read twice").  A realized
// result is stored in the order its ``layout`` gives: the same pool, channels-last and
// contiguous.

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
  func.func @pool_cl(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32> attributes {kernel.level = "fused"} {
    %p = kernel.composite ins(%x : tensor<1x8x6x6xf32>) {family = "pooling", window = 4 : i64, realize = ["read twice"], layout = ["channels_last"]} -> tensor<1x8x3x3xf32> {
    ^bb0(%x1: tensor<1x8x6x6xf32>):
      %p1 = torch.aten.max_pool2d %x1 {kernel_size = array<i64: 2, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
      kernel.yield %p1 : tensor<1x8x3x3xf32>
    }
    %a = kernel.pointwise ins(%p : tensor<1x8x3x3xf32>) {realize = ["graph output"], layout = [""]} -> tensor<1x8x3x3xf32> {
    ^bb0(%p2: tensor<1x8x3x3xf32>):
      %s = torch.aten.sigmoid %p2 : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
      %m = torch.aten.mul.Tensor %s, %p2 : (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
      kernel.yield %m : tensor<1x8x3x3xf32>
    }
    func.return %a : tensor<1x8x3x3xf32>
  }
  func.func @pool_contiguous(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32> attributes {kernel.level = "fused"} {
    %p = kernel.composite ins(%x : tensor<1x8x6x6xf32>) {family = "pooling", window = 4 : i64, realize = ["read twice"], layout = ["contiguous"]} -> tensor<1x8x3x3xf32> {
    ^bb0(%x1: tensor<1x8x6x6xf32>):
      %p1 = torch.aten.max_pool2d %x1 {kernel_size = array<i64: 2, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
      kernel.yield %p1 : tensor<1x8x3x3xf32>
    }
    %a = kernel.pointwise ins(%p : tensor<1x8x3x3xf32>) {realize = ["graph output"], layout = [""]} -> tensor<1x8x3x3xf32> {
    ^bb0(%p2: tensor<1x8x3x3xf32>):
      %s = torch.aten.sigmoid %p2 : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
      %m = torch.aten.mul.Tensor %s, %p2 : (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
      kernel.yield %m : tensor<1x8x3x3xf32>
    }
    func.return %a : tensor<1x8x3x3xf32>
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
// CHECK-LABEL: func.func @pool_cl(%x: memref<1x8x6x6xf32>)
// CHECK:         %[[P:.*]] = loop.alloc : memref<1x3x3x8xf32>
// CHECK:         loop.kernel @max_pool2d_0 ins(%x : memref<1x8x6x6xf32>) outs(%[[P]] : memref<1x3x3x8xf32>)
// CHECK:         loop.kernel @fused_sigmoid_mul_0 ins(%[[P]] : memref<1x3x3x8xf32>)
// CHECK-LABEL: func.func @pool_contiguous(%x: memref<1x8x6x6xf32>)
// CHECK:         %[[P:.*]] = loop.alloc : memref<1x8x3x3xf32>
// CHECK:         loop.kernel @max_pool2d_0 ins(%x : memref<1x8x6x6xf32>) outs(%[[P]] : memref<1x8x3x3xf32>)
// A float max is eager's step (val > max || isnan(val)) on two chains: the largest value (a tie
// keeps the running one: one vmaxps) and the last NaN read, picked after the loops.
// CHECK:         %[[M:.*]], %[[L:.*]] = loop.for %r0 = 0 to 2 step 1 iter_args
// CHECK:           %[[V:.*]] = loop.vload
// CHECK-NEXT:      %[[GT:.*]] = loop.cmp "ogt" %[[V]], %[[ACC:[^ ]*]] :
// CHECK-NEXT:      %[[MAX:.*]] = loop.select %[[GT]], %[[V]], %[[ACC]] :
// CHECK-NEXT:      %[[ISNAN:.*]] = loop.cmp "uno" %[[V]], %[[V]] :
// CHECK-NEXT:      %[[NAN:.*]] = loop.select %[[ISNAN]], %[[V]], %{{[^ ]*}} :
// CHECK-NEXT:      loop.yield %[[MAX]], %[[NAN]]
// CHECK:         %[[U:.*]] = loop.cmp "uno" %[[L]], %[[L]] :
// CHECK-NEXT:    %[[R:.*]] = loop.select %[[U]], %[[L]], %[[M]] :
// CHECK-NEXT:    loop.reduce "max" %[[R]]
