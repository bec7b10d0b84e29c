#include "minigrad/tensor/thin_gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace minigrad {

namespace {

constexpr int kRows = 6;     // rows of C per block
constexpr int kVectors = 4;  // vectors of C's columns per panel
// Rows of op(A) taken against one panel of B after another: 96 rows of k ≤ 1024 floats are at most 384 KB,
// which stay in L2 (1 MB on a Zen 4 or 5) beside a panel (k × 64 floats, at most 256 KB).
constexpr int64_t kChunkRows = 96;
static_assert(kChunkRows % kRows == 0, "a chunk is whole blocks");
// Where it applies (gemm() calls it), as measured on a Zen 5 against OpenBLAS's AVX-512 kernels
// (docs/performance.md, "Thin products"): at least 128 rows of op(A), A as stored or transposed, and B
// of at most 192 columns and 1024 rows (a linear layer's weight; attention's values), or of at most 1024
// columns and 64 rows (attention's keys, Q·Kᵀ with a head of 64 dimensions or fewer). Fewer rows (64 × 64 ·
// 64 × 64) ran faster in OpenBLAS, whose packing they pay for.
constexpr int64_t kMinM = 128, kMaxN = 192, kMaxK = 1024;
constexpr int64_t kMaxWideN = 1024, kMaxWideK = 64;
// And a feed-forward block's products, float32 with A as stored: at least 2,048 rows (a thread's share of
// A's 4,096 tokens) by a B of at most 1024 columns and 1024 rows (4096 × 128 · 128 × 512 on A, 8192 × 256
// · 256 × 1024 on C), where the kernel measured faster than both of OpenBLAS's kernel sets. Products with
// fewer rows (a square matmul's share of a thread) and a transposed A against a wide B over a longer k (a
// weight's gradient) stay with OpenBLAS: the latter ran at half its speed.
constexpr int64_t kMinFeedForwardM = 2048;
// A long k: a weight's gradient dYᵀ·X (A transposed), a small C (out × in, 64 to 256 rows) summed over every
// token of a batch (32,768 on S). It is taken in pieces of kPieceK, each added into C, so that a piece of
// op(A) and one of B (256 × 256 and 256 × 192 floats at most: 448 KB) stay in L2 together while every block
// of C's rows reads them; a piece of 1,024 did not fit beside its B.
constexpr int64_t kMinLongKM = 64, kMaxLongKM = 256, kPieceK = 256;

// One vector register of T: 64 bytes, AVX-512's width (GCC's vector extension; -march=native picks the
// instructions). Spelled per type: the attribute does not apply to a template parameter.
template <typename T>
struct VectorOf;
template <>
struct VectorOf<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct VectorOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <typename T>
using Vector = typename VectorOf<T>::type;
template <typename T>
constexpr int kWidth = 64 / sizeof(T);

// Transposes a square tile of W × W (16 floats or 8 doubles) in registers: row[i][j] becomes row[j][i].
// Each stage, for a distance s of W/2, W/4, ..., 1, swaps the two off-diagonal s × s blocks of every
// 2s × 2s block, with one two-vector shuffle per row: row r (bit s clear) keeps its columns whose bit s is
// clear and takes row r + s's columns c - s into those with bit s set; row r + s keeps its columns with
// bit s set and takes row r's columns c + s into the others. Each stage swaps bit s of an element's row
// and column; after the last, every element is at its mirror position.
template <typename T>
void transpose_tile(Vector<T> (&row)[kWidth<T>]) {
  constexpr int W = kWidth<T>;
  auto stage = [&]<int s, int... c>(std::integer_sequence<int, c...>) {
    for (int r = 0; r < W; ++r) {
      if (r & s) continue;
      const Vector<T> a = row[r], b = row[r + s];  // indices from W on pick from b
      row[r] = __builtin_shufflevector(a, b, ((c & s) == 0 ? c : W + c - s)...);
      row[r + s] = __builtin_shufflevector(a, b, ((c & s) == 0 ? c + s : W + c)...);
    }
  };
  constexpr auto columns = std::make_integer_sequence<int, W>();
  if constexpr (W == 16) stage.template operator()<8>(columns);
  stage.template operator()<4>(columns);
  stage.template operator()<2>(columns);
  stage.template operator()<1>(columns);
}

// Copies op(B) (k × n) into panels of P columns: each panel as k rows of P, side by side, a panel's rows
// P apart and the panels k·P apart (in a last panel of fewer than P columns, only those are written). For a
// transposed B (n × k as stored: a row of B is a column of op(B)) W × W tiles are transposed in registers;
// where k is not a multiple of W, its last rows are copied one element at a time. With the copy an element
// at a time, as before, a block's Q·Kᵀ (256 × 64 by (512 × 64)ᵀ) took 8% longer (docs/history/performance.md,
// "A transposed B copied by tiles").
template <typename T>
void copy_panels(bool transpose_b, int64_t n, int64_t k, const T* b, int64_t ldb, int64_t P, T* out) {
  constexpr int W = kWidth<T>;
  for (int64_t j = 0; j < n; j += W) {         // W columns of op(B) at a time (n is a multiple of W)
    T* columns = out + j / P * k * P + j % P;  // columns [j, j + W) of op(B), in their panel
    if (!transpose_b) {
      for (int64_t p = 0; p < k; ++p) std::memcpy(columns + p * P, b + p * ldb + j, sizeof(Vector<T>));
      continue;
    }
    int64_t p = 0;
    for (; p + W <= k; p += W) {
      Vector<T> tile[W];
      for (int i = 0; i < W; ++i) std::memcpy(&tile[i], b + (j + i) * ldb + p, sizeof(Vector<T>));
      transpose_tile<T>(tile);  // tile[i] is now row p + i of op(B), columns [j, j + W)
      for (int i = 0; i < W; ++i) std::memcpy(columns + (p + i) * P, &tile[i], sizeof(Vector<T>));
    }
    for (; p < k; ++p) {
      for (int i = 0; i < W; ++i) columns[p * P + i] = b[(j + i) * ldb + p];
    }
  }
}

// C[0..R) × [0..V·W) = alpha·op(A)[0..R) × [0..k) · B[0..k) × [0..V·W) + beta·C: the micro-kernel. Its
// R × V accumulators stay in registers (the loops are unrolled whole). op(A)'s element (r, p) is
// a[r·lda + p], or a[p·lda + r] for a transposed A (TA): then the R elements of step p sit side by side.
template <typename T, bool TA, int R, int V>
void block(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t k, T alpha, T beta, T* c, int64_t ldc) {
  constexpr int W = kWidth<T>;
  Vector<T> acc[R][V] = {};
  for (int64_t p = 0; p < k; ++p) {
    Vector<T> row[V];  // row p of B's panel
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) std::memcpy(&row[v], b + p * ldb + v * W, sizeof(Vector<T>));
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const T x = TA ? a[p * lda + r] : a[r * lda + p];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] += x * row[v];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      T* out = c + r * ldc + v * W;
      Vector<T> result = alpha * acc[r][v];
      if (beta != T(0)) {  // as BLAS: with beta = 0, C is not read (a NaN there does not propagate)
        Vector<T> old;
        std::memcpy(&old, out, sizeof(Vector<T>));
        result += beta * old;
      }
      std::memcpy(out, &result, sizeof(Vector<T>));
    }
  }
}

