// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// Integer division never hands x86's idiv a divisor it traps on: 0 (reported by a run-time
// check) and -1 (INT_MIN // -1 raised SIGFPE) divide by 1, and -1 negates instead.
// The trunc quotient steps the floor quotient up when the remainder is nonzero and the
// operands' signs differ (it compared the floor remainder's sign with the divisor's, which
// never differ, so trunc mode was floor mode).
// A float -> int cast is defined everywhere: out of range (NaN, inf, 1e19) selects the
// integer minimum rather than LLVM's poison.

builtin.module {
  func.func @forward(%a: tensor<5xi32>, %b: tensor<5xi32>, %x: tensor<5xf32>) -> (tensor<5xi32>, tensor<5xi64>) {
    %0 = torch.aten.div.Tensor_mode %a, %b {rounding_mode = "trunc"} : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %1 = torch.aten.to.dtype %x {dtype = i64, non_blocking = false, copy = false} : (tensor<5xf32>) -> tensor<5xi64>
    func.return %0, %1 : tensor<5xi32>, tensor<5xi64>
  }
}

// CHECK:       loop.kernel @div_0
// CHECK-DAG:     %[[ZERO:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK-DAG:     %[[ONE:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK-DAG:     %[[M1:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK:         %[[A:.*]] = loop.vload %a_1
// CHECK:         %[[B:.*]] = loop.vload %b_1
// CHECK:         %[[ISZ:.*]] = loop.cmp "eq" %[[B]], %[[ZERO]]
// CHECK-NEXT:    %[[ISM1:.*]] = loop.cmp "eq" %[[B]], %[[M1]]
// CHECK-NEXT:    %[[TRAP:.*]] = arith.ori %[[ISZ]], %[[ISM1]]
// CHECK-NEXT:    %[[SAFE:.*]] = loop.select %[[TRAP]], %[[ONE]], %[[B]]
// CHECK-NEXT:    %[[Q:.*]] = arith.floordivsi %[[A]], %[[SAFE]]
// CHECK-NEXT:    %[[NEG:.*]] = arith.subi %[[ZERO]], %[[A]]
// CHECK-NEXT:    %[[FQ:.*]] = loop.select %[[ISM1]], %[[NEG]], %[[Q]]
// CHECK:         %[[ANEG:.*]] = loop.cmp "slt" %[[A]], %[[ZERO]]
// CHECK-NEXT:    %[[BNEG:.*]] = loop.cmp "slt" %[[B]], %[[ZERO]]
// CHECK-NEXT:    %[[DIFF:.*]] = loop.cmp "ne" %[[ANEG]], %[[BNEG]]
// CHECK:         loop.vstore

// CHECK:       loop.kernel @to_0
// CHECK:         %[[X:.*]] = loop.vload %x_1
// CHECK-NEXT:    %[[GE:.*]] = loop.cmp "oge" %[[X]], %{{.*}}
// CHECK-NEXT:    %[[LT:.*]] = loop.cmp "olt" %[[X]], %{{.*}}
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK-NEXT:    %[[RAW:.*]] = loop.cast "fptosi" %[[X]] : vector<16xf32> -> vector<16xi64>
// CHECK-NEXT:    %{{.*}} = loop.select %[[OK]], %[[RAW]], %{{.*}}
