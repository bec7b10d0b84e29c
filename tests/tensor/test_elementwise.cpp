#include <limits>

#include "minigrad/tensor/fast_math.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(elementwise)

BOOST_AUTO_TEST_CASE(arithmetic_on_equal_shapes) {
  const Tensor a = Tensor::from_values({1, 2, 3, 4}, {2, 2}), b = Tensor::from_values({5, 6, 7, 8}, {2, 2});
  expect_equal(a + b, {6, 8, 10, 12});
  expect_equal(b - a, {4, 4, 4, 4});
  expect_equal(a * b, {5, 12, 21, 32});
  expect_close(a / b, {0.2, 1.0 / 3, 3.0 / 7, 0.5});
  expect_equal(maximum(a, Tensor::scalar(2.5)), {2.5, 2.5, 3, 4});
  expect_equal(minimum(a, Tensor::scalar(2.5)), {1, 2, 2.5, 2.5});
}

BOOST_AUTO_TEST_CASE(broadcasting_matches_an_explicit_loop) {
  // [2,1,3] + [4,1] -> [2,4,3]: out[i,j,k] = a[i,0,k] + b[j,0]
  const Tensor a = Tensor::arange(0, 6, 1, DType::Float64).reshape({2, 1, 3});
  const Tensor b = Tensor::from_values({10, 20, 30, 40}, {4, 1}, DType::Float64);
  const Tensor out = a + b;
  BOOST_TEST(out.shape() == (Shape{2, 4, 3}));
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(a.at({i, 0, k}) + b.at({j, 0}));
  expect_equal(out, expected);
}

