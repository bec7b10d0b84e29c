// The user's op checked by the user's own Boost.Test suite, through the installed testing header.
#define BOOST_TEST_MODULE consumer op
#include <boost/test/unit_test.hpp>

#include <minigrad/autograd/testing.h>

#include "cube.h"

using namespace minigrad;

BOOST_AUTO_TEST_CASE(cube_has_the_right_first_and_second_derivatives) {
  const Variable x(Tensor::normal({3, 4}, 0, 1, DType::Float64), /*requires_grad=*/true);
  BOOST_TEST(testing::gradients_match([](const auto& in) { return cube(in[0]); }, {x}));
  BOOST_TEST(testing::second_derivatives_match([](const auto& in) { return cube(in[0]); }, {x}));
}

BOOST_AUTO_TEST_CASE(a_wrong_gradient_is_caught_and_reported) {
  // The same op with its derivative off by a factor of two: the check must fail and say where.
  auto wrong = [](const Variable& v) {
    return record("wrong_cube", pow(v.data(), 3.0), {v},
                  [sx = SavedTensor(v)](const Variable& g, NeedsGrad) -> VariableGrads {
                    const Variable x = sx.variable();
                    return {mul(mul(g, mul(x, x)), 6.0)};
                  });
  };
  const Variable x(Tensor::normal({2, 2}, 0, 1, DType::Float64), true);
  boost::test_tools::assertion_result result =
      testing::gradients_match([&](const auto& in) { return wrong(in[0]); }, {x});
  BOOST_TEST(!result);
  BOOST_TEST(result.message().str().find("input 0") != std::string::npos, result.message().str());
}
