// A program written against the last release's names: it must still compile, each of those lines with a
// deprecation warning that names the new spelling (tests/layers/check_deprecation_messages.py).
#include "minigrad/nn/transformer.h"
#include "minigrad/optim/optimizer.h"

using namespace minigrad;

int main() {
  nn::EncoderLayerOptions layer{.num_hiddens = 8, .num_heads = 2};
  nn::EncoderLayer encoder_layer(layer);
  const Variable x(Tensor::ones({2, 3, 8}), true);
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{3, 2}, {2});
  const Variable pooled = nn::masked_mean(encoder_layer(x), lengths) + nn::masked_max(x, lengths);
  sum(pooled).backward();
  optim::Adam adam(encoder_layer.parameters(), {.lr = 1e-3, .beta1 = 0.8, .beta2 = 0.99});
  optim::clip_grad_norm(encoder_layer.parameters(), 1.0);
  adam.step();
  return 0;
}
