// The regression losses, nll_loss and the activations added for PyTorch users, at the special values
// (NaN, ±inf, 0) where a composition can go wrong (0·inf in a branch not taken), against PyTorch 1.13's
// values in both dtypes; their values elsewhere are checked against PyTorch by
// functions_parity_with_pytorch, and their gradients by the gradcheck catalogue.
#include <cmath>
#include <functional>
#include <limits>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
const double kNan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

Variable zeros_of(const Variable& x) {
  return Variable(Tensor::zeros(x.shape(), x.dtype()));
}

struct Expected {
  const char* name;
  std::function<Variable(const Variable&)> f;
  std::vector<double> value, grad;  // PyTorch's at x = [nan, -inf, 0, inf], upstream gradient ones
};
}  // namespace

BOOST_AUTO_TEST_SUITE(losses_and_activations)

BOOST_AUTO_TEST_CASE(special_values_are_pytorchs) {
  // torch.nn.functional's ops on x = [nan, -inf, 0, inf]; the losses against a target of zeros with
  // reduction='none'.
  const std::vector<Expected> cases = {
      {"leaky_relu(0.1)",
       [](const Variable& x) { return leaky_relu(x, 0.1); },
       {kNan, -inf, 0, inf},
       {0.1, 0.1, 0.1, 1}},
      {"silu", [](const Variable& x) { return silu(x); }, {kNan, kNan, 0, inf}, {kNan, kNan, 0.5, kNan}},
      {"elu(1.5)", [](const Variable& x) { return elu(x, 1.5); }, {kNan, -1.5, 0, inf}, {kNan, 0, 1.5, 1}},
      {"softplus(2, 20)",
       [](const Variable& x) { return softplus(x, 2.0, 20.0); },
       {kNan, 0, std::log(2.0) / 2, inf},
       {kNan, 0, 0.5, 1}},
      {"l1_loss",
       [](const Variable& x) { return l1_loss(x, zeros_of(x), {Reduction::None}); },
       {kNan, inf, 0, inf},
       {0, -1, 0, 1}},
      {"smooth_l1_loss",
       [](const Variable& x) { return smooth_l1_loss(x, zeros_of(x), {.reduction = Reduction::None}); },
       {kNan, inf, 0, inf},
       {kNan, -1, 0, 1}},
      {"huber_loss(delta 2)",
       [](const Variable& x) {
         return huber_loss(x, zeros_of(x), {.reduction = Reduction::None, .delta = 2});
       },
       {kNan, inf, 0, inf},
       {kNan, -2, 0, 2}},
      {"mse_loss",
       [](const Variable& x) { return mse_loss(x, zeros_of(x), {Reduction::None}); },
       {kNan, inf, 0, inf},
       {kNan, -inf, 0, inf}},
  };
  for (DType dtype : {DType::Float32, F64}) {
    for (const Expected& c : cases) {
      BOOST_TEST_CONTEXT(c.name << " in " << dtype_name(dtype)) {
        Variable x = leaf({kNan, -inf, 0, inf}, {4}, dtype);
        Variable y = c.f(x);
        expect_close(y.data(), c.value);
        y.backward(Tensor::ones({4}, dtype));
        expect_close(x.grad(), c.grad);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(nll_loss_picks_each_rows_target_and_ignores_what_it_is_told_to) {
  // F.nll_loss([[0, -inf, nan], [1, 2, 3]], [1, 0]): inf, gradient -1/2 at each target; with both rows
  // ignored PyTorch's mean is NaN, minigrad's 0 (as its cross_entropy).
  Variable x = leaf({0, -inf, kNan, 1, 2, 3}, {2, 3});
  Variable loss = nll_loss(x, ids_of({1, 0}));
  BOOST_TEST(loss.item() == inf);
  loss.backward();
  expect_equal(x.grad(), {0, -0.5, 0, -0.5, 0, 0});
  BOOST_TEST(nll_loss(x, ids_of({-100, -100})).item() == 0);
  expect_equal(nll_loss(x, ids_of({2, 1}), {.reduction = Reduction::None}).data(), {-kNan, -2});
  // nll_loss of log_softmax is cross_entropy.
  Variable z = leaf({0.5, -1, 2, 0.25, 3, -2}, {2, 3});
  expect_close(nll_loss(log_softmax(z, 1), ids_of({2, 0})).data(), {cross_entropy(z, ids_of({2, 0})).item()},
               1e-15);
  expect_error<IndexError>(
      [&] {
        nll_loss(x, ids_of({3, 0}));
      },
      "nll_loss: target 3 is out of range for 3 classes");
  expect_error<ShapeError>([&] { nll_loss(x, ids_of({1})); },
                           "nll_loss: targets of shape [1] do not match input of shape [2,3] (expected [2])");
}

BOOST_AUTO_TEST_CASE(a_loss_refuses_a_target_of_another_shape) {
  expect_error<ShapeError>(
      [] {
        mse_loss(Variable(Tensor::zeros({3, 1})), Variable(Tensor::zeros({3})));
      },
      "mse_loss: input of shape [3,1] and target of shape [3] differ (minigrad does not broadcast a loss's "
      "target)");
  expect_error<ValueError>(
      [] { huber_loss(Variable(Tensor::zeros({3})), Variable(Tensor::zeros({3})), {.delta = 0}); },
      "huber_loss: delta must be positive, got 0.000000");
}

BOOST_AUTO_TEST_CASE(class_weights_reductions_and_shapes_are_checked_and_named) {
  const Variable logits(Tensor::zeros({2, 3}));
  const Tensor targets = Tensor::from_vector<int64_t>({0, 2}, {2});
  expect_error<ShapeError>(
      [&] { cross_entropy(logits, targets, {.weight = Tensor::ones({2})}); },
      "cross_entropy: weight must be a floating (C) tensor for the input's 3 classes, got [2] float32");
  expect_error<ShapeError>(
      [&] { nll_loss(logits, targets, {.weight = Tensor::ones({3}, DType::Int64)}); },
      "nll_loss: weight must be a floating (C) tensor for the input's 3 classes, got [3] int64");
  // (N, C, d) takes targets (N, d); (C) takes a target ().
  expect_error<ShapeError>(
      [] {
        cross_entropy(Variable(Tensor::zeros({2, 3, 4})), Tensor::zeros({2, 3}, DType::Int64));
      },
      "cross_entropy: targets of shape [2,3] do not match input of shape [2,3,4] (expected [2,4])");
  expect_error<ShapeError>([] { nll_loss(Variable(Tensor::zeros({3})), Tensor::zeros({1}, DType::Int64)); },
                           "nll_loss: targets of shape [1] do not match input of shape [3] (expected [])");
  BOOST_TEST(
      cross_entropy(Variable(Tensor::zeros({3})), Tensor::zeros({}, DType::Int64)).item() == std::log(3.0),
      boost::test_tools::tolerance(1e-6));
  BOOST_TEST((cross_entropy(Variable(Tensor::zeros({2, 3, 4})), Tensor::zeros({2, 4}, DType::Int64),
                            {.reduction = Reduction::None})
                  .shape() == Shape{2, 4}));
  // A weight or pos_weight that does not broadcast to the logits is refused, naming both shapes.
  const Variable x(Tensor::zeros({4, 3})), t(Tensor::zeros({4, 3}));
  expect_error<ShapeError>([&] { binary_cross_entropy_with_logits(x, t, {.pos_weight = Tensor::ones({4})}); },
                           "binary_cross_entropy_with_logits: pos_weight of shape [4] does not broadcast to "
                           "the logits' shape [4,3]");
  expect_error<ShapeError>(
      [&] {
        binary_cross_entropy_with_logits(x, t, {.weight = Tensor::ones({2, 3})});
      },
      "binary_cross_entropy_with_logits: weight of shape [2,3] does not broadcast to the logits' shape "
      "[4,3]");
  // A class of weight 0 adds nothing; the mean divides by the counted rows' weights.
  const Variable z(Tensor::from_vector<double>({1, 2, 3, 0, 0, 5}, {2, 3}), true);
  const Tensor w = Tensor::from_vector<double>({0, 1, 4}, {3});
  const double row1 = std::log(std::exp(1) + std::exp(2) + std::exp(3)) - 2,
               row2 = std::log(2 + std::exp(5)) - 5;
  BOOST_TEST(cross_entropy(z, Tensor::from_vector<int64_t>({1, 2}, {2}), {.weight = w}).item() ==
                 (row1 + 4 * row2) / 5,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(cross_entropy(z, Tensor::from_vector<int64_t>({0, 2}, {2}), {.weight = w}).item() == row2,
             boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(numbers_pytorch_defines_are_pytorchs) {
  for (DType dtype : {DType::Float32, F64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      // torch.pow(x, 0) at [0, 1, -2]: ones, gradient 0 everywhere (not 0·0^-1 = NaN at 0), and so is
      // pow_backward's derivative in g.
      Variable x = leaf({0, 1, -2}, {3}, dtype);
      Variable y = pow(x, 0);
      expect_equal(y.data(), {1, 1, 1});
      y.backward(Tensor::ones({3}, dtype), {.create_graph = true});
      expect_equal(x.grad(), {0, 0, 0});
      x.zero_grad();  // a gradient with a graph refers back to x (as in PyTorch): dropping it frees both
      Variable g = leaf({1, 1, 1}, {3}, dtype);
      pow_backward(g, x, 0).backward(Tensor::ones({3}, dtype));
      expect_equal(g.grad(), {0, 0, 0});
      // F.binary_cross_entropy_with_logits at logits [inf, -inf] (reduction='none' is not there: the mean
      // of two is their sum / 2): t = 0 gives [inf, nan]; t = 0.5 [inf, nan]; t = 1 [nan, nan]. Gradients
      // sigmoid(x) - t and -x.
      for (double t : {0.0, 0.5, 1.0}) {
        Variable logits = leaf({inf}, {1}, dtype), targets = leaf({t}, {1}, dtype);
        Variable loss = binary_cross_entropy_with_logits(logits, targets);
        expect_equal(loss.data(), {t == 1 ? kNan : inf});
        loss.backward();
        expect_equal(logits.grad(), {1 - t});
        expect_equal(targets.grad(), {-inf});
        BOOST_TEST(std::isnan(
            binary_cross_entropy_with_logits(leaf({-inf}, {1}, dtype), leaf({t}, {1}, dtype)).item()));
      }
    }
  }
  // F.log_softmax([[1e30, 1e30, 0]]): [-log 2, -log 2, -1e30], not [0, 0, -1e30]: the log Σ term survives a
  // large common offset; F.cross_entropy with target 0: log 2, gradient [-0.5, 0.5, 0].
  Variable z = leaf({1e30, 1e30, 0}, {1, 3});
  expect_close(log_softmax(z, 1).data(), {-std::log(2.0), -std::log(2.0), -1e30}, 1e-15);
  Variable loss = cross_entropy(z, ids_of({0}));
  expect_close(loss.data(), {std::log(2.0)}, 1e-15);
  loss.backward();
  expect_close(z.grad(), {-0.5, 0.5, 0}, 1e-15);
  // float32 [1e4, 1e4, 0]: PyTorch's log_softmax [-0.6931472, -0.6931472, -10000.693], and cross_entropy
  // with target 2: 10000.693359375.
  Variable w = leaf({1e4, 1e4, 0}, {1, 3}, DType::Float32);
  expect_close(log_softmax(w, 1).data(), {-0.6931472, -0.6931472, -10000.693359375}, 1e-7);
  Variable loss32 = cross_entropy(w, ids_of({2}));
  BOOST_TEST(loss32.item() == 10000.693359375);
  loss32.backward();
  expect_close(w.grad(), {0.5, 0.5, -1}, 1e-7);
}

BOOST_AUTO_TEST_SUITE_END()
