// RUN: ziggurat-opt %s | filecheck %s
// Parameters written at TensorRT's defaults are elided when printed; others are kept.

func.func @defaults(%x: tensor<1x2x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = trt.pooling kAVERAGE %x {name = "avg", window_size = array<i64: 2, 2>, padding_mode = #trt<padding_mode kEXPLICIT_ROUND_DOWN>, blend_factor = 0.0 : f32, average_count_excludes_padding = true} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  %1 = trt.pooling kAVERAGE %x {name = "avg_incl", window_size = array<i64: 2, 2>, average_count_excludes_padding = false} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  %2 = trt.convolution %x, %w {name = "dw", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>, num_groups = 2 : i64, padding_mode = #trt<padding_mode kSAME_UPPER>} : (tensor<1x2x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %3 = trt.shuffle %x {name = "flat", reshape_dims = array<i64: 0, -1>, zero_is_placeholder = true} : tensor<1x2x6x6xf32> -> tensor<1x72xf32>
  %4 = trt.activation kRELU %x {name = "relu", alpha = 0.0 : f32, beta = 0.0 : f32} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// CHECK:      %0 = trt.pooling kAVERAGE %x {name = "avg", window_size = array<i64: 2, 2>} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %1 = trt.pooling kAVERAGE %x {name = "avg_incl", window_size = array<i64: 2, 2>, average_count_excludes_padding = false} :
// CHECK-NEXT: %2 = trt.convolution %x, %w {name = "dw", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>, num_groups = 2 : i64, padding_mode = #trt<padding_mode kSAME_UPPER>} :
// CHECK-NEXT: %3 = trt.shuffle %x {name = "flat", reshape_dims = array<i64: 0, -1>} : tensor<1x2x6x6xf32> -> tensor<1x72xf32>
// CHECK-NEXT: %4 = trt.activation kRELU %x {name = "relu"} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
// CHECK-NOT:  alpha
