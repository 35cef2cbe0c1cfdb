// REQUIRES: avx512bf16
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' | filecheck %s --check-prefix=AVX2
// bf16 GEMMs are loop.gemm calls of the bf16 kernels (AMX or AVX512-BF16, by host feature):
// a constant weight is packed at compile time into VNNI-2 panels (KN32n2k), its bias widened to
// float32, the post-ops in the epilogue, each step rounded to bf16 as eager's separate bf16 ops
// round (rounded_steps), on AMX a transcendental activation looked up in eager's answers for
// every bf16 input (unary_table; relu needs none); a computed right operand is packed by the kernel
// (b_packed = false); a 1x1 convolution is one GEMM per image with the bias one per row (its
// weight's rows one 64-byte line wider on AMX where they are an even number of lines); a 3x3
// one is an implicit GEMM over the zero-padded image (b_conv = [Hp*Wp, Wp, kh, kw, dh, dw, sh,
// sw]), its output read back through a [..., :OW] view; a strided one reads the image split
// into the stride's phases ([N, C, sh, sw, Hq, Wq]); a grouped one stays in torch. On the avx2
// ISA they stay in torch with the reason.

builtin.module {
  func.func @linear(%x: tensor<5x8xbf16>) -> tensor<5x24xbf16> {
    %w = torch.literal dense<0.5> : tensor<24x8xbf16>
    %b = torch.literal dense<0.25> : tensor<24xbf16>
    %0 = fused.linear %x, %w bias(%b : tensor<24xbf16>) {post_ops = [#fused.unary<relu>]} : (tensor<5x8xbf16>, tensor<24x8xbf16>) -> tensor<5x24xbf16>
    func.return %0 : tensor<5x24xbf16>
  }
  func.func @linear_gelu(%x: tensor<5x8xbf16>) -> tensor<5x24xbf16> {
    %w = torch.literal dense<0.5> : tensor<24x8xbf16>
    %0 = fused.linear %x, %w {post_ops = [#fused.unary<gelu_erf>]} : (tensor<5x8xbf16>, tensor<24x8xbf16>) -> tensor<5x24xbf16>
    func.return %0 : tensor<5x24xbf16>
  }
  func.func @product(%a: tensor<3x5x8xbf16>, %c: tensor<3x8x7xbf16>) -> tensor<3x5x7xbf16> {
    %0 = torch.aten.matmul %a, %c : (tensor<3x5x8xbf16>, tensor<3x8x7xbf16>) -> tensor<3x5x7xbf16>
    func.return %0 : tensor<3x5x7xbf16>
  }
  func.func @pointwise(%x: tensor<2x8x3x5xbf16>) -> tensor<2x4x3x5xbf16> {
    %w = torch.literal dense<0.5> : tensor<4x8x1x1xbf16>
    %b = torch.literal dense<0.25> : tensor<4xbf16>
    %0 = fused.conv2d %x, %w bias(%b : tensor<4xbf16>) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x3x5xbf16>, tensor<4x8x1x1xbf16>) -> tensor<2x4x3x5xbf16>
    func.return %0 : tensor<2x4x3x5xbf16>
  }
  func.func @pointwise_wide(%x: tensor<1x256x3x5xbf16>) -> tensor<1x4x3x5xbf16> {
    %w = torch.literal dense<0.5> : tensor<4x256x1x1xbf16>
    %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x256x3x5xbf16>, tensor<4x256x1x1xbf16>) -> tensor<1x4x3x5xbf16>
    func.return %0 : tensor<1x4x3x5xbf16>
  }
  func.func @linear_chain(%x: tensor<256x5xbf16>) -> tensor<5x256xbf16> {
    %w1 = torch.literal dense<0.5> : tensor<512x256xbf16>
    %w2 = torch.literal dense<0.25> : tensor<256x512xbf16>
    %r = torch.aten.transpose.int %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<256x5xbf16>) -> tensor<5x256xbf16>
    %h = fused.linear %r, %w1 : (tensor<5x256xbf16>, tensor<512x256xbf16>) -> tensor<5x512xbf16>
    %y = fused.linear %h, %w2 : (tensor<5x512xbf16>, tensor<256x512xbf16>) -> tensor<5x256xbf16>
    func.return %y : tensor<5x256xbf16>
  }
  func.func @spatial(%x: tensor<2x8x3x5xbf16>) -> tensor<2x4x3x5xbf16> {
    %w = torch.literal dense<0.5> : tensor<4x8x3x3xbf16>
    %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.unary<relu>]} : (tensor<2x8x3x5xbf16>, tensor<4x8x3x3xbf16>) -> tensor<2x4x3x5xbf16>
    func.return %0 : tensor<2x4x3x5xbf16>
  }
  func.func @strided(%x: tensor<2x8x3x5xbf16>) -> tensor<2x4x2x3xbf16> {
    %w = torch.literal dense<0.5> : tensor<4x8x3x3xbf16>
    %0 = fused.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x3x5xbf16>, tensor<4x8x3x3xbf16>) -> tensor<2x4x2x3xbf16>
    func.return %0 : tensor<2x4x2x3xbf16>
  }
  func.func @grouped(%x: tensor<2x8x3x5xbf16>) -> tensor<2x4x3x5xbf16> {
    %w = torch.literal dense<0.5> : tensor<4x4x3x3xbf16>
    %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x8x3x5xbf16>, tensor<4x4x3x3xbf16>) -> tensor<2x4x3x5xbf16>
    func.return %0 : tensor<2x4x3x5xbf16>
  }
  func.func @depthwise(%x: tensor<1x40x6x7xbf16>) -> tensor<1x40x6x7xbf16> {
    %w = torch.literal dense<0.5> : tensor<40x1x3x3xbf16>
    %b = torch.literal dense<0.25> : tensor<40xbf16>
    %0 = fused.conv2d %x, %w bias(%b : tensor<40xbf16>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 40 : i64, post_ops = [#fused.unary<relu6>]} : (tensor<1x40x6x7xbf16>, tensor<40x1x3x3xbf16>) -> tensor<1x40x6x7xbf16>
    func.return %0 : tensor<1x40x6x7xbf16>
  }
}

// CHECK-LABEL: func.func @linear
// CHECK-DAG:     loop.constant dense_resource<{{.*}}KN32n2k> : tensor<1024xbf16> -> memref<1024xbf16>
// CHECK-DAG:     loop.constant {{.*}} : tensor<24xf32> -> memref<24xf32>
// CHECK:         loop.gemm @gemm_linear_0 a(%x : memref<5x8xbf16>) b(%{{.*}} : memref<1024xbf16>) c(%{{.*}} : memref<5x24xbf16>) bias(%{{.*}} : memref<24xf32>)
// The plain constant weight is classified at compile time (b_specials = 0: neither a bf16
// subnormal nor a huge value), so the kernel neither scans nor carries the exact products.
// CHECK-SAME:      spec {bf16_kernel = "{{(amx|avx512bf16)}}", m = 5 : i64, n = 24 : i64, k = 8 : i64, lda = 8 : i64, ldc = 24 : i64, b_specials = 0 : i64, unary = "relu"
// CHECK-SAME:      rounded_steps = true, origins
// CHECK-LABEL: func.func @linear_gelu
// CHECK:         loop.gemm @gemm_linear_0 a(%x : memref<5x8xbf16>)
// CHECK-SAME:      {{bf16_kernel = "amx".*unary = "gelu_erf", rounded_steps = true, unary_table = true|bf16_kernel = "avx512bf16".*unary = "gelu_erf", rounded_steps = true, origins}}
// CHECK-LABEL: func.func @product
// CHECK:         loop.gemm {{.*}} a(%a : memref<3x5x8xbf16>) b(%c : memref<3x8x7xbf16>)
// CHECK-SAME:      b_packed = false, b_transposed = false, ldb = 7 : i64, batch = 3 : i64, batch_stride_a = 40 : i64, batch_stride_b = 56 : i64, batch_stride_c = 35 : i64
// CHECK-LABEL: func.func @pointwise
// CHECK:         loop.gemm {{.*}} bias(%{{.*}} : memref<4xf32>)
// CHECK-SAME:      m = 4 : i64, n = 15 : i64, k = 8 : i64, lda = 32 : i64, a_specials = 0 : i64, a_padded = true, ldc = 15 : i64, b_packed = false, b_transposed = false, ldb = 15 : i64, batch = 2 : i64, batch_stride_a = 0 : i64, batch_stride_b = 120 : i64, batch_stride_c = 60 : i64, bias_rows = true
// A weight whose rows are an even number of 64-byte lines (256 bf16: 8) is stored one line
// wider for the AMX kernel (amx.tile_row_stride: a tile load's 16 rows then spread over L1's
// sets), at its own width for the AVX512-BF16 kernel.
// CHECK-LABEL: func.func @pointwise_wide
// CHECK:         loop.constant dense_resource<{{.*}}> : tensor<4x[[ROW:288|256]]xbf16> -> memref<4x[[ROW]]xbf16>
// CHECK:         loop.gemm {{.*}} a(%{{.*}} : memref<4x[[ROW]]xbf16>)
// CHECK-SAME:      {{bf16_kernel = "amx", m = 4 : i64, n = 15 : i64, k = 256 : i64, lda = 288|bf16_kernel = "avx512bf16", m = 4 : i64, n = 15 : i64, k = 256 : i64, lda = 256}} : i64
// A linear's A realized from a kernel's output (here a transpose) is stored one 64-byte line
// wider on AMX (256 -> 288 bf16), zeros past K in a loop nest of their own; a GEMM result read
// only by AMX linears is stored at that stride (512 -> 544) and read there. The AVX512-BF16
// kernel's rows keep their widths.
// CHECK-LABEL: func.func @linear_chain
// CHECK:         %[[A:.*]] = loop.alloc : memref<5x[[KA:288|256]]xbf16>
// CHECK:         loop.kernel @{{(fused_)?transpose(_linear)?_0}} {{.*}}outs(%[[A]] : memref<5x[[KA]]xbf16>)
// CHECK:         loop.vstore {{.*}} : vector<16xbf16>, memref<5x[[KA]]xbf16>
// CHECK:         %[[H:.*]] = loop.alloc : memref<5x[[KH:544|512]]xbf16>
// CHECK:         loop.gemm @gemm_linear_0 a(%[[A]] : memref<5x[[KA]]xbf16>) {{.*}} c(%[[H]] : memref<5x[[KH]]xbf16>)
// CHECK-SAME:      {{bf16_kernel = "amx", m = 5 : i64, n = 512 : i64, k = 256 : i64, lda = 288 : i64, ldc = 544|bf16_kernel = "avx512bf16", m = 5 : i64, n = 512 : i64, k = 256 : i64, lda = 256 : i64, ldc = 512}} : i64
// CHECK:         loop.gemm @gemm_linear_1 a(%[[H]] : memref<5x[[KH]]xbf16>)
// CHECK-SAME:      k = 512 : i64, lda = [[KH]] : i64, ldc = 256 : i64
// CHECK-LABEL: func.func @spatial
// CHECK:         loop.kernel {{.*}}padded
// CHECK:         loop.gemm {{.*}} c(%{{.*}} : memref<2x4x3x7xbf16>)
// CHECK-SAME:      m = 4 : i64, n = 19 : i64, k = 72 : i64, lda = 96 : i64, a_specials = 0 : i64, a_padded = true, ldc = 21 : i64, b_packed = false, b_conv = [35 : i64, 7 : i64, 3 : i64, 3 : i64, 1 : i64, 1 : i64, 1 : i64, 1 : i64]
// CHECK-SAME:      batch = 2 : i64, batch_stride_a = 0 : i64, batch_stride_b = 280 : i64, batch_stride_c = 84 : i64, unary = "relu"
// CHECK-LABEL: func.func @strided
// CHECK:         loop.kernel {{.*}}padded{{.*}} memref<2x8x2x2x3x4xbf16>
// CHECK:         loop.gemm {{.*}} c(%{{.*}} : memref<2x4x2x4xbf16>)
// CHECK-SAME:      m = 4 : i64, n = 7 : i64, k = 72 : i64, lda = 96 : i64, a_specials = 0 : i64, a_padded = true, ldc = 8 : i64, b_packed = false, b_conv = [12 : i64, 4 : i64, 3 : i64, 3 : i64, 1 : i64, 1 : i64, 2 : i64, 2 : i64]
// A grouped bf16 convolution that reaches the lowering unwidened (widen-half-floats widens the
// ones not depthwise) runs as the float32 convolution of its widened operands, rounded once.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME:      loop.fallback_ops = {}
// CHECK-NOT:     bf16_kernel
// CHECK:         "extf"
// CHECK:         loop.gemm @igemm_conv2d_0
// CHECK:         loop.gemm @igemm_conv2d_1
// CHECK:         "truncf"

// A bf16 depthwise convolution is the float32 depthwise kernel reading its bf16 input (here made
// channels-last, still bf16) and writing bf16: its weight and bias are float32 constants, no
// kernel widens or rounds the activations.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG:     loop.constant {{.*}} : tensor<9x48xf32>
// CHECK-DAG:     loop.constant {{.*}} : tensor<40xf32>
// CHECK:         %[[NHWC:.*]] = loop.alloc : memref<1x6x7x40xbf16>
// CHECK-NOT:     "extf"
// CHECK:         %[[OUT:.*]] = loop.alloc : memref<1x6x7x40xbf16>
// CHECK-NEXT:    loop.gemm @depthwise_conv2d_0 a(%[[NHWC]] : memref<1x6x7x40xbf16>) {{.*}} c(%[[OUT]] : memref<1x6x7x40xbf16>)
// CHECK-SAME:      in_bf16 = true, out_bf16 = true
// CHECK-NOT:     "truncf"
// CHECK:         func.return

// AVX2-LABEL:  func.func @linear
// AVX2:          bf16 GEMMs need the avx512 ISA
// AVX2-NOT:      bf16_kernel
