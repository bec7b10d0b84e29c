// minigrad-encoder-layer-reference: nn::TransformerEncoderLayer against PyTorch's, in float64, both ways.
//
//   --out DIR     writes each case's layer (its parameters under PyTorch's names), input, upstream
//                 gradient, output and gradients to DIR/encoder_layer_*.safetensors, for
//                 scripts/compare-encoder-layer-with-pytorch.py to load into nn.TransformerEncoderLayer
//                 (strictly: every name must match) and compare;
//   --check DIR   loads DIR/torch_state.safetensors, a PyTorch layer's state dict that the script wrote, into
//                 a layer made with the options in DIR/torch_io.safetensors (strictly, with
//                 optim::load_weights), runs the input there and prints how far the output is from
//                 PyTorch's; exits 1 beyond 1e-10.
//
//   minigrad-encoder-layer-reference --out /tmp/enc
//   /usr/bin/python3 scripts/compare-encoder-layer-with-pytorch.py /tmp/enc minigrad-encoder-layer-reference
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
  nn::TransformerEncoderLayerOptions options;
  std::string mask;  // "none", "key_padding" or "causal"
};

const Tensor& key_padding_mask() {
  // Batch of 2, 4 steps: the second sequence has 2 padding steps at its end.
  static const Tensor mask = Tensor::from_values({0, 0, 0, 0, 0, 0, 1, 1}, {2, 4}, DType::Bool);
  return mask;
}

nn::AttentionMask make_mask(const std::string& kind) {
  if (kind == "key_padding") return {.key_padding_mask = key_padding_mask()};
  if (kind == "causal") return {.causal = true};
  return {};
}

std::map<std::string, std::string> describe(const Case& c) {
  const nn::TransformerEncoderLayerOptions& o = c.options;
  return {{"d_model", std::to_string(o.d_model)},
          {"nhead", std::to_string(o.nhead)},
          {"dim_feedforward", std::to_string(o.dim_feedforward)},
          {"activation", o.activation == nn::Activation::ReLU ? "relu" : "gelu"},
          {"layer_norm_eps", std::to_string(o.layer_norm_eps)},
          {"batch_first", o.batch_first ? "1" : "0"},
          {"norm_first", o.norm_first ? "1" : "0"},
          {"mask", c.mask}};
}

void write_case(const Case& c, const std::string& out) {
  manual_seed(5);
  nn::TransformerEncoderLayer layer(c.options);
  layer.to(F64);
  // Random values everywhere (biases and LayerNorm's weights included), so that no parameter's role hides.
  for (const Variable& p : layer.parameters()) p.data().copy_(Tensor::normal(p.shape(), 0, 0.5, F64));
  layer.eval();
  const Shape shape = c.options.batch_first ? Shape{2, 4, c.options.d_model} : Shape{4, 2, c.options.d_model};
  const Variable x(Tensor::normal(shape, 0, 1, F64), true);
  const Variable y = layer(x, make_mask(c.mask));
  const Tensor v = Tensor::normal(y.shape(), 0, 1, F64);  // the upstream gradient
  sum(y * Variable(v)).backward();

  std::vector<std::pair<std::string, Tensor>> tensors = reference::parameters_and_gradients(layer);
  tensors.emplace_back("x", x.data());
  tensors.emplace_back("x.grad", x.grad());
  tensors.emplace_back("v", v);
  tensors.emplace_back("y", y.data());
  if (c.mask == "key_padding") tensors.emplace_back("key_padding_mask", key_padding_mask().to(F64));
  const std::string path = out + "/encoder_layer_" + c.name + ".safetensors";
  save_safetensors(path, tensors, describe(c));
  std::cout << "wrote " << path << "\n";
}

// The PyTorch layer's state dict, loaded strictly; its output on PyTorch's input against PyTorch's.
int check(const std::string& folder) {
  const SafetensorsFile io = load_safetensors(folder + "/torch_io.safetensors");
  const auto& m = io.metadata;
  nn::TransformerEncoderLayer layer(
      {.d_model = std::stoll(m.at("d_model")),
       .nhead = std::stoll(m.at("nhead")),
       .dim_feedforward = std::stoll(m.at("dim_feedforward")),
       .activation = m.at("activation") == "relu" ? nn::Activation::ReLU : nn::Activation::GELU,
       .layer_norm_eps = std::stod(m.at("layer_norm_eps")),
       .batch_first = m.at("batch_first") == "1",
       .norm_first = m.at("norm_first") == "1"});
  layer.to(F64);
  optim::load_weights(layer, folder + "/torch_state.safetensors");  // strict: every name, no other
  layer.eval();
  auto tensor = [&](const std::string& name) {
    const Tensor* t = io.find(name);
    if (t == nullptr)
      throw ValueError("minigrad-encoder-layer-reference", "torch_io.safetensors has no " + name);
    return *t;
  };
  const Tensor y = layer(Variable(tensor("x")), make_mask(m.at("mask"))).data();
  const double diff = max(abs(y - tensor("y"))).item();
  std::cout << "PyTorch's state dict loaded into nn::TransformerEncoderLayer: max |minigrad - PyTorch| = "
            << diff << "\n";
  return diff < 1e-10 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nn::TransformerEncoderLayer against PyTorch's nn.TransformerEncoderLayer, both ways."};
  std::string out, check_folder;
  app.add_option("--out", out, "Folder for encoder_layer_*.safetensors");
  app.add_option("--check", check_folder, "Folder holding torch_state.safetensors and torch_io.safetensors");
  app.require_option(1);
  CLI11_PARSE(app, argc, argv);
  try {
    if (!check_folder.empty()) return check(check_folder);
    std::filesystem::create_directories(out);
    const std::vector<Case> cases = {
        {"post_norm_relu_seq_first_padding",
         {.d_model = 8, .nhead = 2, .dim_feedforward = 16},
         "key_padding"},
        {"pre_norm_gelu_batch_first_causal",
         {.d_model = 8,
          .nhead = 4,
          .dim_feedforward = 12,
          .activation = nn::Activation::GELU,
          .batch_first = true,
          .norm_first = true},
         "causal"},
        {"post_norm_relu_batch_first_no_mask",
         {.d_model = 6, .nhead = 3, .dim_feedforward = 10, .batch_first = true},
         "none"},
    };
    for (const Case& c : cases) write_case(c, out);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
