// The catalogue of gradient checks: every differentiable op, on random shapes, including broadcast
// operands, an input used twice, and non-contiguous (transposed or sliced) inputs. The gradcheck report
// program prints a table over it; the test suite asserts that every case passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "minigrad.h"

namespace minigrad::checks {

struct GradcheckCase {
  std::string name;
  // Draws the inputs (float64; shapes random within small ranges) from the generator.
  std::function<std::vector<Variable>(Generator&)> make_inputs;
  GradcheckFunction f;
};

// Every case, in the order of autograd/functions.h.
const std::vector<GradcheckCase>& gradcheck_cases();

// "[3,4] [4]": the shapes of the inputs, for tables and messages.
std::string shapes_of(const std::vector<Variable>& inputs);

}  // namespace minigrad::checks
