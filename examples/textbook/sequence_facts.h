// The structural columns of d2l's comparison of CNNs, RNNs and self-attention ("Self-Attention and
// Positional Encoding"), measured on minigrad's own graph and gradients: shared by
// minigrad-sequence-layers and the tests that assert them.
//
//   sequential operations   the depth of the autograd graph from input to output (graph_depth): the ops
//                           that must run one after another
//   maximum path length     how many layers (or recurrent steps) a gradient must cross before the last
//                           output depends on the first input (layers_to_connect,
//                           recurrent_steps_to_connect)
//
// Every layer maps a batch-first sequence x (N, n, d) to (N, n, d).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/autograd/variable.h"
#include "minigrad/tensor/random.h"

namespace textbook {

enum class SequenceLayerKind {
  Convolution,        // nn::Conv1d with padding_same: position i sees i − (k−1)/2 … i + (k−1)/2
  CausalConvolution,  // nn::Conv1d padded by k − 1 on the left only: position i sees i − k + 1 … i
  Recurrent,          // nn::RNN (tanh), left to right, hidden size d
  SelfAttention,      // nn::MultiHeadAttention with queries = keys = values = x
};

struct SequenceLayerOptions {
  int64_t d = 0;            // the width of a token, in and out
  int64_t kernel_size = 3;  // the convolutions'
  int64_t heads = 4;        // self-attention's; must divide d
  minigrad::DType dtype = minigrad::DType::Float32;
  minigrad::Generator* generator = nullptr;  // the weights'; nullptr: this thread's default. Not owned.
};

// One layer with weights of its own, as a function x (N, n, d) -> (N, n, d) that owns its module.
//   SequenceLayer rnn = make_layer(SequenceLayerKind::Recurrent, {.d = 64});
//   Variable y = rnn(x);
using SequenceLayer = std::function<minigrad::Variable(const minigrad::Variable&)>;
SequenceLayer make_layer(SequenceLayerKind kind, const SequenceLayerOptions& options);

// The recorded ops on the longest path from `input` (a leaf that requires grad) to `output` in output's
// autograd graph, input side first; views such as transpose count. Empty when output is input; throws
// ValueError when output does not depend on input. Walks the graph with an explicit stack, so a graph
// thousands of ops deep cannot overflow the C++ stack.
//   longest_path(linear(x, w, b), x)  // {"linear"}
std::vector<std::string> longest_path(const minigrad::Variable& output, const minigrad::Variable& input);

// longest_path(output, input).size(): the ops that must run one after another, d2l's "sequential
// operations".
int64_t graph_depth(const minigrad::Variable& output, const minigrad::Variable& input);

// ‖∂⟨u, y[0, m−1]⟩ / ∂x[0, j]‖₂ for j = 0 … n−1: how strongly the last output of y (1, m, d) depends on
// each position of x (1, n, d'), for an upstream gradient u (d). One backward pass; the graph is kept.
// Exactly 0 where y's last output does not depend on x[0, j].
std::vector<double> last_output_gradient(const minigrad::Variable& y, const minigrad::Variable& x,
                                         const minigrad::Tensor& u);

// The fewest layers of `kind`, stacked, for which the last of n outputs depends on the first input
// (∂y_n/∂x_1 ≠ 0, one backward pass per height). 0 if max_layers layers do not reach.
// The convolutions: ⌈(n−1)/(k−1)⌉ causal, ⌈(n−1)/((k−1)/2)⌉ centred. Self-attention and the RNN: 1.
int64_t layers_to_connect(SequenceLayerKind kind, int64_t n, const SequenceLayerOptions& options,
                          int64_t max_layers);

// The fewest recurrent steps between x_1 and y_n: nn::RNN runs one step at a time, and the gradient is
// let through only the last `window` hand-offs of the hidden state (truncated backpropagation through
// time); returns the smallest window at which ∂y_n/∂x_1 ≠ 0. For the RNN that is n − 1.
int64_t recurrent_steps_to_connect(int64_t n, const SequenceLayerOptions& options);

}  // namespace textbook
