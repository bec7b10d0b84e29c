// Task 9: forward mode.
//
// Reverse mode gives uᵀ·J, a row of the Jacobian per backward pass; forward mode gives J·v, a column,
// by carrying a tangent beside every value through the forward pass (docs/forward-mode.md). Each op
// turns its inputs' tangents into its output's: its tangent rule, the last argument of record().
//
// 1. my_logsumexp_tangent(x, t): the tangent rule of my_logsumexp, whose forward and backward are in
//    exercises/09_forward_mode.h. The backward spreads g over each row by the weights d y[n] / d x[n][c].
//    To derive: ẏ[n] = ? from ẋ (N, C) and those same weights. t[0] is ẋ; write it with ops on
//    Variables (softmax, mul, sum), and keep it finite for large x as the forward is.
// 2. my_jvp(f, x, v): J·v by forward mode. A forward_ad::DualLevel keeps tangents alive while it lives;
//    forward_ad::make_dual(x, v) is x carrying the tangent v; forward_ad::unpack_dual(y) gives y's value
//    and its tangent (undefined if y does not depend on x: return zeros of y's shape then).
//
// The real ones: softmax's rule in autograd/softmax_ops.cpp; dual values in examples/basics/forward_mode.cpp
// (functional::jvp gives J·v too, but by two backward passes: not what this task asks for).
// Check it: scripts/exercises.sh 9
#include "exercises/09_forward_mode.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

Variable my_logsumexp_tangent([[maybe_unused]] const Variable& x, [[maybe_unused]] const Tangents& t) {
  throw NotWritten("task 9, my_logsumexp_tangent");
}

Variable my_jvp([[maybe_unused]] const std::function<Variable(const Variable&)>& f,
                [[maybe_unused]] const Variable& x, [[maybe_unused]] const Variable& v) {
  throw NotWritten("task 9, my_jvp");
}

}  // namespace minigrad::exercises
