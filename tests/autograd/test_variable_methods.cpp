// Variable as a PyTorch user writes it: methods for the common ops, a Tensor wherever a constant
// Variable is taken (operators, module inputs), and a differentiable dtype conversion.
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(variable_methods)

BOOST_AUTO_TEST_CASE(methods_record_the_same_ops_as_the_functions) {
  Variable x = leaf({1, -2, 3, -4, 5, -6}, {2, 3});
  // x.reshape({3, 2}).t().sum(1) the PyTorch way, against the functions it calls.
  Variable by_methods = x.reshape({3, 2}).t().relu().sum({1});
  Variable by_functions = sum(relu(transpose(reshape(x, {3, 2}), 0, 1)), {1});
  expect_equal(by_methods.data(), by_functions.data().to_vector());
  BOOST_TEST(std::string(by_methods.grad_fn()->op) == "sum");
  by_methods.sum().backward();
  expect_equal(x.grad(), {1, 0, 1, 0, 1, 0});

  BOOST_TEST(x.view({6}).shape() == Shape{6});
  BOOST_TEST(x.flatten().shape() == Shape{6});
  BOOST_TEST(x.unsqueeze(0).shape() == (Shape{1, 2, 3}));
  BOOST_TEST(x.unsqueeze(0).squeeze(0).shape() == (Shape{2, 3}));
  BOOST_TEST(x.permute({1, 0}).shape() == (Shape{3, 2}));
  BOOST_TEST(x.transpose(0, 1).shape() == (Shape{3, 2}));
  BOOST_TEST(x.expand({4, 2, 3}).shape() == (Shape{4, 2, 3}));
  expect_equal(x.select(0, 1).data(), {-4, 5, -6});
  expect_equal(x.slice(1, 1, 3).data(), {-2, 3, 5, -6});
  expect_equal(x.mean({0}).data(), {-1.5, 1.5, -1.5});
  BOOST_TEST(x.mean().item() == -0.5);
  expect_equal(x.max(1).data(), {3, 5});
  expect_equal(x.min(1, true).data(), {-2, -6});
  BOOST_TEST(x.max().item() == 5);
  BOOST_TEST(x.min().item() == -6);
  expect_equal(x.argmax(1), {2, 1});
  expect_equal(x.abs().pow(2).data(), {1, 4, 9, 16, 25, 36});
  expect_close(x.abs().sqrt().log().exp().data(),
               {1, std::sqrt(2), std::sqrt(3), 2, std::sqrt(5), std::sqrt(6)}, 1e-15);
  expect_close(x.tanh().data(), tanh(x).data().to_vector(), 0);
  expect_close(x.sigmoid().data(), sigmoid(x).data().to_vector(), 0);
  expect_close(x.softmax(1).data(), softmax(x, 1).data().to_vector(), 0);
  expect_close(x.log_softmax(1).data(), log_softmax(x, 1).data().to_vector(), 0);
  expect_equal(x.clamp(-1.0, 2.0).data(), {1, -1, 2, -1, 2, -1});
  expect_equal(x.matmul(Tensor::ones({3, 1}, DType::Float64)).data(), {2, -5});
  expect_error<ShapeError>([&] { x.sum().t(); }, "t: expects a matrix, got shape []");
}

BOOST_AUTO_TEST_CASE(a_tensor_is_taken_wherever_a_constant_variable_is) {
  Variable x = leaf({1, 2, 3}, {3});
  const Tensor t = Tensor::from_values({10, 20, 30}, {3}, DType::Float64);
  // Either side of an operator, and a function's argument: no Variable(t) to write.
  Variable y = (x - t) * t + t / x;
  expect_equal(y.data(), {-80, -350, -800});
  mse_loss(x, t).backward();
  expect_equal(x.grad(), {-6, -12, -18});  // 2·(x - t)/3
  // A module's input.
  nn::Linear linear(3, 2);
  linear.to(DType::Float64);
  expect_equal(linear(t).data(), linear(Variable(t)).data().to_vector());
  BOOST_TEST(!linear(Tensor::ones({3}, DType::Float64)).is_leaf());
}

BOOST_AUTO_TEST_CASE(to_is_differentiable_between_float_dtypes) {
  // The dtype error's hint, ".to(DType::Float64)", compiles on a Variable and does what it says.
  Variable x = leaf({1, 2, 3}, {3}, DType::Float32);
  expect_error_containing<DTypeError>([&] { x + leaf({1, 1, 1}, {3}); }, ".to(");
  Variable y = x.to(DType::Float64);
  BOOST_TEST(y.dtype() == DType::Float64);
  BOOST_TEST(std::string(y.grad_fn()->op) == "to");
  sum(y * y).backward();
  BOOST_TEST(x.grad().dtype() == DType::Float32);  // the gradient comes back in x's dtype
  expect_equal(x.grad(), {2, 4, 6});
  BOOST_TEST(x.to(DType::Float32).is_same(x));      // already float32: the same Variable
  BOOST_TEST(!x.to(DType::Int64).requires_grad());  // no derivative to an integer
  // Twice differentiable: d/dx of (x.to(f64))² summed, taken again.
  Variable z = leaf({1.5}, {1}, DType::Float32);
  Variable g = grad({sum(pow(z.to(DType::Float64), 3))}, {z}, {}, {.create_graph = true})[0];  // 3z²
  g.backward(Tensor::ones({1}, DType::Float32));
  expect_equal(z.grad(), {9});  // 6z
}

BOOST_AUTO_TEST_SUITE_END()
