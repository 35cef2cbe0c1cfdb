// RUN: ziggurat-opt %s -p 'split-float16-gemms{amx=true}' --pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: ziggurat-opt %s -p 'split-float16-gemms{amx=false}' | filecheck %s --check-prefix=OFF
// A float32 GEMM of a float16 cast and a float16-exact weight literal becomes a bf16 GEMM over
// K' = 4K with a float32 result: A' = [hi, hi, lo, lo] (an infinite value's [x, 0, 0, 0]), each
// block its own chain from %x so that the four fuse into the concatenation's kernel, and
// B' = [b_hi, b_lo, b_hi, b_lo] made at compile time (the resource below).

// CHECK-LABEL: func.func @linear
// CHECK:         %[[B:.*]] = torch.literal dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf32>
// hi
// CHECK-NEXT:    %[[W0:.*]] = torch.aten._to_copy %x {dtype = f32, {{.*}}} : (tensor<3x2xf16>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[HI:.*]] = torch.aten._to_copy %[[W0]] {dtype = bf16, {{.*}}} : (tensor<3x2xf32>) -> tensor<3x2xbf16>
// hi, 0 where x is infinite
// CHECK-NEXT:    %[[W1:.*]] = torch.aten._to_copy %x {dtype = f32, {{.*}}}
// CHECK-NEXT:    %[[INF:.*]] = torch.aten.isinf %[[W1]] : (tensor<3x2xf32>) -> tensor<3x2xi1>
// CHECK-NEXT:    %[[W2:.*]] = torch.aten._to_copy %x {dtype = f32, {{.*}}}
// CHECK-NEXT:    %[[H2:.*]] = torch.aten._to_copy %[[W2]] {dtype = bf16, {{.*}}}
// CHECK-NEXT:    %[[HF:.*]] = torch.aten.masked_fill.Scalar %[[H2]], %[[INF]] {value = 0.000000e+00 : f64}
// lo = x - hi, NaN (x infinite) -> 0, twice
// CHECK-NEXT:    %[[W3:.*]] = torch.aten._to_copy %x {dtype = f32, {{.*}}}
// CHECK-NEXT:    %[[W4:.*]] = torch.aten._to_copy %x {dtype = f32, {{.*}}}
// CHECK-NEXT:    %[[H3:.*]] = torch.aten._to_copy %[[W4]] {dtype = bf16, {{.*}}}
// CHECK-NEXT:    %[[H3F:.*]] = torch.aten._to_copy %[[H3]] {dtype = f32, {{.*}}}
// CHECK-NEXT:    %[[D:.*]] = torch.aten.sub.Tensor %[[W3]], %[[H3F]]
// CHECK-NEXT:    %[[DZ:.*]] = torch.aten.nan_to_num %[[D]] {nan = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[LO:.*]] = torch.aten._to_copy %[[DZ]] {dtype = bf16, {{.*}}}
// CHECK:         %[[DZ2:.*]] = torch.aten.nan_to_num
// CHECK-NEXT:    %[[LO2:.*]] = torch.aten._to_copy %[[DZ2]] {dtype = bf16, {{.*}}}
// CHECK-NEXT:    %x_split = torch.aten.cat [%[[HI]], %[[HF]], %[[LO]], %[[LO2]]] {dim = -1 : i64} : ({{.*}}) -> tensor<3x8xbf16>
// CHECK-NEXT:    %w_split = torch.literal dense_resource<w_split> : tensor<8x2xbf16>
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul %x_split, %w_split bias(%[[B]] : tensor<2xf32>) {post_ops = [#fused.unary<relu>], alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : (tensor<3x8xbf16>, tensor<8x2xbf16>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten._to_copy %[[Y]] {dtype = f16, {{.*}}} : (tensor<3x2xf32>) -> tensor<3x2xf16>
// CHECK-NEXT:    func.return %[[R]]
// OFF-LABEL: func.func @linear
// OFF-NOT:     torch.aten.cat
// OFF:         fused.linear %0, %w
func.func @linear(%x: tensor<3x2xf16>) -> tensor<3x2xf16> {
  %w = torch.literal dense<[[1.0, 0.0999755859375], [0x7F800000, -2.5]]> : tensor<2x2xf32>
  %b = torch.literal dense<[0.5, -1.0]> : tensor<2xf32>
  %0 = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<3x2xf16>) -> tensor<3x2xf32>
  %1 = fused.linear %0, %w bias(%b : tensor<2xf32>) {post_ops = [#fused.unary<relu>]} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %2 = torch.aten._to_copy %1 {dtype = f16, non_blocking = false} : (tensor<3x2xf32>) -> tensor<3x2xf16>
  func.return %2 : tensor<3x2xf16>
}

// A matmul's right operand [K, N] is split the same way, its residual kept.
// CHECK-LABEL: func.func @matmul
// CHECK:         %x_split = torch.aten.cat {{.*}} -> tensor<2x3x12xbf16>
// CHECK-NEXT:    %w_split = torch.literal dense_resource<{{.*}}> : tensor<12x2xbf16>
// CHECK-NEXT:    fused.matmul %x_split, %w_split other(%r : tensor<2x3x2xf32>) {{.*}} : (tensor<2x3x12xbf16>, tensor<12x2xbf16>) -> tensor<2x3x2xf32>
func.func @matmul(%x: tensor<2x3x3xf16>, %r: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %w = torch.literal dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %0 = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<2x3x3xf16>) -> tensor<2x3x3xf32>
  %1 = fused.matmul %0, %w other(%r : tensor<2x3x2xf32>) {post_ops = [#fused.binary<add, 1.0>], alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<2x3x3xf32>, tensor<3x2xf32>) -> tensor<2x3x2xf32>
  func.return %1 : tensor<2x3x2xf32>
}

// Kept: a weight that is not float16 values (0.1 in float32), an input that is not a float16
// cast, and a matmul with alpha.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     torch.aten.cat
// CHECK:         fused.linear %{{.*}}, %w0
// CHECK-NEXT:    fused.linear %y, %w1
// CHECK-NEXT:    fused.matmul %{{.*}}, %w1 {{.*}}alpha = 2.000000e+00
// CHECK-NOT:     torch.aten.cat
func.func @kept(%x: tensor<3x2xf16>, %y: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %w0 = torch.literal dense<[[1.0, 0.1], [2.0, 3.0]]> : tensor<2x2xf32>
  %w1 = torch.literal dense<[[1.0, 0.5], [2.0, 3.0]]> : tensor<2x2xf32>
  %0 = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<3x2xf16>) -> tensor<3x2xf32>
  %1 = fused.linear %0, %w0 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %2 = fused.linear %y, %w1 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %3 = fused.matmul %0, %w1 {alpha = 2.0 : f64, beta = 1.0 : f64} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  func.return %1, %2, %3 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// The blocks of B', 8 rows of 2 bf16 values (little-endian, after the 4-byte alignment):
// hi [1, inf], [0.1001, -2.5]; lo [0, 0], [-0.000122, 0]; hi with inf -> 0 [1, 0], [0.1001, -2.5]; lo again.
// CHECK: w_split: "0x40000000803f807fcd3d20c00000000000b90000803f0000cd3d20c00000000000b90000"

// STATS: split-float16-gemms
// STATS-NEXT: float16 GEMMs split into bf16 products 2
// OFF-NOT: torch.aten.cat
