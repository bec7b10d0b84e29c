// Task 4's checks: minigrad's backward pass with the learner's accumulate_into_leaf as its last step, on a
// leaf used twice, over two backward calls, and on add's shared gradient.
#define BOOST_TEST_MODULE exercise_04_accumulate_into_leaf
#include <boost/test/unit_test.hpp>

#include <memory>

#include "exercises/04_accumulate_into_leaf.h"
#include "exercises/tests/checks.h"
#include "minigrad/autograd/engine.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

// loss.backward() as autograd/engine.cpp runs it (run_backward), steps 1 and 2 minigrad's, step 3 yours.
void backward_with_your_step_3(const Variable& loss) {
  NoGradGuard no_grad;
  detail::backpropagate({loss.grad_fn().get()}, {Tensor::ones(loss.shape(), loss.dtype())},
                        /*retain_graph=*/false, {.leaf = [](VariableImpl& leaf, Variable g) {
                          // A handle on the leaf for the call that owns nothing: the graph holds the leaf.
                          accumulate_into_leaf(
                              Variable(std::shared_ptr<VariableImpl>(std::shared_ptr<VariableImpl>(), &leaf)),
                              g.data());
                        }});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_first_gradient_is_stored) {
  Generator gen(1);
  const Variable x = random_leaf({3}, gen);
  const Tensor v = Tensor::normal({3}, 0, 1, DType::Float64, &gen);
  backward_with_your_step_3(sum(x * Variable(v)));
  BOOST_TEST(close(x.grad(), v), "d Σ x·v / dx = v, got "
                                     << describe(x.grad())
                                     << ": the first call finds leaf.grad() undefined and sets it");
}

BOOST_AUTO_TEST_CASE(a_leaf_used_twice_gets_the_sum) {
  Generator gen(2);
  const Variable x = random_leaf({4}, gen);
  backward_with_your_step_3(sum(x * x + x));
  BOOST_TEST(
      close(x.grad(), add(mul(x.data(), 2.0), 1.0)),
      "d Σ (x·x + x) / dx = 2x + 1: x is used three times, and its gradient is the sum of the three calls");
}

BOOST_AUTO_TEST_CASE(a_second_backward_adds_to_the_first) {
  Generator gen(3);
  const Variable x = random_leaf({4}, gen);
  backward_with_your_step_3(sum(x * x + x));
  backward_with_your_step_3(sum(x * x + x));
  BOOST_TEST(close(x.grad(), mul(add(mul(x.data(), 2.0), 1.0), 2.0)),
             "after two backward calls without zero_grad, x.grad() is twice one call's (2x + 1): add, do not "
             "replace");
}

BOOST_AUTO_TEST_CASE(each_leaf_has_a_buffer_of_its_own) {
  Generator gen(4);
  const Variable x = random_leaf({3}, gen), z = random_leaf({3}, gen);
  const Tensor v = Tensor::normal({3}, 0, 1, DType::Float64, &gen);
  backward_with_your_step_3(sum((x + z) * Variable(v)));  // add hands one gradient tensor to both x and z
  x.grad().mul_(0.5);                                     // what clip_grad_norm_ does to x's alone
  BOOST_TEST(
      close(z.grad(), v),
      "changing x.grad() in place changed z.grad(): add gives both the same tensor; store a copy (clone)");
  backward_with_your_step_3(sum((x + z) * Variable(v)));
  BOOST_TEST(close(x.grad(), mul(v, 1.5)), "x.grad() after halving it and a second backward should be 1.5·v");
  BOOST_TEST(close(z.grad(), mul(v, 2.0)), "z.grad() after two backward calls should be 2·v");
}

BOOST_AUTO_TEST_CASE(matches_backward_on_a_small_network) {
  Generator gen(5);
  const Variable x = random_leaf({8, 3}, gen), w1 = random_leaf({3, 5}, gen), w2 = random_leaf({5, 2}, gen);
  const Variable rx = copy_of(x), rw1 = copy_of(w1), rw2 = copy_of(w2);
  const Tensor targets = Tensor::from_vector<int64_t>({0, 1, 1, 0, 1, 0, 0, 1}, {8});
  backward_with_your_step_3(cross_entropy(matmul(relu(matmul(x, w1)), w2), targets));
  cross_entropy(matmul(relu(matmul(rx, rw1)), rw2), targets).backward();
  BOOST_TEST(close(w1.grad(), rw1.grad()), "w1's gradient differs from backward()'s");
  BOOST_TEST(close(w2.grad(), rw2.grad()), "w2's gradient differs from backward()'s");
  BOOST_TEST(close(x.grad(), rx.grad()), "x's gradient differs from backward()'s");
}