// The block for `rows` (1 .. kRows) rows and `vectors` (1 .. kVectors) vectors.
template <typename T, bool TA, int R>
void block_of_width(int vectors, const T* a, int64_t lda, const T* b, int64_t ldb, int64_t k, T alpha, T beta,
                    T* c, int64_t ldc) {
  switch (vectors) {
    case 1:
      return block<T, TA, R, 1>(a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 2:
      return block<T, TA, R, 2>(a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 3:
      return block<T, TA, R, 3>(a, lda, b, ldb, k, alpha, beta, c, ldc);
    default:
      return block<T, TA, R, 4>(a, lda, b, ldb, k, alpha, beta, c, ldc);
  }
}
template <typename T, bool TA>
void any_block(int rows, int vectors, const T* a, int64_t lda, const T* b, int64_t ldb, int64_t k, T alpha,
               T beta, T* c, int64_t ldc) {
  switch (rows) {
    case 1:
      return block_of_width<T, TA, 1>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 2:
      return block_of_width<T, TA, 2>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 3:
      return block_of_width<T, TA, 3>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 4:
      return block_of_width<T, TA, 4>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
    case 5:
      return block_of_width<T, TA, 5>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
    default:
      return block_of_width<T, TA, kRows>(vectors, a, lda, b, ldb, k, alpha, beta, c, ldc);
  }
}

// The blocks of C for one orientation of A (TA reads A as stored k × m). B's panel of columns [j, j + P)
// starts at b + (j / P)·panel_stride, its rows ldb apart: panel_stride is P where B is as given, k·P where
// it was copied panel by panel.
template <typename T, bool TA>
void blocks(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
            int64_t panel_stride, T beta, T* c, int64_t ldc) {
  constexpr int64_t P = kVectors * kWidth<T>;
  // op(A)'s rows in chunks of kChunkRows, each chunk against one panel of B's columns after another, block
  // by block: a chunk's rows are read from memory once, then from L2 for the other panels, and each panel
  // stays in L1 (k ≤ 128) or L2 while the chunk's 16 blocks read it. With one panel (n ≤ 64 floats) this is
  // block after block down op(A).
  for (int64_t first = 0; first < m; first += kChunkRows) {
    const int64_t end = std::min(m, first + kChunkRows);
    for (int64_t j = 0; j < n; j += P) {
      const int vectors = static_cast<int>(std::min<int64_t>(kVectors, (n - j) / kWidth<T>));
      const T* panel = b + j / P * panel_stride;
      for (int64_t i = first; i < end; i += kRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kRows, end - i));
        const T* a_rows = TA ? a + i : a + i * lda;  // row i of op(A)
        if (rows == kRows) {
          block_of_width<T, TA, kRows>(vectors, a_rows, lda, panel, ldb, k, alpha, beta, c + i * ldc + j,
                                       ldc);
        } else {
          any_block<T, TA>(rows, vectors, a_rows, lda, panel, ldb, k, alpha, beta, c + i * ldc + j, ldc);
        }
      }
    }
  }
}

