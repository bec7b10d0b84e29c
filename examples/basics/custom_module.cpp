// Your own nn::Module: a residual block y = x + α·fc(x) whose scalar α starts at 0 (ReZero, Bachlechner
// et al., 2020), so the block starts as the identity and learns how much of fc(x) to add.
//
// A module registers its parameters and its submodules in its constructor, under names, and keeps
// handles to them; named_parameters(), the optimizers, zero_grad() and checkpoints then find them all.
//
//   minigrad-basics-custom-module
#include <iomanip>
#include <iostream>
#include <memory>

#include "minigrad/minigrad.h"

using namespace minigrad;

class Residual : public nn::Layer<Residual> {
 public:
  explicit Residual(int64_t features)
      : alpha(register_parameter("alpha", Tensor::zeros({1}))),
        fc(register_module("fc", std::make_shared<nn::Linear>(features, features))) {}

  // x (batch, features) -> (batch, features); alpha (1) broadcasts over both dimensions.
  Variable forward(const Variable& x) const { return x + alpha * (*fc)(x); }
  std::string name() const override { return "Residual"; }

  Variable alpha;                  // (1)
  std::shared_ptr<nn::Linear> fc;  // fc.weight (features, features), fc.bias (features)
};

int main() {
  manual_seed(0);
  Residual block(4);
  block.to(DType::Float64);  // so that the printed digits are the same on every CPU
  std::cout << block << "\n";
  for (const auto& [name, p] : block.named_parameters()) std::cout << name << " " << p.shape().str() << "\n";

  // The task: y = x·Aᵀ with A = I + B, which the block can fit exactly (α·W = B, α·b = 0).
  Generator gen(1);
  const Tensor B = Tensor::normal({4, 4}, 0, 0.5, DType::Float64, &gen);
  const Variable x(Tensor::normal({64, 4}, 0, 1, DType::Float64, &gen));  // (64, 4)
  const Variable y(add(x.data(), matmul(x.data(), B.t())));               // (64, 4)

  optim::Adam optimizer(block.named_parameters(), {.lr = 0.02});
  std::cout << std::setprecision(4);
  for (int step = 0; step <= 200; ++step) {
    const Variable diff = block(x) - y;
    const Variable loss = mean(diff * diff);  // mean squared error
    optimizer.zero_grad();
    loss.backward();
    if (step % 40 == 0) std::cout << "step " << step << "  loss " << loss.item() << "\n";
    // d loss / d fc(x) carries the factor α: while α = 0, fc gets a zero gradient and only α moves.
    if (step == 0) {
      std::cout << "  alpha.grad " << block.alpha.grad().item() << ", largest |fc.weight.grad| "
                << max(abs(block.fc->weight.grad())).item() << "\n";
    }
    optimizer.step();
  }
  std::cout << "alpha " << block.alpha.item() << "\n";
}
