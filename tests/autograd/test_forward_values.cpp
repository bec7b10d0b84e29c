// Forward values of the differentiable ops against hand-computed ones, and the behaviours that a
// gradient check cannot see (padding rows, dropout's statistics, fully masked rows, extreme logits).
#include <limits>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
}  // namespace

BOOST_AUTO_TEST_SUITE(forward_values)

BOOST_AUTO_TEST_CASE(layer_norm_normalizes_each_row) {
  // Row [1,2,3]: mean 2, biased variance 2/3, so x̂ = (x - 2)/sqrt(2/3 + eps).
  Variable x = leaf({1, 2, 3, 10, 10, 10}, {2, 3});
  Variable w = leaf({1, 2, 1}, {3}), b = leaf({0, 0, 1}, {3});
  const double r = 1 / std::sqrt(2.0 / 3 + 1e-5);
  expect_close(layer_norm(x, w, b).data(), {-r, 0, r + 1, 0, 0, 1}, 1e-12);
  expect_close(layer_norm(x, Variable(), Variable()).data(), {-r, 0, r, 0, 0, 0}, 1e-12);
  // float32 with a large offset: two-pass variance keeps the digits that E[x²] - E[x]² would lose.
  Variable big = leaf({10000.0, 10001.0, 10002.0}, {1, 3}, DType::Float32);
  expect_close(layer_norm(big, Variable(), Variable()).data(), {-1.2247357, 0, 1.2247357}, 1e-4);
  expect_error<ShapeError>(
      [&] {
        layer_norm(x, leaf({1, 2}, {2}), leaf({1, 2}, {2}));
      },
      "layer_norm: weight and bias must have shape [3] for an input of shape [2,3], got [2]");
  expect_error<ValueError>([&] { layer_norm(x, w, Variable()); },
                           "layer_norm: weight and bias must both be given or both be undefined");
}

BOOST_AUTO_TEST_CASE(cross_entropy_matches_minus_log_softmax) {
  Variable logits = leaf({1, 2, 3, 0, 0, 0}, {2, 3});
  const Tensor targets = Tensor::from_vector<int64_t>({2, 0}, {2});
  // -log softmax([1,2,3])_2 = 0.40760596444438, -log(1/3) = 1.0986122886681098
  const double expected = (0.40760596444438 + 1.0986122886681098) / 2;
  BOOST_TEST(std::abs(cross_entropy(logits, targets).item() - expected) < 1e-12);
  // An ignored target leaves both the sum and the count.
  const Tensor with_ignored = Tensor::from_vector<int64_t>({2, -100}, {2});
  BOOST_TEST(std::abs(cross_entropy(logits, with_ignored).item() - 0.40760596444438) < 1e-12);
  Variable loss = cross_entropy(logits, with_ignored);
  loss.backward();
  expect_equal(logits.grad().slice(0, 1, 2), {0, 0, 0});  // the ignored row learns nothing
  // Everything ignored: a zero loss and zero gradient, not 0/0.
  logits.zero_grad();
  Variable none = cross_entropy(logits, Tensor::from_vector<int64_t>({-100, -100}, {2}));
  BOOST_TEST(none.item() == 0);
  none.backward();
  expect_equal(logits.grad(), {0, 0, 0, 0, 0, 0});
  expect_error<IndexError>(
      [&] {
        cross_entropy(logits, Tensor::from_vector<int64_t>({3, 0}, {2}));
      },
      "cross_entropy: target 3 is out of range for 3 classes");
  expect_error<ShapeError>(
      [&] { cross_entropy(logits, Tensor::from_vector<int64_t>({0}, {1})); },
      "cross_entropy: targets of shape [1] do not match logits of shape [2,3] (expected [2])");
  expect_error<DTypeError>(
      [&] { cross_entropy(logits, Tensor::zeros({2})); },
      "cross_entropy: the targets (class indices) must be int64, got float32; convert with "
      ".to(DType::Int64)");
}

BOOST_AUTO_TEST_CASE(label_smoothing_is_cross_entropy_with_the_smoothed_targets) {
  const Tensor x = Tensor::from_values({1, 2, 3, 0.5, -1, 0, 2, 2, -3}, {3, 3}, DType::Float64);
  const Tensor targets = Tensor::from_vector<int64_t>({2, -100, 0}, {3});
  for (double eps : {0.0, 0.1, 1.0}) {
    Variable logits(x.clone(), true);
    Variable loss = cross_entropy(logits, targets, {.label_smoothing = eps});
    // The definition, from log_softmax: -Σ_j q_j log p_j with q = (1-ε)·onehot + ε/C, over counted rows.
    const Tensor log_p = log_softmax(x, 1);
    double expected = 0;
    const std::pair<int64_t, int64_t> counted[] = {{0, 2}, {2, 0}};  // (row, its target)
    for (auto [i, t] : counted)
      for (int64_t j = 0; j < 3; ++j) expected -= ((j == t ? 1 - eps : 0) + eps / 3) * log_p.at({i, j});
    BOOST_TEST(std::abs(loss.item() - expected / 2) < 1e-12);
    // And its gradient: (softmax - q) / count on counted rows, 0 on the ignored one.
    loss.backward();
    const Tensor p = softmax(x, 1);
    for (auto [i, t] : counted) {
      for (int64_t j = 0; j < 3; ++j) {
        const double q = (j == t ? 1 - eps : 0) + eps / 3;
        BOOST_TEST(std::abs(logits.grad().at({i, j}) - (p.at({i, j}) - q) / 2) < 1e-12);
      }
    }
    for (int64_t j = 0; j < 3; ++j) BOOST_TEST(logits.grad().at({1, j}) == 0);
  }
  expect_error<ValueError>([&] { cross_entropy(Variable(x), targets, {.label_smoothing = 1.5}); },
                           "cross_entropy: label_smoothing must be in [0, 1], got 1.500000");
}

