// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// Ops that compare keep eager's forms, so a NaN falls through every ordered compare and
// stays NaN, and they stay vectorized (a blend on the compares, no scalar loop):
// hardshrink is -l <= x <= l ? 0 : x; softshrink is x > l ? x - l : (x < -l ? x + l : x * 0).
// logcumsumexp steps as eager's _log_add_exp_helper in its float64 accumulator:
// log1p(exp(min - max)) + max, or x where x and the running value are the same infinity.
// A 0-d softmax is exp(x - x): NaN for an infinite or NaN element, as eager.

builtin.module {
  func.func @forward(%x: tensor<4x19xf32>, %s: tensor<f32>) -> (tensor<4x19xf32>, tensor<4x19xf32>, tensor<4x19xf32>, tensor<f32>) {
    %0 = torch.aten.hardshrink %x {lambd = 5.000000e-01 : f64} : (tensor<4x19xf32>) -> tensor<4x19xf32>
    %1 = torch.aten.softshrink %x {lambd = 5.000000e-01 : f64} : (tensor<4x19xf32>) -> tensor<4x19xf32>
    %2 = torch.operator "aten::logcumsumexp"(%x) {args = {dim = 1 : i64}, operand_names = ["self"], schema = "aten::logcumsumexp(Tensor self, int dim) -> Tensor"} : (tensor<4x19xf32>) -> tensor<4x19xf32>
    %3 = torch.aten.softmax.int %s {dim = 0 : i64} : (tensor<f32>) -> tensor<f32>
    func.return %0, %1, %2, %3 : tensor<4x19xf32>, tensor<4x19xf32>, tensor<4x19xf32>, tensor<f32>
  }
}

// CHECK:       loop.kernel @logcumsumexp_0
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xfff0000000000000 : f64
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7ff0000000000000 : f64
// CHECK:         loop.for %i1 = 0 to 19 step 1 iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f64) {
// CHECK:           %[[X:.*]] = arith.extf {{.*}} : f32 to f64
// CHECK-NEXT:      %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[X]] : f64
// CHECK-NEXT:      %[[MIN:.*]] = arith.minimumf %[[ACC]], %[[X]] : f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[MIN]], %[[MAX]] : f64
// CHECK-NEXT:      %[[E:.*]] = loop.unary "exp"(%[[D]]) : f64 -> f64
// CHECK-NEXT:      %[[L:.*]] = loop.unary "log1p"(%[[E]]) : f64 -> f64
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[L]], %[[MAX]] : f64
// CHECK-NEXT:      %[[SAME:.*]] = arith.cmpf oeq, %[[ACC]], %[[X]] : f64
// CHECK-NEXT:      %[[ABS:.*]] = loop.unary "abs"(%[[X]]) : f64 -> f64
// CHECK-NEXT:      %[[INFINITE:.*]] = arith.cmpf oeq, %[[ABS]], %[[INF]] : f64
// CHECK-NEXT:      %[[BOTH:.*]] = arith.andi %[[SAME]], %[[INFINITE]] : i1
// CHECK-NEXT:      %[[NEW:.*]] = arith.select %[[BOTH]], %[[X]], %[[SUM]] : f64
// CHECK-NEXT:      %[[OUT:.*]] = arith.truncf %[[NEW]] : f64 to f32
// CHECK-NEXT:      loop.store %[[OUT]]
// CHECK-NEXT:      loop.yield %[[NEW]] : f64

// CHECK:       loop.kernel @hardshrink_0 {{.*}} {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "hardshrink"}
// CHECK:         loop.vfor %i0, %lanes = 0 to 76 step 16 {
// CHECK-NEXT:      %[[V:.*]] = loop.vload
// CHECK-NEXT:      %[[GE:.*]] = loop.cmp "oge" %[[V]], %{{.*}} : vector<16xf32> -> vector<16xi1>
// CHECK-NEXT:      %[[LE:.*]] = loop.cmp "ole" %[[V]], %{{.*}} : vector<16xf32> -> vector<16xi1>
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[GE]], %[[LE]] : vector<16xi1>
// CHECK-NEXT:      %[[R:.*]] = loop.select %[[IN]], %{{.*}}, %[[V]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT:      loop.vstore %[[R]]

// CHECK:       loop.kernel @softshrink_0 {{.*}} {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "softshrink"}
// CHECK:         %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZERO:.*]] = vector.broadcast %[[C0]] : f32 to vector<16xf32>
// CHECK-NEXT:    loop.vfor %i0, %lanes = 0 to 76 step 16 {
// CHECK-NEXT:      %[[V:.*]] = loop.vload
// CHECK-NEXT:      %[[ABOVE:.*]] = loop.cmp "ogt" %[[V]], %{{.*}}
// CHECK-NEXT:      %[[DOWN:.*]] = arith.subf %[[V]], %{{.*}}
// CHECK-NEXT:      %[[BELOW:.*]] = loop.cmp "olt" %[[V]], %{{.*}}
// CHECK-NEXT:      %[[UP:.*]] = arith.addf %[[V]], %{{.*}}
// CHECK-NEXT:      %[[KEEP:.*]] = arith.mulf %[[V]], %[[ZERO]] : vector<16xf32>
// CHECK-NEXT:      %[[LOW:.*]] = loop.select %[[BELOW]], %[[UP]], %[[KEEP]]
// CHECK-NEXT:      %[[R:.*]] = loop.select %[[ABOVE]], %[[DOWN]], %[[LOW]]
// CHECK-NEXT:      loop.vstore %[[R]]

// CHECK:       loop.kernel @softmax_0
// CHECK:         %[[S:.*]] = loop.load
// CHECK-NEXT:    %[[Z:.*]] = arith.subf %[[S]], %[[S]] : f32
// CHECK-NEXT:    %[[P:.*]] = loop.unary "exp"(%[[Z]]) : f32 -> f32
// CHECK-NEXT:    loop.store %[[P]]
