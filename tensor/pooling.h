// Max pooling's one kernel: where each window's maximum is. autograd/pooling.cpp picks those elements
// with an embedding lookup (a gather), whose gradient is a scatter-add into the same places and whose
// derivatives of any order exist; so the window's gradient goes to its maximum, as PyTorch's.
#pragma once

#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/unfold.h"

namespace minigrad {

// x (N, C, H, W) -> int64 (N, C, H_out, W_out): the flat index into x (((n·C + c)·H + ih)·W + iw) of each
// window's maximum. The windows are the geometry's; positions outside the image (its padding) take part
// in no maximum, and each window must cover at least one pixel. Of equal values the first wins; a NaN
// wins over any number, and of several NaNs the last, as in PyTorch's CPU kernel.
Tensor max_pool2d_argmax(const Tensor& x, const Conv2dGeometry& geometry);

}  // namespace minigrad
