// RUN: ziggurat-opt %s | filecheck %s
// Hexadecimal elements of a float dense literal are bit patterns (inf, NaN, -inf), as
// xDSL prints them; they were read back as integers near 2e9.

// CHECK-LABEL: func.func @non_finite
// CHECK: torch.literal dense<[0x7f800000, 0x7fc00000, 0xff800000, 1.000000e+00]> : tensor<4xf32>
// CHECK: torch.literal dense<0x7ff0000000000000> : tensor<2xf64>
func.func @non_finite() -> (tensor<4xf32>, tensor<2xf64>) {
  %0 = torch.literal dense<[0x7F800000, 0x7FC00000, 0xFF800000, 1.0]> : tensor<4xf32>
  %1 = torch.literal dense<0x7FF0000000000000> : tensor<2xf64>
  func.return %0, %1 : tensor<4xf32>, tensor<2xf64>
}
