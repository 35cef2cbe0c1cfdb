// RUN: ziggurat-opt %s -p 'prepack-weights{isa=avx512}' --elide-resources | filecheck %s --check-prefix=AVX512
// RUN: ziggurat-opt %s -p 'prepack-weights{isa=avx2}' --elide-resources | filecheck %s --check-prefix=AVX2
// RUN: ziggurat-opt %s -p 'prepack-weights{isa=avx512}' --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: not ziggurat-opt %s -p 'prepack-weights{isa=neon}' 2>&1 | filecheck %s --check-prefix=BADISA

// A linear weight [40, 8] becomes panels of NR columns: [ceil(40/NR), 8, NR].
// AVX512-LABEL: func.func @linear
// AVX512:         %[[P:.*]] = torch.literal dense_resource<{{.*}}> : tensor<2x8x32xf32>
// AVX512:         fused.linear %x, %[[P]] {weight_layout = "KN32n", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
// AVX2-LABEL:   func.func @linear
// AVX2:           fused.linear %x, %{{.*}} {weight_layout = "KN16n", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<3x8x16xf32>) -> tensor<3x40xf32>
func.func @linear(%x: tensor<3x8xf32>) -> tensor<3x40xf32> {
  %lit = torch.literal dense<1.0> : tensor<40x8xf32>
  %y = fused.linear %x, %lit : (tensor<3x8xf32>, tensor<40x8xf32>) -> tensor<3x40xf32>
  func.return %y : tensor<3x40xf32>
}

// A conv weight [16, 3, 3, 3] becomes per-group panels over K = 3*3*3; a depthwise conv
// keeps its weight; a weight that is a run-time value is not packed.
// AVX512-LABEL: func.func @convs
// AVX512:         fused.conv2d %x, %{{.*}} {{.*}}weight_layout = "KN32n", weight_shape = array<i64: 16, 3, 3, 3>} : (tensor<1x3x8x8xf32>, tensor<1x1x27x32xf32>)
// AVX512:         fused.conv2d %x, %dw {{.*}}groups = 3 : i64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>)
// AVX512:         fused.conv2d %x, %rt {{.*}}groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>)
func.func @convs(%x: tensor<1x3x8x8xf32>, %rt: tensor<16x3x3x3xf32>) -> (tensor<1x16x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x16x6x6xf32>) {
  %w = torch.literal dense<0.5> : tensor<16x3x3x3xf32>
  %dw = torch.literal dense<0.25> : tensor<3x1x3x3xf32>
  %a = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  %b = fused.conv2d %x, %dw {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  %c = fused.conv2d %x, %rt {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %a, %b, %c : tensor<1x16x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x16x6x6xf32>
}

// A weight read by several linears (the step GEMMs of an unrolled LSTM) is packed once, right
// after its literal, and every linear reads that one packed literal; a matmul reading the same
// literal as its right operand packs it its own way (the unpacked literal is then gone).
// AVX512-LABEL: func.func @shared
// AVX512-NEXT:    %[[M:.*]] = torch.literal dense_resource<{{.*}}> : tensor<1x8x32xf32>
// AVX512-NEXT:    %[[P:.*]] = torch.literal dense_resource<{{.*}}> : tensor<1x8x32xf32>
// AVX512-NEXT:    %[[A:.*]] = fused.linear %x, %[[P]]
// AVX512-NEXT:    %[[B:.*]] = fused.linear %[[A]], %[[P]]
// AVX512-NEXT:    %[[C:.*]] = fused.matmul %x, %[[M]]
// AVX512-NEXT:    func.return %[[B]], %[[C]]
func.func @shared(%x: tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %w = torch.literal dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]> : tensor<8x8xf32>
  %a = fused.linear %x, %w : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  %b = fused.linear %a, %w : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  %c = fused.matmul %x, %w {alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  func.return %b, %c : tensor<3x8xf32>, tensor<3x8xf32>
}

// STATS: prepack-weights:
// STATS:   depthwise convs left unpacked            1
// STATS:   packed weights shared                    1
// STATS:   weights packed                           4
// BADISA: error: {{.*}}unknown isa 'neon'
