// minigrad-conv-reference: writes Conv1d, Conv2d, BatchNorm1d and BatchNorm2d layers' weights (and
// running statistics), inputs, outputs and gradients (float64) to safetensors files under PyTorch's names,
// for scripts/compare-conv-with-pytorch.py to run the same computation through PyTorch's layers and
// compare; for batch normalization also the running statistics after the training step.
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

// Runs x through `forward` (the layer's) with a random upstream gradient and writes to `path`: `tensors`
// (what the case saved before the step), the layer's parameters and gradients, its buffers after the
// step ("<name>.after"), x, the upstream gradient, the output and x's gradient; the layer's options as
// `metadata`.
void run_and_write(const nn::Module& layer, const Variable& x,
                   const std::function<Variable(const Variable&)>& forward,
                   std::vector<std::pair<std::string, Tensor>> tensors,
                   std::map<std::string, std::string> metadata, const std::string& path) {
  const Variable y = forward(x);
  const Tensor v = Tensor::normal(y.shape(), 0, 1, DType::Float64);  // the upstream gradient
  y.backward(v);
  for (auto& entry : reference::parameters_and_gradients(layer)) tensors.push_back(std::move(entry));
  for (const auto& [name, b] : layer.named_buffers())
    tensors.emplace_back(name + ".after", b.data().to(DType::Float64));
  tensors.emplace_back("x", x.data());
  tensors.emplace_back("x.grad", x.grad());
  tensors.emplace_back("v", v);
  tensors.emplace_back("y", y.data());
  save_safetensors(path, tensors, metadata);
  std::cout << "wrote " << path << "\n";
}

// A BatchNorm layer's training step from random running statistics and affine parameters, which are
// written as the state before the step.
void write_batch_norm_case(nn::BatchNorm& layer, const Shape& shape,
                           std::map<std::string, std::string> metadata, const std::string& path) {
  layer.to(DType::Float64);
  for (const Variable& p : layer.parameters())
    p.data().copy_(Tensor::normal(p.shape(), 1, 0.5, DType::Float64));
  std::vector<std::pair<std::string, Tensor>> before;
  if (layer.options.track_running_stats) {
    layer.running_mean.data().copy_(Tensor::normal({layer.options.num_features}, 0, 1, DType::Float64));
    layer.running_var.data().copy_(Tensor::uniform({layer.options.num_features}, 0.5, 1.5, DType::Float64));
    layer.num_batches_tracked.data().fill_(3);
    for (const auto& [name, b] : layer.named_buffers())
      before.emplace_back(name, b.data().clone().to(DType::Float64));
  }
  const Variable x(Tensor::normal(shape, 0.5, 2, DType::Float64), true);
  run_and_write(
      layer, x, [&](const Variable& in) { return layer(in); }, std::move(before), std::move(metadata), path);
}

// A size as the metadata writes it: "3" for Conv1d's, "3,2" for Conv2d's (height, width).
std::string size_text(int64_t n) {
  return std::to_string(n);
}
std::string size_text(Size2d s) {
  return std::to_string(s.h) + "," + std::to_string(s.w);
}

// A Conv1d or Conv2d (`kind`) of `options`, from seed 7, on a random input of `input_shape`: run and
// written to `path` with its options as metadata.
template <typename Conv, typename Options>
void write_conv_case(const std::string& kind, const Options& o, const Shape& input_shape,
                     const std::string& path) {
  manual_seed(7);
  Conv layer(o);
  layer.to(DType::Float64);
  run_and_write(
      layer, Variable(Tensor::normal(input_shape, 0, 1, DType::Float64), true),
      [&](const Variable& x) { return layer(x); }, {},
      {{"kind", kind},
       {"in_channels", std::to_string(o.in_channels)},
       {"out_channels", std::to_string(o.out_channels)},
       {"kernel_size", size_text(o.kernel_size)},
       {"stride", size_text(o.stride)},
       {"padding", o.padding_same ? "same" : size_text(o.padding)},
       {"dilation", size_text(o.dilation)},
       {"groups", std::to_string(o.groups)},
       {"bias", o.bias ? "1" : "0"}},
      path);
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
      // 32 input and 32 output channels: the forward and the input's gradient run as Winograd's F(2×2, 3×3)
      // (tensor/winograd.h)
      {"3x3_padding1_winograd",
       {.in_channels = 32, .out_channels = 32, .kernel_size = 3, .padding = 1},
       7,
       6},
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
      write_conv_case<nn::Conv1d>("Conv1d", c.options, {2, c.options.in_channels, c.length},
                                  out + "/conv1d_" + c.name + ".safetensors");
    }
    for (const Case2d& c : cases_2d) {
      write_conv_case<nn::Conv2d>("Conv2d", c.options, {2, c.options.in_channels, c.height, c.width},
                                  out + "/conv2d_" + c.name + ".safetensors");
    }
    // One example without its batch dimension, (C, L) and (C, H, W), as PyTorch takes it.
    write_conv_case<nn::Conv1d>("Conv1d", cases_1d.front().options,
                                {cases_1d.front().options.in_channels, cases_1d.front().length},
                                out + "/conv1d_unbatched.safetensors");
    write_conv_case<nn::Conv2d>(
        "Conv2d", cases_2d.front().options,
        {cases_2d.front().options.in_channels, cases_2d.front().height, cases_2d.front().width},
        out + "/conv2d_unbatched.safetensors");
    struct CaseNorm {
      std::string name;
      nn::BatchNormOptions options;
      Shape shape;
    };
    const std::vector<CaseNorm> cases_norm = {
        {"batch_norm2d", {.num_features = 3}, {4, 3, 5, 6}},
        {"batch_norm2d_cumulative_no_affine",
         {.num_features = 2, .momentum = std::nullopt, .affine = false},
         {3, 2, 4, 4}},
        {"batch_norm1d_sequences", {.num_features = 4, .momentum = 0.3}, {5, 4, 7}},
        {"batch_norm1d_features_untracked", {.num_features = 6, .track_running_stats = false}, {8, 6}},
    };
    for (const CaseNorm& c : cases_norm) {
      manual_seed(7);
      const nn::BatchNormOptions& o = c.options;
      std::unique_ptr<nn::BatchNorm> layer;
      if (c.shape.size() == 4) {
        layer = std::make_unique<nn::BatchNorm2d>(o);
      } else {
        layer = std::make_unique<nn::BatchNorm1d>(o);
      }
      write_batch_norm_case(*layer, c.shape,
                            {{"kind", layer->name()},
                             {"num_features", std::to_string(o.num_features)},
                             {"momentum", o.momentum ? std::to_string(*o.momentum) : "None"},
                             {"affine", o.affine ? "1" : "0"},
                             {"track_running_stats", o.track_running_stats ? "1" : "0"}},
                            out + "/" + c.name + ".safetensors");
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
