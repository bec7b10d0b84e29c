// minigrad-conv-reference: writes Conv1d and Conv2d layers' weights, inputs, outputs and gradients
// (float64) to safetensors files under PyTorch's names, for scripts/compare-conv-with-pytorch.py to run
// the same computation through PyTorch's nn.Conv1d and nn.Conv2d and compare.
//
//   minigrad-conv-reference --out /tmp/conv && /usr/bin/python3 scripts/compare-conv-with-pytorch.py
//   /tmp/conv
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "examples/reference/parameter_tensors.h"
#include "minigrad/minigrad.h"

namespace {

using namespace minigrad;

// Runs a random x of `shape` through `layer` with a random upstream gradient and writes the layer, x, the
// gradient, the output and every gradient to `path`, with the layer's options as `metadata`.
void write_case(const nn::Module& layer, const Shape& shape,
                const std::function<Variable(const Variable&)>& forward,
                std::map<std::string, std::string> metadata, const std::string& path) {
  const Variable x(Tensor::normal(shape, 0, 1, DType::Float64), true);
  const Variable y = forward(x);
  const Tensor v = Tensor::normal(y.shape(), 0, 1, DType::Float64);  // the upstream gradient
  y.backward(v);
  std::vector<std::pair<std::string, Tensor>> tensors = reference::parameters_and_gradients(layer);
  tensors.emplace_back("x", x.data());
  tensors.emplace_back("x.grad", x.grad());
  tensors.emplace_back("v", v);
  tensors.emplace_back("y", y.data());
  save_safetensors(path, tensors, metadata);
  std::cout << "wrote " << path << "\n";
}

std::string pair(Size2d s) {
  return std::to_string(s.h) + "," + std::to_string(s.w);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write Conv1d and Conv2d layers' weights, inputs, outputs and gradients for comparison with PyTorch."};
  std::string out = "out/conv-reference";
  app.add_option("--out", out, "Folder for conv1d_*.safetensors and conv2d_*.safetensors")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  struct Case1d {
    std::string name;
    nn::Conv1dOptions options;
    int64_t length;
  };
  const std::vector<Case1d> cases_1d = {
      {"stride2_padding1",
       {.in_channels = 3, .out_channels = 4, .kernel_size = 3, .stride = 2, .padding = 1},
       9},
      {"dilation2_groups2_nobias",
       {.in_channels = 4, .out_channels = 6, .kernel_size = 2, .dilation = 2, .groups = 2, .bias = false},
       8},
      {"same_even_kernel", {.in_channels = 2, .out_channels = 3, .kernel_size = 4, .padding_same = true}, 7},
  };
  struct Case2d {
    std::string name;
    nn::Conv2dOptions options;
    int64_t height, width;
  };
  const std::vector<Case2d> cases_2d = {
      {"3x3_padding1", {.in_channels = 3, .out_channels = 4, .kernel_size = 3, .padding = 1}, 6, 5},
      {"3x2_stride2x1_padding1x0",
       {.in_channels = 2, .out_channels = 3, .kernel_size = {3, 2}, .stride = {2, 1}, .padding = {1, 0}},
       7,
       6},
      {"dilation2_groups2_nobias",
       {.in_channels = 4, .out_channels = 6, .kernel_size = 2, .dilation = 2, .groups = 2, .bias = false},
       6,
       7},
      {"same_even_kernel",
       {.in_channels = 2, .out_channels = 3, .kernel_size = {2, 4}, .padding_same = true},
       5,
       6},
  };
  try {
    std::filesystem::create_directories(out);
    for (const Case1d& c : cases_1d) {
      manual_seed(7);
      nn::Conv1d layer(c.options);
      layer.to(DType::Float64);
      const nn::Conv1dOptions& o = c.options;
      write_case(
          layer, {2, o.in_channels, c.length}, [&](const Variable& x) { return layer.forward(x); },
          {{"kind", "Conv1d"},
           {"in_channels", std::to_string(o.in_channels)},
           {"out_channels", std::to_string(o.out_channels)},
           {"kernel_size", std::to_string(o.kernel_size)},
           {"stride", std::to_string(o.stride)},
           {"padding", o.padding_same ? "same" : std::to_string(o.padding)},
           {"dilation", std::to_string(o.dilation)},
           {"groups", std::to_string(o.groups)},
           {"bias", o.bias ? "1" : "0"}},
          out + "/conv1d_" + c.name + ".safetensors");
    }
    for (const Case2d& c : cases_2d) {
      manual_seed(7);
      nn::Conv2d layer(c.options);
      layer.to(DType::Float64);
      const nn::Conv2dOptions& o = c.options;
      write_case(
          layer, {2, o.in_channels, c.height, c.width}, [&](const Variable& x) { return layer.forward(x); },
          {{"kind", "Conv2d"},
           {"in_channels", std::to_string(o.in_channels)},
           {"out_channels", std::to_string(o.out_channels)},
           {"kernel_size", pair(o.kernel_size)},
           {"stride", pair(o.stride)},
           {"padding", o.padding_same ? "same" : pair(o.padding)},
           {"dilation", pair(o.dilation)},
           {"groups", std::to_string(o.groups)},
           {"bias", o.bias ? "1" : "0"}},
          out + "/conv2d_" + c.name + ".safetensors");
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
