#include "examples/sentiment/extras/cnn_rnn.h"

#include <algorithm>

namespace sentiment {

using namespace minigrad;

CnnRnnClassifier::CnnRnnClassifier(const CnnRnnOptions& opts) : options(opts) {
  if (opts.model != "textcnn" && opts.model != "birnn") {
    throw ValueError("CnnRnnClassifier", "model must be textcnn or birnn, got '" + opts.model + "'");
  }
  embedding = register_module(
      "embedding", std::make_shared<nn::Embedding>(opts.vocab_size, opts.embed_size, /*padding_idx=*/0));
  embedding->weight.data().copy_(Tensor::normal({opts.vocab_size, opts.embed_size}, 0, opts.embedding_std));
  embedding->weight.data().select(0, 0).fill_(0);  // <pad>
  int64_t features = 0;
  if (opts.model == "textcnn") {
    auto list = register_module("convs", std::make_shared<nn::ModuleList>());
    for (int64_t k : opts.kernel_sizes) {
      convs.push_back(list->push_back(std::make_shared<nn::Conv1d>(nn::Conv1dOptions{
          .in_channels = opts.embed_size, .out_channels = opts.channels, .kernel_size = k})));
      features += opts.channels;
    }
  } else {
    lstm =
        register_module("encoder", std::make_shared<nn::LSTM>(nn::LSTMOptions{.input_size = opts.embed_size,
                                                                              .hidden_size = opts.hidden,
                                                                              .num_layers = opts.layers,
                                                                              .bidirectional = true}));
    if (opts.forget_bias != 0) {
      for (auto& [name, p] : lstm->named_parameters()) {  // gates i, f, g, o: f is rows [H, 2H)
        if (name.starts_with("bias_ih")) {
          Tensor forget = p.data().slice(0, opts.hidden, 2 * opts.hidden);
          forget.copy_(forget + opts.forget_bias);
        }
      }
    }
    features = 4 * opts.hidden;
  }
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(opts.dropout));
  decoder = register_module("decoder", std::make_shared<nn::Linear>(features, 2));
}

int64_t CnnRnnClassifier::min_length() const {
  return convs.empty() ? 1 : *std::max_element(options.kernel_sizes.begin(), options.kernel_sizes.end());
}

Variable CnnRnnClassifier::forward(const Tensor& tokens, const Tensor& lengths) const {
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1];
  const Variable embedded = (*embedding)(tokens);  // (B, T, E)
  Variable features;
  if (!convs.empty()) {
    if (t < min_length()) {
      throw ShapeError("TextCNN", "a batch of " + std::to_string(t) +
                                      " tokens is shorter than the widest kernel (" +
                                      std::to_string(min_length()) + "); pad it");
    }
    const Variable x = transpose(embedded, 1, 2);  // (B, E, T): channels first, as Conv1d reads
    std::vector<Variable> pooled;
    for (size_t i = 0; i < convs.size(); ++i) {
      const int64_t k = options.kernel_sizes[i];
      // A review of n tokens has n - k + 1 windows inside it (at least 1: a shorter review's window
      // reaches into the padding, whose embedding is zero).
      Tensor windows = Tensor::empty({b}, DType::Int64);
      for (int64_t i = 0; i < b; ++i) {
        windows.data_ptr<int64_t>()[i] =
            std::clamp<int64_t>(static_cast<int64_t>(lengths.at({i})) - k + 1, 1, t - k + 1);
      }
      const Variable y = (*convs[i])(x);                  // (B, channels, T - k + 1)
      pooled.push_back(relu(max_over_time(y, windows)));  // (B, channels)
    }
    features = concat(pooled, 1);
  } else {
    const Variable x = transpose(embedded, 0, 1);         // (T, B, E)
    const Variable out = (*lstm)(x, {}, lengths).output;  // (T, B, 2H), zero past each length
    // The output at each review's last valid token: a one-hot (T, B, 1) weighting summed over time.
    Tensor last = Tensor::zeros({t, b, 1}, out.dtype());
    for (int64_t i = 0; i < b; ++i)
      last.select(0, static_cast<int64_t>(lengths.at({i})) - 1).select(0, i).fill_(1);
    features = concat({select(out, 0, 0), sum(out * Variable(last), {0})}, 1);  // (B, 4H)
  }
  return (*decoder)((*dropout)(features));
}

}  // namespace sentiment
