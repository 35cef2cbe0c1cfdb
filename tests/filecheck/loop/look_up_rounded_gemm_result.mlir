// RUN: ziggurat-opt %s -p 'look-up-half-float-activations' | filecheck %s
// A bf16 GEMM that stores its bf16-rounded result as float32 (round_out: a widened GELU after
// addmm reads it) holds bf16 values only: the GELU's float32 load is rounded to bf16 (exact) and
// looked up.  The same load of a GEMM that stores float32 sums (no round_out) is computed.

builtin.module {
  func.func @forward(%c: memref<19x35xbf16>, %a: memref<19x40xbf16>, %b: memref<40x35xbf16>) -> (memref<19x35xbf16>, memref<19x35xbf16>) attributes {loop.isa = "avx512", loop.threads = 1 : i64} {
    %mm = loop.alloc : memref<19x35xf32>
    loop.gemm @gemm_rounded a(%a : memref<19x40xbf16>) b(%b : memref<40x35xbf16>) c(%mm : memref<19x35xf32>) other(%c : memref<19x35xbf16>) spec {bf16_kernel = "amx", m = 19 : i64, n = 35 : i64, k = 40 : i64, lda = 40 : i64, ldc = 35 : i64, b_packed = false, b_transposed = false, ldb = 35 : i64, binary = "add", alpha = 5.000000e-01 : f64, other_strides = [35 : i64, 1 : i64], other_bf16 = true, out_bf16 = false, round_out = true}
    %out = loop.alloc : memref<19x35xbf16>
    loop.kernel @gelu_rounded ins(%mm : memref<19x35xf32>) outs(%out : memref<19x35xbf16>) {isa = "avx512", vector_width = 16 : i64, vectorized = true} {
    ^bb0(%mm_1: memref<19x35xf32>, %o: memref<19x35xbf16>):
      loop.vfor %i0, %lanes = 0 to 665 step 16 {
        %0 = loop.vload %mm_1[%i0] lanes(%lanes) : memref<19x35xf32> -> vector<16xf32>
        %1 = loop.unary "gelu_erf"(%0) : vector<16xf32> -> vector<16xf32>
        %2 = loop.cast "truncf" %1 : vector<16xf32> -> vector<16xbf16>
        loop.vstore %2, %o[%i0] lanes(%lanes) : vector<16xbf16>, memref<19x35xbf16>
      }
    }
    %sums = loop.alloc : memref<19x35xf32>
    loop.gemm @gemm_sums a(%a : memref<19x40xbf16>) b(%b : memref<40x35xbf16>) c(%sums : memref<19x35xf32>) spec {bf16_kernel = "amx", m = 19 : i64, n = 35 : i64, k = 40 : i64, lda = 40 : i64, ldc = 35 : i64, b_packed = false, b_transposed = false, ldb = 35 : i64, out_bf16 = false}
    %out2 = loop.alloc : memref<19x35xbf16>
    loop.kernel @gelu_sums ins(%sums : memref<19x35xf32>) outs(%out2 : memref<19x35xbf16>) {isa = "avx512", vector_width = 16 : i64, vectorized = true} {
    ^bb0(%s_1: memref<19x35xf32>, %o2: memref<19x35xbf16>):
      loop.vfor %i0, %lanes = 0 to 665 step 16 {
        %0 = loop.vload %s_1[%i0] lanes(%lanes) : memref<19x35xf32> -> vector<16xf32>
        %1 = loop.unary "gelu_erf"(%0) : vector<16xf32> -> vector<16xf32>
        %2 = loop.cast "truncf" %1 : vector<16xf32> -> vector<16xbf16>
        loop.vstore %2, %o2[%i0] lanes(%lanes) : vector<16xbf16>, memref<19x35xbf16>
      }
    }
    func.return %out, %out2 : memref<19x35xbf16>, memref<19x35xbf16>
  }
}

// CHECK:       loop.kernel @gelu_rounded
// CHECK:         %[[X:.*]] = loop.vload {{.*}} -> vector<16xf32>
// CHECK-NEXT:    %[[H:.*]] = loop.cast "truncf" %[[X]] : vector<16xf32> -> vector<16xbf16>
// CHECK-NEXT:    %[[G:.*]] = loop.lookup "gelu_erf"(%[[H]]) : vector<16xbf16> -> vector<16xbf16>
// CHECK-NEXT:    loop.vstore %[[G]]
// CHECK:       loop.kernel @gelu_sums
// CHECK-NOT:     loop.lookup
// CHECK:         loop.unary "gelu_erf"
// CHECK-NEXT:    loop.cast "truncf"
