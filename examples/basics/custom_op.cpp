// Your own differentiable op: softplus(x) = log(1 + eˣ), a smooth relu, and the checks that its gradient
// is right. (minigrad has its own softplus, with PyTorch's beta and threshold; this one is written from
// scratch to show how an op is made.)
//
// An op is a function on Variables that computes its result with the tensor layer (x.data() is the
// Tensor inside x) and hands it to record() with its inputs and its backward function, written right
// under it. The backward gets g = d loss / d output and returns d loss / d input, one per input. It is
// written with differentiable ops on Variables, so it can be differentiated in turn: that gives second
// derivatives, which gradgradcheck checks. The last argument, the tangent rule, is forward mode's
// derivative: the output's tangent from the input's, ẏ = softplus'(x)·ẋ (docs/forward-mode.md).
//
//   minigrad-basics-custom-op
#include <iostream>
#include <vector>

#include "minigrad/minigrad.h"

using namespace minigrad;

Variable my_softplus(const Variable& x) {
  // log(1 + eˣ) = max(x, 0) + log(1 + e^-|x|): the same value, but e^-|x| <= 1 cannot overflow.
  const Tensor& v = x.data();
  Tensor y = add(relu(v), log(add(exp(neg(abs(v))), 1.0)));
  // SavedTensor(x) keeps what the backward needs (x), and notices if x is modified in place before it.
  return record(
      "softplus", y, {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {mul(g, sigmoid(sx.variable()))};  // d/dx log(1 + eˣ) = eˣ / (1 + eˣ) = sigmoid(x)
      },
      [&](const Tangents& t) { return mul(t[0], sigmoid(x)); });  // ẏ = sigmoid(x)·ẋ
}

int main() {
  // Values and slopes a reader can check: softplus(0) = log 2 = 0.6931 and its slope there is 1/2.
  Variable x(Tensor::from_values({-2, 0, 3}, {3}, DType::Float64), true);
  Variable y = my_softplus(x);
  sum(y).backward();
  std::cout << "softplus(x) = " << y.data() << "\n";
  std::cout << "x.grad()    = " << x.grad() << "\n";

  // gradcheck compares the backward with central finite differences, entry by entry of the Jacobian and
  // for a random upstream gradient; gradgradcheck does the same for the backward's own backward.
  // Both in float64, with PyTorch's tolerances (eps 1e-6, atol 1e-5, rtol 1e-3).
  Generator gen(0);
  Variable a(Tensor::normal({4, 3}, 0, 2, DType::Float64, &gen), true);
  auto f = [](const std::vector<Variable>& in) { return my_softplus(in[0]); };
  std::cout << "gradcheck:     " << (gradcheck(f, {a}).passed ? "passed" : "FAILED") << "\n";
  std::cout << "gradgradcheck: " << (gradgradcheck(f, {a}).passed ? "passed" : "FAILED") << "\n";
  // forward_gradcheck checks the tangent rule the same way: J·v against central differences along v.
  std::cout << "forward_gradcheck: " << (forward_gradcheck(f, {a}).passed ? "passed" : "FAILED") << "\n";
}
