// Losses computed straight from logits, fused so that they stay finite and cheap: the kernels (the ops,
// with their recorded backward, are autograd/loss.cpp).
//
// Cross-entropy for one row of logits x with target class t, m = max x:
//   loss = -log softmax(x)_t = logsumexp(x) - x_t = log Σ exp(x_i - m) - (x_t - m)
//   dloss/dx_i = softmax(x)_i - [i = t],   softmax(x)_i = exp((x_i - m) - log Σ exp(x_j - m))
// Everything is computed from the shifted values x - m, never from logsumexp(x) itself: with logits that
// share a large offset (1e30, or 1e4 in float32), m + log Σ would round the log Σ away.
// Binary cross-entropy with logits, for logit x and target t in [0, 1]:
//   loss = -t·log σ(x) - (1-t)·log(1 - σ(x)) = (1 - t)·x + max(-x, 0) + log(1 + exp(-|x|))
//   dloss/dx = σ(x) - t,  dloss/dt = -x
#pragma once

#include <utility>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

struct CrossEntropyOptions {
  // Targets equal to this are left out of the loss and of the mean's count, as PyTorch's ignore_index.
  int64_t ignore_index = -100;
  // In [0, 1]: the target of each row becomes (1 - label_smoothing)·onehot + label_smoothing/C, as
  // PyTorch's label_smoothing (Szegedy et al., 2016), so the loss no longer rewards ever-larger margins.
  double label_smoothing = 0;
};

// The mean cross-entropy of logits (N, C) and int64 targets (N), checked against C (an IndexError naming
// cross_entropy), and each row's m and log Σ exp(x - m) (N each), which the backward needs. The caller
// checks the shapes.
struct CrossEntropyForward {
  Tensor loss, row_max, log_total;
};
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          const CrossEntropyOptions& options);

// dx = (softmax(x) - q)·g/count on counted rows, 0 on ignored ones, from each row's m and log Σ; q the
// smoothed targets.
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& row_max,
                              const Tensor& log_total, const Tensor& targets,
                              const CrossEntropyOptions& options);

// The smoothed targets q (on·onehot(t) + off, (N, C)) and each row's weight in the mean (1/count, or 0
// for an ignored row, (N, 1)): the constants of the backward's recorded form.
std::pair<Tensor, Tensor> cross_entropy_targets_and_weights(const Tensor& targets, int64_t classes,
                                                            DType dtype, const CrossEntropyOptions& options);

// Each element's binary cross-entropy with logits, (1 - t)·x + max(-x, 0) + log(1 + exp(-|x|)), as PyTorch
// computes it (the same infinities and NaNs).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets);

}  // namespace minigrad
