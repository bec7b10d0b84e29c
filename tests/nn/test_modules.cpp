// Module mechanics and the basic layers.
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(modules)

BOOST_AUTO_TEST_CASE(parameters_have_dotted_names_over_the_whole_tree) {
  TransformerEncoder encoder({.layer = {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2},
                              .num_layers = 2,
                              .tokens = {.vocab_size = 50}});
  std::vector<std::string> names;
  for (const auto& [name, p] : encoder.named_parameters()) names.push_back(name);
  BOOST_TEST(names.front() == "embedding.weight");
  BOOST_TEST(std::count(names.begin(), names.end(), "layers.0.attention.W_q.weight") == 1);
  BOOST_TEST(std::count(names.begin(), names.end(), "layers.1.ffn.dense2.bias") == 1);
  BOOST_TEST(std::count(names.begin(), names.end(), "layers.1.addnorm2.ln.weight") == 1);
  // the positional encoding table is a buffer, not a parameter
  BOOST_TEST(std::count(names.begin(), names.end(), "pos_encoding.P") == 0);
  BOOST_TEST(encoder.named_buffers().size() == 1u);
  BOOST_TEST(encoder.named_buffers()[0].first == "pos_encoding.P");
  // embedding 50·8; per layer: 4 attention matrices 8·8, two LayerNorms 2·8 each, FFN 8·16+16+16·8+8
  const int64_t per_layer = 4 * 64 + 2 * 16 + (128 + 16 + 128 + 8);
  BOOST_TEST(encoder.parameter_count() == 50 * 8 + 2 * per_layer);
}

BOOST_AUTO_TEST_CASE(train_eval_and_zero_grad_reach_every_descendant) {
  TransformerEncoder encoder({.layer = {.num_hiddens = 4, .ffn_num_hiddens = 4, .num_heads = 1},
                              .num_layers = 2,
                              .tokens = {.vocab_size = 10}});
  encoder.eval();
  BOOST_TEST(!encoder.layer(1).attention->attention->dropout->is_training());
  encoder.train();
  BOOST_TEST(encoder.layer(1).addnorm2->dropout->is_training());
  Variable loss = sum(encoder(Tensor::from_vector<int64_t>({1, 2}, {1, 2})));
  loss.backward();
  BOOST_TEST(encoder.layer(0).ffn->dense1->weight.grad().defined());
  encoder.zero_grad();
  for (const Variable& p : encoder.parameters()) BOOST_TEST(!p.grad().defined());
}

BOOST_AUTO_TEST_CASE(printing_shows_the_module_tree_like_pytorch) {
  MultiHeadAttention attention(100, 5, 0.5);
  BOOST_TEST(attention.repr() ==
             "MultiHeadAttention(\n"
             "  (attention): DotProductAttention(\n"
             "    (dropout): Dropout(p=0.5)\n"
             "  )\n"
             "  (W_q): Linear(in_features=100, out_features=100, bias=False)\n"
             "  (W_k): Linear(in_features=100, out_features=100, bias=False)\n"
             "  (W_v): Linear(in_features=100, out_features=100, bias=False)\n"
             "  (W_o): Linear(in_features=100, out_features=100, bias=False)\n"
             ")");
  std::ostringstream os;
  os << LayerNorm(24);
  BOOST_TEST(os.str() == "LayerNorm((24,), eps=1e-05, elementwise_affine=True)");
  BOOST_TEST(Embedding(1000, 64, 0).repr() == "Embedding(1000, 64, padding_idx=0)");
}

BOOST_AUTO_TEST_CASE(to_float64_converts_parameters_and_buffers_in_place) {
  PositionalEncoding pe(4, 0.0, 10);
  Linear linear(3, 2);
  const Variable w = linear.weight;  // a second handle
  linear.to(DType::Float64);
  pe.to(DType::Float64);
  BOOST_TEST(w.dtype() == DType::Float64);  // the handle sees it: same Variable
  BOOST_TEST(linear.named_parameters()[0].second.dtype() == DType::Float64);
  BOOST_TEST(pe.P.dtype() == DType::Float64);
}

BOOST_AUTO_TEST_CASE(positional_encoding_in_float64_is_float64_accurate) {
  // A float32 table widened to float64 is off by up to ~3e-8; the table is rebuilt in float64 instead.
  // Entry (position 7, column 1) is cos(7) exactly as the float64 formula gives it.
  PositionalEncoding pe(6, 0.0, 20);
  pe.to(DType::Float64);
  const Tensor p = pe.P.data().select(0, 0);  // (20, 6)
  BOOST_TEST(p.select(0, 7).select(0, 1).item() == std::cos(7.0));
  BOOST_TEST(p.select(0, 19).select(0, 2).item() == std::sin(19.0 / std::pow(10000.0, 2.0 / 6.0)));
  const Tensor widened = PositionalEncoding::sinusoids(20, 6, DType::Float32).to(DType::Float64);
  BOOST_TEST(max(abs(sub(widened, p))).item() > 1e-9);  // what the widened table would have been off by
}

