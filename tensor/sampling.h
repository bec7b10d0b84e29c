// Drawing category indices from weights, as torch.multinomial: the last step of sampling from any model
// (a language model's next token, a policy's action).
//
//   Tensor next = multinomial(softmax(logits, -1), 1);  // (B, V) -> (B, 1) int64
#pragma once

#include "minigrad/tensor/random.h"
#include "minigrad/tensor/tensor.h"

namespace minigrad {

// num_samples category indices (int64) per row of `weights`, (K) -> (num_samples) or (N, K) ->
// (N, num_samples), each drawn with probability proportional to its weight. The weights need not sum to 1
// but must be finite and non-negative with a positive sum per row. Without replacement, a drawn category
// is not drawn again in its row, so num_samples may not exceed the row's nonzero weights. Draws come from
// `generator`, or this thread's default generator (manual_seed).
Tensor multinomial(const Tensor& weights, int64_t num_samples, bool replacement = false,
                   Generator* generator = nullptr);

}  // namespace minigrad
