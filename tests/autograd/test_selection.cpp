// The ops that select among values (clamp, maximum, minimum, where, max and min, max pooling) and the
// whole-tensor questions (all, any, allclose), on the values where they are easy to get wrong: NaN,
// infinities, ties and bounds. Every expected value is PyTorch 1.13's for the same inputs and upstream
// gradient, in float32 and float64.
#include <limits>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
const double kNan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
const DType kDtypes[] = {DType::Float32, F64};

Tensor values(std::initializer_list<double> v, DType dtype) {
  return Tensor::from_values(v, {static_cast<int64_t>(v.size())}, dtype);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(selection)

BOOST_AUTO_TEST_CASE(clamp_keeps_nan_and_passes_the_gradient_inside_its_bounds) {
  // torch.clamp(x, -1, 2) and torch.clamp(x, min=0) on [nan, -2, 0.5, 3, inf, -inf, 1], upstream 1..7.
  for (DType dtype : kDtypes) {
    Variable x = leaf({kNan, -2, 0.5, 3, inf, -inf, 1}, {7}, dtype);
    Variable y = clamp(x, -1.0, 2.0);
    expect_equal(y.data(), {kNan, -1, 0.5, 2, 2, -1, 1});
    y.backward(values({1, 2, 3, 4, 5, 6, 7}, dtype));
    expect_equal(x.grad(), {0, 0, 3, 0, 0, 0, 7});
    x.zero_grad();
    Variable z = clamp_min(x, 0);
    expect_equal(z.data(), {kNan, 0, 0.5, 3, inf, 0, 1});
    z.backward(values({1, 2, 3, 4, 5, 6, 7}, dtype));
    expect_equal(x.grad(), {0, 0, 3, 4, 5, 0, 7});
    // At a bound the gradient passes (x >= min and x <= max), and clamp_max bounds above only.
    Variable b = leaf({-1, 2, 5}, {3}, dtype);
    clamp(b, -1.0, 2.0).backward(values({1, 1, 1}, dtype));
    expect_equal(b.grad(), {1, 1, 0});
    expect_equal(clamp_max(b, 0).data(), {-1, 0, 0});
  }
  // min > max gives max everywhere, and a NaN bound gives NaN, as torch.clamp.
  expect_equal(clamp(Tensor::from_values({-5, 0, 5}, {3}), 2.0, 1.0), {1, 1, 1});
  expect_equal(clamp(Tensor::from_values({1, 2}, {2}), kNan, std::nullopt), {kNan, kNan});
}

BOOST_AUTO_TEST_CASE(clamp_is_differentiable_twice) {
  Variable x = leaf({-2, 0.5, 3}, {3});
  Variable g = leaf({1, 2, 3}, {3});
  clamp_backward(g, x.data(), -1.0, 2.0).backward(Tensor::from_values({4, 5, 6}, {3}, F64));
  expect_equal(g.grad(), {0, 5, 0});
}

BOOST_AUTO_TEST_CASE(maximum_and_minimum_split_ties_and_send_nan_gradients_to_both) {
  // torch.maximum / torch.minimum of a = [nan, 1, 2, nan, 3] and b = [1, nan, 2, nan, 1], upstream 1..5.
  for (DType dtype : kDtypes) {
    Variable a = leaf({kNan, 1, 2, kNan, 3}, {5}, dtype), b = leaf({1, kNan, 2, kNan, 1}, {5}, dtype);
    Variable y = maximum(a, b);
    expect_equal(y.data(), {kNan, kNan, 2, kNan, 3});
    y.backward(values({1, 2, 3, 4, 5}, dtype));
    expect_equal(a.grad(), {1, 2, 1.5, 4, 5});
    expect_equal(b.grad(), {1, 2, 1.5, 4, 0});
    a.zero_grad();
    b.zero_grad();
    Variable z = minimum(a, b);
    expect_equal(z.data(), {kNan, kNan, 2, kNan, 1});
    z.backward(values({1, 2, 3, 4, 5}, dtype));
    expect_equal(a.grad(), {1, 2, 1.5, 4, 0});
    expect_equal(b.grad(), {1, 2, 1.5, 4, 5});
  }
  // Broadcast: a (2, 1) against b (3): a's gradient is summed over the row it was broadcast along (row 0:
  // 0 beats -1, ties 0, loses to 1).
  Variable a = leaf({0, 10}, {2, 1}), b = leaf({-1, 0, 1}, {3});
  sum(maximum(a, b)).backward();
  expect_equal(a.grad(), {1.5, 3});
  expect_equal(b.grad(), {0, 0.5, 1});
}

BOOST_AUTO_TEST_CASE(maximum_and_minimum_give_the_loser_0_under_an_infinite_or_nan_gradient) {
  // torch.maximum / torch.minimum of a = [1, 3, 2, nan, 0] and b = [2, 1, 2, 1, nan] under the upstream
  // gradient [inf, nan, inf, inf, nan]: the operand that lost gets 0, not inf * 0 = nan.
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : kDtypes) {
    Variable a = leaf({1, 3, 2, kNan, 0}, {5}, dtype), b = leaf({2, 1, 2, 1, kNan}, {5}, dtype);
    maximum(a, b).backward(values({inf, kNan, inf, inf, kNan}, dtype));
    expect_equal(a.grad(), {0, kNan, inf, inf, kNan});
    expect_equal(b.grad(), {inf, 0, inf, inf, kNan});
    a.zero_grad();
    b.zero_grad();
    minimum(a, b).backward(values({inf, kNan, inf, inf, kNan}, dtype));
    expect_equal(a.grad(), {inf, 0, inf, inf, kNan});
    expect_equal(b.grad(), {0, kNan, inf, inf, kNan});
  }
}