BOOST_AUTO_TEST_CASE(losses_stay_finite_for_huge_logits) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Variable logits = leaf({1e4, -1e4, 0, -1e4, 1e4, 1e4}, {2, 3}, dtype);
    Variable loss = cross_entropy(logits, Tensor::from_vector<int64_t>({1, 0}, {2}));
    // Row 0: lse = 1e4, loss = 2e4; row 1: lse = 1e4 + log 2, loss = 2e4 + log 2.
    BOOST_TEST(std::abs(loss.item() - (2e4 + std::log(2.0) / 2)) < 1e-2);
    loss.backward();
    for (double g : logits.grad().to_vector()) BOOST_TEST(std::isfinite(g));
    Variable z = leaf({1e4, -1e4}, {2}, dtype), t = leaf({0, 1}, {2}, dtype);
    Variable bce = binary_cross_entropy_with_logits(z, t);
    BOOST_TEST(std::abs(bce.item() - 1e4) < 1e-2);  // each element costs |x| when it is confidently wrong
    bce.backward();
    expect_close(z.grad(), {0.5, -0.5}, 1e-6);
  }
  // bce at logit 0 is log 2 whatever the target
  Variable zero = leaf({0, 0}, {2}), t = leaf({0, 1}, {2});
  BOOST_TEST(std::abs(binary_cross_entropy_with_logits(zero, t).item() - std::log(2.0)) < 1e-15);
}

BOOST_AUTO_TEST_CASE(softmax_of_a_fully_masked_row_has_zero_gradient) {
  const double inf = std::numeric_limits<double>::infinity();
  Variable x = leaf({1, 2, 3, 4}, {2, 2});
  const Tensor mask = Tensor::from_values({1, 1, 0, 0}, {2, 2}, DType::Bool);  // row 0 fully masked
  Variable y = softmax(masked_fill(x, mask, -inf), -1);
  expect_close(y.data(), {0, 0, 0.2689414213699951, 0.7310585786300049}, 1e-15);
  y.backward(Tensor::from_values({1, 2, 3, 5}, {2, 2}, F64));
  for (double g : x.grad().to_vector()) BOOST_TEST(std::isfinite(g));
  expect_equal(x.grad().slice(0, 0, 1), {0, 0});
}

BOOST_AUTO_TEST_CASE(embedding_looks_up_rows_and_skips_the_padding_row) {
  Variable table = leaf({0, 0, 1, 1, 2, 2}, {3, 2});
  const Tensor ids = Tensor::from_vector<int64_t>({2, 0, 2, 1}, {2, 2});
  Variable out = embedding(table, ids, /*padding_idx=*/0);
  BOOST_TEST(out.shape() == (Shape{2, 2, 2}));
  expect_equal(out.data(), {2, 2, 0, 0, 2, 2, 1, 1});
  out.backward(Tensor::ones({2, 2, 2}, F64));
  expect_equal(table.grad(), {0, 0, 1, 1, 2, 2});  // row 2 used twice; padding row 0 gets nothing
  expect_error<IndexError>([&] { embedding(table, Tensor::from_vector<int64_t>({3}, {1})); },
                           "embedding: token id 3 is out of range for a table of 3 rows");
  expect_error<DTypeError>(
      [&] { embedding(table, Tensor::zeros({1})); },
      "embedding: the token ids must be int64, got float32; convert with .to(DType::Int64)");
}

BOOST_AUTO_TEST_CASE(dropout_scales_what_it_keeps_and_is_the_identity_in_eval) {
  Variable x(Tensor::ones({100000}, F64), true);
  Generator g(1);
  Variable y = dropout(x, 0.25, /*training=*/true, &g);
  const std::vector<double> v = y.data().to_vector();
  size_t kept = 0;
  for (double e : v) {
    BOOST_REQUIRE(e == 0 || std::abs(e - 1 / 0.75) < 1e-15);
    kept += e != 0;
  }
  BOOST_TEST(std::abs(double(kept) / v.size() - 0.75) < 0.01);
  sum(y).backward();
  BOOST_TEST(x.grad().to_vector() == v);  // the gradient goes through the same scaled mask
  BOOST_TEST(dropout(x, 0.25, /*training=*/false).is_same(x));
  expect_equal(dropout(Variable(Tensor::ones({3})), 1.0, true, &g).data(), {0, 0, 0});
  expect_error<ValueError>([&] { dropout(x, 1.5, true); }, "dropout: p must be in [0, 1], got 1.500000");
}

