// im2col for one-dimensional convolutions: every window of a sequence laid out as a column, and its
// adjoint (col2im), which adds each column back onto the positions it was read from. autograd/conv.cpp
// builds conv1d from unfold1d and one matrix product; as each other's adjoints, the two make each
// other's backward, so derivatives of any order exist.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// The windows a convolution reads: column t of channel c, offset k is x[c, t·stride + k·dilation -
// pad_left], 0 outside the sequence.
struct Conv1dGeometry {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_left = 0, pad_right = 0;
  int64_t out_length(int64_t length) const;
};
// im2col: x (N, C, L) -> cols (N, C·K, L_out), row c·K + k holding offset k of channel c's windows.
Tensor unfold1d(const Tensor& x, const Conv1dGeometry& geometry);
// Its adjoint (col2im): each column entry added back onto the position it was read from -> (N, C, length).
Tensor fold1d(const Tensor& cols, int64_t length, const Conv1dGeometry& geometry);

}  // namespace minigrad