BOOST_AUTO_TEST_CASE(non_contiguous_operands) {
  const Tensor m = Tensor::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  expect_equal(m.t() * Tensor::from_values({1, 10}, {2}), {0, 30, 1, 40, 2, 50});
  expect_equal(m.slice(1, 0, 3, 2) + 1.0, {1, 3, 4, 6});
  expect_equal(exp(m.t()) - exp(m).t(), {0, 0, 0, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(large_tensors_use_the_threaded_path_and_agree) {
  // Above the parallel grain, with one operand broadcast and one transposed.
  const int64_t n = 1000;
  const Tensor a = Tensor::arange(0, double(n * n), 1, DType::Float64).reshape({n, n});
  const Tensor row = Tensor::arange(0, double(n), 1, DType::Float64);
  const Tensor out = a.t() + row;  // out[i,j] = a[j,i] + j = j*n + i + j
  const std::vector<double> got = out.to_vector();
  bool all = true;
  for (int64_t i = 0; i < n && all; ++i)
    for (int64_t j = 0; j < n && all; ++j) all = got[i * n + j] == double(j * n + i + j);
  BOOST_TEST(all);
}

BOOST_AUTO_TEST_CASE(scalar_forms) {
  const Tensor x = Tensor::from_values({1, 2, 4}, {3});
  expect_equal(x + 1.0, {2, 3, 5});
  expect_equal(2.0 - x, {1, 0, -2});
  expect_equal(x * 3.0, {3, 6, 12});
  expect_equal(x / 2.0, {0.5, 1, 2});
  expect_equal(4.0 / x, {4, 2, 1});
  expect_equal(pow(x, 2), {1, 4, 16});
  expect_close(pow(x, 0.5), {1, std::sqrt(2.0), 2});
  expect_close(pow(x, -1), {1, 0.5, 0.25});
  expect_equal(-x, {-1, -2, -4});
}

BOOST_AUTO_TEST_CASE(maximum_and_minimum_propagate_nan_as_pytorch) {
  // PyTorch 1.13: torch.maximum and torch.minimum of [1, nan, nan, 2, -0, 0] and [nan, 1, nan, 3, 0, -0]
  // give [nan, nan, nan, 3, -0, 0] and [nan, nan, nan, 2, -0, 0] (a tie keeps the first operand's
  // sign), in float32 and float64.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor a = Tensor::from_values({1, nan, nan, 2, -0.0, 0}, {6}, dtype);
    const Tensor b = Tensor::from_values({nan, 1, nan, 3, 0, -0.0}, {6}, dtype);
    const Tensor high = maximum(a, b), low = minimum(a, b);
    expect_equal(high, {nan, nan, nan, 3, -0.0, 0});
    expect_equal(low, {nan, nan, nan, 2, -0.0, 0});
    const std::vector<double> h = high.to_vector<double>(), l = low.to_vector<double>();
    BOOST_TEST(std::signbit(h[4]));
    BOOST_TEST(!std::signbit(h[5]));
    BOOST_TEST(std::signbit(l[4]));
    BOOST_TEST(!std::signbit(l[5]));
  }
}

BOOST_AUTO_TEST_CASE(functions_against_hand_computed_values) {
  const Tensor x = Tensor::from_values({-1, 0, 1}, {3}, DType::Float64);
  expect_close(exp(x), {std::exp(-1.0), 1, std::exp(1.0)}, 1e-15);
  expect_close(log(Tensor::from_values({1, std::exp(2.0)}, {2}, DType::Float64)), {0, 2}, 1e-15);
  expect_close(sqrt(Tensor::from_values({4, 9}, {2})), {2, 3});
  expect_close(tanh(x), {-0.7615941559557649, 0, 0.7615941559557649}, 1e-15);
  expect_close(sigmoid(x), {0.2689414213699951, 0.5, 0.7310585786300049}, 1e-15);
  expect_equal(relu(x), {0, 0, 1});
  expect_equal(abs(x), {1, 0, 1});
  // gelu(x) = x·Φ(x): Φ(1) = 0.8413447460685429
  expect_close(gelu(x), {-0.15865525393145707, 0, 0.8413447460685429}, 1e-15);
  // sigmoid never overflows
  expect_close(sigmoid(Tensor::from_values({-1000, 1000}, {2})), {0, 1}, 0);
}

BOOST_AUTO_TEST_CASE(float32_exp_is_accurate_and_handles_the_extremes) {
  // fast_exp is a polynomial: check it against the C library over the whole finite range.
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.01237f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(fast_exp(x) - want) / want);
  }
  BOOST_TEST(worst < 3e-7);  // within about two float32 ulps
  // Past the normal exponents, as the C library's expf and PyTorch's exp: down through the subnormals
  // (PyTorch 1.13: exp(-87.2) = 1.347480e-38, exp(-100) = 3.783506e-44, exp(-103) = 1.401298e-45, exp(-104)
  // = 0), within two ulps or one subnormal step, and up to the largest float.
  for (float x = -104.5f; x <= 88.72f; x += (x < -87.0f || x > 88.0f) ? 0.00731f : 1.0f) {
    const double want = static_cast<double>(std::exp(x));
    BOOST_REQUIRE_MESSAGE(std::abs(fast_exp(x) - want) <= std::max(3e-7 * want, 1.5e-45),
                          "exp(" << x << ") = " << fast_exp(x) << ", expf says " << want);
  }
  BOOST_TEST(fast_exp(-87.2f) == 1.347480e-38f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(fast_exp(-100.0f) == 3.783506e-44f);
  BOOST_TEST(fast_exp(-103.0f) == 1.401298e-45f);
  BOOST_TEST(fast_exp(-104.0f) == 0.0f);
  BOOST_TEST(std::isfinite(fast_exp(88.72f)));
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(fast_exp(88.73f) == inf);
  BOOST_TEST(fast_exp(-inf) == 0.0f);
  BOOST_TEST(fast_exp(inf) == inf);
  BOOST_TEST(fast_exp(100.0f) == inf);
  BOOST_TEST(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  BOOST_TEST(fast_exp(0.0f) == 1.0f);
  // The variant for x <= 0 (softmax's) agrees with the general one down to the smallest normal result,
  // and is 0 below it, -inf included.
  for (float x = -87.0f; x <= 0.0f; x += 0.0731f) BOOST_REQUIRE(fast_exp_nonpositive(x) == fast_exp(x));
  BOOST_TEST(fast_exp_nonpositive(-87.2f) == 0.0f);
  BOOST_TEST(fast_exp_nonpositive(-inf) == 0.0f);
}

BOOST_AUTO_TEST_CASE(float32_tanh_is_accurate_and_handles_the_extremes) {
  // fast_tanh against the C library in float64: relative error near 0 (the polynomial), across the switch
  // to the exp formula at 0.625, and out to where tanh is 1 in float32.
  double worst = 0;
  for (float x = -12.0f; x <= 12.0f; x += 0.000937f) {
    const double want = std::tanh(static_cast<double>(x));
    if (want != 0) worst = std::max(worst, std::abs(fast_tanh(x) - want) / std::abs(want));
  }
  for (float x = 1e-30f; x < 1.0f; x *= 1.37f) {
    worst = std::max(worst, std::abs(fast_tanh(x) - std::tanh(double(x))) / std::tanh(double(x)));
  }
  BOOST_TEST(worst < 3e-7);  // within about two float32 ulps
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(fast_tanh(inf) == 1.0f);
  BOOST_TEST(fast_tanh(-inf) == -1.0f);
  BOOST_TEST(fast_tanh(100.0f) == 1.0f);
  BOOST_TEST(fast_tanh(0.0f) == 0.0f);
  BOOST_TEST(std::signbit(fast_tanh(-0.0f)));
  BOOST_TEST(std::isnan(fast_tanh(std::numeric_limits<float>::quiet_NaN())));
  for (float x = 0.01f; x < 10.0f; x *= 1.1f) BOOST_REQUIRE(fast_tanh(-x) == -fast_tanh(x));  // odd
}

BOOST_AUTO_TEST_CASE(comparisons_give_bool_tensors) {
  const Tensor x = Tensor::from_values({1, 2, 3}, {3});
  const Tensor lt2 = lt(x, 2.0);
  BOOST_TEST(lt2.dtype() == DType::Bool);
  expect_equal(lt2, {1, 0, 0});
  expect_equal(le(x, 2.0), {1, 1, 0});
  expect_equal(gt(x, 2.0), {0, 0, 1});
  expect_equal(ge(x, 2.0), {0, 1, 1});
  expect_equal(eq(x, 2.0), {0, 1, 0});
  expect_equal(ne(x, Tensor::from_values({1, 0, 3}, {3})), {0, 1, 0});
  // int64 positions against per-row lengths: the shape of a padding mask
  const Tensor positions = Tensor::arange(4);                                        // [4]
  const Tensor lengths = Tensor::from_vector<int64_t>({1, 3}, {2}).reshape({2, 1});  // [2,1]
  expect_equal(lt(positions, lengths), {1, 0, 0, 0, 1, 1, 1, 0});
  expect_equal(logical_not(lt2), {0, 1, 1});
  expect_equal(logical_and(lt2, eq(x, 1.0)), {1, 0, 0});
  expect_equal(logical_or(lt2, eq(x, 3.0)), {1, 0, 1});
  expect_error<DTypeError>([&] { lt(x, x.to(DType::Float64)); },
                           "lt: dtypes float32 and float64 differ; convert with .to(DType::Float32)");
  expect_error<DTypeError>([&] { logical_not(x); }, "logical_not: expects a bool tensor, got float32");
}

BOOST_AUTO_TEST_CASE(where_and_masked_fill) {
  const Tensor cond = Tensor::from_values({1, 0}, {2, 1}, DType::Bool);
  const Tensor out = where(cond, Tensor::from_values({1, 2, 3}, {3}), Tensor::scalar(-1));
  BOOST_TEST(out.shape() == (Shape{2, 3}));
  expect_equal(out, {1, 2, 3, -1, -1, -1});
  const Tensor x = Tensor::zeros({2, 3});
  expect_equal(masked_fill(x, Tensor::from_values({0, 1, 0}, {3}, DType::Bool), 5), {0, 5, 0, 0, 5, 0});
  expect_equal(x, {0, 0, 0, 0, 0, 0});  // out of place
  expect_error<ShapeError>(
      [&] {
        masked_fill(x, Tensor::zeros({2, 2, 3}, DType::Bool), 1);
      },
      "masked_fill: mask of shape [2,2,3] does not broadcast to [2,3]");
  expect_error<DTypeError>([&] { masked_fill(x, Tensor::zeros({3}), 1); },
                           "masked_fill: the mask must be bool, got float32; convert with .to(DType::Bool)");
  expect_error<DTypeError>([&] { where(Tensor::zeros({2}), x, x); },
                           "where: the condition must be bool, got float32; convert with .to(DType::Bool)");
}

BOOST_AUTO_TEST_CASE(errors_name_the_op_and_the_shapes) {
  expect_error<ShapeError>(
      [] {
        Tensor::zeros({2, 3}) + Tensor::zeros({4});
      },
      "add: shapes [2,3] and [4] cannot be broadcast together (3 vs 4 at dim -1)");
  expect_error<ShapeError>(
      [] {
        Tensor::zeros({5, 2}) * Tensor::zeros({3, 2});
      },
      "mul: shapes [5,2] and [3,2] cannot be broadcast together (5 vs 3 at dim -2)");
  expect_error<DTypeError>(
      [] { Tensor::zeros({2}) - Tensor::zeros({2}, DType::Float64); },
      "sub: expected two float32 or two float64 tensors, got float32 and float64; convert with "
      ".to(DType::Float32)");
  expect_error<DTypeError>([] { exp(Tensor::arange(3)); },
                           "exp: expected a float32 or float64 tensor, got int64");
}

BOOST_AUTO_TEST_SUITE_END()
