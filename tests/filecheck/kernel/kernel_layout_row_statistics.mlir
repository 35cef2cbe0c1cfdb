// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout' | filecheck %s
// A LayerNorm over [1, T, D] token embeddings, read by two ops: its non-constant loads are the
// token ids and its per-token statistics, none of which moves along D.  Such loads tell
// nothing about the order and are not counted, so the result is stored contiguous.  Counted as
// channel-contiguous (they move by one element per token), they made it channels-last,
// [1, D, T], and every later reader went a row apart per lane (BERT-base in bf16: 3.0 ms of
// residual-add + LayerNorm kernels, 0.42 ms after).

func.func @forward(%ids: tensor<1x8xi64>) -> (tensor<1x8x16xf32>, tensor<1x8x16xf32>) {
  %table = torch.literal dense<0.25> : tensor<30x16xf32>
  %w = torch.literal dense<1.5> : tensor<16xf32>
  %b = torch.literal dense<0.5> : tensor<16xf32>
  %e = torch.aten.embedding %table, %ids {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false} : (tensor<30x16xf32>, tensor<1x8xi64>) -> tensor<1x8x16xf32>
  %n = torch.aten.layer_norm %e weight(%w : tensor<16xf32>) bias(%b : tensor<16xf32>) {normalized_shape = array<i64: 16>, eps = 1.000000e-05 : f64, cudnn_enable = false} : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  %s = torch.aten.sigmoid %n : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  %t = torch.aten.tanh %n : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  func.return %s, %t : tensor<1x8x16xf32>, tensor<1x8x16xf32>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %n = kernel.{{[a-z]+}} {{.*}}realize = ["read twice"], layout = ["contiguous"]}
