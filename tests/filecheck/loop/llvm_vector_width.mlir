// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' -t llvm-ir | filecheck %s --check-prefix=AVX512
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' -t llvm-ir | filecheck %s --check-prefix=AVX2
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=scalar threads=1}' -t llvm-ir | filecheck %s --check-prefix=SCALAR
// The same kernel at three widths: 16 floats on AVX-512, 8 on AVX2, scalar code otherwise;
// the 100 % 16 = 4 (100 % 8 = 4) tail lanes use a masked store, never a scalar loop; one
// entry function per graph.

builtin.module {
  func.func @forward(%x: tensor<100xf32>) -> tensor<100xf32> {
    %0 = torch.aten.sigmoid %x : (tensor<100xf32>) -> tensor<100xf32>
    func.return %0 : tensor<100xf32>
  }
}

// AVX512:     define void @"zig_forward_0"(i8** %"args")
// AVX512:     define internal void @"zk_sigmoid_0"(float* noalias %"x", float* noalias %"out"
// AVX512:     load <16 x float>
// AVX512:     store <16 x float>
// AVX512:     call void @"llvm.masked.store.v16f32.p0v16f32"(<16 x float> %{{.*}}, <16 x float>* %{{.*}}, i32 4, <16 x i1> <i1 1, i1 1, i1 1, i1 1, i1 0,
// AVX512-NOT: define void @"zig_forward_1"

// AVX2:       load <8 x float>
// AVX2:       call void @"llvm.masked.store.v8f32.p0v8f32"(<8 x float> %{{.*}}, <8 x float>* %{{.*}}, i32 4, <8 x i1> <i1 1, i1 1, i1 1, i1 1, i1 0,
// AVX2-NOT:   <16 x float>

// SCALAR:     define internal void @"zk_sigmoid_0"
// SCALAR-NOT: x float>
// SCALAR:     load float, float*