BOOST_AUTO_TEST_CASE(where_sends_the_gradient_to_the_operand_it_chose) {
  // torch.where([T, F, T], [nan, 1, 2], [5, nan, 6]) with upstream ones.
  for (DType dtype : kDtypes) {
    const Tensor cond = Tensor::from_vector<bool>({true, false, true}, {3});
    Variable a = leaf({kNan, 1, 2}, {3}, dtype), b = leaf({5, kNan, 6}, {3}, dtype);
    Variable y = where(cond, a, b);
    expect_equal(y.data(), {kNan, kNan, 2});
    y.backward(values({1, 1, 1}, dtype));
    expect_equal(a.grad(), {1, 0, 1});
    expect_equal(b.grad(), {0, 1, 0});
  }
  // An infinite upstream gradient where the other operand was chosen gives that one 0, not NaN.
  const Tensor cond = Tensor::from_vector<bool>({true, false}, {2});
  Variable a = leaf({1, 2}, {2}), b = leaf({3}, {1});
  where(cond, a, b).backward(Tensor::from_values({inf, 1}, {2}, F64));
  expect_equal(a.grad(), {inf, 0});
  expect_equal(b.grad(), {1});
}

BOOST_AUTO_TEST_CASE(max_and_min_along_a_dim_pick_the_first_nan) {
  // x.max(1) and x.min(1) of [[1, nan, 0], [3, -1, nan]]: values [nan, nan], indices [1, 2].
  for (DType dtype : kDtypes) {
    Variable x = leaf({1, kNan, 0, 3, -1, kNan}, {2, 3}, dtype);
    Variable hi = max(x, 1), lo = min(x, 1);
    expect_equal(hi.data(), {kNan, kNan});
    expect_equal(lo.data(), {kNan, kNan});
    expect_equal(argmax(x.data(), 1), {1, 2});
    expect_equal(argmin(x.data(), 1), {1, 2});
    lo.backward(values({1, 2}, dtype));
    expect_equal(x.grad(), {0, 1, 0, 0, 0, 2});
  }
  Variable y = leaf({4, -1, 2, -1}, {2, 2});
  Variable m = min(y, 0, /*keepdim=*/true);
  BOOST_TEST(m.shape() == (Shape{1, 2}));
  expect_equal(m.data(), {2, -1});
  m.backward(Tensor::from_values({1, 2}, {1, 2}, F64));
  expect_equal(y.grad(), {0, 2, 1, 0});  // the first of the tied -1s
}

