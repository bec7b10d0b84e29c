// Fits y = 2x + 1 by gradient descent through an installed minigrad and checks the gradient on the way.
#include <minigrad/minigrad.h>

#include <cmath>
#include <iostream>

int main() {
  using namespace minigrad;
  Variable w(Tensor::zeros({1, 1}, DType::Float64), true), b(Tensor::zeros({1}, DType::Float64), true);
  const Tensor x = Tensor::arange(0, 1, 0.1, DType::Float64).reshape({-1, 1});
  const Tensor y = x * 2.0 + 1.0;
  for (int step = 0; step < 500; ++step) {
    Variable loss = mean(pow(matmul(Variable(x), w) + b - Variable(y), 2));
    w.zero_grad();
    b.zero_grad();
    loss.backward();
    w.data().add_(w.grad(), -0.5);
    b.data().add_(b.grad(), -0.5);
  }
  const GradcheckResult check =
      gradcheck([](const std::vector<Variable>& in) { return tanh(matmul(in[0], in[1])); },
                {Variable(Tensor::normal({2, 3}, 0, 1, DType::Float64), true),
                 Variable(Tensor::normal({3, 2}, 0, 1, DType::Float64), true)});
  std::cout << "w = " << w.data().item() << ", b = " << b.data().item() << "; " << check.report() << "\n";
  const bool fitted = std::abs(w.data().item() - 2) < 1e-3 && std::abs(b.data().item() - 1) < 1e-3;
  return fitted && check.passed ? 0 : 1;
}
