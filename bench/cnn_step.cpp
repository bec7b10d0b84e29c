// minigrad-cnn-step: the time of one training step of the Fashion-MNIST example's CNN (docs/images.md),
// the figure bench/cnn_step.py measures for the same network in PyTorch and bench/cnn-vs-pytorch.sh
// compares:
//
//   x (batch, 1, 28, 28) -> [Conv2d 3×3 (no bias), BatchNorm2d, ReLU, MaxPool2d(2)] × 2 -> Flatten
//     -> Linear(C2·49, 256) -> ReLU -> Dropout(0.3) -> Linear(256, 10) -> cross-entropy
//
// One call is zero_grad + forward (training mode) + backward + an AdamW step, on one batch drawn once from a
// fixed seed. The run prints one line:  result impl=minigrad config=c16 threads=1 ... ms=...
#include <cstdio>
#include <map>
#include <string>

#include "bench/step_args.h"
#include "bench/timing.h"
#include "minigrad/minigrad.h"

using namespace minigrad;

namespace {

// bench/cnn_step.py has the same table.
struct Config {
  int64_t batch, channels1, channels2, hidden;
};
const std::map<std::string, Config> kConfigs = {
    // the example's network (examples/images/fashion_mnist.cpp)
    {"c16", {.batch = 128, .channels1 = 16, .channels2 = 64, .hidden = 256}},
    // twice the first block's channels: PyTorch's MNIST example's first convolution has 32
    {"c32", {.batch = 128, .channels1 = 32, .channels2 = 64, .hidden = 256}},
};

const char* const kTitle = "Time one training step of the Fashion-MNIST CNN (see bench/cnn-vs-pytorch.sh).";

}  // namespace

int main(int argc, char** argv) {
  const auto [name, c, seconds] = bench::parse_step_args(argc, argv, kTitle, kConfigs, "c16");
  nn::Sequential model;
  auto block = [&](int64_t in, int64_t out) {
    model.push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions{
        .in_channels = in, .out_channels = out, .kernel_size = 3, .padding = 1, .bias = false}));
    model.push_back(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = out}));
    model.push_back(std::make_shared<nn::ReLU>());
    model.push_back(std::make_shared<nn::MaxPool2d>(MaxPool2dOptions{.kernel_size = 2}));
  };
  block(1, c.channels1);
  block(c.channels1, c.channels2);
  model.push_back(std::make_shared<nn::Flatten>());
  model.push_back(std::make_shared<nn::Linear>(c.channels2 * 49, c.hidden));
  model.push_back(std::make_shared<nn::ReLU>());
  model.push_back(std::make_shared<nn::Dropout>(0.3));
  model.push_back(std::make_shared<nn::Linear>(c.hidden, 10));
  optim::AdamW optimizer(model.named_parameters(), {.lr = 1e-3, .weight_decay = 1e-4});
  model.train();

  Generator gen(1);
  const Tensor x = Tensor::normal({c.batch, 1, 28, 28}, 0, 1, DType::Float32, &gen);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < c.batch; ++i) labels.push_back(static_cast<int64_t>(gen.next_below(10)));
  const Tensor y = Tensor::from_vector(labels, {c.batch});
  auto step = [&] {
    optimizer.zero_grad();
    cross_entropy(model(x), y).backward();
    optimizer.step();
  };
  const double s = bench::seconds_per_call(step, seconds / 5, 5);
  std::printf("result impl=minigrad config=%s threads=%d batch=%lld channels=%lld,%lld hidden=%lld ms=%.3f\n",
              name.c_str(), num_threads(), static_cast<long long>(c.batch),
              static_cast<long long>(c.channels1), static_cast<long long>(c.channels2),
              static_cast<long long>(c.hidden), s * 1e3);
  return 0;
}