BOOST_AUTO_TEST_CASE(linear_of_no_features_has_gradients_of_its_shapes) {
  // As F.linear: x (2, 3, 0) and weight (4, 0) give each row the bias; its backward gives empty gradients
  // to x and the weight, and the bias the number of rows.
  Variable x(Tensor::zeros({2, 3, 0}, DType::Float64), true), w(Tensor::zeros({4, 0}, DType::Float64), true),
      b(Tensor::from_values({1, 2, 3, 4}, {4}, DType::Float64), true);
  sum(minigrad::linear(x, w, b)).backward();
  BOOST_TEST(x.grad().shape() == (Shape{2, 3, 0}));
  BOOST_TEST(w.grad().shape() == (Shape{4, 0}));
  expect_close(b.grad(), {6, 6, 6, 6});
}

BOOST_AUTO_TEST_CASE(linear_uses_pytorch_defaults) {
  manual_seed(1);
  Linear linear(400, 300);
  BOOST_TEST(linear.weight.shape() == (Shape{300, 400}));
  const double bound = 1 / std::sqrt(400.0);
  const std::vector<double> w = linear.weight.data().to_vector();
  BOOST_TEST(*std::max_element(w.begin(), w.end()) <= bound);
  BOOST_TEST(*std::min_element(w.begin(), w.end()) >= -bound);
  // U(-b, b) has variance b²/3
  BOOST_TEST(std::abs(mean(pow(linear.weight.data().to(DType::Float64), 2)).item() - bound * bound / 3) <
             1e-4);
  BOOST_TEST(Linear(4, 3, false).parameters().size() == 1u);
  // y = x·Wᵀ + b
  Linear small(2, 1);
  small.weight.data().copy_(Tensor::from_values({2, 3}, {1, 2}));
  small.bias.data().fill_(1);
  expect_close(small(Variable(Tensor::from_values({1, 1, 0, 2}, {2, 2}))).data(), {6, 7});
  expect_error<ShapeError>(
      [&] {
        small(Variable(Tensor::ones({2, 3})));
      },
      "Linear: expects input (..., 2), got [2,3]");
}

BOOST_AUTO_TEST_CASE(embedding_padding_row_starts_at_zero_and_stays_there) {
  manual_seed(2);
  Embedding embed(20, 300, /*padding_idx=*/3);
  expect_equal(embed.weight.data().select(0, 3), std::vector<double>(300, 0.0));
  const Tensor others = embed.weight.data().slice(0, 4, 20);
  BOOST_TEST(std::abs(mean(others.to(DType::Float64)).item()) < 0.03);  // N(0, 1)
  BOOST_TEST(std::abs(mean(pow(others.to(DType::Float64), 2)).item() - 1) < 0.05);
  optim::SGD sgd(embed.parameters(), {.lr = 1.0});
  for (int step = 0; step < 3; ++step) {
    sgd.zero_grad();
    sum(pow(embed(Tensor::from_vector<int64_t>({3, 5, 3}, {3})), 2)).backward();
    sgd.step();
  }
  expect_equal(embed.weight.data().select(0, 3), std::vector<double>(300, 0.0));
  expect_error<ValueError>([] { Embedding(5, 2, 5); },
                           "Embedding: padding_idx 5 is outside the table of 5 rows");
}

BOOST_AUTO_TEST_CASE(layer_norm_and_dropout_defaults) {
  LayerNorm ln(6);
  BOOST_TEST(ln.eps == 1e-5);
  expect_equal(ln.weight.data(), std::vector<double>(6, 1.0));
  expect_equal(ln.bias.data(), std::vector<double>(6, 0.0));
  Dropout dropout(0.5);
  const Variable x(Tensor::ones({1000}));
  dropout.eval();
  BOOST_TEST(dropout(x).is_same(x));
  dropout.train();
  const std::vector<double> y = dropout(x).data().to_vector();
  BOOST_TEST(std::count(y.begin(), y.end(), 0.0) > 400);
  BOOST_TEST(std::count(y.begin(), y.end(), 2.0) > 400);
}

BOOST_AUTO_TEST_CASE(registering_a_name_twice_is_an_error) {
  struct Twice : Module {
    Twice() {
      register_parameter("w", Tensor::zeros({1}));
      register_buffer("w", Tensor::zeros({1}));
    }
    std::string name() const override { return "Twice"; }
  };
  expect_error<ValueError>([] { Twice t; }, "register: 'w' is already registered in Twice");
}

BOOST_AUTO_TEST_SUITE_END()
