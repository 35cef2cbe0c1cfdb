// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse' | filecheck %s
// kernel-fuse merges a kernel into its one reader and records, on each kernel it keeps, why
// its result is written to memory.

builtin.module {
  // add -> relu -> sum: one kernel, the reduction's root; only the graph output is realized.
  func.func @chain(%x: tensor<4x37xf32>, %b: tensor<37xf32>) -> tensor<4xf32> {
    %0 = torch.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<4x37xf32>, tensor<37xf32>) -> tensor<4x37xf32>
    %1 = torch.aten.relu %0 : (tensor<4x37xf32>) -> tensor<4x37xf32>
    %2 = torch.aten.sum.dim_IntList %1 {dim = array<i64: -1>, keepdim = false} : (tensor<4x37xf32>) -> tensor<4xf32>
    func.return %2 : tensor<4xf32>
  }
  // CHECK-LABEL: func.func @chain
  // CHECK:      kernel.reduction ins(%x, %b : tensor<4x37xf32>, tensor<37xf32>) {window = 37 : i64, realize = ["graph output"]} -> tensor<4xf32> {
  // CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<4x37xf32>, %{{.*}}: tensor<37xf32>):
  // CHECK-NEXT:   torch.aten.add.Tensor
  // CHECK-NEXT:   torch.aten.relu
  // CHECK-NEXT:   torch.aten.sum.dim_IntList
  // CHECK-NEXT:   kernel.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return

  // exp read twice (mul %0, %0): realized, not recomputed; the mul and the tanh fuse.
  func.func @read_twice(%x: tensor<64xf32>) -> tensor<64xf32> {
    %0 = torch.aten.exp %x : (tensor<64xf32>) -> tensor<64xf32>
    %1 = torch.aten.mul.Tensor %0, %0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %2 = torch.aten.tanh %1 : (tensor<64xf32>) -> tensor<64xf32>
    func.return %2 : tensor<64xf32>
  }
  // CHECK-LABEL: func.func @read_twice
  // CHECK:      %[[E:.*]] = kernel.pointwise ins(%x : tensor<64xf32>) {{.*}}realize = ["read twice"]
  // CHECK:        torch.aten.exp
  // CHECK:      kernel.pointwise ins(%[[E]] : tensor<64xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], realize = ["graph output"]}
  // CHECK-NEXT: ^{{.*}}(%[[A:.*]]: tensor<64xf32>):
  // CHECK-NEXT:   torch.aten.mul.Tensor %[[A]], %[[A]]
  // CHECK-NEXT:   torch.aten.tanh
  // CHECK-NEXT:   kernel.yield

  // softmax combines a window of 37 per element: a reader would recompute it per element.
  // A GEMM's operand is laid out by the GEMM, so the add before it stays its own kernel.
  func.func @window_and_library(%x: tensor<5x37xf32>, %w: tensor<37x8xf32>) -> tensor<5x8xf32> {
    %0 = torch.aten.softmax.int %x {dim = -1 : i64} : (tensor<5x37xf32>) -> tensor<5x37xf32>
    %1 = torch.aten.add.Tensor %0, %x {alpha = 1 : i64} : (tensor<5x37xf32>, tensor<5x37xf32>) -> tensor<5x37xf32>
    %2 = torch.aten.mm %1, %w : (tensor<5x37xf32>, tensor<37x8xf32>) -> tensor<5x8xf32>
    func.return %2 : tensor<5x8xf32>
  }
  // CHECK-LABEL: func.func @window_and_library
  // CHECK:      kernel.composite ins(%x : tensor<5x37xf32>) {family = "normalization", window = 37 : i64, realize = ["combines a window of 37"]}
  // CHECK:      kernel.pointwise {{.*}}realize = ["feeds a library call"]
  // CHECK:      kernel.gemm {{.*}}spec = #kernel.gemm<batch = 1, m = 5, n = 8, k = 37, b = "KN">, realize = ["graph output"]

  // A reader that maps each element to the same index, and reads nothing else, is the window's
  // epilogue: softmax's output cast to bf16 (for a GEMM's operand) runs where the row is stored.
  func.func @window_epilogue(%x: tensor<5x37xf32>) -> tensor<5x37xbf16> {
    %0 = torch.aten.softmax.int %x {dim = -1 : i64} : (tensor<5x37xf32>) -> tensor<5x37xf32>
    %1 = torch.aten._to_copy %0 {dtype = bf16, non_blocking = false} : (tensor<5x37xf32>) -> tensor<5x37xbf16>
    func.return %1 : tensor<5x37xbf16>
  }
  // CHECK-LABEL: func.func @window_epilogue
  // CHECK:      kernel.composite ins(%x : tensor<5x37xf32>) {family = "normalization", window = 37 : i64, realize = ["graph output"]} -> tensor<5x37xbf16> {
  // CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<5x37xf32>):
  // CHECK-NEXT:   %[[S:.*]] = torch.aten.softmax.int
  // CHECK-NEXT:   %[[C:.*]] = torch.aten._to_copy %[[S]] {dtype = bf16
  // CHECK-NEXT:   kernel.yield %[[C]]
  // CHECK-NOT:  kernel.pointwise
  // CHECK:      func.return

  // A reader that also reads a 0-d tensor (the 3.0 of `log_softmax(x) + 3.0`) is an epilogue too.
  func.func @window_epilogue_scalar(%x: tensor<5x37xf32>, %c: tensor<f32>) -> tensor<5x37xf32> {
    %0 = torch.aten.log_softmax.int %x {dim = -1 : i64} : (tensor<5x37xf32>) -> tensor<5x37xf32>
    %1 = torch.aten.add.Tensor %0, %c {alpha = 1 : i64} : (tensor<5x37xf32>, tensor<f32>) -> tensor<5x37xf32>
    %2 = torch.aten.relu %1 : (tensor<5x37xf32>) -> tensor<5x37xf32>
    func.return %2 : tensor<5x37xf32>
  }
  // CHECK-LABEL: func.func @window_epilogue_scalar
  // CHECK:      kernel.composite ins(%c, %x : tensor<f32>, tensor<5x37xf32>) {{.*}}realize = ["graph output"]} -> tensor<5x37xf32> {
  // CHECK:        torch.aten.log_softmax.int
  // CHECK-NEXT:   torch.aten.add.Tensor
  // CHECK-NEXT:   torch.aten.relu
  // CHECK-NOT:  kernel.pointwise
  // CHECK:      func.return

  // Merged element-wise kernels compose their index maps: %b reaches the sub's loops through
  // the add's broadcast, %c is read at column 0.
  func.func @maps_composed(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
    %0 = torch.aten.mul.Tensor %b, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = torch.aten.add.Tensor %x, %0 {alpha = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %2 = torch.aten.sub.Tensor %1, %c {alpha = 1 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    func.return %2 : tensor<4x8xf32>
  }
  // CHECK-LABEL: func.func @maps_composed
  // CHECK:      kernel.pointwise ins(%c, %x, %b : tensor<4x1xf32>, tensor<4x8xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], realize = ["graph output"]}
  // CHECK-NOT:  kernel.pointwise
  // CHECK:      func.return

  // Dropout in training draws from torch's generator: it keeps its place (merged into its
  // reader it would move past the next dropout) and is never copied into its two readers as
  // a view would be (it would draw twice).
  func.func @random_keeps_its_place(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
    %0 = torch.aten.dropout %x {p = 5.000000e-01 : f64, train = true} : (tensor<64xf32>) -> tensor<64xf32>
    %1 = torch.aten.dropout %x {p = 5.000000e-01 : f64, train = true} : (tensor<64xf32>) -> tensor<64xf32>
    %2 = torch.aten.relu %0 : (tensor<64xf32>) -> tensor<64xf32>
    %3 = torch.aten.sigmoid %0 : (tensor<64xf32>) -> tensor<64xf32>
    func.return %1, %2, %3 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  // CHECK-LABEL: func.func @random_keeps_its_place
  // CHECK:      %[[D:.*]] = kernel.pointwise ins(%x : tensor<64xf32>) {view, realize = ["draws random numbers"]}
  // CHECK-NEXT: ^
  // CHECK-NEXT:   torch.aten.dropout
  // CHECK:      kernel.pointwise ins(%x : tensor<64xf32>) {view, realize = ["graph output"]}
  // CHECK-NEXT: ^
  // CHECK-NEXT:   torch.aten.dropout
  // CHECK:      kernel.pointwise ins(%[[D]] : tensor<64xf32>) {{.*}}realize = ["graph output"]}
  // CHECK-NEXT: ^
  // CHECK-NEXT:   torch.aten.relu
  // CHECK:      kernel.pointwise ins(%[[D]] : tensor<64xf32>) {{.*}}realize = ["graph output"]}
  // CHECK-NEXT: ^
  // CHECK-NEXT:   torch.aten.sigmoid

  // A view read by two kernels is copied into each (index arithmetic), not realized.
  func.func @view_copied(%x: tensor<8x16xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
    %0 = torch.aten.t %x : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %1 = torch.aten.relu %0 : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %2 = torch.aten.sigmoid %0 : (tensor<16x8xf32>) -> tensor<16x8xf32>
    func.return %1, %2 : tensor<16x8xf32>, tensor<16x8xf32>
  }
  // CHECK-LABEL: func.func @view_copied
  // CHECK:      kernel.pointwise ins(%x : tensor<8x16xf32>) {realize = ["graph output"]}
  // CHECK:        torch.aten.t
  // CHECK-NEXT:   torch.aten.relu
  // CHECK:      kernel.pointwise ins(%x : tensor<8x16xf32>) {realize = ["graph output"]}
  // CHECK:        torch.aten.t
  // CHECK-NEXT:   torch.aten.sigmoid
  // CHECK-NEXT:   kernel.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return

  // A producer merged into a scan may have another rank than the scan's result (an
  // expand, a broadcast): the scan's dim is a dimension of its result.
  func.func @scan_of_broadcast(%x: tensor<5x7xf32>, %c: tensor<7xf32>) -> (tensor<2x5x7xf32>, tensor<5x7xf32>) {
    %0 = torch.aten.expand %x {size = array<i64: 2, 5, 7>, implicit = false} : (tensor<5x7xf32>) -> tensor<2x5x7xf32>
    %1 = torch.aten.cumsum %0 {dim = 2 : i64} : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
    %2 = torch.aten.clamp.Tensor %c min(%x : tensor<5x7xf32>) : (tensor<7xf32>) -> tensor<5x7xf32>
    %3 = torch.aten.cumsum %2 {dim = 1 : i64} : (tensor<5x7xf32>) -> tensor<5x7xf32>
    func.return %1, %3 : tensor<2x5x7xf32>, tensor<5x7xf32>
  }
  // CHECK-LABEL: func.func @scan_of_broadcast
  // CHECK:      kernel.scan ins(%x : tensor<5x7xf32>) {dim = 2 : i64, realize = ["graph output"]} -> tensor<2x5x7xf32>
  // CHECK:        torch.aten.expand
  // CHECK-NEXT:   torch.aten.cumsum
  // CHECK:      kernel.scan ins(%c, %x : tensor<7xf32>, tensor<5x7xf32>) {dim = 1 : i64, realize = ["graph output"]} -> tensor<5x7xf32>
  // CHECK:        torch.aten.clamp.Tensor
  // CHECK-NEXT:   torch.aten.cumsum
}
