#include <limits>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(reductions)

BOOST_AUTO_TEST_CASE(sum_and_mean_over_dims) {
  const Tensor x = Tensor::arange(0, 24, 1, DType::Float64).reshape({2, 3, 4});
  BOOST_TEST(sum(x).item() == 276);
  BOOST_TEST(sum(x).rank() == 0);
  const Tensor s1 = sum(x, {1});
  BOOST_TEST(s1.shape() == (Shape{2, 4}));
  expect_equal(s1, {12, 15, 18, 21, 48, 51, 54, 57});
  BOOST_TEST(sum(x, {1}, true).shape() == (Shape{2, 1, 4}));
  // dims 0 and 2 are not adjacent: reduced one after the other
  const Tensor s02 = sum(x, {0, -1}, true);
  BOOST_TEST(s02.shape() == (Shape{1, 3, 1}));
  expect_equal(s02, {0 + 1 + 2 + 3 + 12 + 13 + 14 + 15, 4 + 5 + 6 + 7 + 16 + 17 + 18 + 19,
                     8 + 9 + 10 + 11 + 20 + 21 + 22 + 23});
  expect_equal(sum(x, {0, 1}), {60, 66, 72, 78});  // adjacent: one pass
  expect_close(mean(x, {2}), {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  BOOST_TEST(mean(x).item() == 11.5);
  expect_error<ShapeError>([&] { sum(x, {1, -2}); }, "sum: dims [1,-2] name a dimension twice");
  expect_error<ShapeError>([&] { mean(x, {3}); }, "mean: dim 3 is out of range for a tensor of rank 3");
}

BOOST_AUTO_TEST_CASE(float32_sums_accumulate_in_float64) {
  // 0.1f added a million times in float32 drifts by about 1%; accumulated in float64 it does not.
  const Tensor x = Tensor::full({1000000}, 0.1, DType::Float32);
  BOOST_TEST(std::abs(sum(x).item() - 100000.0) < 0.01);
  const Tensor rows = Tensor::full({1000, 1000}, 0.1, DType::Float32);
  const std::vector<double> columns = sum(rows, {0}).to_vector();
  BOOST_TEST(std::abs(columns.front() - 100.0) < 1e-4);
  BOOST_TEST(std::abs(columns.back() - 100.0) < 1e-4);
}

BOOST_AUTO_TEST_CASE(max_and_argmax) {
  const Tensor x = Tensor::from_values({3, 7, 7, 1, 9, 2}, {2, 3});
  expect_equal(max(x, 1), {7, 9});
  expect_equal(argmax(x, 1), {1, 1});  // the tie 7, 7 goes to the first
  expect_equal(max(x, 0, true), {3, 9, 7});
  BOOST_TEST(max(x, 0, true).shape() == (Shape{1, 3}));
  expect_equal(argmax(x, 0), {0, 1, 0});
  BOOST_TEST(argmax(x, 0).dtype() == DType::Int64);
  BOOST_TEST(max(x).item() == 9);
  BOOST_TEST(argmax(x).item() == 4);      // row-major index of the 9
  BOOST_TEST(argmax(x.t()).item() == 3);  // of the transposed view [[3,1],[7,9],[7,2]]
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(std::isnan(max(Tensor::from_values({1, nan, 3}, {3}, DType::Float64)).item()));
  expect_error<ShapeError>(
      [] {
        max(Tensor::zeros({2, 0}), 1);
      },
      "max: cannot reduce an empty dimension of shape [2,0]");
}

BOOST_AUTO_TEST_CASE(sum_to_undoes_broadcasting) {
  const Tensor g = Tensor::ones({2, 3, 4});
  expect_equal(sum_to(g, {4}), {6, 6, 6, 6});
  expect_equal(sum_to(g, {3, 1}), {8, 8, 8});
  BOOST_TEST(sum_to(g, {1, 3, 1}).shape() == (Shape{1, 3, 1}));
  BOOST_TEST(sum_to(g, {}).item() == 24);
  BOOST_TEST(sum_to(g, {2, 3, 4}).shares_storage_with(g));
  expect_error<ShapeError>(
      [&] { sum_to(g, {2}); },
      "sum_to: shape [2,3,4] cannot be summed down to [2] (it is not a broadcast of it)");
}

BOOST_AUTO_TEST_SUITE_END()
