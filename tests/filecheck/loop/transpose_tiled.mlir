// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A transposing copy gathers along the output row from a source that is contiguous along
// the output column.  The column loop is tiled by the vector width and run inside the
// vector loop, so the 16 lines one gather touches serve the next 15 gathers too; its blocks
// run inside the vector loop as well, so 16 source rows stream at a time, not all of them
// (a cold read of 96 rows defeats the hardware prefetcher).

builtin.module {
  func.func @forward(%x: tensor<64x48xf32>) -> tensor<48x64xf32> {
    %0 = torch.aten.t %x : (tensor<64x48xf32>) -> tensor<48x64xf32>
    func.return %0 : tensor<48x64xf32>
  }
}

// CHECK:        loop.vfor %i1, %lanes = 0 to 64 step 16 {
// CHECK-NEXT:     loop.for %i0b = 0 to 3 step 1 {
// CHECK-NEXT:       loop.for %i0 = 0 to 16 step 1 {
// CHECK-NEXT:         %[[OFF:.*]] = loop.offset 48 * %i1 + 16 * %i0b + %i0
// CHECK:              loop.vgather %x_1[%{{.*}}] : memref<64x48xf32>, vector<16xi64> -> vector<16xf32>
// CHECK:              loop.vstore %{{.*}}, %out[%{{.*}}] : vector<16xf32>, memref<48x64xf32>
