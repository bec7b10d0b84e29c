// The catalogue of gradient checks: every differentiable op, on random shapes, including broadcast
// operands, an input used twice, and non-contiguous (transposed or sliced) inputs; and every layer of nn/,
// with respect to its inputs and its parameters, including attention with each kind of mask and
// cross-attention, and the decoder layers (DecoderLayer, TransformerDecoder, Transformer). The gradcheck
// report program prints a table over it; the test suite asserts that every case passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::checks {

// One check, ready to run: the inputs (float64 leaves, parameters of a layer among them) and the function.
struct Check {
  std::vector<Variable> inputs;
  GradcheckFunction f;
  size_t parameters = 0;  // how many of the inputs, at the end, are a layer's parameters
};

struct GradcheckCase {
  std::string name;
  // Draws shapes (random within small ranges) and values from the generator, and builds the check; for a
  // layer, the layer itself (in float64) with its parameters among the inputs.
  std::function<Check(Generator&)> make;
};

// Every case, in the order of autograd/functions.h.
const std::vector<GradcheckCase>& gradcheck_cases();

// "[3,4] [4]", or "[2,3,4] + 8 params": the shapes of a check's inputs, for tables and messages.
std::string shapes_of(const Check& check);

}  // namespace minigrad::checks
