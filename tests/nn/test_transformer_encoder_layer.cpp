// MultiHeadAttention with PyTorch's names, and TransformerEncoderLayer: PyTorch's names, defaults and
// layouts. The
// numbers against PyTorch 1.13 are checked by the encoder_layer_parity_with_pytorch test.
#include <unistd.h>
#include <filesystem>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

// Random values in every parameter (biases and LayerNorm weights too), so no part hides behind 0 or 1.
void randomize(const Module& module, uint64_t seed) {
  Generator g(seed);
  for (const Variable& p : module.parameters()) p.data().copy_(Tensor::normal(p.shape(), 0, 0.5, F64, &g));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transformer_encoder_layer)

BOOST_AUTO_TEST_CASE(parameters_and_defaults_are_pytorchs) {
  // torch.nn.TransformerEncoderLayer(d_model=8, nhead=2).state_dict(): these names, shapes and order.
  const TransformerEncoderLayer layer({.d_model = 8, .nhead = 2});
  std::vector<std::pair<std::string, Shape>> got;
  for (const auto& [name, p] : layer.named_parameters()) got.emplace_back(name, p.shape());
  const std::vector<std::pair<std::string, Shape>> expected = {{"self_attn.in_proj_weight", {24, 8}},
                                                               {"self_attn.in_proj_bias", {24}},
                                                               {"self_attn.out_proj.weight", {8, 8}},
                                                               {"self_attn.out_proj.bias", {8}},
                                                               {"linear1.weight", {2048, 8}},
                                                               {"linear1.bias", {2048}},
                                                               {"linear2.weight", {8, 2048}},
                                                               {"linear2.bias", {8}},
                                                               {"norm1.weight", {8}},
                                                               {"norm1.bias", {8}},
                                                               {"norm2.weight", {8}},
                                                               {"norm2.bias", {8}}};
  BOOST_TEST_REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    BOOST_TEST(got[i].first == expected[i].first);
    BOOST_TEST(got[i].second == expected[i].second, got[i].first);
  }
  // PyTorch's defaults: dropout 0.1 everywhere, sequence first, post-norm; biases of the projections 0.
  BOOST_TEST(layer.dropout->p == 0.1);
  BOOST_TEST(layer.dropout1->p == 0.1);
  BOOST_TEST(layer.self_attn->options.dropout == 0.1);
  BOOST_TEST(!layer.options.batch_first);
  BOOST_TEST(!layer.options.norm_first);
  BOOST_TEST(max(abs(layer.self_attn->in_proj_bias.data())).item() == 0);
  BOOST_TEST(max(abs(layer.self_attn->out_proj->bias.data())).item() == 0);
}

BOOST_AUTO_TEST_CASE(sequence_first_and_batch_first_give_the_same_numbers) {
  TransformerEncoderLayer seq_first({.d_model = 6, .nhead = 3, .dim_feedforward = 10});
  TransformerEncoderLayer batch_first({.d_model = 6, .nhead = 3, .dim_feedforward = 10, .batch_first = true});
  for (Module* m : {static_cast<Module*>(&seq_first), static_cast<Module*>(&batch_first)}) {
    m->to(F64);
    randomize(*m, 3);
    m->eval();
  }
  const Tensor x = Tensor::normal({2, 5, 6}, 0, 1, F64);  // (B, T, d)
  const AttentionMask mask{.key_padding_mask =
                               Tensor::from_values({0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {2, 5}, DType::Bool)};
  const Tensor y_batch_first = batch_first(Variable(x), mask).data();
  const Tensor y_seq_first = seq_first(Variable(x.transpose(0, 1)), mask).data();  // (T, B, d)
  BOOST_TEST(y_seq_first.shape() == (Shape{5, 2, 6}));
  BOOST_TEST(allclose(y_seq_first.transpose(0, 1), y_batch_first, {.rtol = 0, .atol = 1e-12}));
}

BOOST_AUTO_TEST_CASE(a_padding_key_changes_nothing_the_others_see) {
  // Changing the values at the second sequence's two padding steps leaves its other steps' outputs alone.
  TransformerEncoderLayer layer({.d_model = 4, .nhead = 2, .dim_feedforward = 8, .batch_first = true});
  layer.to(F64);
  randomize(layer, 4);
  layer.eval();
  const AttentionMask mask{.key_padding_mask =
                               Tensor::from_values({0, 0, 0, 0, 0, 0, 1, 1}, {2, 4}, DType::Bool)};
  const Tensor x = Tensor::normal({2, 4, 4}, 0, 1, F64);
  Tensor changed = x.clone();
  changed.select(0, 1).slice(0, 2, 4).copy_(Tensor::normal({2, 4}, 5, 1, F64));
  const Tensor a = layer(Variable(x), mask).data(), b = layer(Variable(changed), mask).data();
  BOOST_TEST(
      allclose(a.select(0, 1).slice(0, 0, 2), b.select(0, 1).slice(0, 0, 2), {.rtol = 0, .atol = 1e-12}));
  BOOST_TEST(allclose(a.select(0, 0), b.select(0, 0), {.rtol = 0, .atol = 0}));
  BOOST_TEST(!allclose(a.select(0, 1).slice(0, 2, 4), b.select(0, 1).slice(0, 2, 4)));
}

BOOST_AUTO_TEST_CASE(a_const_layer_runs_and_its_weights_load_by_name) {
  TransformerEncoderLayer trained({.d_model = 4, .nhead = 2, .dim_feedforward = 6, .norm_first = true});
  trained.to(F64);
  randomize(trained, 5);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("encoder_layer_" + std::to_string(getpid()) + ".safetensors"))
                               .string();
  optim::save_weights(trained, path);
  TransformerEncoderLayer loaded({.d_model = 4, .nhead = 2, .dim_feedforward = 6, .norm_first = true});
  loaded.to(F64);
  const optim::LoadedWeights result = optim::load_weights(loaded, path);
  std::filesystem::remove(path);
  BOOST_TEST(result.missing_keys.empty());
  BOOST_TEST(result.unexpected_keys.empty());
  trained.eval();
  loaded.eval();
  const TransformerEncoderLayer& frozen = loaded;  // forward is const, as Linear's and LSTM's
  const Variable x(Tensor::normal({3, 2, 4}, 0, 1, F64));
  BOOST_TEST(allclose(frozen(x).data(), trained(x).data(), {.rtol = 0, .atol = 0}));
}

