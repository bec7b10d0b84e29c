// Task 6's checks: my_cross_entropy's value and gradient against minigrad's cross_entropy, with logits
// large enough to overflow a softmax that does not subtract the maximum.
#define BOOST_TEST_MODULE exercise_06_cross_entropy_backward
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "exercises/06_cross_entropy_backward.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

const Tensor& targets() {
  static const Tensor ids = Tensor::from_vector<int64_t>({2, 0, 4, 4, 1}, {5});  // (N) of 5 classes
  return ids;
}

Variable apply(const std::vector<Variable>& in) {
  return my_cross_entropy(in[0], targets());
}

}  // namespace

BOOST_AUTO_TEST_CASE(value_is_the_mean_negative_log_likelihood) {
  Generator gen(1);
  const Variable logits = random_leaf({5, 5}, gen, 2);
  const Variable loss = my_cross_entropy(logits, targets());
  BOOST_TEST(close(loss.data(), cross_entropy(logits, targets()).data()),
             "the loss is " << describe(loss.data())
                            << ": it should be the 0-dimensional mean over rows of -log softmax(z[n])[t[n]]");
}

BOOST_AUTO_TEST_CASE(gradient_matches_finite_differences) {
  Generator gen(2);
  const GradcheckResult r = gradcheck(apply, {random_leaf({5, 5}, gen, 2)});
  BOOST_TEST(r.passed,
             r.report() << ". Per row, d/dz_i (log Σ_j e^(z_j) - z_t) = softmax(z)_i - [i = t]; then "
                           "the mean's 1/N, and g");
}

BOOST_AUTO_TEST_CASE(gradient_equals_the_built_in_cross_entropys) {
  Generator gen(3);
  const Variable logits = random_leaf({5, 5}, gen, 2), reference = copy_of(logits);
  const Tensor upstream = Tensor::full({}, 0.7, DType::Float64);  // not 1, so that g must be used
  my_cross_entropy(logits, targets()).backward(upstream);
  cross_entropy(reference, targets()).backward(upstream);
  BOOST_TEST(close(logits.grad(), reference.grad()),
             "the logits' gradient differs from cross_entropy's: (softmax(z) - one_hot) · g / N");
}

BOOST_AUTO_TEST_CASE(large_logits_stay_finite) {
  Generator gen(4);
  const Variable logits(Tensor::normal({5, 5}, 0, 1000, DType::Float64, &gen), true),
      reference = copy_of(logits);
  const Variable loss = my_cross_entropy(logits, targets());
  const double expected = cross_entropy(reference, targets()).item();
  BOOST_TEST(std::abs(loss.item() - expected) <= 1e-9 * std::abs(expected),
             "with logits near ±1000 the loss is "
                 << loss.item() << ", not " << expected
                 << ": e^1000 overflows; log_softmax subtracts each row's maximum");
  loss.backward();
  cross_entropy(reference, targets()).backward();
  BOOST_TEST(close(logits.grad(), reference.grad()),
             "with logits near ±1000 the gradient differs from cross_entropy's");
}
