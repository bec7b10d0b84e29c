// Matrix products on OpenBLAS.
//
//   [M,K] @ [K,N] -> [M,N]
//   [..., M, K] @ [..., K, N] -> [..., M, N]   batch dimensions broadcast: [8,1,M,K] @ [5,K,N] -> [8,5,M,N]
//
// A transposed operand (a transpose() view, as in the backward pass's A^T·G) is handed to BLAS with its
// transpose flag instead of being copied; only operands whose last two dimensions are neither row- nor
// column-contiguous are copied first.
#pragma once

#include "tensor/tensor.h"

namespace minigrad {

Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace minigrad