BOOST_AUTO_TEST_CASE(max_routes_the_gradient_to_the_first_maximum) {
  Variable x = leaf({3, 7, 7, 1, 9, 2}, {2, 3});
  Variable m = max(x, 1);
  expect_equal(m.data(), {7, 9});
  m.backward(Tensor::from_values({10, 20}, {2}, F64));
  expect_equal(x.grad(), {0, 10, 0, 0, 20, 0});
}

BOOST_AUTO_TEST_CASE(gelu_sigmoid_tanh_relu_forward) {
  Variable x = leaf({-1, 0, 1}, {3});
  expect_close(gelu(x).data(), {-0.15865525393145707, 0, 0.8413447460685429}, 1e-15);
  expect_close(sigmoid(x).data(), {0.2689414213699951, 0.5, 0.7310585786300049}, 1e-15);
  expect_close(tanh(x).data(), {-0.7615941559557649, 0, 0.7615941559557649}, 1e-15);
  expect_equal(relu(x).data(), {0, 0, 1});
  // relu's gradient at the kink is 0, as PyTorch's
  Variable y = sum(relu(x));
  y.backward();
  expect_equal(x.grad(), {0, 0, 1});
}

BOOST_AUTO_TEST_CASE(relu_keeps_nan_as_pytorch_does) {
  // PyTorch 1.13, torch.relu on [nan, -1, 0, 2, inf, -inf] with upstream gradient [1, ..., 6]: the values
  // [nan, 0, 0, 2, inf, 0] and the gradient [1, 0, 0, 4, 5, 0] (threshold_backward passes g where x is
  // NaN), in float32 and float64.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::Float32, F64}) {
    Variable x = leaf({nan, -1, 0, 2, inf, -inf}, {6}, dtype);
    Variable y = relu(x);
    expect_equal(y.data(), {nan, 0, 0, 2, inf, 0});
    y.backward(Tensor::from_values({1, 2, 3, 4, 5, 6}, {6}, dtype));
    expect_equal(x.grad(), {1, 0, 0, 4, 5, 0});
    // relu_backward is linear in g, and its derivative in g (the second-order path) is the same mask.
    Variable g = leaf({1, 2, 3, 4, 5, 6}, {6}, dtype);
    relu_backward(g, x.data()).backward(Tensor::from_values({6, 5, 4, 3, 2, 1}, {6}, dtype));
    expect_equal(g.grad(), {6, 0, 0, 3, 2, 0});
  }
}

BOOST_AUTO_TEST_CASE(a_nan_in_a_batch_shows_in_the_loss) {
  // One NaN among the inputs of a relu MLP: PyTorch's loss is NaN, and so must ours be, not a finite
  // number with NaN written silently into the weights by the step.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Variable x(Tensor::from_values({0.5, -1, 2, nan, 1, 1, -0.5, 0.25}, {4, 2}, F64));
  Variable w1 = leaf({1, -1, 0.5, 2, -2, 1}, {2, 3}), w2 = leaf({1, -1, 2, 0.5, -0.5, 1}, {3, 2});
  Variable loss = cross_entropy(matmul(relu(matmul(x, w1)), w2), ids_of({0, 1, 1, 0}));
  BOOST_TEST(std::isnan(loss.item()));
  loss.backward();
  BOOST_TEST(std::isnan(w1.grad().to_vector<double>()[0]));
}

BOOST_AUTO_TEST_CASE(cross_entropy_with_a_class_masked_out_by_minus_infinity_matches_pytorch) {
  // PyTorch 1.13: [-inf, 0] with target 1 gives loss 0 and gradient softmax - onehot = [0, 0]; [0, -inf]
  // with target 1 gives +inf and [1, -1]; with label smoothing 0.1 the masked class has weight 0.05 in
  // the target, so the loss is +inf, and the gradient is softmax - q = [-0.05, 0.05].
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor one = Tensor::from_vector<int64_t>({1}, {1});
  struct Case {
    std::vector<double> logits;
    double smoothing, loss;
    std::vector<double> grad;
  };
  for (const Case& c : {Case{{-inf, 0}, 0, 0, {0, 0}}, Case{{0, -inf}, 0, inf, {1, -1}},
                        Case{{-inf, 0}, 0.1, inf, {-0.05, 0.05}}}) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      const Variable x(Tensor::from_values({c.logits[0], c.logits[1]}, {1, 2}, dtype), true);
      const Variable loss = cross_entropy(x, one, {.label_smoothing = c.smoothing});
      BOOST_TEST(loss.item() == c.loss, "logits " << c.logits[0] << ", " << c.logits[1]);
      loss.backward();
      expect_close(x.grad(), c.grad, 1e-6);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
