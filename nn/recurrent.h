// RNN, GRU and LSTM layers with PyTorch's semantics and parameter names, so that weights move between
// the two by name (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, and _reverse for the backward
// direction of a bidirectional layer).
//
//   nn::LSTM lstm({.input_size = 100, .hidden_size = 100, .num_layers = 2, .bidirectional = true});
//   nn::RecurrentOutput r = lstm(x, {}, valid_lens);  // x (L, N, 100), valid_lens (N) int64
//   r.output;  // (L, N, 200): both directions' hidden states at every step, zeros past each length
//   r.h_n;     // (4, N, 100): the final hidden state of each layer and direction; r.c_n likewise
//
// Each step (gates in PyTorch's order; W_i·x_t for the whole sequence is one matrix product up front):
//   RNN   h' = tanh(W_i·x_t + b_i + W_h·h + b_h)                  (or relu)
//   GRU   r, z = σ(W_ir·x_t + b_ir + W_hr·h + b_hr), σ(... z ...)
//         n = tanh(W_in·x_t + b_in + r ⊙ (W_hn·h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h
//   LSTM  i, f, g, o = σ, σ, tanh, σ of (W_i·x_t + b_i + W_h·h + b_h) split in four
//         c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh(c')
// The recurrence is recorded step by step, so the graph's depth grows with the sequence, which is what
// makes an RNN sequential (docs/textbook.md measures it).
//
// Valid lengths behave as PyTorch's packed sequences: a sequence's state stops changing after its last
// token, so h_n is taken at its own length; the reverse direction starts at its own last token; the
// output past a sequence's length is zero.
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/positional_options.h"

namespace minigrad::nn {

enum class Nonlinearity { Tanh, ReLU };

struct RNNOptions {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  Nonlinearity nonlinearity = Nonlinearity::Tanh;  // RNN only; GRU and LSTM refuse ReLU
  bool bias = true;
  bool batch_first =
      false;           // input and output (N, L, ·) instead of (L, N, ·); the states stay (layers, N, H)
  double dropout = 0;  // on each layer's output but the last, in training mode
  bool bidirectional = false;
  // Where the initial weights and the dropout masks are drawn from; nullptr: this thread's default
  // generator. Not owned.
  Generator* generator = nullptr;
};
using GRUOptions = RNNOptions;
using LSTMOptions = RNNOptions;

// The state a recurrent layer starts from: h0 (num_layers · directions, N, H), and c0 likewise for an
// LSTM. Undefined: zeros.
struct RecurrentState {
  RecurrentState() = default;
  RecurrentState(Variable h0, Variable c0 = {})
      : h(std::move(h0)), c(std::move(c0)) {}  // NOLINT: {h0} reads well
  Variable h;
  Variable c;
};

struct RecurrentOutput {
  Variable output;  // (L, N, directions · H), or (N, L, directions · H) with batch_first
  Variable h_n;     // (num_layers · directions, N, H): layer 0 forward, layer 0 reverse, layer 1 ...
  Variable c_n;     // the same for an LSTM's cell state; undefined for RNN and GRU
};

// What RNN, GRU and LSTM share: the parameters, the layers and directions, lengths and dropout. They
// differ only in the step (the cell) and the number of gates.
class RecurrentBase : public Layer<RecurrentBase> {
 public:
  // input (L, N, input_size), or (N, L, input_size) with batch_first; valid_lens (N) int64 in 1..L, or
  // undefined when every sequence is L long.
  RecurrentOutput forward(const Variable& input, const RecurrentState& initial = {},
                          const Tensor& valid_lens = {}) const;

  std::string extra_repr() const override;

  // One layer and direction's parameters, as registered: weight_ih (gates · H, in), weight_hh (gates · H,
  // H), bias_ih and bias_hh (gates · H), the biases undefined without bias.
  struct Weights {
    Variable weight_ih, weight_hh, bias_ih, bias_hh;
  };
  // Indexed layer · directions + direction, the order of h_n.
  std::vector<Weights> weights;
  RNNOptions options;

 protected:
  enum class Cell { RNNTanh, RNNReLU, GRU, LSTM };
  RecurrentBase(Cell cell, const RNNOptions& options);
  // The options with PyTorch's positional input_size and hidden_size written in.
  static RNNOptions with_sizes(RNNOptions options, int64_t input_size, int64_t hidden_size,
                               const char* layer);

 private:
  struct Run;  // one layer and direction over the sequence (recurrent.cpp)
  int64_t directions() const { return options.bidirectional ? 2 : 1; }
  Cell cell_;
};

class RNN : public RecurrentBase {
 public:
  explicit RNN(const RNNOptions& options);
  // PyTorch's RNN(input_size, hidden_size, ...): nn::RNN(8, 16, {.num_layers = 2}).
  explicit RNN(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      RNN,
      ConstructorLines<void(const RNNOptions&), void(int64_t, int64_t), void(int64_t, int64_t, RNNOptions)>,
      A...>
  explicit RNN(A&&...) : RNN(RNNOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::RNN takes (input_size, hidden_size), then {options}; or (RNNOptions)");
  }
  std::string name() const override { return "RNN"; }
};

class GRU : public RecurrentBase {
 public:
  explicit GRU(const GRUOptions& options);
  explicit GRU(int64_t input_size, int64_t hidden_size,
               GRUOptions options = {});  // PyTorch's GRU(input_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      GRU,
      ConstructorLines<void(const GRUOptions&), void(int64_t, int64_t), void(int64_t, int64_t, GRUOptions)>,
      A...>
  explicit GRU(A&&...) : GRU(GRUOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::GRU takes (input_size, hidden_size), then {options}; or (GRUOptions)");
  }
  std::string name() const override { return "GRU"; }
};

class LSTM : public RecurrentBase {
 public:
  explicit LSTM(const LSTMOptions& options);
  explicit LSTM(int64_t input_size, int64_t hidden_size,
                LSTMOptions options = {});  // PyTorch's LSTM(input_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      LSTM,
      ConstructorLines<void(const LSTMOptions&), void(int64_t, int64_t), void(int64_t, int64_t, LSTMOptions)>,
      A...>
  explicit LSTM(A&&...) : LSTM(LSTMOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::LSTM takes (input_size, hidden_size), then {options}; or (LSTMOptions)");
  }
  std::string name() const override { return "LSTM"; }
};

}  // namespace minigrad::nn
