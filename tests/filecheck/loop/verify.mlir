// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics | filecheck %s
// The loop dialect's verifiers name what is wrong.

builtin.module {
  func.func @bad_reduce(%v: vector<16xf32>) -> f32 {
    %0 = loop.reduce "median" %v : vector<16xf32> -> f32
    func.return %0 : f32
  }
}
// CHECK: loop.reduce: unknown kind 'median'; known: add, mul, max, min, and, or

// -----

builtin.module {
  func.func @bad_cast(%v: vector<16xf32>) -> vector<16xi64> {
    %0 = loop.cast "bitcast" %v : vector<16xf32> -> vector<16xi64>
    func.return %0 : vector<16xi64>
  }
}
// CHECK: loop.cast: unknown kind 'bitcast'

// -----

builtin.module {
  func.func @bad_load(%m: memref<8xf32>, %i: index) -> vector<16xi64> {
    %0 = loop.vload %m[%i] : memref<8xf32> -> vector<16xi64>
    func.return %0 : vector<16xi64>
  }
}
// CHECK: loop.vload: buffer elements are f32, the value is vector<16xi64>

// -----

builtin.module {
  func.func @bad_kernel(%m: memref<8xf32>, %o: memref<8xf32>) {
    loop.kernel @k ins(%m : memref<8xf32>) outs(%o : memref<8xf32>) {isa = "avx2", vector_width = 8 : i64, vectorized = true} {
    ^bb0(%a: memref<8xf32>):
    }
    func.return
  }
}
// CHECK: loop.kernel @k: block arguments must match ins + outs

// -----

builtin.module {
  func.func @bad_loop(%x: f32) -> f32 {
    %0 = loop.for %i = 5 to 2 step 1 iter_args(%a = %x) -> (f32) {
      loop.yield %a : f32
    }
    func.return %0 : f32
  }
}
// CHECK: loop.for: bad bounds 5 to 2 step 1

// -----

builtin.module {
  func.func @alloc_without_its_size(%n: index) -> memref<?x4xf32> {
    %0 = loop.alloc : memref<?x4xf32>
    func.return %0 : memref<?x4xf32>
  }
}
// CHECK: loop.alloc: memref<?x4xf32> has 1 run-time dim(s), 0 size(s) given

// -----

builtin.module {
  func.func @dim_of_a_static_dim(%x: memref<3x?xf32>) -> index {
    %0 = loop.dim %x[0] in [1, 8] : memref<3x?xf32>
    func.return %0 : index
  }
}
// CHECK: loop.dim: dim 0 of memref<3x?xf32> is not a run-time dim

// -----

builtin.module {
  func.func @empty_range(%x: memref<?xf32>) -> index {
    %0 = loop.dim %x[0] in [9, 8] : memref<?xf32>
    func.return %0 : index
  }
}
// CHECK: loop.dim: bad range [9, 8]
