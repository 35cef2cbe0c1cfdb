# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<4x4xf32>,tensor<3xcomplex<f64>>' 2>/dev/null | filecheck %s
# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<4x4xf32>,tensor<3xcomplex<f64>>' 2>/dev/null | ziggurat-opt 2>/dev/null | filecheck %s
# Complex, quantized and float8 tensors import as typed values (complex<f32>,
# !torch.quantized<quint8>, f8E4M3FN), ScalarType codes 13 (quint8) and 24 (float8_e4m3fn)
# decode to those types, a complex input and output keep theirs, and the printed IR parses back.
graph(%x : Tensor, %z : Tensor):
  %none : NoneType = prim::Constant()
  %m1 : int = prim::Constant[value=-1]()
  %f : Tensor = aten::fft_rfft(%x, %none, %m1, %none)
  %a : Tensor = aten::abs(%f)
  %s : float = prim::Constant[value=0.1]()
  %zp : int = prim::Constant[value=3]()
  %qu8 : int = prim::Constant[value=13]()
  %q : Tensor = aten::quantize_per_tensor(%x, %s, %zp, %qu8)
  %dq : Tensor = aten::dequantize(%q)
  %f8 : int = prim::Constant[value=24]()
  %false : bool = prim::Constant[value=0]()
  %e : Tensor = aten::to(%x, %f8, %false, %false, %none)
  %r : Tensor = aten::view_as_real(%z)
  return (%a, %dq, %e, %r, %z)

# CHECK:      func.func @forward(%x: tensor<4x4xf32>, %z: tensor<3xcomplex<f64>>) -> (tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x4xf8E4M3FN>, tensor<3x2xf64>, tensor<3xcomplex<f64>>)
# CHECK-NEXT:   %[[F:.*]] = torch.operator "aten::fft_rfft"(%x) {{.*}} : (tensor<4x4xf32>) -> tensor<4x3xcomplex<f32>>
# CHECK-NEXT:   %[[A:.*]] = torch.aten.abs %[[F]] : (tensor<4x3xcomplex<f32>>) -> tensor<4x3xf32>
# CHECK-NEXT:   %[[Q:.*]] = torch.aten.quantize_per_tensor %x {scale = 1.000000e-01 : f64, zero_point = 3 : i64, dtype = !torch.quantized<quint8>} : (tensor<4x4xf32>) -> tensor<4x4x!torch.quantized<quint8>>
# CHECK-NEXT:   %[[D:.*]] = torch.aten.dequantize.self %[[Q]] : (tensor<4x4x!torch.quantized<quint8>>) -> tensor<4x4xf32>
# CHECK-NEXT:   %[[E:.*]] = torch.aten.to.dtype %x {dtype = f8E4M3FN, non_blocking = false, copy = false} : (tensor<4x4xf32>) -> tensor<4x4xf8E4M3FN>
# CHECK-NEXT:   %[[R:.*]] = torch.operator "aten::view_as_real"(%z) {{.*}} : (tensor<3xcomplex<f64>>) -> tensor<3x2xf64>
# CHECK-NEXT:   func.return %[[A]], %[[D]], %[[E]], %[[R]], %z : tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x4xf8E4M3FN>, tensor<3x2xf64>, tensor<3xcomplex<f64>>
