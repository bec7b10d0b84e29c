// Products with a thin right operand, without packing the left one: C = alpha·A·op(B) + beta·C for A of
// many rows (m) and op(B) small (k × n, n a multiple of the vector width), as a Transformer's linear
// layers make them (32768 × 64 · 64 × 192, say). minigrad's own kernel, used by gemm() (matmul.h) in
// place of OpenBLAS where it applies.
//
// Why. OpenBLAS copies ("packs") both operands into its own layout before multiplying. For a thin B that
// copy of A costs as much as reading A for the product itself, and on these shapes OpenBLAS ran at about
// half (its Haswell kernels) to two thirds (its AVX-512 Cooperlake kernels) of the speed of the kernel
// below, on one thread of a Zen 5 (docs/performance.md, "Thin products").
//
// The blocking. C is computed in blocks of kRows rows × one panel of columns. A panel is up to kVectors
// vectors of the CPU's width W (16 floats or 8 doubles with AVX-512): 64 columns of float32. For each
// block, the kRows × kVectors accumulators live in registers (6 × 4 = 24 of AVX-512's 32); the loop over
// k loads one row of the panel of B (kVectors vectors, from L1 or L2: a panel of k ≤ 1024 rows is at
// most 256 KB, and it is read by every block of rows) and broadcasts one element of each of A's kRows rows
// (read straight from A, row after row, where the hardware prefetcher follows them), and does kRows ·
// kVectors multiply-adds. Then the block is written once: alpha·acc (+ beta·C). A transposed B (a
// linear layer's weight, (out, in)) is first copied into a k × n buffer of this thread's, which is small.
//
// Each C entry is the sum over k in order, one multiply-add at a time: the result equals OpenBLAS's up
// to rounding, and NaN and infinities propagate as in any sum of products. With beta = 0, C is not read.
#pragma once

#include <cstdint>

namespace minigrad {

// Whether thin_gemm handles this product on this CPU: A not transposed, m at least 128, n a multiple of
// the vector width and at most 192, k at most 1024, and a build for a CPU with AVX-512 (the kernel needs
// its 32 vector registers; elsewhere OpenBLAS does every product).
bool thin_gemm_applies(bool transpose_a, int64_t m, int64_t n, int64_t k, bool is_double);

// C = alpha·A·op(B) + beta·C on row-major buffers, as cblas_sgemm / cblas_dgemm with A not transposed;
// only where thin_gemm_applies. Single-threaded: gemm() splits a large product between threads first.
void thin_gemm(bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void thin_gemm(bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
               const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace minigrad
