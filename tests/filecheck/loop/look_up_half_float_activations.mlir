// RUN: ziggurat-opt %s -p 'widen-half-floats,convert-torch-to-loop{isa=avx512 threads=1},look-up-half-float-activations' | filecheck %s
// RUN: ziggurat-opt %s -p 'widen-half-floats,convert-torch-to-loop{isa=avx2 threads=1},look-up-half-float-activations' | filecheck %s --check-prefix=AVX2
// RUN: ziggurat-opt %s -p 'widen-half-floats,convert-torch-to-loop{isa=scalar threads=1},look-up-half-float-activations' | filecheck %s --check-prefix=SCALAR
// A widened bf16 or float16 activation (extf, the float32 function, truncf) becomes one
// loop.lookup of the 16-bit lanes: 16 in an avx512 kernel, 8 in an avx2 one, one scalar in a
// scalar one (arith.extf / arith.truncf).  Not rewritten: a function whose float32 result is
// not rounded back (tanh of a widened float16, kept in float32), a cheap one (relu), and one
// with parameters (elu).

func.func @forward(%x: tensor<4x40xbf16>, %h: tensor<4x40xf16>) -> (tensor<4x40xbf16>, tensor<4x40xf16>, tensor<4x40xf32>, tensor<4x40xbf16>, tensor<4x40xbf16>) {
  %g = torch.aten.gelu %x {approximate = "none"} : (tensor<4x40xbf16>) -> tensor<4x40xbf16>
  %s = torch.aten.silu %h : (tensor<4x40xf16>) -> tensor<4x40xf16>
  %w = torch.aten._to_copy %h {dtype = f32, non_blocking = false} : (tensor<4x40xf16>) -> tensor<4x40xf32>
  %t = torch.aten.tanh %w : (tensor<4x40xf32>) -> tensor<4x40xf32>
  %r = torch.aten.relu %x : (tensor<4x40xbf16>) -> tensor<4x40xbf16>
  %e = torch.aten.elu %x {alpha = 0.5 : f64, scale = 1.0 : f64, input_scale = 1.0 : f64} : (tensor<4x40xbf16>) -> tensor<4x40xbf16>
  func.return %g, %s, %t, %r, %e : tensor<4x40xbf16>, tensor<4x40xf16>, tensor<4x40xf32>, tensor<4x40xbf16>, tensor<4x40xbf16>
}

// CHECK-LABEL: func.func @forward
// CHECK:         loop.kernel @{{.*}}gelu
// CHECK:           %[[XB:.*]] = loop.vload {{.*}} -> vector<16xbf16>
// CHECK-NEXT:      %[[GB:.*]] = loop.lookup "gelu_erf"(%[[XB]]) : vector<16xbf16> -> vector<16xbf16>
// CHECK-NEXT:      loop.vstore %[[GB]]
// CHECK:         loop.kernel @{{.*}}silu
// CHECK:           %[[XH:.*]] = loop.vload {{.*}} -> vector<16xf16>
// CHECK-NEXT:      %[[SH:.*]] = loop.lookup "silu"(%[[XH]]) : vector<16xf16> -> vector<16xf16>
// CHECK-NEXT:      loop.vstore %[[SH]]
// CHECK-NOT:     loop.lookup
// CHECK:           loop.unary "tanh"
// CHECK-NOT:     loop.lookup
// CHECK:           loop.unary "relu"
// CHECK-NOT:     loop.lookup
// CHECK:           loop.unary "elu"
// CHECK-NOT:     loop.lookup
// CHECK:         func.return

// AVX2:          loop.kernel @{{.*}}gelu
// AVX2:            %[[XB:.*]] = loop.vload {{.*}} -> vector<8xbf16>
// AVX2-NEXT:       %[[GB:.*]] = loop.lookup "gelu_erf"(%[[XB]]) : vector<8xbf16> -> vector<8xbf16>
// AVX2-NEXT:       loop.vstore %[[GB]]
// AVX2:          loop.kernel @{{.*}}silu
// AVX2:            %[[XH:.*]] = loop.vload {{.*}} -> vector<8xf16>
// AVX2-NEXT:       %[[SH:.*]] = loop.lookup "silu"(%[[XH]]) : vector<8xf16> -> vector<8xf16>
// AVX2-NEXT:       loop.vstore %[[SH]]
// AVX2-NOT:      loop.lookup
// AVX2:            loop.unary "tanh"
// AVX2-NOT:      loop.lookup
// AVX2:            loop.unary "relu"
// AVX2-NOT:      loop.lookup
// AVX2:            loop.unary "elu"
// AVX2-NOT:      loop.lookup
// AVX2:          func.return

// SCALAR:        loop.kernel @{{.*}}gelu
// SCALAR:          %[[XB:.*]] = loop.load {{.*}} -> bf16
// SCALAR-NEXT:     %[[GB:.*]] = loop.lookup "gelu_erf"(%[[XB]]) : bf16 -> bf16
// SCALAR-NEXT:     loop.store %[[GB]]
// SCALAR:        loop.kernel @{{.*}}silu
// SCALAR:          %[[XH:.*]] = loop.load {{.*}} -> f16
// SCALAR-NEXT:     %[[SH:.*]] = loop.lookup "silu"(%[[XH]]) : f16 -> f16
// SCALAR-NEXT:     loop.store %[[SH]]
// SCALAR-NOT:    loop.lookup
// SCALAR:          loop.unary "tanh"
// SCALAR-NOT:    loop.lookup
// SCALAR:          loop.unary "relu"
// SCALAR-NOT:    loop.lookup
// SCALAR:          loop.unary "elu"
// SCALAR-NOT:    loop.lookup
// SCALAR:        func.return