BOOST_AUTO_TEST_CASE(whole_tensor_max_and_min_share_the_gradient_among_ties) {
  // x.max() of [1, nan, 3, nan] is nan, gradient 2 shared by the NaNs: [0, 1, 0, 1]; of [1, 3, 3, 2] it is
  // 3, shared by the tie: [0, 1, 1, 0].
  for (DType dtype : kDtypes) {
    Variable x = leaf({1, kNan, 3, kNan}, {4}, dtype);
    Variable m = max(x);
    BOOST_TEST(m.rank() == 0);
    BOOST_TEST(std::isnan(m.item()));
    m.backward(Tensor::scalar(2, dtype));
    expect_equal(x.grad(), {0, 1, 0, 1});
    Variable t = leaf({1, 3, 3, 2}, {2, 2}, dtype);
    Variable top = max(t);
    BOOST_TEST(top.item() == 3);
    top.backward(Tensor::scalar(2, dtype));
    expect_equal(t.grad(), {0, 1, 1, 0});
    Variable bottom = leaf({2, -4, 7}, {3}, dtype);
    min(bottom).backward();
    expect_equal(bottom.grad(), {0, 1, 0});
  }
}

BOOST_AUTO_TEST_CASE(max_pooling_propagates_nan) {
  // F.max_pool1d([[[1, nan, 3, 0, -1]]], 2, 1): [nan, nan, 3, 0], gradient [0, 2, 1, 1, 0] for ones.
  for (DType dtype : kDtypes) {
    Variable x = leaf({1, kNan, 3, 0, -1}, {1, 1, 5}, dtype);
    Variable y = max_pool1d(x, {.kernel_size = 2, .stride = 1});
    expect_equal(y.data(), {kNan, kNan, 3, 0});
    y.backward(Tensor::ones({1, 1, 4}, dtype));
    expect_equal(x.grad(), {0, 2, 1, 1, 0});
  }
}

BOOST_AUTO_TEST_CASE(all_any_and_allclose_answer_as_pytorch) {
  BOOST_TEST(all(Tensor::from_values({1, kNan}, {2})));  // NaN is nonzero: true
  BOOST_TEST(!all(Tensor::from_values({1, 0}, {2})));
  BOOST_TEST(!any(Tensor::zeros({2})));
  BOOST_TEST(any(Tensor::from_vector<bool>({false, true}, {2})));
  BOOST_TEST(all(Tensor::zeros({0})));
  BOOST_TEST(!any(Tensor::zeros({0})));
  const Tensor n = Tensor::from_values({kNan}, {1}), i = Tensor::from_values({inf}, {1});
  BOOST_TEST(!allclose(n, n));
  BOOST_TEST(allclose(n, n, {.equal_nan = true}));
  BOOST_TEST(allclose(i, i));
  BOOST_TEST(!allclose(i, neg(i)));
  BOOST_TEST(!allclose(Tensor::from_values({1}, {1}), Tensor::from_values({1 + 2e-5}, {1})));
  BOOST_TEST(allclose(Tensor::from_values({1}, {1}), Tensor::from_values({1 + 1e-6}, {1})));
  BOOST_TEST(allclose(Tensor::ones({2, 3}), Tensor::ones({3})));  // broadcast
  expect_error<DTypeError>([] { allclose(Tensor::ones({2}), Tensor::ones({2}, F64)); },
                           "allclose: the operands are float32 and float64; convert one with .to()");
  expect_error_containing<ShapeError>([] { allclose(Tensor::ones({2}), Tensor::ones({3})); }, "allclose");
}

BOOST_AUTO_TEST_SUITE_END()
