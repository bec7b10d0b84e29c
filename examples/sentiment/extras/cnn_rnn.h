// The two classic families d2l's sentiment chapter trains beside the Transformer, built from minigrad's
// layers, from scratch (no pretrained vectors):
//
//   TextCNN (Kim, 2014; d2l 16.3): tokens (B, T) -> Embedding (B, T, E) -> for each kernel width k:
//     Conv1d(E, channels, k) -> max over each review's valid windows -> ReLU; the maxima concatenated
//     -> dropout -> Linear -> logits (B, 2)
//   BiRNN (d2l 16.2): tokens -> Embedding -> a bidirectional LSTM of L layers over each review's valid
//     tokens -> the outputs at its first and last valid token concatenated (B, 4H) -> dropout -> Linear
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace sentiment {

struct CnnRnnOptions {
  std::string model = "textcnn";  // "textcnn" or "birnn"
  int64_t vocab_size = 0;
  int64_t embed_size = 100;
  // The embedding starts N(0, std²); PyTorch's default is 1 (docs/history/sentiment.md: the runs for 0.1).
  double embedding_std = 0.1;
  // textcnn
  std::vector<int64_t> kernel_sizes = {3, 4, 5};
  int64_t channels = 100;  // per kernel width
  // birnn
  int64_t hidden = 100;
  int64_t layers = 2;
  // Added to the LSTM's forget-gate biases (bias_ih's second quarter) after PyTorch's initialisation: 1
  // keeps the cell state at first, so gradients reach early tokens (Jozefowicz et al., 2015).
  double forget_bias = 0;
  double dropout = 0.5;  // before the output layer (d2l's TextCNN: 0.5; its BiRNN: none)
};

class CnnRnnClassifier : public minigrad::nn::Layer<CnnRnnClassifier> {
 public:
  explicit CnnRnnClassifier(const CnnRnnOptions& options);

  // tokens (B, T) int64, lengths (B) int64 in 1..T -> logits (B, 2)
  minigrad::Variable forward(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths) const;

  std::string name() const override { return options.model == "birnn" ? "BiRNN" : "TextCNN"; }

  // The shortest padded length a batch may have: the widest kernel.
  int64_t min_length() const;

  CnnRnnOptions options;
  std::shared_ptr<minigrad::nn::Embedding> embedding;
  std::vector<std::shared_ptr<minigrad::nn::Conv1d>> convs;  // textcnn
  std::shared_ptr<minigrad::nn::LSTM> lstm;                  // birnn
  std::shared_ptr<minigrad::nn::Dropout> dropout;
  std::shared_ptr<minigrad::nn::Linear> decoder;
};

}  // namespace sentiment
