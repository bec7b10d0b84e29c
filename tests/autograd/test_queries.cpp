// Non-differentiable queries on Variables, abs, and printing a Variable.
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(queries)

BOOST_AUTO_TEST_CASE(argmax_eq_and_accuracy_work_on_variables) {
  const Variable logits(Tensor::from_values({0.1, 2, -1, 3, 0, 0.5, 1, 1, 0}, {3, 3}, DType::Float32), true);
  expect_equal(argmax(logits, 1), {1, 0, 0});  // ties: the first
  const Tensor labels = Tensor::from_vector<int64_t>({1, 2, 0}, {3});
  expect_equal(eq(argmax(logits, 1), labels).to(DType::Float64), {1, 0, 1});
  BOOST_TEST(accuracy(logits, labels) == 2.0 / 3.0);
  expect_equal(gt(logits, 0.5).to(DType::Float64), {0, 1, 0, 1, 0, 0, 1, 1, 0});
  expect_error<ShapeError>(
      [&] {
        accuracy(logits, Tensor::from_vector<int64_t>({1, 2}, {2}));
      },
      "accuracy: labels of shape [2] for logits of shape [3,3] (expected [3])");
  // A label outside [0, C) is refused, naming it, rather than counted as a wrong prediction.
  expect_error<IndexError>(
      [&] {
        accuracy(logits, Tensor::from_vector<int64_t>({1, 3, 0}, {3}));
      },
      "accuracy: label 3 is out of range for 3 classes");
  expect_error<IndexError>(
      [&] {
        accuracy(logits, Tensor::from_vector<int64_t>({-1, 0, 0}, {3}));
      },
      "accuracy: label -1 is out of range for 3 classes");
}

BOOST_AUTO_TEST_CASE(abs_is_differentiable_with_the_sign_as_gradient) {
  const Variable x = leaf({-2, 0, 3}, {3});
  Variable y = abs(x);
  expect_equal(y.data(), {2, 0, 3});
  sum(y).backward();
  expect_equal(x.grad(), {-1, 0, 1});  // 0 at the kink, as PyTorch
}

BOOST_AUTO_TEST_CASE(a_variable_prints_its_value_and_where_it_came_from) {
  const Variable w = leaf({1, 2}, {2});
  std::ostringstream leaf_text, computed_text, constant_text;
  leaf_text << w;
  computed_text << w * 2.0;
  constant_text << Variable(Tensor::from_values({1}, {1}, DType::Float64));
  BOOST_TEST(leaf_text.str() == "tensor([1., 2.], shape=[2], dtype=float64, requires_grad=True)");
  BOOST_TEST(computed_text.str() == "tensor([2., 4.], shape=[2], dtype=float64, grad_fn=<mul_scalar>)");
  BOOST_TEST(constant_text.str() == "tensor([1.], shape=[1], dtype=float64)");
}

BOOST_AUTO_TEST_CASE(set_data_drops_the_gradient_and_keeps_the_name) {
  const Variable w = leaf({1, 2}, {2});
  w.set_name("w");
  sum(w * w).backward();
  BOOST_TEST(w.grad().defined());
  w.set_data(Tensor::from_values({3, 4}, {2}, DType::Float64));
  BOOST_TEST(!w.grad().defined());
  BOOST_TEST(w.name() == "w");
}

BOOST_AUTO_TEST_SUITE_END()
