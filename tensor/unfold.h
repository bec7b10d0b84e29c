// im2col for one- and two-dimensional convolutions: every window of a sequence or an image laid out as a
// column, and its adjoint (col2im), which adds each column back onto the positions it was read from.
// autograd/conv.cpp builds conv1d from unfold1d and one matrix product; as each other's adjoints, unfold
// and fold make each other's backward, so derivatives of any order exist. conv2d has kernels of its own,
// which unfold a few images at a time (tensor/conv2d.h).
#pragma once

#include <string_view>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// The windows a convolution reads: column t of channel c, offset k is x[c, t·stride + k·dilation -
// pad_left], 0 outside the sequence.
struct Conv1dGeometry {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_left = 0, pad_right = 0;
  int64_t out_length(int64_t length) const;
};
// Throws, naming op, unless the geometry is valid (kernel, stride and dilation positive, padding
// non-negative) and its window fits an axis of `length` positions padded (at least one output position).
void check_window(std::string_view op, const Conv1dGeometry& geometry, int64_t length);
// im2col: x (N, C, L) -> cols (N, C·K, L_out), row c·K + k holding offset k of channel c's windows.
Tensor unfold1d(const Tensor& x, const Conv1dGeometry& geometry);
// Its adjoint (col2im): each column entry added back onto the position it was read from -> (N, C, length).
Tensor fold1d(const Tensor& cols, int64_t length, const Conv1dGeometry& geometry);

// A height and a width (kernel size, stride, padding, dilation), as PyTorch takes an int or a pair:
// `.kernel_size = 3` is 3×3, `.kernel_size = {3, 5}` is 3 high and 5 wide.
struct Size2d {
  int64_t h = 0, w = 0;
  Size2d(int64_t both) : h(both), w(both) {}  // NOLINT: implicit, as PyTorch's int for a pair
  Size2d(int64_t height, int64_t width) : h(height), w(width) {}
  bool operator==(const Size2d&) const = default;
};

// The windows of a 2-D convolution: each axis is a 1-D geometry of its own.
struct Conv2dGeometry {
  Conv1dGeometry height, width;
};
// im2col: x (N, C, H, W) -> cols (N, C·KH·KW, H_out·W_out); row (c·KH + kh)·KW + kw holds offset (kh, kw)
// of channel c's windows, column i·W_out + j the window of output position (i, j).
Tensor unfold2d(const Tensor& x, const Conv2dGeometry& geometry);
// Its adjoint (col2im): each column entry added back onto the pixel it was read from -> (N, C, height,
// width).
Tensor fold2d(const Tensor& cols, int64_t height, int64_t width, const Conv2dGeometry& geometry);

}  // namespace minigrad