template <typename T>
void thin_product(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (k > kMaxK) {  // a long k, piece by piece: the first piece with beta, the others added (beta = 1)
    for (int64_t p = 0; p < k; p += kPieceK) {
      const T* a_piece = transpose_a ? a + p * lda : a + p;  // columns [p, p + piece) of op(A)
      const T* b_piece = transpose_b ? b + p : b + p * ldb;  // rows [p, p + piece) of op(B)
      thin_product(transpose_a, transpose_b, m, n, std::min(kPieceK, k - p), alpha, a_piece, lda, b_piece,
                   ldb, p == 0 ? beta : T(1), c, ldc);
    }
    return;
  }
  constexpr int64_t P = kVectors * kWidth<T>;
  int64_t panel_stride = P;
  // A transposed B (n × k as stored), or a wide one, is copied first, panel by panel: each panel of P
  // columns as k rows of P, side by side (this thread's buffer, kept between calls). A panel's rows are
  // then 256 bytes apart, not n elements: with n = 1024 floats they were 4 KB apart, every row fell in the
  // same sets of L1 and pushed the others out.
  thread_local std::vector<T> copied;
  if (transpose_b || n > kMaxN) {
    const int64_t panels = (n + P - 1) / P;
    copied.resize(static_cast<size_t>(panels * k * P));
    copy_panels(transpose_b, n, k, b, ldb, P, copied.data());
    b = copied.data();
    ldb = P;
    panel_stride = k * P;
  }
  if (transpose_a) {
    blocks<T, true>(m, n, k, alpha, a, lda, b, ldb, panel_stride, beta, c, ldc);
  } else {
    blocks<T, false>(m, n, k, alpha, a, lda, b, ldb, panel_stride, beta, c, ldc);
  }
}

}  // namespace

bool thin_gemm_applies(bool transpose_a, int64_t m, int64_t n, int64_t k, bool is_double) {
#if defined(__AVX512F__)
  const int64_t width = is_double ? kWidth<double> : kWidth<float>;
  const bool thin = m >= kMinM && n <= kMaxN && k <= kMaxK;
  const bool wide_over_short_k = m >= kMinM && n <= kMaxWideN && k <= kMaxWideK;
  const bool feed_forward =
      !transpose_a && !is_double && m >= kMinFeedForwardM && n <= kMaxWideN && k <= kMaxK;
  // Only the shape it was measured on: attention's P·V over more than 1024 keys, say, stays with OpenBLAS.
  const bool long_k = transpose_a && m >= kMinLongKM && m <= kMaxLongKM && n <= kMaxN && k > kMaxK;
  return n >= width && n % width == 0 && k >= 1 && (thin || wide_over_short_k || feed_forward || long_k);
#else
  (void)transpose_a, (void)m, (void)n, (void)k, (void)is_double;
  return false;
#endif
}

void thin_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thin_product(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void thin_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
               int64_t ldc) {
  thin_product(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace minigrad
