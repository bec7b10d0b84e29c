// Every differentiable op passes gradcheck in float64 with PyTorch's tolerances and a random upstream
// gradient, on several random draws of shapes; and gradcheck itself catches wrong gradients.
#include "tests/gradcheck/cases.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr int kTrials = 4;

// exp(x) with a backward that is off by a factor of 1.01 at one element: small, but not within tolerance.
Variable slightly_wrong_exp(const Variable& x) {
  Tensor y = exp(x.data());
  return record("slightly_wrong_exp", y, {x}, [y](const Tensor& g, NeedsGrad) -> Grads {
    Tensor gx = mul(g, y);
    gx.data_ptr<double>()[1] *= 1.01;
    return {gx};
  });
}

// A backward that transposes its gradient wrongly: invisible to a sum() seed on a square input, caught
// by the random upstream gradient and by the full Jacobian.
Variable transpose_bug(const Variable& x) {
  return record("transpose_bug", x.data().t().contiguous(), {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {g.clone()}; });
}
}  // namespace

BOOST_AUTO_TEST_SUITE(gradcheck_suite)

BOOST_AUTO_TEST_CASE(every_op_passes_on_random_shapes) {
  BOOST_TEST(checks::gradcheck_cases().size() >= 45u);
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    for (int trial = 0; trial < kTrials; ++trial) {
      Generator generator(1000 + trial);
      const checks::Check check = c.make(generator);
      const GradcheckResult r = gradcheck(check.f, check.inputs, {.seed = uint64_t(trial)});
      BOOST_TEST(r.passed, c.name << " on " << checks::shapes_of(check) << ": " << r.report());
      BOOST_TEST(r.comparisons > 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_op_passes_in_fast_mode) {
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    Generator generator(7);
    const checks::Check check = c.make(generator);
    const GradcheckResult r = gradcheck(check.f, check.inputs, {.fast_mode = true, .seed = 3});
    BOOST_TEST(r.passed, c.name << ": " << r.report());
  }
}

BOOST_AUTO_TEST_CASE(a_wrong_gradient_is_reported_with_its_worst_element) {
  Variable x(Tensor::from_values({0.1, 0.2, 0.3}, {3}, DType::Float64), true);
  const GradcheckResult r =
      gradcheck([](const std::vector<Variable>& in) { return slightly_wrong_exp(in[0]); }, {x});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.worst_where == "d output[1] / d input 0[1]");
  BOOST_TEST(std::abs(r.worst_analytic - 1.01 * std::exp(0.2)) < 1e-12);
  BOOST_TEST(std::abs(r.worst_numeric - std::exp(0.2)) < 1e-8);
  BOOST_TEST(r.report().rfind("gradcheck failed at d output[1] / d input 0[1]: analytic 1.233", 0) == 0,
             r.report());
  BOOST_TEST(!x.grad().defined());                                           // the caller's leaf is untouched
  BOOST_TEST(x.data().to_vector() == (std::vector<double>{0.1, 0.2, 0.3}));  // and restored exactly
  const GradcheckResult fast = gradcheck(
      [](const std::vector<Variable>& in) { return slightly_wrong_exp(in[0]); }, {x}, {.fast_mode = true});
  BOOST_TEST(!fast.passed);
}

BOOST_AUTO_TEST_CASE(a_transposed_gradient_is_caught) {
  Variable x(Tensor::normal({3, 3}, 0, 1, DType::Float64), true);
  const GradcheckResult r =
      gradcheck([](const std::vector<Variable>& in) { return transpose_bug(in[0]); }, {x});
  BOOST_TEST(!r.passed);
  // With a sum() seed the bug is invisible: every gradient entry is 1 either way.
  Variable s = sum(transpose_bug(x));
  s.backward();
  expect_equal(x.grad(), std::vector<double>(9, 1.0));
}

BOOST_AUTO_TEST_CASE(gradcheck_refuses_what_it_cannot_check) {
  auto identity = [](const std::vector<Variable>& in) { return in[0] * 1.0; };
  expect_error<DTypeError>([&] { gradcheck(identity, {Variable(Tensor::zeros({2}), true)}); },
                           "gradcheck: input 0 is float32; finite differences need float64 inputs");
  expect_error<ValueError>([&] { gradcheck(identity, {Variable(Tensor::zeros({2}, DType::Float64))}); },
                           "gradcheck: no input requires grad");
  expect_error<ValueError>(
      [&] { gradcheck(identity, {Variable(Tensor::zeros({1}, DType::Float64).expand({3}), true)}); },
      "gradcheck: input 0 overlaps itself in memory (an expand()ed view); pass a contiguous copy");
}

BOOST_AUTO_TEST_SUITE_END()
