// Training a small classifier: a two-layer MLP learns to separate two moons, written the way the PyTorch
// program would be (nn.Sequential, shuffled mini-batches, cross-entropy, Adam, a training loop).
//
//   minigrad-basics-mlp
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <vector>

#include "minigrad/minigrad.h"

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

int main() {
  manual_seed(0);  // the initial weights come from this thread's default generator
  Generator data_gen(1), batch_gen(2);
  const Moons data = make_moons(200, 0.1, data_gen);

  // Linear(2, 16) -> ReLU -> Linear(16, 2): two logits per point.
  nn::Sequential model(std::make_shared<nn::Linear>(2, 16), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(16, 2));
  // float64 (PyTorch's model.double()) so that the printed digits are the same on every CPU.
  model.to(DType::Float64);
  std::cout << model << "\n";
  optim::Adam optimizer(model.named_parameters(), {.lr = 0.05});

  std::cout << std::setprecision(4);
  for (int epoch = 0; epoch < 30; ++epoch) {
    // A new order every epoch, in mini-batches of 32 (PyTorch's DataLoader with shuffle=True).
    double total = 0;
    for (const Tensor& batch : index_batches(200, {.batch_size = 32, .generator = &batch_gen})) {
      const Variable x(index_select(data.points.data(), 0, batch));  // (32, 2)
      const Tensor y = index_select(data.labels, 0, batch);          // (32)
      const Variable loss = cross_entropy(model(x), y);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item() * static_cast<double>(batch.numel());
    }
    if (epoch % 5 == 0 || epoch == 29) std::cout << "epoch " << epoch << "  loss " << total / 200 << "\n";
  }

  NoGradGuard no_grad;  // evaluation: no graph is recorded
  std::cout << "training accuracy " << 100 * accuracy(model(data.points), data.labels) << "%\n";
}
