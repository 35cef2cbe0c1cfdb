// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx2 threads=2}' | filecheck %s --check-prefix=STATIC
// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx2 threads=2 range_schedule=true}' | filecheck %s --check-prefix=RANGE
// convert-kernel-to-loop{range_schedule}: the schedule of a dynamic-shape range build's sampled
// lowerings.  A static build runs this 6-row sum serially (6 output elements, far below
// PARALLEL_MIN_ELEMENTS); a range schedule makes every loop nest with parallel work a
// loop.parallel whatever its size, carrying its output elements per task, so that every
// sampled size has the same structure and the code generator chooses the team at run time.

builtin.module {
  func.func @forward(%x: tensor<6x19xf32>) -> tensor<6x1xf32> {
    %0 = torch.aten.sum.dim_IntList %x {dim = array<i64: 1>, keepdim = true} : (tensor<6x19xf32>) -> tensor<6x1xf32>
    func.return %0 : tensor<6x1xf32>
  }
}

// STATIC:     loop.for %i0 = 0 to 6 step 1 {
// STATIC-NOT: loop.parallel
// STATIC-NOT: loop.task_elements

// RANGE:      loop.parallel %i0 = 0 to 6 {
// RANGE-NEXT:   loop.vfor %r0, %lanes = 0 to 19 step 8
// RANGE:      } {loop.task_elements = 1 : i64}
