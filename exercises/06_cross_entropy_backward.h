// Task 6: softmax with cross-entropy as one custom op. You write exercises/06_cross_entropy_backward.cpp.
#pragma once

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// The mean over the batch of -log softmax(logits)[n, targets[n]]: logits (N, C) float, targets (N) int64
// class ids -> a 0-dimensional loss.
Variable my_cross_entropy(const Variable& logits, const Tensor& targets);

// Given (not part of the task): targets (N) int64 as rows of a (N, classes) tensor of `dtype`, 1 at each
// row's class and 0 elsewhere.
inline Tensor one_hot(const Tensor& targets, int64_t classes, DType dtype) {
  const std::vector<int64_t> ids = targets.to_vector<int64_t>();
  Tensor out = Tensor::zeros({static_cast<int64_t>(ids.size()), classes}, dtype);
  for (size_t n = 0; n < ids.size(); ++n)
    out.select(0, static_cast<int64_t>(n)).slice(0, ids[n], ids[n] + 1).fill_(1);
  return out;
}

}  // namespace minigrad::exercises
