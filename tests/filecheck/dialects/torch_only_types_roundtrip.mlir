// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Element types only torch computes print and parse back: complex<f16/f32/f64>, the float8
// types, and the torch dialect's !torch.quantized<...>; a complex constant prints inline.

func.func @types(%c: tensor<2xcomplex<f32>>, %h: tensor<2xcomplex<f16>>, %d: tensor<2xcomplex<f64>>,
                 %e4: tensor<2xf8E4M3FN>, %e5: tensor<2xf8E5M2>, %e4z: tensor<2xf8E4M3FNUZ>,
                 %e5z: tensor<2xf8E5M2FNUZ>, %e8: tensor<2xf8E8M0FNU>,
                 %q: tensor<2x!torch.quantized<quint8>>, %qs: tensor<2x!torch.quantized<qint8>>,
                 %q32: tensor<2x!torch.quantized<qint32>>, %q4: tensor<2x!torch.quantized<quint4x2>>,
                 %q2: tensor<2x!torch.quantized<quint2x4>>) -> tensor<2xcomplex<f32>> {
  %k = torch.literal dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %0 = torch.aten.mul.Tensor %c, %k : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = torch.aten.dequantize.self %q : (tensor<2x!torch.quantized<quint8>>) -> tensor<2xf32>
  func.return %0 : tensor<2xcomplex<f32>>
}

// CHECK:      func.func @types(%c: tensor<2xcomplex<f32>>, %h: tensor<2xcomplex<f16>>, %d: tensor<2xcomplex<f64>>, %e4: tensor<2xf8E4M3FN>, %e5: tensor<2xf8E5M2>, %e4z: tensor<2xf8E4M3FNUZ>, %e5z: tensor<2xf8E5M2FNUZ>, %e8: tensor<2xf8E8M0FNU>, %q: tensor<2x!torch.quantized<quint8>>, %qs: tensor<2x!torch.quantized<qint8>>, %q32: tensor<2x!torch.quantized<qint32>>, %q4: tensor<2x!torch.quantized<quint4x2>>, %q2: tensor<2x!torch.quantized<quint2x4>>) -> tensor<2xcomplex<f32>>
// CHECK-NEXT:   %k = torch.literal dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,-4.000000e+00)]> : tensor<2xcomplex<f32>>
// CHECK-NEXT:   %0 = torch.aten.mul.Tensor %c, %k : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
// CHECK-NEXT:   %1 = torch.aten.dequantize.self %q : (tensor<2x!torch.quantized<quint8>>) -> tensor<2xf32>
