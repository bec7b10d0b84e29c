// conv2d's kernels: the product and its two gradients, a few images at a time (tensor/conv2d.cpp).
#pragma once

#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/unfold.h"

namespace minigrad {

// conv2d's product and its two gradients (autograd/conv.cpp records them), for x (N, C_in, H, W), weight
// (C_out, C_in/groups, KH, KW) and y (N, C_out, H_out, W_out):
//   y[n, o] = Σ_c Σ_kh Σ_kw weight[o, c, kh, kw] · (the pixels window offset (kh, kw) of channel c reads)
// Each works through the batch a few images at a time, unfolding them into a buffer that stays in cache
// and making one product per group as wide as those images: unfold2d then one batched product would
// write and read back columns 9 times the size of x (for 3×3), from memory. For a 3×3 kernel at stride 1
// and dilation 1, the forward with 32 or more input channels a group, and the input's gradient with 32
// or more input and output channels a group and padding of at most 2, are Winograd's F(2×2, 3×3) instead:
// the same sums with 2.25 times fewer multiply-adds, rounded differently in the last bits.
Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Conv2dGeometry& geometry, int64_t groups);
// The gradient of x (N, C_in, height, width) from the output's gy: the transposed convolution of gy.
Tensor conv2d_input_grad(const Tensor& gy, const Tensor& weight, int64_t height, int64_t width,
                         const Conv2dGeometry& geometry, int64_t groups);
// The gradient of the weight (C_out, C_in/groups, KH, KW) from gy and x.
Tensor conv2d_weight_grad(const Tensor& gy, const Tensor& x, const Conv2dGeometry& geometry, int64_t groups);

}  // namespace minigrad
