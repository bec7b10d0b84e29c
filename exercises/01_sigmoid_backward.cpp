// Task 1: an elementwise op's backward, sigmoid.
//
// Write my_sigmoid(x) = σ(x) = 1 / (1 + e⁻ˣ) as a custom op: compute the value with the tensor layer
// (x.data() is x's Tensor; tensor/elementwise.h has sigmoid), then hand it to record() with the function
// that maps g = d loss / d y to d loss / d x, one gradient per input:
//
//   return record("my_sigmoid", y, {x}, [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) ->
//   VariableGrads {
//     const Variable out = sy.output_variable(needs);  // y as a Variable of the graph
//     return {...};                                    // d loss / d x
//   });
//
// To derive: dσ/dx, written with y = σ(x) alone, so that the backward keeps the output and not the input.
// Then d loss / d x = g · dσ/dx, elementwise. Write it with ops on Variables (mul, rsub, ...): the
// backward is then differentiable in turn, and second derivatives work.
//
// Read first: examples/basics/custom_op.cpp, docs/writing-an-op.md.
// The real one: sigmoid in autograd/unary.cpp.
// Check it: scripts/exercises.sh 1
#include "exercises/01_sigmoid_backward.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

Variable my_sigmoid([[maybe_unused]] const Variable& x) {
  throw NotWritten("task 1, my_sigmoid");
}

}  // namespace minigrad::exercises