BOOST_AUTO_TEST_CASE(dropout_acts_in_training_only) {
  TransformerEncoderLayer layer({.d_model = 4, .nhead = 2, .dim_feedforward = 6, .dropout = 0.5});
  const Variable x(Tensor::normal({3, 2, 4}));
  layer.eval();
  BOOST_TEST(allclose(layer(x).data(), layer(x).data(), {.rtol = 0, .atol = 0}));
  layer.train();
  BOOST_TEST(!allclose(layer(x).data(), layer(x).data()));
}

BOOST_AUTO_TEST_CASE(both_names_are_one_attention_and_the_old_spelling_still_builds) {
  // d2l's names and PyTorch's hold the same projections in different places; given the same weights,
  // the one class computes the same output under either.
  MultiHeadAttention d2l({.num_hiddens = 4, .num_heads = 2, .bias = true});
  MultiHeadAttention pytorch(pytorch_attention_options(4, 2));
  d2l.to(F64);
  pytorch.to(F64);
  randomize(d2l, 3);
  pytorch.in_proj_weight.data().copy_(
      concat({d2l.W_q->weight.data(), d2l.W_k->weight.data(), d2l.W_v->weight.data()}, 0));
  pytorch.in_proj_bias.data().copy_(
      concat({d2l.W_q->bias.data(), d2l.W_k->bias.data(), d2l.W_v->bias.data()}, 0));
  pytorch.out_proj->weight.data().copy_(d2l.W_o->weight.data());
  pytorch.out_proj->bias.data().copy_(d2l.W_o->bias.data());
  const Variable q(Tensor::normal({2, 3, 4}, 0, 1, F64)), kv(Tensor::normal({2, 5, 4}, 0, 1, F64));
  const AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({5, 2}, {2})};
  const Tensor expected = d2l(q, kv, kv, mask).data();
  // PyTorch's layout is sequence first: (n, B, E).
  const Tensor got =
      pytorch(transpose(q, 0, 1), transpose(kv, 0, 1), transpose(kv, 0, 1), mask).data().transpose(0, 1);
  expect_close(got, expected.to_vector<double>(), 1e-15);
  BOOST_TEST(d2l.name() == "MultiHeadAttention");
  BOOST_TEST(pytorch.name() == "MultiheadAttention");  // as each prints

  // The spelling before the two were one class compiles, with a deprecation warning naming the new one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const MultiheadAttention old({.embed_dim = 4, .num_heads = 2, .batch_first = true});
#pragma GCC diagnostic pop
  BOOST_TEST((old.options.names == ParameterNames::PyTorch));
  BOOST_TEST(old.in_proj_weight.shape() == Shape({12, 4}));
  BOOST_TEST(old.options.batch_first);
}

BOOST_AUTO_TEST_CASE(wrong_shapes_and_options_are_refused_by_name) {
  const TransformerEncoderLayer layer({.d_model = 4, .nhead = 2, .dim_feedforward = 6});
  expect_error<ShapeError>(
      [&] {
        layer(Variable(Tensor::zeros({3, 2, 5})));
      },
      "MultiheadAttention: expects queries (n_q, B, 4), keys (n_k, B, 4) and values (n_k, B, 4), got "
      "[3,2,5], [3,2,5], [3,2,5]");
  expect_error<ValueError>([] { TransformerEncoderLayer({.d_model = 6, .nhead = 4}); },
                           "MultiheadAttention: embed_dim (6) must be a positive multiple of num_heads (4)");
  expect_error<ValueError>([] { TransformerEncoderLayer({.d_model = 4, .nhead = 2, .dim_feedforward = 0}); },
                           "TransformerEncoderLayer: dim_feedforward must be positive, got 0");
}

BOOST_AUTO_TEST_SUITE_END()
