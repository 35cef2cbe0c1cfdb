func.func @f(%x: tensor<2xf32>) {
  %0 = torch.aten.relux %x : (tensor<2xf32>) -> tensor<2xf32>
}
