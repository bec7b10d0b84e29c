// Task 5's checks: my_matmul's gradients against finite differences and minigrad's matmul, with one or
// both operands requiring grad.
#define BOOST_TEST_MODULE exercise_05_matmul_backward
#include <boost/test/unit_test.hpp>

#include "exercises/05_matmul_backward.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

Variable apply(const std::vector<Variable>& in) {
  return my_matmul(in[0], in[1]);
}

const char* const kShapesHint =
    "d loss / d a must have a's shape (M, K) and d loss / d b b's (K, N); with g (M, N), which product of g "
    "and a transposed operand has it?";

// For a backward that threw: the two products whose shapes line up.
const char* const kThrewHint =
    "the backward threw: d loss / d a must be (M, K) = g (M, N) · bᵀ (N, K), and d loss / d b must be "
    "(K, N) = aᵀ (K, M) · g (M, N)";

}  // namespace

BOOST_AUTO_TEST_CASE(values_are_the_product) {
  Generator gen(1);
  const Variable a = random_leaf({3, 5}, gen), b = random_leaf({5, 2}, gen);
  const Variable y = my_matmul(a, b);
  BOOST_TEST(close(y.data(), matmul(a.data(), b.data())), "a (3, 5)·b (5, 2) gave " << describe(y.data()));
}

BOOST_AUTO_TEST_CASE(gradients_match_finite_differences) {
  Generator gen(2);
  GradcheckResult r;
  if (runs_without_error(kThrewHint, [&] {
        r = gradcheck(apply, {random_leaf({3, 5}, gen), random_leaf({5, 2}, gen)});
      })) {
    BOOST_TEST(r.passed, r.report() << ". " << kShapesHint);
  }
}

BOOST_AUTO_TEST_CASE(gradients_equal_the_built_in_matmuls) {
  Generator gen(3);
  const Variable a = random_leaf({4, 3}, gen), b = random_leaf({3, 6}, gen);
  const Variable ra = copy_of(a), rb = copy_of(b);
  const Tensor upstream = Tensor::normal({4, 6}, 0, 1, DType::Float64, &gen);
  const Variable y = my_matmul(a, b);
  if (!runs_without_error(kThrewHint, [&] { y.backward(upstream); })) return;
  matmul(ra, rb).backward(upstream);
  BOOST_TEST(close(a.grad(), ra.grad()),
             "a's gradient is " << describe(a.grad()) << ", not matmul's. " << kShapesHint);
  BOOST_TEST(close(b.grad(), rb.grad()),
             "b's gradient is " << describe(b.grad()) << ", not matmul's. " << kShapesHint);
}

BOOST_AUTO_TEST_CASE(works_with_one_operand_constant) {
  Generator gen(4);
  const Variable a = random_leaf({3, 4}, gen), b = random_leaf({4, 2}, gen);
  const Variable constant_a(a.data().clone()), constant_b(b.data().clone());
  const Tensor upstream = Tensor::normal({3, 2}, 0, 1, DType::Float64, &gen);
  const Variable ya = my_matmul(constant_a, b), yb = my_matmul(a, constant_b);
  const char* const hint =
      "with one operand constant, only the other's gradient is asked for (needs[i]); "
      "save each operand for the other's gradient (save_if)";
  if (!runs_without_error(std::string("with a constant, ") + kThrewHint, [&] { ya.backward(upstream); }) ||
      !runs_without_error(std::string("with b constant, ") + kThrewHint, [&] { yb.backward(upstream); })) {
    return;
  }
  BOOST_TEST(close(b.grad(), matmul(constant_a.data().t(), upstream)), "b's gradient: " << hint);
  BOOST_TEST(close(a.grad(), matmul(upstream, constant_b.data().t())), "a's gradient: " << hint);
}

BOOST_AUTO_TEST_CASE(differentiates_twice) {
  Generator gen(5);
  GradcheckResult r;
  if (!runs_without_error(kThrewHint, [&] {
        r = gradgradcheck(apply, {random_leaf({2, 3}, gen), random_leaf({3, 2}, gen)});
      })) {
    return;
  }
  BOOST_TEST(r.passed, r.report() << ". Write the backward with ops on Variables (matmul, transpose) of the "
                                     "saved operands' .variable(), so that it is recorded too");
}

BOOST_AUTO_TEST_CASE(keeps_only_what_a_gradient_needs) {
  Generator gen(6);
  const Variable a = random_leaf({3, 4}, gen), b = random_leaf({4, 2}, gen);
  const Variable constant_a(a.data().clone()), constant_b(b.data().clone());
  // With b constant only d loss / d a = g·bᵀ is asked for, and it does not read a: while the graph lives,
  // a's Tensor stays the only handle on its buffer (the graph reaches a itself, to put its gradient there,
  // but keeps no copy of its data). The same for b with a constant.
  const Variable ya = my_matmul(a, constant_b), yb = my_matmul(constant_a, b);
  const char* const hint =
      "save an operand only if the other requires grad (save_if(a, b.requires_grad())), and compute only the "
      "gradients asked for (needs[i])";
  BOOST_TEST(a.data().owns_its_buffer(),
             "with b constant, the graph keeps a's data, which only d loss / d b reads: " << hint);
  BOOST_TEST(b.data().owns_its_buffer(),
             "with a constant, the graph keeps b's data, which only d loss / d a reads: " << hint);
}
