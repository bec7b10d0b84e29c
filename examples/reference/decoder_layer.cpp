// minigrad-decoder-reference: writes a DecoderLayer's parameters, inputs and output (float64, post-norm
// and pre-norm, with target and source padding) to safetensors files, for
// scripts/compare-decoder-with-pytorch.py to run the same computation through PyTorch's
// nn.TransformerDecoderLayer and compare.
//
//   minigrad-decoder-reference --out /tmp/decoder && /usr/bin/python3 scripts/compare-decoder-with-pytorch.py
//   /tmp/decoder
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "minigrad/minigrad.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  CLI::App app{"Write a DecoderLayer's weights, inputs and output for comparison with PyTorch."};
  std::string out = "out/decoder-reference";
  app.add_option("--out", out, "Folder for decoder_post.safetensors and decoder_pre.safetensors")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::filesystem::create_directories(out);
    for (bool norm_first : {false, true}) {
      manual_seed(42);
      // bias = true: PyTorch 1.13's TransformerDecoderLayer always has biases in its attention projections.
      nn::DecoderLayer layer(
          {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .bias = true, .norm_first = norm_first});
      layer.to(DType::Float64);
      for (const Variable& p : layer.parameters())
        p.data().copy_(Tensor::normal(p.shape(), 0, 0.5, DType::Float64));
      layer.eval();
      // target (2, 3, 8) with valid lengths 3 and 2; memory (2, 5, 8) with valid lengths 5 and 3
      const Variable x(Tensor::normal({2, 3, 8}, 0, 1, DType::Float64));
      const Variable memory(Tensor::normal({2, 5, 8}, 0, 1, DType::Float64));
      const nn::DecoderMasks masks{.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}),
                                   .source_valid_lens = Tensor::from_vector<int64_t>({5, 3}, {2})};
      const Variable y = layer(x, memory, masks);
      std::vector<std::pair<std::string, Tensor>> tensors;
      for (const auto& [name, p] : layer.named_parameters()) tensors.emplace_back(name, p.data());
      tensors.emplace_back("x", x.data());
      tensors.emplace_back("memory", memory.data());
      tensors.emplace_back("y", y.data());
      const std::string path = out + (norm_first ? "/decoder_pre.safetensors" : "/decoder_post.safetensors");
      save_safetensors(path, tensors);
      std::cout << "wrote " << path << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
