// minigrad-recurrent-reference: writes RNN, GRU and LSTM layers' weights, inputs, outputs, final states
// and gradients (float64) to safetensors files under PyTorch's names, for
// scripts/compare-recurrent-with-pytorch.py to run the same computation through PyTorch's nn.RNN, nn.GRU
// and nn.LSTM (with packed sequences where lengths differ) and compare.
//
//   minigrad-recurrent-reference --out /tmp/rnn && /usr/bin/python3 scripts/compare-recurrent-with-pytorch.py
//   /tmp/rnn
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "examples/reference/parameter_tensors.h"
#include "minigrad/minigrad.h"

namespace {

using namespace minigrad;

constexpr DType F64 = DType::Float64;

struct Case {
  std::string name;
  std::string kind;  // "RNN", "GRU" or "LSTM"
  nn::RNNOptions options;
  int64_t length, batch;
  std::vector<int64_t> lengths;  // empty: every sequence is `length` long
  bool initial_state;
};

std::unique_ptr<nn::RecurrentBase> make_layer(const Case& c) {
  if (c.kind == "GRU") return std::make_unique<nn::GRU>(c.options);
  if (c.kind == "LSTM") return std::make_unique<nn::LSTM>(c.options);
  return std::make_unique<nn::RNN>(c.options);
}

Variable random_leaf(const Shape& shape) {
  return Variable(Tensor::normal(shape, 0, 1, F64), true);
}

void write_case(const Case& c, const std::string& out) {
  manual_seed(11);
  std::unique_ptr<nn::RecurrentBase> layer = make_layer(c);
  layer->to(F64);
  const nn::RNNOptions& o = c.options;
  const int64_t directions = o.bidirectional ? 2 : 1;
  const Shape x_shape =
      o.batch_first ? Shape{c.batch, c.length, o.input_size} : Shape{c.length, c.batch, o.input_size};
  const Shape state_shape{o.num_layers * directions, c.batch, o.hidden_size};
  const Variable x = random_leaf(x_shape);
  nn::RecurrentState initial;
  if (c.initial_state) {
    initial.h = random_leaf(state_shape);
    if (c.kind == "LSTM") initial.c = random_leaf(state_shape);
  }
  const Tensor lens = c.lengths.empty()
                          ? Tensor()
                          : Tensor::from_values(std::vector<double>(c.lengths.begin(), c.lengths.end()),
                                                {c.batch}, DType::Int64);
  const nn::RecurrentOutput r = (*layer)(x, initial, lens);
  // One scalar with a random upstream gradient for each result: Σ y·v + Σ h_n·v_h (+ Σ c_n·v_c).
  const Tensor v = Tensor::normal(r.output.shape(), 0, 1, F64),
               v_h = Tensor::normal(r.h_n.shape(), 0, 1, F64);
  Variable loss = sum(r.output * Variable(v)) + sum(r.h_n * Variable(v_h));
  Tensor v_c;
  if (r.c_n.defined()) {
    v_c = Tensor::normal(r.c_n.shape(), 0, 1, F64);
    loss = loss + sum(r.c_n * Variable(v_c));
  }
  loss.backward();

  std::vector<std::pair<std::string, Tensor>> tensors = reference::parameters_and_gradients(*layer);
  tensors.emplace_back("x", x.data());
  tensors.emplace_back("x.grad", x.grad());
  tensors.emplace_back("y", r.output.data());
  tensors.emplace_back("h_n", r.h_n.data());
  tensors.emplace_back("v", v);
  tensors.emplace_back("v_h", v_h);
  if (r.c_n.defined()) {
    tensors.emplace_back("c_n", r.c_n.data());
    tensors.emplace_back("v_c", v_c);
  }
  if (initial.h.defined()) {
    tensors.emplace_back("h0", initial.h.data());
    tensors.emplace_back("h0.grad", initial.h.grad());
  }
  if (initial.c.defined()) {
    tensors.emplace_back("c0", initial.c.data());
    tensors.emplace_back("c0.grad", initial.c.grad());
  }
  if (lens.defined()) tensors.emplace_back("lengths", lens.to(F64));  // the reader takes float64 only
  const std::string path = out + "/recurrent_" + c.name + ".safetensors";
  save_safetensors(path, tensors,
                   {{"kind", c.kind},
                    {"input_size", std::to_string(o.input_size)},
                    {"hidden_size", std::to_string(o.hidden_size)},
                    {"num_layers", std::to_string(o.num_layers)},
                    {"nonlinearity", o.nonlinearity == nn::Nonlinearity::ReLU ? "relu" : "tanh"},
                    {"bias", o.bias ? "1" : "0"},
                    {"batch_first", o.batch_first ? "1" : "0"},
                    {"bidirectional", o.bidirectional ? "1" : "0"}});
  std::cout << "wrote " << path << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write RNN, GRU and LSTM layers' weights, inputs, outputs and gradients for comparison with PyTorch."};
  std::string out = "out/recurrent-reference";
  app.add_option("--out", out, "Folder for recurrent_*.safetensors")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::vector<Case> cases = {
      {"rnn_tanh_initial_state", "RNN", {.input_size = 3, .hidden_size = 4}, 5, 2, {}, true},
      {"rnn_relu_bidirectional_nobias_lengths",
       "RNN",
       {.input_size = 3,
        .hidden_size = 4,
        .nonlinearity = nn::Nonlinearity::ReLU,
        .bias = false,
        .bidirectional = true},
       6,
       3,
       {6, 2, 4},
       false},
      {"gru_2layers_bidirectional_lengths",
       "GRU",
       {.input_size = 3, .hidden_size = 5, .num_layers = 2, .bidirectional = true},
       6,
       3,
       {3, 6, 1},
       true},
      {"lstm_2layers_bidirectional_batch_first_lengths",
       "LSTM",
       {.input_size = 4, .hidden_size = 3, .num_layers = 2, .batch_first = true, .bidirectional = true},
       7,
       3,
       {7, 4, 5},
       true},
      {"lstm_1layer", "LSTM", {.input_size = 2, .hidden_size = 6}, 4, 2, {}, false},
  };
  try {
    std::filesystem::create_directories(out);
    for (const Case& c : cases) write_case(c, out);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
