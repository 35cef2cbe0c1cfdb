// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s --check-prefix=AVX512
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' | filecheck %s --check-prefix=AVX2
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1 prepack=false}' | filecheck %s --check-prefix=UNPACKED
// A fused linear + residual add + relu is one loop.gemm call: the constant weight is packed
// at compile time into panels of 32 (AVX-512) / 16 (AVX2) columns, bias/relu/residual go
// into the GEMM epilogue; without prepacking the weight is read as B^T ([N, K]).

builtin.module {
  func.func @forward(%x: tensor<5x8xf32>, %r: tensor<5x24xf32>) -> tensor<5x24xf32> {
    %w = torch.literal dense<0.5> : tensor<24x8xf32>
    %b = torch.literal dense<0.25> : tensor<24xf32>
    %0 = fused.linear %x, %w bias(%b : tensor<24xf32>) other(%r : tensor<5x24xf32>) {post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]} : (tensor<5x8xf32>, tensor<24x8xf32>) -> tensor<5x24xf32>
    func.return %0 : tensor<5x24xf32>
  }
}

// AVX512:      loop.constant dense_resource<{{.*}}KN32n> : tensor<1x8x32xf32> -> memref<1x8x32xf32>
// AVX512:      loop.gemm @gemm_linear_0 a(%x : memref<5x8xf32>) b(%{{.*}} : memref<1x8x32xf32>) c(%[[C:.*]] : memref<5x24xf32>) bias(%{{.*}} : memref<24xf32>) other(%r : memref<5x24xf32>)
// AVX512-SAME:   spec {m = 5 : i64, n = 24 : i64, k = 8 : i64, lda = 8 : i64, ldc = 24 : i64, b_packed = true, nr = 32 : i64, unary = "relu", binary = "add", alpha = 1.000000e+00 : f64, other_strides = [24 : i64, 1 : i64], binary_first = true
// AVX512-NOT:  loop.kernel
// AVX512:      func.return %[[C]]

// AVX2:        tensor<2x8x16xf32> -> memref<2x8x16xf32>
// AVX2:        loop.gemm @gemm_linear_0
// AVX2-SAME:     b_packed = true, nr = 16 : i64, unary = "relu"

// UNPACKED:    loop.gemm @gemm_linear_0 a(%x : memref<5x8xf32>) b(%{{.*}} : memref<24x8xf32>)
// UNPACKED-SAME: b_packed = false, b_transposed = true, ldb = 8 : i64
