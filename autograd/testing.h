// Gradient checks for your own test suite, in Boost.Test's style:
//
//   #include <boost/test/unit_test.hpp>
//   #include <minigrad/autograd/testing.h>
//   BOOST_AUTO_TEST_CASE(my_op_gradient) {
//     Variable x(Tensor::normal({3, 4}, 0, 1, DType::Float64), /*requires_grad=*/true);
//     BOOST_TEST(minigrad::testing::gradients_match([](const auto& in) { return my_op(in[0]); }, {x}));
//   }
//
// On failure Boost prints the worst element: which input, its index, the analytic and the numeric value.
// Include Boost.Test before this header; minigrad itself does not depend on Boost. The CMake lines for
// such a test (Debian: libboost-test-dev; one file of the test defines BOOST_TEST_MODULE):
//
//   find_package(minigrad REQUIRED)
//   find_package(Boost REQUIRED COMPONENTS unit_test_framework)
//   add_executable(my_tests my_tests.cpp)
//   target_link_libraries(my_tests PRIVATE minigrad::minigrad Boost::unit_test_framework)
//   target_compile_definitions(my_tests PRIVATE BOOST_TEST_DYN_LINK)
//   add_test(NAME my_tests COMMAND my_tests)
#pragma once

#include <boost/test/tools/assertion_result.hpp>

#include "minigrad/autograd/gradcheck.h"

namespace minigrad::testing {

// A check's result as a Boost.Test assertion result whose message is the report.
inline boost::test_tools::assertion_result as_assertion(const GradcheckResult& r) {
  boost::test_tools::assertion_result result(r.passed);
  result.message() << r.report();
  return result;
}

// gradcheck (float64, PyTorch's defaults) as a Boost.Test assertion result.
inline boost::test_tools::assertion_result gradients_match(const GradcheckFunction& f,
                                                           const std::vector<Variable>& inputs,
                                                           const GradcheckOptions& options = {}) {
  return as_assertion(gradcheck(f, inputs, options));
}

// gradgradcheck (second derivatives, for ops used with create_graph) as a Boost.Test assertion result.
inline boost::test_tools::assertion_result second_derivatives_match(const GradcheckFunction& f,
                                                                    const std::vector<Variable>& inputs,
                                                                    const GradcheckOptions& options = {}) {
  return as_assertion(gradgradcheck(f, inputs, options));
}

}  // namespace minigrad::testing
