// Products with a small right operand, without packing the left one: C = alpha·op(A)·op(B) + beta·C for
// op(A) of many rows (m) and op(B) small (k × n, n a multiple of the vector width, at most 1024 × 1024), as
// a Transformer's linear layers make them (32768 × 64 · 64 × 192 on S; 4096 × 128 · 128 × 512 in A's
// feed-forward block) and attention's blocks of queries (128 × 64 · 64 × 1024 for the scores, 1024 × 128 ·
// 128 × 64 for the values' gradient). And one product whose C is small and whose k is long: a weight's
// gradient dYᵀ·X, summed over every token (64 × 32768 · 32768 × 64, A transposed), k taken in pieces that
// stay in L2, each added into C.
// minigrad's own kernel, used by gemm() (matmul.h) in place of OpenBLAS where it applies.
//
// Why. OpenBLAS copies ("packs") both operands into its own layout before multiplying. For a small B that
// copy of A costs as much as reading A for the product itself, and on these shapes OpenBLAS ran at about
// half (its Haswell kernels) to two thirds (its AVX-512 Cooperlake kernels) of the speed of the kernel
// below, on one thread of a Zen 5 (docs/performance.md, "Thin products").
//
// The blocking. C is computed in blocks of kRows rows × one panel of columns. A panel is up to kVectors
// vectors of the CPU's width W (16 floats or 8 doubles with AVX-512): 64 columns of float32. For each
// block, the kRows × kVectors accumulators live in registers (6 × 4 = 24 of AVX-512's 32); the loop over
// k loads one row of the panel of B (kVectors vectors, from L1 or L2: a panel of k ≤ 1024 rows is at
// most 256 KB; op(A)'s rows go against it 96 at a time, then against the next panel) and broadcasts one
// element of each of op(A)'s kRows rows (read straight from A: along a row of A, or, for a transposed A,
// kRows neighbours in each of its rows), and does kRows · kVectors multiply-adds. Then the block is written
// once: alpha·acc (+ beta·C). A transposed B (a linear layer's weight, (out, in); attention's keys) or a wide
// one is first copied panel by panel into a buffer of this thread's (k · n elements, kept between calls):
// each panel's rows then sit side by side.
//
// Each C entry is the sum over k in order, one multiply-add at a time (over a long k, each piece's sum,
// times alpha, added into C in order): the result equals OpenBLAS's up to rounding, and NaN and
// infinities propagate as in any sum of products. With beta = 0, C is not read.
#pragma once

#include <cstdint>

namespace minigrad {

// Whether thin_gemm handles this product on this CPU. n must be a multiple of the vector width, the build
// for a CPU with AVX-512 (the kernel needs its 32 vector registers; elsewhere OpenBLAS does every
// product), and one of:
// - op(A) of at least 128 rows, A as stored or transposed, with n at most 192 and k at most 1024, or n at
//   most 1024 and k at most 64;
// - a feed-forward block's product: float32, A as stored, at least 2,048 rows, n and k at most 1024;
// - a weight's gradient over a long k (past 1024, taken in pieces): A transposed, op(A) of 64 to 256 rows
//   and n at most 192.
bool thin_gemm_applies(bool transpose_a, int64_t m, int64_t n, int64_t k, bool is_double);

// C = alpha·op(A)·op(B) + beta·C on row-major buffers, as cblas_sgemm / cblas_dgemm;
// only where thin_gemm_applies. Single-threaded: gemm() splits a large product between threads first.
void thin_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void thin_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
               int64_t ldc);

}  // namespace minigrad
