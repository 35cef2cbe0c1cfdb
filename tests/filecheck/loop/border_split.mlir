// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A padded window (here ResNet's 3x3/2 stem pool, over 64 columns) runs in one loop nest per
// block of a border split: the first output row and the first vector of columns check their
// taps' subscripts (a compare, a mask and a masked span load a tap); the interior, where no
// check can fail, reads its taps unmasked. A zero pad (one guarded load an element) is not
// split: its checks cost less than the nests.

func.func @forward(%x: tensor<1x4x64x128xf32>) -> (tensor<1x4x32x64xf32>, tensor<1x4x66x130xf32>) {
  %p = torch.aten.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x4x64x128xf32>) -> tensor<1x4x32x64xf32>
  %q = torch.aten.constant_pad_nd %x {pad = array<i64: 1, 1, 1, 1>, value = 0.0 : f64} : (tensor<1x4x64x128xf32>) -> tensor<1x4x66x130xf32>
  func.return %p, %q : tensor<1x4x32x64xf32>, tensor<1x4x66x130xf32>
}

// CHECK-LABEL: loop.kernel @max_pool2d_0
// The first row: its first vector, then the rest of it.
// CHECK:         loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK-NEXT:      loop.vfor %{{.*}}, %{{.*}} = 0 to 16 step 16 {
// CHECK:             loop.vgather {{.*}} mask(
// CHECK:         loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK-NEXT:      loop.vfor %{{.*}}, %{{.*}} = 0 to 48 step 16 {
// CHECK:             loop.vgather {{.*}} mask(
// The other 31 rows: the first vector of columns, masked, then the interior, unmasked.
// CHECK:         loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 31 step 1 {
// CHECK-NEXT:        loop.vfor %{{.*}}, %{{.*}} = 0 to 16 step 16 {
// CHECK:               loop.vgather {{.*}} mask(
// CHECK:         loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 31 step 1 {
// CHECK-NEXT:        loop.vfor %{{.*}}, %{{.*}} = 0 to 48 step 16 {
// CHECK-NOT:           mask(
// CHECK:               loop.vgather %x_1[%{{.*}}] : memref<1x4x64x128xf32>
// CHECK-NOT:           mask(
// CHECK:         loop.kernel @constant_pad_nd_0
// CHECK:           loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK-NEXT:        loop.for %{{.*}} = 0 to 66 step 1 {
// CHECK:               loop.vfor %{{.*}}, %{{.*}} = 0 to 130 step 16 {
// CHECK-NOT:     loop.for %{{.*}} = 0 to 4 step 1 {
// CHECK:         func.return
