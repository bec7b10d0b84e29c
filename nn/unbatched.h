// PyTorch's unbatched inputs: a layer given one example without its batch dimension ((C, L) for Conv1d,
// (C, H, W) for Conv2d and the 2-d pooling, (L, input) for the recurrent layers) runs it as a batch of one
// and returns the result without the batch dimension, as PyTorch 1.13 does.
#pragma once

#include "minigrad/autograd/functions.h"

namespace minigrad::nn::detail {

// forward(x) when x has `batched_rank` dimensions; for one dimension fewer, forward on x as a batch of
// one (a new dimension 0), its result's dimension 0 removed.
template <typename Forward>
Variable as_batch_of_one(const Variable& x, int batched_rank, const Forward& forward) {
  if (x.defined() && x.rank() == batched_rank - 1) return squeeze(forward(unsqueeze(x, 0)), 0);
  return forward(x);
}

}  // namespace minigrad::nn::detail
