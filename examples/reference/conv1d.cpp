// minigrad-conv-reference: writes Conv1d layers' weights, inputs, outputs and gradients (float64) to
// safetensors files under PyTorch's names, for scripts/compare-conv-with-pytorch.py to run the same
// computation through PyTorch's nn.Conv1d and compare.
//
//   minigrad-conv-reference --out /tmp/conv && /usr/bin/python3 scripts/compare-conv-with-pytorch.py
//   /tmp/conv
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "examples/reference/parameter_tensors.h"
#include "minigrad/minigrad.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  CLI::App app{"Write Conv1d layers' weights, inputs, outputs and gradients for comparison with PyTorch."};
  std::string out = "out/conv-reference";
  app.add_option("--out", out, "Folder for conv1d_*.safetensors")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  struct Case {
    std::string name;
    nn::Conv1dOptions options;
    int64_t length;
  };
  const std::vector<Case> cases = {
      {"stride2_padding1",
       {.in_channels = 3, .out_channels = 4, .kernel_size = 3, .stride = 2, .padding = 1},
       9},
      {"dilation2_groups2_nobias",
       {.in_channels = 4, .out_channels = 6, .kernel_size = 2, .dilation = 2, .groups = 2, .bias = false},
       8},
      {"same_even_kernel", {.in_channels = 2, .out_channels = 3, .kernel_size = 4, .padding_same = true}, 7},
  };
  try {
    std::filesystem::create_directories(out);
    for (const Case& c : cases) {
      manual_seed(7);
      nn::Conv1d layer(c.options);
      layer.to(DType::Float64);
      const Variable x(Tensor::normal({2, c.options.in_channels, c.length}, 0, 1, DType::Float64), true);
      const Variable y = layer.forward(x);
      const Tensor v = Tensor::normal(y.shape(), 0, 1, DType::Float64);  // the upstream gradient
      y.backward(v);
      std::vector<std::pair<std::string, Tensor>> tensors = reference::parameters_and_gradients(layer);
      tensors.emplace_back("x", x.data());
      tensors.emplace_back("x.grad", x.grad());
      tensors.emplace_back("v", v);
      tensors.emplace_back("y", y.data());
      const nn::Conv1dOptions& o = c.options;
      const std::string padding = o.padding_same ? "same" : std::to_string(o.padding);
      const std::string path = out + "/conv1d_" + c.name + ".safetensors";
      save_safetensors(path, tensors,
                       {{"in_channels", std::to_string(o.in_channels)},
                        {"out_channels", std::to_string(o.out_channels)},
                        {"kernel_size", std::to_string(o.kernel_size)},
                        {"stride", std::to_string(o.stride)},
                        {"padding", padding},
                        {"dilation", std::to_string(o.dilation)},
                        {"groups", std::to_string(o.groups)},
                        {"bias", o.bias ? "1" : "0"}});
      std::cout << "wrote " << path << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
