// RNN, GRU and LSTM: names, shapes and initialisation as PyTorch's; one step against the formula by
// hand; valid lengths as packed sequences; errors. Gradients are checked in the gradcheck catalogue
// (tests/gradcheck/layer_cases.cpp), values and gradients against PyTorch by recurrent_parity_with_pytorch.
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;

// The largest |a - b| over all elements.
double max_difference(const Variable& a, const Variable& b) {
  return max(abs(sub(a.data(), b.data()))).item();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(recurrent)

BOOST_AUTO_TEST_CASE(the_layers_have_pytorchs_names_shapes_and_initialisation) {
  Generator gen(3);
  LSTM lstm({.input_size = 5, .hidden_size = 4, .num_layers = 2, .bidirectional = true, .generator = &gen});
  std::vector<std::string> names;
  for (const auto& [name, p] : lstm.named_parameters()) names.push_back(name + " " + p.shape().str());
  const std::vector<std::string> expected = {"weight_ih_l0 [16,5]",
                                             "weight_hh_l0 [16,4]",
                                             "bias_ih_l0 [16]",
                                             "bias_hh_l0 [16]",
                                             "weight_ih_l0_reverse [16,5]",
                                             "weight_hh_l0_reverse [16,4]",
                                             "bias_ih_l0_reverse [16]",
                                             "bias_hh_l0_reverse [16]",
                                             "weight_ih_l1 [16,8]",
                                             "weight_hh_l1 [16,4]",
                                             "bias_ih_l1 [16]",
                                             "bias_hh_l1 [16]",
                                             "weight_ih_l1_reverse [16,8]",
                                             "weight_hh_l1_reverse [16,4]",
                                             "bias_ih_l1_reverse [16]",
                                             "bias_hh_l1_reverse [16]"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  const double bound = 1 / std::sqrt(4.0);  // U(-1/√hidden, 1/√hidden) for every parameter
  for (const Variable& p : lstm.parameters()) BOOST_TEST(max(abs(p.data())).item() <= bound);
  BOOST_TEST(max(abs(lstm.weights[0].weight_ih.data())).item() > 0.9 * bound);
  BOOST_TEST(GRU({.input_size = 2, .hidden_size = 3}).weights[0].weight_hh.shape() == Shape({9, 3}));
  RNN rnn({.input_size = 2, .hidden_size = 3, .bias = false});
  BOOST_TEST(rnn.parameters().size() == 2u);
  std::ostringstream printed;
  printed << lstm << "\n"
          << RNN({.input_size = 2,
                  .hidden_size = 3,
                  .nonlinearity = Nonlinearity::ReLU,
                  .batch_first = true,
                  .dropout = 0.25});
  BOOST_TEST(printed.str() ==
             "LSTM(5, 4, num_layers=2, bidirectional=True)\n"
             "RNN(2, 3, nonlinearity=relu, batch_first=True, dropout=0.25)");
}

BOOST_AUTO_TEST_CASE(one_step_follows_the_formulas) {
  // Sequences of one step from a given state, against the cell formulas written out here.
  Generator gen(5);
  const Variable x(Tensor::normal({1, 2, 3}, 0, 1, F64, &gen)),
      h0(Tensor::normal({1, 2, 4}, 0, 1, F64, &gen)), c0(Tensor::normal({1, 2, 4}, 0, 1, F64, &gen));
  const Variable x0 = select(x, 0, 0), h = select(h0, 0, 0), c = select(c0, 0, 0);  // (2, 3), (2, 4)
  auto part = [](const Variable& v, int64_t k) { return slice(v, 1, 4 * k, 4 * k + 4); };

  LSTM lstm({.input_size = 3, .hidden_size = 4, .generator = &gen});
  lstm.to(F64);
  const RecurrentBase::Weights& w = lstm.weights[0];
  const Variable gates = linear(x0, w.weight_ih, w.bias_ih) + linear(h, w.weight_hh, w.bias_hh);
  const Variable c1 = sigmoid(part(gates, 1)) * c + sigmoid(part(gates, 0)) * tanh(part(gates, 2));
  const Variable h1 = sigmoid(part(gates, 3)) * tanh(c1);
  const RecurrentOutput r = lstm(x, {h0, c0});
  BOOST_TEST(max_difference(select(r.h_n, 0, 0), h1) < 1e-14);
  BOOST_TEST(max_difference(select(r.c_n, 0, 0), c1) < 1e-14);
  BOOST_TEST(max_difference(select(r.output, 0, 0), h1) < 1e-14);

  GRU gru({.input_size = 3, .hidden_size = 4, .generator = &gen});
  gru.to(F64);
  const RecurrentBase::Weights& v = gru.weights[0];
  const Variable gi = linear(x0, v.weight_ih, v.bias_ih), gh = linear(h, v.weight_hh, v.bias_hh);
  const Variable reset = sigmoid(part(gi, 0) + part(gh, 0)), update = sigmoid(part(gi, 1) + part(gh, 1));
  const Variable n = tanh(part(gi, 2) + reset * part(gh, 2));
  const Variable expected = (1.0 - update) * n + update * h;
  BOOST_TEST(max_difference(select(gru(x, {h0}).h_n, 0, 0), expected) < 1e-14);

  RNN rnn({.input_size = 3, .hidden_size = 4, .nonlinearity = Nonlinearity::ReLU, .generator = &gen});
  rnn.to(F64);
  const RecurrentBase::Weights& u = rnn.weights[0];
  const Variable relu_step = relu(linear(x0, u.weight_ih, u.bias_ih) + linear(h, u.weight_hh, u.bias_hh));
  BOOST_TEST(max_difference(select(rnn(x, {h0}).h_n, 0, 0), relu_step) < 1e-14);
}

BOOST_AUTO_TEST_CASE(lengths_work_as_packed_sequences) {
  // A batch of two with lengths 5 and 3 against the second sequence cut to 3 steps and run alone: the
  // same final states, the same outputs over its 3 steps, zeros after; for the reverse direction too,
  // which must start at the second sequence's own last token.
  Generator gen(8);
  LSTM lstm({.input_size = 2, .hidden_size = 3, .num_layers = 2, .bidirectional = true, .generator = &gen});
  lstm.to(F64);
  const Variable x(Tensor::normal({5, 2, 2}, 0, 1, F64, &gen));  // (L, N, in)
  const RecurrentOutput both = lstm(x, {}, Tensor::from_vector<int64_t>({5, 3}, {2}));
  const Variable second = slice(slice(x, 1, 1, 2), 0, 0, 3);  // (3, 1, 2)
  const RecurrentOutput alone = lstm(second);
  BOOST_TEST(max_difference(slice(both.h_n, 1, 1, 2), alone.h_n) < 1e-14);
  BOOST_TEST(max_difference(slice(both.c_n, 1, 1, 2), alone.c_n) < 1e-14);
  BOOST_TEST(max_difference(slice(slice(both.output, 1, 1, 2), 0, 0, 3), alone.output) < 1e-14);
  BOOST_TEST(max(abs(slice(slice(both.output, 1, 1, 2), 0, 3, 5).data())).item() == 0.0);
  // The first sequence, at full length, is what it is without lengths.
  const RecurrentOutput unmasked = lstm(x);
  BOOST_TEST(max_difference(slice(both.h_n, 1, 0, 1), slice(unmasked.h_n, 1, 0, 1)) < 1e-14);
  // No gradient reaches the padding.
  Variable xg(x.data(), true);
  sum(lstm(xg, {}, Tensor::from_vector<int64_t>({5, 3}, {2})).output).backward();
  BOOST_TEST(max(abs(xg.grad().slice(0, 3, 5).select(1, 1))).item() == 0.0);
}

BOOST_AUTO_TEST_CASE(batch_first_and_dropout) {
  Generator gen(2);
  GRU gru({.input_size = 2, .hidden_size = 3, .num_layers = 2, .dropout = 0.5, .generator = &gen});
  gru.to(F64);
  const Variable x(Tensor::normal({4, 2, 2}, 0, 1, F64, &gen));
  gru.eval();  // dropout off: two runs agree
  const RecurrentOutput a = gru(x), b = gru(x);
  BOOST_TEST(max_difference(a.output, b.output) == 0.0);
  gru.train();  // dropout between the layers changes the second layer's input
  BOOST_TEST(max_difference(gru(x).output, a.output) > 1e-3);
  gru.options.batch_first = true;
  gru.eval();
  const RecurrentOutput c = gru(transpose(x, 0, 1));
  BOOST_TEST(c.output.shape() == Shape({2, 4, 3}));
  BOOST_TEST(max_difference(transpose(c.output, 0, 1), a.output) == 0.0);
  BOOST_TEST(c.h_n.shape() == Shape({2, 2, 3}));  // the states stay (layers, N, H)
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_layer_and_the_shapes) {
  LSTM lstm({.input_size = 3, .hidden_size = 2});
  const Variable x(Tensor::zeros({4, 2, 3}));
  expect_error<ShapeError>(
      [&] {
        lstm(Variable(Tensor::zeros({4, 2, 5})));
      },
      "LSTM: expects input (L, N, 3) or (L, 3) with L and N at least 1, got [4,2,5]");
  expect_error<ValueError>(
      [&] {
        lstm(x, {}, Tensor::from_vector<int64_t>({4, 0}, {2}));
      },
      "LSTM: valid_lens[1] = 0 is not in 1..4 for a sequence of length 4");
  expect_error<ValueError>(
      [&] {
        lstm(x, {}, Tensor::from_vector<int64_t>({5, 1}, {2}));
      },
      "LSTM: valid_lens[0] = 5 is not in 1..4 for a sequence of length 4");
  expect_error<ShapeError>([&] { lstm(x, {}, Tensor::from_vector<int64_t>({4}, {1})); },
                           "LSTM: valid_lens of shape [1] for 2 sequences (expected [2])");
  expect_error<ShapeError>(
      [&] {
        lstm(x, {Variable(Tensor::zeros({1, 3, 2}))});
      },
      "LSTM: expects h0 [1,2,2] float32, got [1,3,2] float32");
  expect_error<ValueError>(
      [&] {
        GRU({.input_size = 3, .hidden_size = 2})(x, {Variable(), Variable(Tensor::zeros({1, 2, 2}))});
      },
      "GRU: has no cell state; pass only h0");
  // PyTorch's LSTM takes (h0, c0) together: one alone is refused, not paired with zeros.
  expect_error<ValueError>(
      [&] {
        lstm(x, {Variable(Tensor::zeros({1, 2, 2}))});
      },
      "LSTM: h0 is given without c0; pass both, or neither for zeros");
  expect_error<ValueError>(
      [&] {
        lstm(x, {Variable(), Variable(Tensor::zeros({1, 2, 2}))});
      },
      "LSTM: c0 is given without h0; pass both, or neither for zeros");
  expect_error<ValueError>(
      [] { LSTM({.input_size = 3, .hidden_size = 2, .nonlinearity = Nonlinearity::ReLU}); },
      "LSTM: nonlinearity ReLU is an option of RNN only");
  expect_error<ValueError>([] { RNN({.input_size = 3, .hidden_size = 0}); },
                           "RNN: input_size, hidden_size and num_layers must be positive, got 3, 0, 1");
}

BOOST_AUTO_TEST_SUITE_END()
