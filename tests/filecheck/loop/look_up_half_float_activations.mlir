// RUN: ziggurat-opt %s -p 'widen-half-floats,convert-torch-to-loop{isa=avx512 threads=1},look-up-half-float-activations' | filecheck %s
// RUN: ziggurat-opt %s -p 'widen-half-floats,convert-torch-to-loop{isa=avx2 threads=1},look-up-half-float-activations' | filecheck %s --check-prefix=AVX2
// A widened bf16 or float16 activation (extf, the float32 function, truncf) becomes one
// loop.lookup of the 16-bit lanes.  Not rewritten: a function whose float32 result is not
// rounded back (tanh of a widened float16, kept in float32), a cheap one (relu), one with
// parameters (elu), and an avx2 kernel's 8 lanes.

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

// AVX2-NOT:      loop.lookup
// AVX2:          loop.unary "gelu_erf"
// AVX2-NOT:      loop.lookup
// AVX2:          loop.unary "silu"
// AVX2-NOT:      loop.lookup
