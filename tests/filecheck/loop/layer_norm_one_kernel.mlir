// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' | filecheck %s
// layer_norm = mean, then the variance from the mean (two passes), then the output: one
// kernel, AVX2 vectors of 8 lanes, the 37-wide rows ending in a masked tail.

builtin.module {
  func.func @forward(%x: tensor<4x37xf32>, %w: tensor<37xf32>, %b: tensor<37xf32>) -> tensor<4x37xf32> {
    %0 = torch.aten.layer_norm %x weight(%w : tensor<37xf32>) bias(%b : tensor<37xf32>) {normalized_shape = array<i64: 37>, eps = 1.000000e-05 : f64, cudnn_enable = false} : (tensor<4x37xf32>) -> tensor<4x37xf32>
    func.return %0 : tensor<4x37xf32>
  }
}

// CHECK:      loop.kernel @layer_norm_0 ins(%x, %w, %b : memref<4x37xf32>, memref<37xf32>, memref<37xf32>)
// CHECK-SAME:   vector_width = 8 : i64, vectorized = true
// CHECK:        loop.vfor %r0, %lanes = 0 to 37 step 8 iter_args
// CHECK:        loop.reduce "add"
// CHECK:        loop.vfor %{{.*}}, %{{.*}} = 0 to 37 step 8 iter_args
// CHECK:          arith.subf
// CHECK:          arith.mulf
// CHECK:        loop.reduce "add"
// CHECK:        loop.unary "rsqrt"
// CHECK:        loop.vfor %i1, %{{.*}} = 0 to 37 step 8 {
// CHECK-NOT:  loop.kernel
