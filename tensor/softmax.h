// Softmax and log-softmax along one dimension, computed stably: the row maximum is subtracted before
// exponentiating, so logits of ±1e4 give exact 0s and 1s instead of inf/inf = NaN.
//
// A row whose entries are all -inf (a fully masked row) has no maximum to subtract. minigrad defines
// its softmax as all zeros (the row attends to nothing) and its log-softmax as all -inf (log 0), not
// NaN; attention's masked softmax (nn/attention.h) follows the same convention. A NaN anywhere in a row
// makes the whole row NaN, as in PyTorch: a NaN is a bug upstream and must stay visible.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// Softmax of one contiguous row of n values, in place, with the same conventions: the building block for
// fused kernels (tensor/attention.cpp) that own their rows.
void softmax_row_in_place(float* row, int64_t n);
void softmax_row_in_place(double* row, int64_t n);

// ---- backward kernels: each an op's gradient, g the gradient of the op's output ----
// softmax along dim: y·(g - Σ g·y), from the output y.
Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t dim);
// log_softmax along dim: g - exp(z)·Σg, from the output z.
Tensor log_softmax_backward(const Tensor& g, const Tensor& z, int64_t dim);

}  // namespace minigrad
