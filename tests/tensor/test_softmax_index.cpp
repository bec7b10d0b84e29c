#include <limits>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(softmax_and_index)

BOOST_AUTO_TEST_CASE(softmax_values) {
  const Tensor x = Tensor::from_values({1, 2, 3, 0, 0, 0}, {2, 3}, DType::Float64);
  expect_close(softmax(x, 1),
               {0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3, 1.0 / 3, 1.0 / 3},
               1e-15);
  expect_close(log_softmax(x, -1),
               {-2.40760596444438, -1.40760596444438, -0.40760596444438, -std::log(3.0), -std::log(3.0),
                -std::log(3.0)},
               1e-13);
  // Along dim 0 each column sums to one.
  expect_close(sum(softmax(x, 0), {0}), {1, 1, 1}, 1e-15);
  // float32 uses the polynomial exp; still within float precision of the float64 answer.
  expect_close(softmax(x.to(DType::Float32), 1), softmax(x, 1).to_vector(), 1e-7);
}

BOOST_AUTO_TEST_CASE(large_logits_stay_finite) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = Tensor::from_values({1e4, -1e4, 0, -1e4, -1e4, -1e4}, {2, 3}, dtype);
    expect_close(softmax(x, 1), {1, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-7);
    expect_close(log_softmax(x, 1), {0, -2e4, -1e4, -std::log(3.0), -std::log(3.0), -std::log(3.0)}, 1e-3);
  }
}

BOOST_AUTO_TEST_CASE(a_fully_masked_row_is_zero_not_nan) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = Tensor::from_values({-inf, -inf, -inf, 0, -inf, 0}, {2, 3}, DType::Float64);
  expect_close(softmax(x, 1), {0, 0, 0, 0.5, 0, 0.5}, 1e-15);
  const std::vector<double> logs = log_softmax(x, 1).to_vector();
  BOOST_TEST(logs[0] == -inf);
  BOOST_TEST(logs[3] == -std::log(2.0));
}

BOOST_AUTO_TEST_CASE(a_nan_makes_its_row_nan) {
  // A row of NaN is not a fully masked row: zeros would let a model whose weights went bad keep
  // printing confident predictions. Rows without a NaN are unaffected.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = Tensor::from_values({nan, nan, nan, 1, nan, 0, -inf, nan, -inf, 0, 0, 0}, {4, 3}, dtype);
    for (const Tensor& y : {softmax(x, 1), log_softmax(x, 1)}) {
      const std::vector<double> v = y.to_vector();
      for (int i = 0; i < 9; ++i) BOOST_TEST(std::isnan(v[i]), "element " << i << " is " << v[i]);
      for (int i = 9; i < 12; ++i) BOOST_TEST(!std::isnan(v[i]));
    }
  }
}

BOOST_AUTO_TEST_CASE(index_select_gathers_along_any_dim) {
  const Tensor table = Tensor::arange(0, 12, 1, DType::Float32).reshape({4, 3});
  const Tensor ids = Tensor::from_vector<int64_t>({3, 0, 3}, {3});
  expect_equal(index_select(table, 0, ids), {9, 10, 11, 0, 1, 2, 9, 10, 11});
  expect_equal(index_select(table, 1, Tensor::from_vector<int64_t>({2, 0}, {2})), {2, 0, 5, 3, 8, 6, 11, 9});
  expect_error<IndexError>([&] { index_select(table, 0, Tensor::from_vector<int64_t>({4}, {1})); },
                           "index_select: index 4 is out of range for dimension 0 of size 4");
  expect_error<DTypeError>(
      [&] { index_select(table, 0, Tensor::zeros({1})); },
      "index_select: the index must be int64, got float32; convert with .to(DType::Int64)");
  expect_error<ShapeError>(
      [&] {
        index_select(table, 0, Tensor::arange(4).reshape({2, 2}));
      },
      "index_select: the index must be 1-D, got shape [2,2]");
}

BOOST_AUTO_TEST_CASE(index_add_sums_repeated_indices) {
  const Tensor base = Tensor::zeros({3, 2});
  const Tensor src = Tensor::from_values({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor out = index_add(base, 0, Tensor::from_vector<int64_t>({2, 0, 2}, {3}), src);
  expect_equal(out, {3, 4, 0, 0, 6, 8});
  expect_equal(base, {0, 0, 0, 0, 0, 0});
  expect_error<ShapeError>(
      [&] { index_add(base, 0, Tensor::from_vector<int64_t>({0}, {1}), src); },
      "index_add: source of shape [3,2] does not match [1,2] (x's shape with the index's length "
      "at dim 0)");
  // In place: the same sums, added to what x holds.
  const Tensor into = Tensor::ones({3, 2});
  index_add_(into, 0, Tensor::from_vector<int64_t>({2, 0, 2}, {3}), src);
  expect_equal(into, {4, 5, 1, 1, 7, 9});
  expect_error<ValueError>(
      [&] { index_add_(into.transpose(0, 1), 1, Tensor::from_vector<int64_t>({0}, {1}), src); },
      "index_add_: adds into a contiguous tensor only");
}

BOOST_AUTO_TEST_SUITE_END()
