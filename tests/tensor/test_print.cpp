#include <cmath>
#include <limits>
#include <sstream>

#include "minigrad/tensor/summary.h"
#include "test_helpers.h"

using namespace minigrad;

namespace {
std::string printed(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(printing)

BOOST_AUTO_TEST_CASE(small_tensors_print_in_full_with_shape_and_dtype) {
  BOOST_TEST(printed(Tensor::from_values({0.1, -2, 3, 4}, {2, 2})) ==
             "tensor([[ 0.1000, -2.0000],\n"
             "        [ 3.0000,  4.0000]], shape=[2,2], dtype=float32)");
  BOOST_TEST(printed(Tensor::from_values({1, 2, 3}, {3}, DType::Float64)) ==
             "tensor([1., 2., 3.], shape=[3], dtype=float64)");
  BOOST_TEST(printed(Tensor::from_vector<int64_t>({5, -12}, {2})) ==
             "tensor([  5, -12], shape=[2], dtype=int64)");
  BOOST_TEST(printed(Tensor::from_values({1, 0}, {2}, DType::Bool)) ==
             "tensor([ True, False], shape=[2], dtype=bool)");
  BOOST_TEST(printed(Tensor::scalar(2.5)) == "tensor(2.5000, shape=[], dtype=float32)");
  BOOST_TEST(printed(Tensor::from_values({1e-6, 1}, {2}, DType::Float64)) ==
             "tensor([1.0000e-06, 1.0000e+00], shape=[2], dtype=float64)");
  BOOST_TEST(printed(Tensor()) == "tensor(undefined)");
  BOOST_TEST(printed(Tensor::zeros({0, 3})) == "tensor([], shape=[0,3], dtype=float32)");
}

BOOST_AUTO_TEST_CASE(three_dimensional_tensors_separate_blocks_by_a_blank_line) {
  BOOST_TEST(printed(Tensor::arange(0, 8, 1, DType::Float32).reshape({2, 2, 2})) ==
             "tensor([[[0., 1.],\n"
             "         [2., 3.]],\n"
             "\n"
             "        [[4., 5.],\n"
             "         [6., 7.]]], shape=[2,2,2], dtype=float32)");
}

BOOST_AUTO_TEST_CASE(big_tensors_are_elided_like_pytorch) {
  const std::string s = printed(Tensor::arange(0, 2000, 1, DType::Float32));
  BOOST_TEST(s == "tensor([   0.,    1.,    2., ..., 1997., 1998., 1999.], shape=[2000], dtype=float32)");
  const std::string m = printed(Tensor::arange(0, 1600, 1, DType::Float32).reshape({40, 40}));
  BOOST_TEST(m.find("...,\n") != std::string::npos);   // rows elided
  BOOST_TEST(m.find("1599.]]") != std::string::npos);  // the last element is shown
  BOOST_TEST(m.size() < 800);
}

// summarize (tensor/summary.h), the backward page's view of a tensor.
BOOST_AUTO_TEST_CASE(a_summary_has_a_small_tensor_whole_and_a_large_one_in_a_few_numbers) {
  const TensorSummary small = summarize(Tensor::from_values({1, -2, 3, 4}, {2, 2}, DType::Float64));
  BOOST_TEST(small.complete);
  BOOST_TEST(small.values == (std::vector<double>{1, -2, 3, 4}));
  BOOST_TEST(small.mean == 1.5);
  BOOST_TEST(small.min == -2);
  BOOST_TEST(small.max == 4);
  const TensorSummary large = summarize(Tensor::arange(0, 100, 1, DType::Float64).reshape({10, 10}));
  BOOST_TEST(!large.complete);
  BOOST_TEST(large.values == (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  BOOST_TEST(large.mean == 49.5);
  BOOST_TEST(large.max == 99);
  BOOST_TEST(large.shape.str() == "[10,10]");
  // Ids (a constant input) are numbers too, their dtype kept.
  const TensorSummary ids = summarize(Tensor::from_vector<int64_t>({3, 1, 2}, {3}));
  BOOST_TEST(ids.values == (std::vector<double>{3, 1, 2}));
  BOOST_TEST(ids.mean == 2);
  BOOST_TEST((ids.dtype == DType::Int64));
}

BOOST_AUTO_TEST_CASE(a_summary_of_a_tensor_with_a_nan_says_nan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& values : {std::vector<double>{nan, 1, 2}, std::vector<double>{1, nan, 2}}) {
    const TensorSummary s = summarize(Tensor::from_values(values, {3}, DType::Float64));
    BOOST_TEST(std::isnan(s.mean));
    BOOST_TEST(std::isnan(s.min));
    BOOST_TEST(std::isnan(s.max));
  }
}

BOOST_AUTO_TEST_SUITE_END()
