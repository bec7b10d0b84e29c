// Bad input to differentiable ops: an exception naming the op and the shapes, never a crash.
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
Variable param(const Shape& shape) {
  return Variable(Tensor::zeros(shape, DType::Float64), true);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(shape_errors_in_differentiable_ops) {
  expect_error<ShapeError>(
      [] {
        matmul(param({2, 3}), param({4, 5}));
      },
      "matmul: shapes [2,3] and [4,5] are not aligned (3 != 4)");
  expect_error<ShapeError>(
      [] {
        param({2, 3}) + param({3, 2});
      },
      "add: shapes [2,3] and [3,2] cannot be broadcast together (3 vs 2 at dim -1)");
  expect_error<ShapeError>(
      [] {
        param({2, 3}) / param({4});
      },
      "div: shapes [2,3] and [4] cannot be broadcast together (3 vs 4 at dim -1)");
  expect_error<ShapeError>(
      [] {
        reshape(param({2, 3}), {4});
      },
      "reshape: shape [4] is invalid for input of shape [2,3] (4 != 6 elements)");
  expect_error<ShapeError>(
      [] {
        softmax(param({2, 3}), 2);
      },
      "softmax: dim 2 is out of range for a tensor of rank 2");
  expect_error<ShapeError>(
      [] {
        sum(param({2, 3}), {5});
      },
      "sum: dim 5 is out of range for a tensor of rank 2");
  expect_error<ShapeError>(
      [] {
        concat({param({2, 3}), param({3, 3})}, 1);
      },
      "concat: shapes [2,3] and [3,3] differ outside dimension 1");
  expect_error<ShapeError>(
      [] {
        masked_fill(param({2, 3}), Tensor::zeros({4}, DType::Bool), 0);
      },
      "masked_fill: shapes [2,3] and [4] cannot be broadcast together (3 vs 4 at dim -1)");
  expect_error<ShapeError>([] { embedding(param({5}), Tensor::arange(2)); },
                           "embedding: the weight must be [V, D], got [5]");
  expect_error<ShapeError>(
      [] {
        cross_entropy(param({2, 3, 4}), Tensor::arange(2));
      },
      "cross_entropy: targets of shape [2] do not match input of shape [2,3,4] (expected [2,4])");
  expect_error<ShapeError>([] { cross_entropy(param({}), Tensor::zeros({}, DType::Int64)); },
                           "cross_entropy: input must be (N, C), (C) or (N, C, d1, ...), got []");
  expect_error<ShapeError>(
      [] { binary_cross_entropy_with_logits(param({3}), param({2})); },
      "binary_cross_entropy_with_logits: logits of shape [3] and targets of shape [2] differ");
}

BOOST_AUTO_TEST_CASE(dtype_errors_in_differentiable_ops) {
  expect_error<DTypeError>(
      [] { param({2}) * Variable(Tensor::zeros({2}, DType::Float32)); },
      "mul: expected two float32 or two float64 tensors, got float64 and float32; convert with "
      ".to(DType::Float64)");
  expect_error<DTypeError>(
      [] {
        matmul(param({2, 2}), Variable(Tensor::zeros({2, 2})));
      },
      "matmul: expected two float32 or two float64 tensors, got float64 and float32; convert with "
      ".to(DType::Float64)");
}

BOOST_AUTO_TEST_CASE(undefined_variables) {
  BOOST_TEST(!Variable().defined());
  expect_error<ValueError>([] { Variable().data(); },
                           "data: the Variable is undefined (default-constructed)");
  expect_error<ValueError>([] { Variable v{Tensor()}; }, "Variable: cannot wrap an undefined tensor");
  expect_error<ValueError>([] { param({1}) + Variable(); },
                           "data: the Variable is undefined (default-constructed)");
}

BOOST_AUTO_TEST_CASE(a_backward_function_that_returns_a_wrong_shape_is_caught) {
  // A deliberately broken op: its backward returns [3] for a [2] input.
  Variable x = param({2});
  Variable y = record("broken", x.data().clone(), {x},
                      [](const Tensor&, NeedsGrad) -> Grads { return {Tensor::zeros({3}, DType::Float64)}; });
  expect_error<ShapeError>(
      [&] { sum(y).backward(); },
      "backward of broken: the gradient for input 0 is [3] float64 but the input is [2] float64");
  BOOST_TEST(!x.grad().defined());  // nothing half-accumulated is left behind
}

BOOST_AUTO_TEST_CASE(a_wrong_second_gradient_leaves_the_first_input_untouched) {
  // Every gradient of a node is checked before any is accumulated: the right gradient for input 0 must
  // not reach a's .grad when input 1's is wrong.
  Variable a = param({2}), b = param({2});
  Variable y =
      record("half_broken", add(a.data(), b.data()), {a, b}, [](const Tensor& g, NeedsGrad) -> Grads {
        return {g.clone(), Tensor::zeros({5}, DType::Float64)};
      });
  expect_error<ShapeError>(
      [&] { sum(y).backward(); },
      "backward of half_broken: the gradient for input 1 is [5] float64 but the input is [2] float64");
  BOOST_TEST(!a.grad().defined());
  BOOST_TEST(!b.grad().defined());
}

BOOST_AUTO_TEST_SUITE_END()
