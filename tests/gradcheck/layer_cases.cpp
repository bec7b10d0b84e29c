// The catalogue's layers (nn/), each with respect to its inputs and all its parameters.
#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

namespace {

// The options of the encoder and decoder layers checked here: 4 wide, 2 heads, no dropout.
nn::TransformerLayerOptions small_layer(bool norm_first) {
  return {.num_hiddens = 4, .ffn_num_hiddens = 6, .num_heads = 2, .dropout = 0.0, .norm_first = norm_first};
}

}  // namespace

void add_layer_cases(const AddLayer& add_layer) {
  add_layer("nn::Linear (batched input)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Linear>(size_in(g, 2, 4), size_in(g, 1, 3)));
    return layer_check(layer, {normal(g, {2, 2, layer->options.in_features})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::Linear (no bias)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Linear>(3, size_in(g, 1, 3), /*bias=*/false));
    return layer_check(layer, {normal(g, {2, 3})}, [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::Sequential (Linear, Tanh, Linear, GELU)", [](Generator& g) {
    auto layer = in_float64(
        std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::Tanh>(),
                                         std::make_shared<nn::Linear>(4, 2), std::make_shared<nn::GELU>()));
    return layer_check(layer, {normal(g, {size_in(g, 1, 4), 3})}, [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::Conv1d (padding 1, groups 2)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Conv1d>(
        nn::Conv1dOptions{.in_channels = 4, .out_channels = 2, .kernel_size = 3, .padding = 1, .groups = 2}));
    return layer_check(layer, {normal(g, {2, 4, size_in(g, 3, 6)})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::Conv2d (3x3, padding 1, groups 2)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Conv2d>(
        nn::Conv2dOptions{.in_channels = 4, .out_channels = 2, .kernel_size = 3, .padding = 1, .groups = 2}));
    return layer_check(layer, {normal(g, {2, 4, size_in(g, 3, 5), 4})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  // Recurrent layers: the output and the final states in one vector; inputs x, h0 (and c0), then the
  // parameters. Lengths 4 and 2 of 4 steps: the second sequence's state must stop after its second step,
  // and its reverse direction start there.
  enum class Recurrent { RNN, GRU, LSTM };
  auto recurrent_case = [&](std::string name, Recurrent kind, nn::RNNOptions options, bool lengths) {
    add_layer(std::move(name), [kind, options, lengths](Generator& g) {
      std::shared_ptr<nn::RecurrentBase> layer;
      if (kind == Recurrent::RNN) layer = in_float64(std::make_shared<nn::RNN>(options));
      if (kind == Recurrent::GRU) layer = in_float64(std::make_shared<nn::GRU>(options));
      if (kind == Recurrent::LSTM) layer = in_float64(std::make_shared<nn::LSTM>(options));
      const bool lstm = kind == Recurrent::LSTM;
      const int64_t steps = 4, n = 2, states = options.num_layers * (options.bidirectional ? 2 : 1);
      const Shape x_shape =
          options.batch_first ? Shape{n, steps, options.input_size} : Shape{steps, n, options.input_size};
      Inputs inputs{normal(g, x_shape), normal(g, {states, n, options.hidden_size})};
      if (lstm) inputs.push_back(normal(g, {states, n, options.hidden_size}));
      const Tensor lens = lengths ? Tensor::from_vector<int64_t>({4, 2}, {2}) : Tensor();
      return layer_check(layer, inputs, [layer, lstm, lens](In x) {
        const nn::RecurrentOutput r = (*layer)(x[0], {x[1], lstm ? x[2] : Variable()}, lens);
        std::vector<Variable> parts{reshape(r.output, {-1}), reshape(r.h_n, {-1})};
        if (lstm) parts.push_back(reshape(r.c_n, {-1}));
        return concat(parts, 0);
      });
    });
  };
  recurrent_case("nn::RNN (tanh, initial state)", Recurrent::RNN, {.input_size = 3, .hidden_size = 2}, false);
  recurrent_case(
      "nn::RNN (relu, bidirectional, lengths 4 and 2)", Recurrent::RNN,
      {.input_size = 2, .hidden_size = 3, .nonlinearity = nn::Nonlinearity::ReLU, .bidirectional = true},
      true);
  recurrent_case("nn::GRU (2 layers, bidirectional, lengths 4 and 2)", Recurrent::GRU,
                 {.input_size = 2, .hidden_size = 2, .num_layers = 2, .bidirectional = true}, true);
  recurrent_case(
      "nn::LSTM (2 layers, both ways, batch_first, lengths)", Recurrent::LSTM,
      {.input_size = 2, .hidden_size = 2, .num_layers = 2, .batch_first = true, .bidirectional = true}, true);
  add_layer("nn::Embedding", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Embedding>(5, size_in(g, 2, 3)));
    return layer_check(layer, {}, [layer](In) {
      return (*layer)(Tensor::from_vector<int64_t>({4, 0, 4, 2}, {2, 2}));
    });
  });
  add_layer("nn::Embedding (sparse)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Embedding>(
        nn::EmbeddingOptions{.num_embeddings = 6, .embedding_dim = size_in(g, 2, 3), .sparse = true}));
    return layer_check(layer, {}, [layer](In) {
      return (*layer)(Tensor::from_vector<int64_t>({4, 0, 4, 2, 5, 4}, {3, 2}));
    });
  });
  add_layer("nn::LayerNorm", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::LayerNorm>(size_in(g, 2, 5)));
    randomize(*layer, g);  // away from the ones/zeros initialisation, which hides mistakes
    return layer_check(layer, {normal(g, {2, 3, layer->normalized_size})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::BatchNorm2d (training)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = 3}));
    randomize(*layer, g);
    return layer_check(layer, {normal(g, {2, 3, 2, size_in(g, 2, 3)})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::BatchNorm1d (evaluation)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::BatchNorm1d>(nn::BatchNormOptions{.num_features = 2}));
    randomize(*layer, g);
    layer->eval();
    return layer_check(layer, {normal(g, {3, 2, size_in(g, 2, 4)})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::PositionalEncoding (sinusoidal)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::PositionalEncoding>(4, 0.0, 10));
    return layer_check(layer, {normal(g, {2, size_in(g, 1, 5), 4})},
                       [layer](In x) { return (*layer)(x[0]); });
  });
  add_layer("nn::PositionalEncoding (learnable)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::PositionalEncoding>(
        nn::PositionalEncodingOptions{.num_hiddens = 4, .dropout = 0, .max_len = 4, .learnable = true}));
    return layer_check(layer, {normal(g, {2, 3, 4})}, [layer](In x) { return (*layer)(x[0]); });
  });
  const std::vector<std::pair<std::string, nn::AttentionMask>> masks = {
      {"no mask", {}},
      {"valid_lens per sequence", {.valid_lens = Tensor::from_vector<int64_t>({2, 3}, {2})}},
      {"valid_lens per query", {.valid_lens = Tensor::from_vector<int64_t>({1, 2, 3, 3, 1, 2}, {2, 3})}},
      {"key padding mask",
       {.key_padding_mask = Tensor::from_values({0, 0, 1, 0, 1, 1}, {2, 3}, DType::Bool)}},
      {"causal", {.causal = true}},
  };
  for (const auto& [mask_name, mask] : masks) {
    add_layer("nn::DotProductAttention (" + mask_name + ")", [mask](Generator& g) {
      auto layer = in_float64(std::make_shared<nn::DotProductAttention>(0.5));
      layer->eval();
      const int64_t d = size_in(g, 2, 3);
      return layer_check(layer, {normal(g, {2, 3, d}), normal(g, {2, 3, d}), normal(g, {2, 3, 2})},
                         [layer, mask](In x) { return (*layer)(x[0], x[1], x[2], mask); });
    });
  }
  add_layer("nn::MultiHeadAttention (self, valid_lens, 2 heads)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::MultiHeadAttention>(4, 2, 0.0, /*bias=*/true));
    const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})};
    return layer_check(layer, {normal(g, {2, 3, 4})},
                       [layer, mask](In x) { return (*layer)(x[0], x[0], x[0], mask); });
  });
  add_layer("nn::MultiHeadAttention (cross, sizes 5/4/6, causal)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{
        .num_hiddens = 4, .num_heads = 2, .query_size = 5, .key_size = 4, .value_size = 6}));
    // Queries from one sequence (3 steps), keys and values from another (3 steps, other widths).
    return layer_check(layer, {normal(g, {2, 3, 5}), normal(g, {2, 3, 4}), normal(g, {2, 3, 6})},
                       [layer](In x) { return (*layer)(x[0], x[1], x[2], {.causal = true}); });
  });
  for (nn::Activation activation : {nn::Activation::ReLU, nn::Activation::GELU}) {
    add_layer(
        std::string("nn::PositionWiseFFN (") + (activation == nn::Activation::ReLU ? "ReLU" : "GELU") + ")",
        [activation](Generator& g) {
          auto layer = in_float64(std::make_shared<nn::PositionWiseFFN>(3, size_in(g, 2, 5), activation));
          return layer_check(layer, {normal(g, {2, 2, 3})}, [layer](In x) { return (*layer)(x[0]); });
        });
  }
  for (bool norm_first : {false, true}) {
    // The sublayer tanh(v)·y: its input comes from the block, y is an input of the check.
    add_layer(
        std::string("nn::AddNorm (") + (norm_first ? "pre-norm" : "post-norm") + ", sublayer tanh(v)·y)",
        [norm_first](Generator& g) {
          auto layer = in_float64(std::make_shared<nn::AddNorm>(4, 0.0, nullptr, norm_first));
          randomize(*layer, g);
          return layer_check(layer, {normal(g, {2, 3, 4}), normal(g, {2, 3, 4})}, [layer](In x) {
            return (*layer)(x[0], [&](const Variable& v) { return tanh(v) * x[1]; });
          });
        });
  }
  for (bool norm_first : {false, true}) {
    add_layer(std::string("nn::EncoderLayer (") + (norm_first ? "pre-norm" : "post-norm") + ", valid_lens)",
              [norm_first](Generator& g) {
                auto layer = in_float64(std::make_shared<nn::EncoderLayer>(small_layer(norm_first)));
                randomize(*layer, g);
                const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})};
                return layer_check(layer, {normal(g, {2, 3, 4})},
                                   [layer, mask](In x) { return (*layer)(x[0], mask); });
              });
  }
  add_layer("nn::MultiHeadAttention with PyTorch's names (sequence first, key padding mask, 2 heads)",
            [](Generator& g) {
              auto layer =
                  in_float64(std::make_shared<nn::MultiHeadAttention>(nn::pytorch_attention_options(4, 2)));
              randomize(*layer, g);
              const nn::AttentionMask mask{.key_padding_mask =
                                               Tensor::from_values({0, 0, 0, 0, 0, 1}, {2, 3}, DType::Bool)};
              // query (3, 2, 4), key and value (3, 2, 4): (n, B, E)
              return layer_check(layer, {normal(g, {3, 2, 4}), normal(g, {3, 2, 4}), normal(g, {3, 2, 4})},
                                 [layer, mask](In x) { return (*layer)(x[0], x[1], x[2], mask); });
            });
  for (bool norm_first : {false, true}) {
    add_layer(std::string("nn::TransformerEncoderLayer (PyTorch's; ") +
                  (norm_first ? "pre-norm, GELU" : "post-norm, ReLU") + ", batch first, causal)",
              [norm_first](Generator& g) {
                auto layer = in_float64(
                    std::make_shared<nn::TransformerEncoderLayer>(nn::TransformerEncoderLayerOptions{
                        .d_model = 4,
                        .nhead = 2,
                        .dim_feedforward = 6,
                        .dropout = 0.0,
                        .activation = norm_first ? nn::Activation::GELU : nn::Activation::ReLU,
                        .batch_first = true,
                        .norm_first = norm_first}));
                randomize(*layer, g);
                return layer_check(layer, {normal(g, {2, 3, 4})},
                                   [layer](In x) { return (*layer)(x[0], {.causal = true}); });
              });
  }
  for (bool norm_first : {false, true}) {
    // Target 3 steps, source 4 (different lengths), both padded: the second target has 2 valid steps, the
    // second source 2.
    add_layer(std::string("nn::DecoderLayer (") + (norm_first ? "pre-norm" : "post-norm") +
                  ", causal, target and source padding)",
              [norm_first](Generator& g) {
                auto layer = in_float64(std::make_shared<nn::DecoderLayer>(small_layer(norm_first)));
                randomize(*layer, g);
                const nn::DecoderMasks masks{.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}),
                                             .source_valid_lens = Tensor::from_vector<int64_t>({4, 2}, {2})};
                return layer_check(layer, {normal(g, {2, 3, 4}), normal(g, {2, 4, 4})},
                                   [layer, masks](In x) { return (*layer)(x[0], x[1], masks); });
              });
  }
  add_layer("nn::TransformerDecoder (decoder-only, tied weights, parameters)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::TransformerDecoder>(nn::TransformerDecoderOptions{
        .layer = {.num_hiddens = 4, .ffn_num_hiddens = 4, .num_heads = 2, .norm_first = true},
        .num_layers = 2,
        .tokens = {.vocab_size = 5, .max_len = 8},
        .cross_attention = false,
        .tie_weights = true}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return (*layer)(Tensor::from_vector<int64_t>({1, 4, 2, 0, 3, 3}, {2, 3}), Variable(),
                      {.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
    });
  });
  add_layer("nn::Transformer (encoder-decoder, parameters)", [](Generator& g) {
    const nn::TransformerLayerOptions each{.num_hiddens = 4, .ffn_num_hiddens = 4, .num_heads = 2};
    auto layer = in_float64(std::make_shared<nn::Transformer>(
        nn::TransformerOptions{.encoder = {.layer = each, .tokens = {.vocab_size = 6, .max_len = 8}},
                               .decoder = {.layer = each, .tokens = {.vocab_size = 5, .max_len = 8}}}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return (*layer)(Tensor::from_vector<int64_t>({1, 5, 2, 4, 0, 3, 3, 1}, {2, 4}),
                      Tensor::from_vector<int64_t>({0, 4, 2, 0, 3, 3}, {2, 3}),
                      {.target_valid_lens = Tensor::from_vector<int64_t>({3, 1}, {2}),
                       .source_valid_lens = Tensor::from_vector<int64_t>({4, 2}, {2})});
    });
  });
  add_layer("nn::TransformerEncoder (2 layers, parameters)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::TransformerEncoder>(
        nn::TransformerEncoderOptions{.layer = {.num_hiddens = 4, .ffn_num_hiddens = 4, .num_heads = 2},
                                      .num_layers = 2,
                                      .tokens = {.vocab_size = 6, .max_len = 8}}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return (*layer)(Tensor::from_vector<int64_t>({1, 5, 2, 0, 3, 3}, {2, 3}),
                      {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
    });
  });
}

}  // namespace minigrad::checks
