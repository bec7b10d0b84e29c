// A first model, written as the PyTorch program would be: an MLP learns to tell three interleaved
// spirals apart. A train/test split (randperm), shuffled mini-batches, cross-entropy, AdamW with its
// options spelled out, and evaluation in eval mode under NoGradGuard.
// docs/first-models.md shows this program and what it prints.
//
//   minigrad-first-spirals-mlp
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <vector>

#include "minigrad/minigrad.h"

using namespace minigrad;

// Three spiral arms around the origin, one per class (CS231n's toy data): point i has class k = i % 3, a
// radius r uniform in [0.1, 1], and the angle 3πr + 2πk/3 with N(0, 0.2²) noise, so that each arm winds
// more than a full turn outwards and the noise blurs the gaps between them.
struct Spirals {
  Tensor points;  // (n, 2) float64
  Tensor labels;  // (n) int64
};
Spirals make_spirals(int64_t n, Generator& gen) {
  std::vector<double> points;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i % 3;
    const double r = 0.1 + 0.9 * gen.next_double();
    const double angle = 3 * std::numbers::pi * r + 2 * std::numbers::pi * static_cast<double>(k) / 3 +
                         0.2 * gen.next_normal();
    points.push_back(r * std::cos(angle));
    points.push_back(r * std::sin(angle));
    labels.push_back(k);
  }
  return {Tensor::from_vector(points, {n, 2}), Tensor::from_vector(labels, {n})};
}

int main() {
  manual_seed(0);  // the initial weights come from this thread's default generator
  Generator data_gen(1), batch_gen(2);

  // 900 points in a random order, split as torch.utils.data.random_split would: 720 to train on, 180 held
  // out.
  const Spirals data = make_spirals(900, data_gen);
  const Tensor order = randperm(900, &data_gen);
  const Tensor train_rows = order.slice(0, 0, 720), test_rows = order.slice(0, 720, 900);
  const Tensor x_train = index_select(data.points, 0, train_rows);  // (720, 2)
  const Tensor y_train = index_select(data.labels, 0, train_rows);  // (720)
  const Tensor x_test = index_select(data.points, 0, test_rows);    // (180, 2)
  const Tensor y_test = index_select(data.labels, 0, test_rows);    // (180)

  // Linear(2, 64) -> ReLU -> Linear(64, 64) -> ReLU -> Linear(64, 3): three logits per point.
  nn::Sequential model(std::make_shared<nn::Linear>(2, 64), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(64, 64), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(64, 3));
  // float64 (PyTorch's model.double()): this training amplifies float32's rounding, which differs from
  // CPU to CPU, into the third digit of the loss; float64's stays far below what is printed.
  model.to(DType::Float64);
  std::cout << model << "\n";

  // torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-4).
  // Designated initializers must come in the struct's order: lr, betas, eps, weight_decay.
  optim::AdamW optimizer(model.named_parameters(),
                         {.lr = 3e-3, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 1e-4});

  std::cout << std::setprecision(3);
  for (int epoch = 1; epoch <= 60; ++epoch) {
    model.train();
    double total = 0;
    for (const Tensor& batch : index_batches(720, {.batch_size = 32, .generator = &batch_gen})) {
      const Tensor x = index_select(x_train, 0, batch);  // (32, 2); the last batch (16, 2)
      const Tensor y = index_select(y_train, 0, batch);  // (32)
      const Variable loss = cross_entropy(model(x), y);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item() * static_cast<double>(batch.numel());
    }
    if (epoch % 10 == 0) std::cout << "epoch " << epoch << "  loss " << total / 720 << "\n";
  }

  // Evaluation: eval mode (no dropout here, but the habit matters) and no graph recorded.
  model.eval();
  NoGradGuard no_grad;
  std::cout << std::fixed << std::setprecision(1);
  std::cout << "train accuracy " << 100 * accuracy(model(x_train), y_train) << "%\n";
  std::cout << "test accuracy  " << 100 * accuracy(model(x_test), y_test) << "%\n";
}
