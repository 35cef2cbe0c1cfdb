// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Every loop-dialect op prints in its custom form and parses back.

builtin.module {
  func.func @forward(%x: memref<4x19xf32>, %ids: memref<4xi64>) -> memref<4x19xf32> {
    %w = loop.constant dense<1.5> : tensor<19xf32> -> memref<19xf32>
    %0 = loop.alloc offset 128 : memref<4x19xf32>
    loop.kernel @demo_0 ins(%x, %w, %ids : memref<4x19xf32>, memref<19xf32>, memref<4xi64>) outs(%0 : memref<4x19xf32>) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "demo"} {
    ^bb0(%a: memref<4x19xf32>, %b: memref<19xf32>, %c: memref<4xi64>, %o: memref<4x19xf32>):
      %z = arith.constant 0.000000e+00 : f32
      %zv = vector.broadcast %z : f32 to vector<16xf32>
      loop.parallel %i = 0 to 4 {
        %s = loop.vfor %j, %n = 0 to 19 step 16 iter_args(%acc = %zv) -> (vector<16xf32>) {
          %off = loop.offset 19 * %i + %j + 0
          %v = loop.vload %a[%off] lanes(%n) : memref<4x19xf32> -> vector<16xf32>
          %m = loop.cmp "olt" %v, %zv : vector<16xf32> -> vector<16xi1>
          %u = loop.unary "leaky_relu"(%v) params {negative_slope = 1.000000e-01 : f64} : vector<16xf32> -> vector<16xf32>
          %q = loop.select %m, %u, %v : vector<16xi1>, vector<16xf32>
          %g = loop.vindex %j step 2 : vector<16xi64>
          %k = loop.check_index %g, 19 lanes(%n) site 1 : vector<16xi64> -> vector<16xi64>
          %h = loop.vgather %b[%k] lanes(%n) mask(%m : vector<16xi1>) : memref<19xf32>, vector<16xi64> -> vector<16xf32>
          %t = loop.cast "fptosi" %h : vector<16xf32> -> vector<16xi64>
          loop.vstore %q, %o[%off] lanes(%n) : vector<16xf32>, memref<4x19xf32>
          %acc2 = arith.addf %acc, %q : vector<16xf32>
          loop.yield %acc2 : vector<16xf32>
        }
        %r = loop.reduce "add" %s : vector<16xf32> -> f32
        %id = loop.load %c[%i] : memref<4xi64> -> i64
        %row = loop.check_index %id, 4 site 2 : i64 -> index
        %nz = arith.constant true
        loop.assert %nz site 3 : i1
        %f = loop.for %t = 0 to 3 step 1 iter_args(%p = %r) -> (f32) {
          %p2 = arith.mulf %p, %r : f32
          loop.yield %p2 : f32
        }
        loop.store %f, %o[%row] : f32, memref<4x19xf32>
      }
    }
    loop.gemm @gemm_0 a(%x : memref<4x19xf32>) b(%x : memref<4x19xf32>) c(%0 : memref<4x19xf32>) bias(%w : memref<19xf32>) spec {m = 4 : i64, n = 4 : i64, k = 19 : i64}
    %t = loop.to_tensor %0 : memref<4x19xf32> to tensor<4x19xf32>
    %b2 = loop.to_buffer %t offset 0 : tensor<4x19xf32> to memref<4x19xf32>
    func.return %b2 : memref<4x19xf32>
  }
}

// CHECK:      %w = loop.constant dense<1.500000e+00> : tensor<19xf32> -> memref<19xf32>
// CHECK-NEXT: %0 = loop.alloc offset 128 : memref<4x19xf32>
// CHECK-NEXT: loop.kernel @demo_0 ins(%x, %w, %ids : memref<4x19xf32>, memref<19xf32>, memref<4xi64>) outs(%0 : memref<4x19xf32>) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "demo"} {
// CHECK:        loop.parallel %i = 0 to 4 {
// CHECK-NEXT:     %s = loop.vfor %j, %n = 0 to 19 step 16 iter_args(%acc = %zv) -> (vector<16xf32>) {
// CHECK-NEXT:       %off = loop.offset 19 * %i + %j
// CHECK-NEXT:       %v = loop.vload %a[%off] lanes(%n) : memref<4x19xf32> -> vector<16xf32>
// CHECK-NEXT:       %m = loop.cmp "olt" %v, %zv : vector<16xf32> -> vector<16xi1>
// CHECK-NEXT:       %u = loop.unary "leaky_relu"(%v) params {negative_slope = 1.000000e-01 : f64} : vector<16xf32> -> vector<16xf32>
// CHECK-NEXT:       %q = loop.select %m, %u, %v : vector<16xi1>, vector<16xf32>
// CHECK-NEXT:       %g = loop.vindex %j step 2 : vector<16xi64>
// CHECK-NEXT:       %k = loop.check_index %g, 19 lanes(%n) site 1 : vector<16xi64> -> vector<16xi64>
// CHECK-NEXT:       %h = loop.vgather %b[%k] lanes(%n) mask(%m : vector<16xi1>) : memref<19xf32>, vector<16xi64> -> vector<16xf32>
// CHECK-NEXT:       %t = loop.cast "fptosi" %h : vector<16xf32> -> vector<16xi64>
// CHECK-NEXT:       loop.vstore %q, %o[%off] lanes(%n) : vector<16xf32>, memref<4x19xf32>
// CHECK:            loop.yield %acc2 : vector<16xf32>
// CHECK:          %r = loop.reduce "add" %s : vector<16xf32> -> f32
// CHECK:          %row = loop.check_index %id, 4 site 2 : i64 -> index
// CHECK:          loop.assert %nz site 3 : i1
        %nz = arith.constant true
        loop.assert %nz site 3 : i1
// CHECK-NEXT:     %f = loop.for %t_1 = 0 to 3 step 1 iter_args(%p = %r) -> (f32) {
// CHECK:        loop.gemm @gemm_0 a(%x : memref<4x19xf32>) b(%x : memref<4x19xf32>) c(%0 : memref<4x19xf32>) bias(%w : memref<19xf32>) spec {m = 4 : i64, n = 4 : i64, k = 19 : i64}
// CHECK-NEXT:   %t = loop.to_tensor %0 : memref<4x19xf32> to tensor<4x19xf32>
// CHECK-NEXT:   %b2 = loop.to_buffer %t offset 0 : tensor<4x19xf32> to memref<4x19xf32>
