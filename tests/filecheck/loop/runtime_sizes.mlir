// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Run-time sizes at the loop level: a graph input's dynamic dim read with its range
// (loop.dim), affine size arithmetic (loop.offset) and a product of sizes (arith.muli), a
// buffer allocated with a run-time dim, a kernel taking the sizes it uses, loop.parallel/for/
// vfor with run-time upper bounds, lanes a run-time size apart (loop.vindex ... times) and an
// index checked against a run-time size (loop.check_index ... bound).

builtin.module {
  func.func @forward(%x: memref<?x19xf32>, %y: memref<?xf32>) -> memref<?x19xf32> {
    %n = loop.dim %x[0] in [1, 64] : memref<?x19xf32>
    %len = loop.offset 19 * %n
    %twice = loop.offset 2 * %n
    %square = arith.muli %n, %n : index
    %m = loop.dim %y[0] in [2, 128] equals %twice : memref<?xf32>
    %0 = loop.alloc(%n) : memref<?x19xf32>
    loop.kernel @scale_0 ins(%x : memref<?x19xf32>) outs(%0 : memref<?x19xf32>) sizes(%n, %len) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "mul"} {
    ^bb0(%a: memref<?x19xf32>, %o: memref<?x19xf32>, %rows: index, %total: index):
      loop.parallel %i = 0 to %rows, %k = 0 to 2 {
        loop.vfor %j, %lanes = 0 to %total step 16 {
          %v = loop.vload %a[%j] lanes(%lanes) : memref<?x19xf32> -> vector<16xf32>
          loop.vstore %v, %o[%j] lanes(%lanes) : vector<16xf32>, memref<?x19xf32>
          %g = loop.vindex %j step 1 times %rows : vector<16xi64>
          %c = loop.check_index %g, 0 bound(%rows) lanes(%lanes) site 1 : vector<16xi64> -> vector<16xi64>
        }
        %s = arith.constant 0.000000e+00 : f32
        %r = loop.for %t = 0 to %rows step 1 iter_args(%acc = %s) -> (f32) {
          loop.yield %acc : f32
        }
      }
    }
    func.return %0 : memref<?x19xf32>
  }
}

// CHECK:      %n = loop.dim %x[0] in [1, 64] : memref<?x19xf32>
// CHECK-NEXT: %len = loop.offset 19 * %n
// CHECK-NEXT: %twice = loop.offset 2 * %n
// CHECK-NEXT: %square = arith.muli %n, %n : index
// CHECK-NEXT: %m = loop.dim %y[0] in [2, 128] equals %twice : memref<?xf32>
// CHECK-NEXT: %0 = loop.alloc(%n) : memref<?x19xf32>
// CHECK-NEXT: loop.kernel @scale_0 ins(%x : memref<?x19xf32>) outs(%0 : memref<?x19xf32>) sizes(%n, %len) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "mul"} {
// CHECK-NEXT: ^bb0(%a: memref<?x19xf32>, %o: memref<?x19xf32>, %rows: index, %total: index):
// CHECK-NEXT:   loop.parallel %i = 0 to %rows, %k = 0 to 2 {
// CHECK-NEXT:     loop.vfor %j, %lanes = 0 to %total step 16 {
// CHECK:            %g = loop.vindex %j step 1 times %rows : vector<16xi64>
// CHECK-NEXT:       %c = loop.check_index %g, 0 bound(%rows) lanes(%lanes) site 1 : vector<16xi64> -> vector<16xi64>
// CHECK:          %r = loop.for %t = 0 to %rows step 1 iter_args(%acc = %s) -> (f32) {
