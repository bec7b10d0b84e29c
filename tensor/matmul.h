// Matrix products on OpenBLAS, and on minigrad's own kernel for a thin right operand (thin_gemm.h).
//
//   [M,K] @ [K,N] -> [M,N]
//   [..., M, K] @ [..., K, N] -> [..., M, N]   batch dimensions broadcast: [8,1,M,K] @ [5,K,N] -> [8,5,M,N]
//
// A transposed operand (a transpose() view, as in the backward pass's A^T·G) is handed to BLAS with its
// transpose flag instead of being copied; only operands whose last two dimensions are neither row- nor
// column-contiguous are copied first.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

Tensor matmul(const Tensor& a, const Tensor& b);

// x·Wᵀ + b, PyTorch's F.linear: x (..., in), weight (out, in), bias (out) -> (..., out). The bias is
// written into the output rows first and BLAS adds the product onto it (beta = 1): one pass over the
// output fewer than matmul then add, and none for BLAS's zeroing of it.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// C = alpha·op(A)·op(B) + beta·C on raw row-major buffers (cblas_sgemm / cblas_dgemm, or thin_gemm where it
// applies), op(X) being X or Xᵀ: every product of minigrad goes through here, and kernels that tile their own
// products call it directly (tensor/attention.cpp). A is m x k after op, B k x n, C m x n; lda, ldb, ldc are
// the row strides of the buffers as stored. On 2+ threads, outside a parallel region, a large product is
// split between the threads, each with a single-threaded BLAS call (split_gemm in matmul.cpp says why).
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace minigrad
