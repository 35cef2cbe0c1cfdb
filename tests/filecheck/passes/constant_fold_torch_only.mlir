// RUN: ziggurat-opt %s -p constant-fold 2>/dev/null | filecheck %s
// RUN: ziggurat-opt %s -p torch-canonicalize 2>/dev/null | filecheck %s --check-prefix=CANON
// Constant folding leaves ops with a complex, float8 or quantized result alone (only torch
// reads them; a quantized tensor has no literal form) and folds ops reading such constants
// into a native result (abs of a complex constant, a float8 -> f32 cast) with torch, as eager
// computes them.

// CHECK-LABEL: func.func @fold
// CHECK:         %[[K:.*]] = torch.literal dense<[(3.000000e+00,4.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f32>>
// CHECK:         %[[M:.*]] = torch.aten.mul.Tensor %[[K]], %[[K]] : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
// CHECK-DAG:     %[[R:.*]] = torch.literal dense<[5.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[F:.*]] = torch.literal dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK:         %[[E:.*]] = torch.aten.to.dtype %{{.*}} {dtype = f8E5M2, {{.*}}} : (tensor<2xf32>) -> tensor<2xf8E5M2>
// CHECK:         %[[Q:.*]] = torch.aten.quantize_per_tensor %{{.*}} {{.*}} -> tensor<2x!torch.quantized<quint8>>
// CHECK:         func.return %[[M]], %[[R]], %[[F]], %[[E]], %[[Q]]
// CHECK-NOT:     torch.aten.abs
func.func @fold() -> (tensor<2xcomplex<f32>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf8E5M2>, tensor<2x!torch.quantized<quint8>>) {
  %k = torch.literal dense<[(3.0, 4.0), (0.0, -1.0)]> : tensor<2xcomplex<f32>>
  %d = torch.literal dense<[1.0, 2.5]> : tensor<2xf8E4M3FN>
  %x = torch.literal dense<[1.0, 2.5]> : tensor<2xf32>
  %0 = torch.aten.mul.Tensor %k, %k : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = torch.aten.abs %k : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %2 = torch.aten.to.dtype %d {dtype = f32, non_blocking = false, copy = false} : (tensor<2xf8E4M3FN>) -> tensor<2xf32>
  %3 = torch.aten.to.dtype %x {dtype = f8E5M2, non_blocking = false, copy = false} : (tensor<2xf32>) -> tensor<2xf8E5M2>
  %4 = torch.aten.quantize_per_tensor %x {scale = 1.000000e-01 : f64, zero_point = 3 : i64, dtype = !torch.quantized<quint8>} : (tensor<2xf32>) -> tensor<2x!torch.quantized<quint8>>
  func.return %0, %1, %2, %3, %4 : tensor<2xcomplex<f32>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf8E5M2>, tensor<2x!torch.quantized<quint8>>
}

// A float8 round trip is no no-op: both casts stay.
// CANON-LABEL: func.func @float8_round_trip
// CANON:         %[[A:.*]] = torch.aten.to.dtype %x {dtype = f8E4M3FN, {{.*}}} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CANON-NEXT:    %[[B:.*]] = torch.aten.to.dtype %[[A]] {dtype = f32, {{.*}}} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
// CANON-NEXT:    func.return %[[B]]
func.func @float8_round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = torch.aten.to.dtype %x {dtype = f8E4M3FN, non_blocking = false, copy = false} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %1 = torch.aten.to.dtype %0 {dtype = f32, non_blocking = false, copy = false} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
