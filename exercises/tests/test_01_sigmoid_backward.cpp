// Task 1's checks: my_sigmoid's values and gradients against minigrad's sigmoid and finite differences.
#define BOOST_TEST_MODULE exercise_01_sigmoid_backward
#include <boost/test/unit_test.hpp>

#include "exercises/01_sigmoid_backward.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {
Variable apply(const std::vector<Variable>& in) {
  return my_sigmoid(in[0]);
}
}  // namespace

BOOST_AUTO_TEST_CASE(values_are_sigmoid) {
  Generator gen(1);
  const Variable x = random_leaf({3, 4}, gen, 3);
  const Variable y = my_sigmoid(x);
  BOOST_TEST(close(y.data(), sigmoid(x.data())),
             "my_sigmoid(x) is " << describe(y.data()) << ": it should be 1 / (1 + e^-x) of x's shape [3,4]");
}

BOOST_AUTO_TEST_CASE(gradient_matches_finite_differences) {
  Generator gen(2);
  const GradcheckResult r = gradcheck(apply, {random_leaf({3, 4}, gen, 2)});
  BOOST_TEST(r.passed, "the backward disagrees with finite differences ("
                           << r.report()
                           << "). d loss / d x = g * dσ/dx, "
                              "elementwise; write dσ/dx with y = σ(x)");
}

BOOST_AUTO_TEST_CASE(gradient_equals_the_built_in_sigmoids) {
  Generator gen(3);
  const Variable x = random_leaf({5}, gen, 2), reference = copy_of(x);
  const Tensor upstream = Tensor::normal({5}, 0, 1, DType::Float64, &gen);  // not 1s, so that g must be used
  my_sigmoid(x).backward(upstream);
  sigmoid(reference).backward(upstream);
  BOOST_TEST(close(x.grad(), reference.grad()),
             "x.grad() is " << describe(x.grad())
                            << ", not sigmoid's gradient: multiply by g, the upstream gradient");
}

BOOST_AUTO_TEST_CASE(keeps_the_output_not_the_input) {
  Generator gen(5);
  const Variable x = random_leaf({5}, gen, 2), reference = copy_of(x);
  const Tensor upstream = Tensor::normal({5}, 0, 1, DType::Float64, &gen);
  const Variable y = my_sigmoid(x);
  // x changes between the forward and the backward (as a parameter does when an optimizer steps there):
  // the gradient is still σ'(x)·g at the x the forward saw, which y = σ(x) alone gives.
  x.data().add_(Tensor::ones({5}, DType::Float64));
  sigmoid(reference).backward(upstream);
  const std::string hint = "save the output y = σ(x) (SavedTensor(y), then sy.output_variable(needs)), not x";
  if (runs_without_error("x was modified in place after the forward, and the backward read it: " + hint,
                         [&] { y.backward(upstream); })) {
    BOOST_TEST(close(x.grad(), reference.grad()),
               "x was modified in place after the forward, and x.grad() is not σ'(x)·g at the x the forward "
               "saw: "
                   << hint);
  }
}

BOOST_AUTO_TEST_CASE(differentiates_twice) {
  Generator gen(4);
  const GradcheckResult r = gradgradcheck(apply, {random_leaf({2, 3}, gen, 2)});
  // gradgradcheck checks the first derivatives before the second, and says so in r.check.
  if (r.check == "gradgradcheck (first derivatives)") {
    BOOST_TEST(r.passed, r.report() << ". The first derivative is wrong: fix the gradcheck failure first");
  } else {
    BOOST_TEST(r.passed,
               r.report() << ". Write the backward with ops on Variables (mul, rsub) of "
                             "sy.output_variable(needs), not on Tensors, so that it is recorded too");
  }
}
