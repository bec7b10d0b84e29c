// Training a small classifier: a two-layer MLP learns to separate two moons, written the way the PyTorch
// program would be (model class, loss, Adam, a training loop).
//
//   minigrad-basics-mlp
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <vector>

#include "minigrad.h"

using namespace minigrad;

// Two interleaving half circles, as scikit-learn's make_moons: point i has label i % 2; label 0 lies on
// the upper half of the unit circle, label 1 on the lower half shifted by (1, -0.5); both with
// N(0, noise²) added to each coordinate.
struct Moons {
  Variable points;  // (n, 2) float64
  Tensor labels;    // (n) int64
};
Moons make_moons(int64_t n, double noise, Generator& gen) {
  std::vector<double> points;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const double t = std::numbers::pi * gen.next_double();
    const bool upper = i % 2 == 0;
    points.push_back((upper ? std::cos(t) : 1 - std::cos(t)) + noise * gen.next_normal());
    points.push_back((upper ? std::sin(t) : 0.5 - std::sin(t)) + noise * gen.next_normal());
    labels.push_back(i % 2);
  }
  return {Variable(Tensor::from_vector(points, {n, 2})), Tensor::from_vector(labels, {n})};
}

// Linear(2, 16) -> relu -> Linear(16, 2): two logits per point.
class MLP : public nn::Module {
 public:
  MLP(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", std::make_shared<nn::Linear>(in, hidden))),
        fc2(register_module("fc2", std::make_shared<nn::Linear>(hidden, out))) {}
  // x (batch, in) -> logits (batch, out)
  Variable forward(const Variable& x) const { return fc2->forward(relu(fc1->forward(x))); }
  std::string name() const override { return "MLP"; }

  std::shared_ptr<nn::Linear> fc1, fc2;
};

int main() {
  manual_seed(0);  // the initial weights come from this thread's default generator
  Generator data_gen(1);
  const Moons data = make_moons(200, 0.1, data_gen);

  MLP model(2, 16, 2);
  // float64 (PyTorch's model.double()) so that the printed digits are the same on every CPU.
  model.to(DType::Float64);
  optim::Adam optimizer(model.named_parameters(), {.lr = 0.05});

  std::cout << std::setprecision(4);
  for (int step = 0; step <= 300; ++step) {  // full batch: every step sees all 200 points
    const Variable loss = cross_entropy(model.forward(data.points), data.labels);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 50 == 0) std::cout << "step " << step << "  loss " << loss.item() << "\n";
  }

  NoGradGuard no_grad;                                                    // evaluation: no graph is recorded
  const Tensor predicted = argmax(model.forward(data.points).data(), 1);  // (n) int64: the larger logit
  const double accuracy = mean(eq(predicted, data.labels).to(DType::Float64)).item();
  std::cout << "training accuracy " << 100 * accuracy << "%\n";
}
