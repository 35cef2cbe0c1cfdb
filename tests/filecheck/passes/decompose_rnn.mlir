// RUN: ziggurat-opt %s -p decompose-rnn | filecheck %s
// RUN: ziggurat-opt %s -p 'decompose-rnn{max_steps=1}' | filecheck %s --check-prefix=STEPS
// RUN: ziggurat-opt %s -p 'decompose-rnn,constant-fold,fuse-post-ops' | filecheck %s --check-prefix=OPT
// RUN: ziggurat-opt %s -p decompose-rnn --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// A 1-layer LSTM over 2 steps, given (h0, c0): one input projection for both steps, then per
// step h @ w_hh^T + b_hh + x_t and the gates i, f, g, o in eager's order; the outputs are the
// stacked h, the final h and c.
// CHECK-LABEL: func.func @lstm
// CHECK-NEXT:    %[[P:.*]] = torch.aten.linear %x, %wi bias(%bi) : (tensor<2x1x3xf32>, tensor<8x3xf32>, tensor<8xf32>) -> tensor<2x1x8xf32>
// CHECK-NEXT:    %[[H0:.*]] = torch.aten.select.int %h0 {dim = 0 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[C0:.*]] = torch.aten.select.int %c0 {dim = 0 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[X0:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 0 : i64} : (tensor<2x1x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %[[HH0:.*]] = torch.aten.linear %[[H0]], %wh bias(%bh)
// CHECK-NEXT:    %[[G0:.*]] = torch.aten.add.Tensor %[[HH0]], %[[X0]]
// CHECK-NEXT:    %[[I:.*]], %[[F:.*]], %[[G:.*]], %[[O:.*]] = torch.aten.split.Tensor %[[G0]] {split_size = 2 : i64, dim = 1 : i64}
// CHECK-NEXT:    %[[SI:.*]] = torch.aten.sigmoid %[[I]]
// CHECK-NEXT:    %[[SF:.*]] = torch.aten.sigmoid %[[F]]
// CHECK-NEXT:    %[[SO:.*]] = torch.aten.sigmoid %[[O]]
// CHECK-NEXT:    %[[TG:.*]] = torch.aten.tanh %[[G]]
// CHECK-NEXT:    %[[FC:.*]] = torch.aten.mul.Tensor %[[SF]], %[[C0]]
// CHECK-NEXT:    %[[IG:.*]] = torch.aten.mul.Tensor %[[SI]], %[[TG]]
// CHECK-NEXT:    %[[C1:.*]] = torch.aten.add.Tensor %[[FC]], %[[IG]]
// CHECK-NEXT:    %[[TC:.*]] = torch.aten.tanh %[[C1]]
// CHECK-NEXT:    %[[H1:.*]] = torch.aten.mul.Tensor %[[SO]], %[[TC]]
// CHECK-NEXT:    %[[X1:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 1 : i64}
// CHECK-NEXT:    %[[HH1:.*]] = torch.aten.linear %[[H1]], %wh bias(%bh)
// CHECK-NEXT:    torch.aten.add.Tensor %[[HH1]], %[[X1]]
// CHECK:         %[[C2:.*]] = torch.aten.add.Tensor
// CHECK-NEXT:    %[[TC2:.*]] = torch.aten.tanh %[[C2]]
// CHECK-NEXT:    %[[H2:.*]] = torch.aten.mul.Tensor %{{.*}}, %[[TC2]]
// CHECK-NEXT:    %[[OUT:.*]] = torch.aten.stack [%[[H1]], %[[H2]]] {dim = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x1x2xf32>
// CHECK-NEXT:    %[[HN:.*]] = torch.aten.stack [%[[H2]]] {dim = 0 : i64}
// CHECK-NEXT:    %[[CN:.*]] = torch.aten.stack [%[[C2]]] {dim = 0 : i64}
// CHECK-NEXT:    func.return %[[OUT]], %[[HN]], %[[CN]]
// CHECK-NOT:     aten::lstm
func.func @lstm(%x: tensor<2x1x3xf32>, %h0: tensor<1x1x2xf32>, %c0: tensor<1x1x2xf32>, %wi: tensor<8x3xf32>, %wh: tensor<8x2xf32>, %bi: tensor<8xf32>, %bh: tensor<8xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) {
  %0, %1, %2 = torch.operator "aten::lstm.input"(%x, %h0, %c0, %wi, %wh, %bi, %bh) {args = {has_biases = true, num_layers = 1 : i64, dropout = 0.000000e+00 : f64, train = false, bidirectional = false, batch_first = false}, operand_names = ["input", "hx#0", "hx#1", "params#0", "params#1", "params#2", "params#3"], schema = "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"} : (tensor<2x1x3xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  func.return %0, %1, %2 : tensor<2x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>
}

// A bidirectional, batch-first GRU without biases: the time dim is 1 (the input is not
// transposed); per step r = sigmoid(hr + xr), z = sigmoid(hz + xz), n = tanh(xn + hn * r),
// h = (h - n) * z + n; the reverse direction runs t = 1, 0 with its own weights and h0[1]; the
// output stacks, in time order, each step's forward and reverse outputs concatenated.
// CHECK-LABEL: func.func @gru
// CHECK-NEXT:    %[[P:.*]] = torch.aten.linear %x, %wi : (tensor<1x2x3xf32>, tensor<6x3xf32>) -> tensor<1x2x6xf32>
// CHECK-NEXT:    %[[H0:.*]] = torch.aten.select.int %h0 {dim = 0 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[X0:.*]] = torch.aten.select.int %[[P]] {dim = 1 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[XR:.*]], %[[XZ:.*]], %[[XN:.*]] = torch.aten.split.Tensor %[[X0]] {split_size = 2 : i64, dim = 1 : i64}
// CHECK-NEXT:    %[[HH:.*]] = torch.aten.linear %[[H0]], %wh : (tensor<1x2xf32>, tensor<6x2xf32>) -> tensor<1x6xf32>
// CHECK-NEXT:    %[[HR:.*]], %[[HZ:.*]], %[[HN:.*]] = torch.aten.split.Tensor %[[HH]] {split_size = 2 : i64, dim = 1 : i64}
// CHECK-NEXT:    %[[RA:.*]] = torch.aten.add.Tensor %[[HR]], %[[XR]]
// CHECK-NEXT:    %[[R:.*]] = torch.aten.sigmoid %[[RA]]
// CHECK-NEXT:    %[[ZA:.*]] = torch.aten.add.Tensor %[[HZ]], %[[XZ]]
// CHECK-NEXT:    %[[Z:.*]] = torch.aten.sigmoid %[[ZA]]
// CHECK-NEXT:    %[[HNR:.*]] = torch.aten.mul.Tensor %[[HN]], %[[R]]
// CHECK-NEXT:    %[[NA:.*]] = torch.aten.add.Tensor %[[XN]], %[[HNR]]
// CHECK-NEXT:    %[[N:.*]] = torch.aten.tanh %[[NA]]
// CHECK-NEXT:    %[[D:.*]] = torch.aten.sub.Tensor %[[H0]], %[[N]]
// CHECK-NEXT:    %[[DZ:.*]] = torch.aten.mul.Tensor %[[D]], %[[Z]]
// CHECK-NEXT:    %[[F1:.*]] = torch.aten.add.Tensor %[[DZ]], %[[N]]
// CHECK-NEXT:    torch.aten.select.int %[[P]] {dim = 1 : i64, index = 1 : i64}
// CHECK:         torch.aten.sub.Tensor %[[F1]]
// CHECK-NEXT:    torch.aten.mul.Tensor
// CHECK-NEXT:    %[[F2:.*]] = torch.aten.add.Tensor
// CHECK-NEXT:    %[[PR:.*]] = torch.aten.linear %x, %wir
// CHECK-NEXT:    %[[H0R:.*]] = torch.aten.select.int %h0 {dim = 0 : i64, index = 1 : i64}
// CHECK-NEXT:    torch.aten.select.int %[[PR]] {dim = 1 : i64, index = 1 : i64}
// CHECK:         torch.aten.linear %[[H0R]], %whr
// CHECK:         torch.aten.sub.Tensor %[[H0R]]
// CHECK-NEXT:    torch.aten.mul.Tensor
// CHECK-NEXT:    %[[B1:.*]] = torch.aten.add.Tensor
// CHECK-NEXT:    torch.aten.select.int %[[PR]] {dim = 1 : i64, index = 0 : i64}
// CHECK:         torch.aten.linear %[[B1]], %whr
// CHECK:         torch.aten.sub.Tensor %[[B1]]
// CHECK-NEXT:    torch.aten.mul.Tensor
// CHECK-NEXT:    %[[B0:.*]] = torch.aten.add.Tensor
// CHECK-NEXT:    %[[T0:.*]] = torch.aten.cat [%[[F1]], %[[B0]]] {dim = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[T1:.*]] = torch.aten.cat [%[[F2]], %[[B1]]] {dim = 1 : i64}
// CHECK-NEXT:    %[[OUT:.*]] = torch.aten.stack [%[[T0]], %[[T1]]] {dim = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x4xf32>
// CHECK-NEXT:    %[[HN:.*]] = torch.aten.stack [%[[F2]], %[[B0]]] {dim = 0 : i64}
// CHECK-NEXT:    func.return %[[OUT]], %[[HN]]
func.func @gru(%x: tensor<1x2x3xf32>, %h0: tensor<2x1x2xf32>, %wi: tensor<6x3xf32>, %wh: tensor<6x2xf32>, %wir: tensor<6x3xf32>, %whr: tensor<6x2xf32>) -> (tensor<1x2x4xf32>, tensor<2x1x2xf32>) {
  %0, %1 = torch.operator "aten::gru.input"(%x, %h0, %wi, %wh, %wir, %whr) {args = {has_biases = false, num_layers = 1 : i64, dropout = 0.000000e+00 : f64, train = false, bidirectional = true, batch_first = true}, operand_names = ["input", "hx", "params#0", "params#1", "params#2", "params#3"], schema = "aten::gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"} : (tensor<1x2x3xf32>, tensor<2x1x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6x3xf32>, tensor<6x2xf32>) -> (tensor<1x2x4xf32>, tensor<2x1x2xf32>)
  func.return %0, %1 : tensor<1x2x4xf32>, tensor<2x1x2xf32>
}

// A 2-layer LSTM with a projection (proj_size 1: h is w_hr (1x2) applied to o * tanh(c)); the
// second layer reads the first one's output sequence.
// CHECK-LABEL: func.func @lstm_projected_two_layers
// CHECK-NEXT:    %[[P0:.*]] = torch.aten.linear %x, %wi0 : (tensor<1x1x3xf32>, tensor<8x3xf32>) -> tensor<1x1x8xf32>
// CHECK:         %[[C:.*]] = torch.aten.add.Tensor %{{.*}}, %{{.*}} {alpha = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>)
// CHECK-NEXT:    %[[T:.*]] = torch.aten.tanh %[[C]]
// CHECK-NEXT:    %[[M:.*]] = torch.aten.mul.Tensor %{{.*}}, %[[T]]
// CHECK-NEXT:    %[[H:.*]] = torch.aten.linear %[[M]], %wr0 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.stack [%[[H]]] {dim = 0 : i64}
// CHECK-NEXT:    %[[P1:.*]] = torch.aten.linear %[[S]], %wi1 : (tensor<1x1x1xf32>, tensor<8x1xf32>) -> tensor<1x1x8xf32>
// CHECK:         torch.aten.linear %{{.*}}, %wr1
// CHECK-NOT:     aten::lstm
func.func @lstm_projected_two_layers(%x: tensor<1x1x3xf32>, %h0: tensor<2x1x1xf32>, %c0: tensor<2x1x2xf32>, %wi0: tensor<8x3xf32>, %wh0: tensor<8x1xf32>, %wr0: tensor<1x2xf32>, %wi1: tensor<8x1xf32>, %wh1: tensor<8x1xf32>, %wr1: tensor<1x2xf32>) -> (tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>) {
  %0, %1, %2 = torch.operator "aten::lstm.input"(%x, %h0, %c0, %wi0, %wh0, %wr0, %wi1, %wh1, %wr1) {args = {has_biases = false, num_layers = 2 : i64, dropout = 0.000000e+00 : f64, train = false, bidirectional = false, batch_first = false}, operand_names = ["input", "hx#0", "hx#1", "params#0", "params#1", "params#2", "params#3", "params#4", "params#5"], schema = "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"} : (tensor<1x1x3xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>, tensor<8x3xf32>, tensor<8x1xf32>, tensor<1x2xf32>, tensor<8x1xf32>, tensor<8x1xf32>, tensor<1x2xf32>) -> (tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>)
  func.return %0, %1, %2 : tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>
}

// Without initial states (zeros, as nn.LSTM makes them) and with constant weights,
// constant-fold computes the first step's h0 @ w_hh^T + b_hh (eager's value: b_hh here);
// fuse-post-ops joins + x_t to the GEMMs of the later steps, which read x_t in place.
// OPT-LABEL: func.func @lstm_zero_state
// OPT:         %[[P:.*]] = fused.linear %x, %wi bias(%bi : tensor<4xf32>) : (tensor<3x1x2xf32>, tensor<4x2xf32>) -> tensor<3x1x4xf32>
// OPT:         %[[X0:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 0 : i64}
// OPT-NEXT:    %[[HH0:.*]] = torch.literal dense<[{{\[}}-1.000000e-01, 2.500000e-01, 5.000000e-01, 7.500000e-01]]> : tensor<1x4xf32>
// OPT-NEXT:    torch.aten.add.Tensor %[[HH0]], %[[X0]]
// OPT:         %[[X1:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 1 : i64}
// OPT-NEXT:    fused.linear %{{.*}}, %wh bias(%bh : tensor<4xf32>) other(%[[X1]] : tensor<1x4xf32>) {post_ops = [#fused.binary<add, 1.0>]}
// OPT:         %[[X2:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 2 : i64}
// OPT-NEXT:    fused.linear %{{.*}}, %wh bias(%bh : tensor<4xf32>) other(%[[X2]] : tensor<1x4xf32>) {post_ops = [#fused.binary<add, 1.0>]}
// OPT-NOT:     fused.linear
// OPT-NOT:     torch.aten.zeros
func.func @lstm_zero_state(%x: tensor<3x1x2xf32>) -> tensor<3x1x1xf32> {
  %wi = torch.literal dense<[[0.5, -0.25], [0.125, 1.0], [-1.0, 0.75], [0.25, 0.25]]> : tensor<4x2xf32>
  %wh = torch.literal dense<[[0.5], [-0.5], [2.0], [1.5]]> : tensor<4x1xf32>
  %bi = torch.literal dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %bh = torch.literal dense<[-0.1, 0.25, 0.5, 0.75]> : tensor<4xf32>
  %h0 = torch.aten.zeros {size = array<i64: 1, 1, 1>, dtype = f32, device = "cpu", pin_memory = false} : tensor<1x1x1xf32>
  %0, %1, %2 = torch.operator "aten::lstm.input"(%x, %h0, %h0, %wi, %wh, %bi, %bh) {args = {has_biases = true, num_layers = 1 : i64, dropout = 0.000000e+00 : f64, train = false, bidirectional = false, batch_first = false}, operand_names = ["input", "hx#0", "hx#1", "params#0", "params#1", "params#2", "params#3"], schema = "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"} : (tensor<3x1x2xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<4x2xf32>, tensor<4x1xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<3x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  func.return %0 : tensor<3x1x1xf32>
}

// Dropout between layers in training mode is random: the op is left alone, saying why.
// CHECK-LABEL: func.func @lstm_train_dropout
// CHECK-NEXT:    torch.operator "aten::lstm.input"{{.*}}ziggurat.declined = "decompose-rnn: dropout 0.5 between layers in training mode"
func.func @lstm_train_dropout(%x: tensor<1x1x3xf32>, %h0: tensor<2x1x1xf32>, %c0: tensor<2x1x2xf32>, %wi0: tensor<8x3xf32>, %wh0: tensor<8x1xf32>, %wr0: tensor<1x2xf32>, %wi1: tensor<8x1xf32>, %wh1: tensor<8x1xf32>, %wr1: tensor<1x2xf32>) -> (tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>) {
  %0, %1, %2 = torch.operator "aten::lstm.input"(%x, %h0, %c0, %wi0, %wh0, %wr0, %wi1, %wh1, %wr1) {args = {has_biases = false, num_layers = 2 : i64, dropout = 0.5 : f64, train = true, bidirectional = false, batch_first = false}, operand_names = ["input", "hx#0", "hx#1", "params#0", "params#1", "params#2", "params#3", "params#4", "params#5"], schema = "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"} : (tensor<1x1x3xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>, tensor<8x3xf32>, tensor<8x1xf32>, tensor<1x2xf32>, tensor<8x1xf32>, tensor<8x1xf32>, tensor<1x2xf32>) -> (tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>)
  func.return %0, %1, %2 : tensor<1x1x1xf32>, tensor<2x1x1xf32>, tensor<2x1x2xf32>
}

// nn.RNN(nonlinearity="relu"): one gate, relu of the step's GEMM plus x_t.
// CHECK-LABEL: func.func @rnn_relu
// CHECK-NEXT:    %[[P:.*]] = torch.aten.linear %x, %wi bias(%bi) : (tensor<2x1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x1x2xf32>
// CHECK-NEXT:    %[[H0:.*]] = torch.aten.select.int %h0 {dim = 0 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[X0:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 0 : i64}
// CHECK-NEXT:    %[[G0:.*]] = torch.aten.linear %[[H0]], %wh bias(%bh)
// CHECK-NEXT:    %[[A0:.*]] = torch.aten.add.Tensor %[[G0]], %[[X0]]
// CHECK-NEXT:    %[[R0:.*]] = torch.aten.relu %[[A0]]
// CHECK-NEXT:    %[[X1:.*]] = torch.aten.select.int %[[P]] {dim = 0 : i64, index = 1 : i64}
// CHECK-NEXT:    %[[G1:.*]] = torch.aten.linear %[[R0]], %wh bias(%bh)
// CHECK-NEXT:    %[[A1:.*]] = torch.aten.add.Tensor %[[G1]], %[[X1]]
// CHECK-NEXT:    %[[R1:.*]] = torch.aten.relu %[[A1]]
// CHECK-NEXT:    torch.aten.stack [%[[R0]], %[[R1]]] {dim = 0 : i64}
// CHECK-NEXT:    torch.aten.stack [%[[R1]]] {dim = 0 : i64}
// CHECK-NOT:     aten::rnn_relu
// OPT-LABEL: func.func @rnn_relu
// OPT:         fused.linear %{{.*}}, %wh bias(%bh : tensor<2xf32>) other(%{{.*}} : tensor<1x2xf32>) {post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]}
func.func @rnn_relu(%x: tensor<2x1x3xf32>, %h0: tensor<1x1x2xf32>, %wi: tensor<2x3xf32>, %wh: tensor<2x2xf32>, %bi: tensor<2xf32>, %bh: tensor<2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>) {
  %0, %1 = torch.operator "aten::rnn_relu.input"(%x, %h0, %wi, %wh, %bi, %bh) {args = {has_biases = true, num_layers = 1 : i64, dropout = 0.000000e+00 : f64, train = false, bidirectional = false, batch_first = false}, operand_names = ["input", "hx", "params#0", "params#1", "params#2", "params#3"], schema = "aten::rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"} : (tensor<2x1x3xf32>, tensor<1x1x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x2xf32>)
  func.return %0, %1 : tensor<2x1x2xf32>, tensor<1x1x2xf32>
}

// Longer sequences than max_steps are left alone (the steps are unrolled); one step is not.
// STEPS-LABEL: func.func @lstm(
// STEPS-NEXT:    torch.operator "aten::lstm.input"{{.*}}ziggurat.declined = "decompose-rnn: 2 time steps, more than max_steps=1 (the steps are unrolled)"
// STEPS-LABEL: func.func @gru(
// STEPS-NEXT:    torch.operator "aten::gru.input"{{.*}}ziggurat.declined = "decompose-rnn: 2 time steps, more than max_steps=1
// STEPS-LABEL: func.func @lstm_projected_two_layers
// STEPS-NOT:     torch.operator
// STEPS-LABEL: func.func @lstm_zero_state
// STEPS:         torch.operator "aten::lstm.input"{{.*}}ziggurat.declined = "decompose-rnn: 3 time steps
// STEPS-LABEL: func.func @rnn_relu
// STEPS-NEXT:    torch.operator "aten::rnn_relu.input"{{.*}}ziggurat.declined = "decompose-rnn: 2 time steps, more than max_steps=1

// STATS:       decompose-rnn:
// STATS-NEXT:    cell steps                               13
// STATS-NEXT:    gru                                      1
// STATS-NEXT:    left alone                               1
// STATS-NEXT:    lstm                                     3
// STATS-NEXT:    rnn_relu                                 1
