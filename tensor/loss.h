// Losses computed straight from logits, fused so that they stay finite and cheap: the kernels (the ops,
// with their recorded backward, are autograd/loss.cpp).
//
// Cross-entropy for one row of logits x with target class t, m = max x, and class weights w (1 without):
//   -log softmax(x)_c = L - z_c,   L = log Σ exp(x_i - m),  z_c = x_c - m
//   loss = on·w_t·(L - z_t) + off·Σ_c w_c·(L - z_c)        (on = 1 - ε, off = ε/C: label smoothing ε)
//        = A·L - Σ_c a_c·z_c,   a_c = on·w_t·[c = t] + off·w_c,   A = Σ_c a_c
//   dloss/dx_c = A·softmax(x)_c - a_c,   softmax(x)_c = exp(z_c - L)
// (the m's cancel, since the a_c sum to A). Without weights and smoothing: L - z_t and softmax(x) -
// onehot(t). Everything is computed from the shifted values z, never from logsumexp(x) itself: with logits
// that share a large offset (1e30, or 1e4 in float32), m + L would round L away. The mean divides by the
// weights of the counted rows, Σ w_t (their count without weights), as PyTorch's.
// Binary cross-entropy with logits, for logit x, target t in [0, 1] and positive weight p (1 without):
//   loss = -p·t·log σ(x) - (1-t)·log(1 - σ(x)) = (1 - t)·x + (1 + (p-1)·t)·softplus(-x)
//   softplus(-x) = max(-x, 0) + log(1 + exp(-|x|))
//   dloss/dx = σ(x) - t + (p-1)·t·(σ(x) - 1),  dloss/dt = -x + (p-1)·softplus(-x)
#pragma once

#include <utility>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// How a loss turns its per-element values into its result, as PyTorch's `reduction` argument: their mean
// (the default), their sum, or all of them (None: the input's shape).
enum class Reduction { Mean, Sum, None };

struct CrossEntropyOptions {
  // (C): each class's weight in the loss and in the mean, as PyTorch's weight; undefined: all 1.
  Tensor weight{};
  // Targets equal to this are left out of the loss and of the mean's count, as PyTorch's ignore_index.
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  // In [0, 1]: the target of each row becomes (1 - label_smoothing)·onehot + label_smoothing/C, as
  // PyTorch's label_smoothing (Szegedy et al., 2016), so the loss no longer rewards ever-larger margins.
  double label_smoothing = 0;
};

// Cross-entropy of logits (N, C) and int64 targets (N), checked against C (an IndexError naming
// cross_entropy): the loss, reduced as the options say ((N) with Reduction::None, an ignored row's 0), and
// each row's m and L (N each), which the backward needs. The caller checks the shapes and the weight.
struct CrossEntropyForward {
  Tensor loss, row_max, log_total;
};
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          const CrossEntropyOptions& options);

// dx = (A·softmax(x) - a)·r on counted rows, 0 on ignored ones, from each row's m and L; r is g over the
// mean's denominator, g, or g's row (Reduction::None).
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& row_max,
                              const Tensor& log_total, const Tensor& targets,
                              const CrossEntropyOptions& options);

// The backward's constants, for its recorded form dx = (softmax(x) - q)·f·g: q = a/A (N, C) and each
// row's f = A over the mean's denominator, or A (N, 1); 0 for an ignored row.
std::pair<Tensor, Tensor> cross_entropy_targets_and_weights(const Tensor& targets, int64_t classes,
                                                            DType dtype, const CrossEntropyOptions& options);

// Each element's binary cross-entropy with logits, (1 - t)·x + (1 + (p-1)·t)·softplus(-x), as PyTorch
// computes it (the same infinities and NaNs); pos_weight p broadcasts to the logits' shape, undefined: 1.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets,
                                        const Tensor& pos_weight = {});

}  // namespace minigrad
