// Task 2's checks: my_sum_to against minigrad's sum_to, and as the backward of a broadcasting op.
#define BOOST_TEST_MODULE exercise_02_sum_to
#include <boost/test/unit_test.hpp>

#include "exercises/02_sum_to.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

// my_sum_to of a (2, 3, 4) tensor to each shape, against minigrad's sum_to.
void check_sums_to(const std::vector<Shape>& shapes, const std::string& hint) {
  Generator gen(1);
  const Variable x = random_leaf({2, 3, 4}, gen);
  for (const Shape& shape : shapes) {
    const Variable y = my_sum_to(x, shape);
    BOOST_TEST(close(y.data(), sum_to(x.data(), shape)),
               "[2,3,4] to " << shape.str() << " gave " << describe(y.data()) << ": " << hint);
  }
}

// a·b elementwise, broadcast, with my_sum_to taking each gradient back to its operand's shape.
Variable broadcast_mul(const Variable& a, const Variable& b) {
  return record("broadcast_mul", mul(a.data(), b.data()), {a, b},
                [sa = SavedTensor(a), sb = SavedTensor(b)](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {my_sum_to(mul(g, sb.variable()), sa.variable().shape()),
                          my_sum_to(mul(g, sa.variable()), sb.variable().shape())};
                });
}

}  // namespace

BOOST_AUTO_TEST_CASE(sums_the_leading_dims) {
  check_sums_to({{3, 4}, {4}, {}}, "sum over the leading dims that the shape lacks");
}

BOOST_AUTO_TEST_CASE(sums_the_dims_of_size_1) {
  check_sums_to({{2, 1, 4}, {1, 3, 1}, {1, 1, 1}},
                "sum over the dims where the shape has a 1, and keep the 1");
}

BOOST_AUTO_TEST_CASE(sums_both_kinds_at_once) {
  check_sums_to({{3, 1}, {1, 4}, {1}}, "the leading dims the shape lacks, and those where it has a 1");
}

BOOST_AUTO_TEST_CASE(keeps_a_shape_it_already_has) {
  check_sums_to({{2, 3, 4}}, "with nothing to sum, return x as it is");
}

BOOST_AUTO_TEST_CASE(is_differentiable) {
  Generator gen(2);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& in) {
        return my_sum_to(in[0], {3, 1});
      },
      {random_leaf({2, 3, 4}, gen)});
  BOOST_TEST(r.passed, r.report() << ". Build my_sum_to from ops on Variables (sum, reshape)");
}

BOOST_AUTO_TEST_CASE(gives_a_broadcast_op_its_gradients) {
  Generator gen(3);
  const Variable a = random_leaf({2, 3, 4}, gen), b = random_leaf({3, 1}, gen);
  const GradcheckResult r =
      gradcheck([](const std::vector<Variable>& in) { return broadcast_mul(in[0], in[1]); }, {a, b});
  BOOST_TEST(r.passed, "a (2, 3, 4) * b (3, 1) with my_sum_to in its backward: " << r.report());
  const Variable ra = copy_of(a), rb = copy_of(b);
  const Tensor upstream = Tensor::normal({2, 3, 4}, 0, 1, DType::Float64, &gen);
  broadcast_mul(a, b).backward(upstream);
  mul(ra, rb).backward(upstream);
  BOOST_TEST(close(b.grad(), rb.grad()), "b's gradient is "
                                             << describe(b.grad())
                                             << ", not mul's [3,1]: sum the products over dims 0 and 2");
}
