#include "minigrad/tensor/matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <memory>
#include <type_traits>

#include "minigrad/tensor/thin_gemm.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// How BLAS should read the last two dimensions (rows x cols) of an operand.
struct BlasOperand {
  Tensor tensor;  // the operand, or a contiguous copy of it
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;  // BLAS's leading dimension
};

BlasOperand as_blas_operand(const Tensor& t) {
  const int r = t.rank();
  const int64_t rows = t.shape()[r - 2], cols = t.shape()[r - 1];
  const int64_t row_stride = t.strides()[r - 2], col_stride = t.strides()[r - 1];
  // Row-major [rows, cols] with rows row_stride apart.
  if ((col_stride == 1 || cols == 1) && row_stride >= std::max<int64_t>(1, cols)) {
    return {t, CblasNoTrans, row_stride};
  }
  // The transpose of a row-major [cols, rows]: columns col_stride apart.
  if ((row_stride == 1 || rows == 1) && col_stride >= std::max<int64_t>(1, rows)) {
    return {t, CblasTrans, col_stride};
  }
  const Tensor c = t.contiguous();
  return {c, CblasNoTrans, std::max<int64_t>(1, cols)};
}

template <typename T>
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a,
               int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  gemm(ta == CblasTrans, tb == CblasTrans, m, n, k, T(1), a, lda, b, ldb, T(0), c, ldc);
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (!x.defined() || !weight.defined() || !bias.defined())
    throw ValueError("linear", "an operand is undefined");
  if (x.rank() < 1 || weight.rank() != 2 || x.shape().back() != weight.shape()[1] ||
      bias.shape() != Shape{weight.shape()[0]}) {
    throw ShapeError("linear", "expects x (..., in), weight (out, in) and bias (out), got " +
                                   x.shape().str() + ", " + weight.shape().str() + " and " +
                                   bias.shape().str());
  }
  if (!is_floating(x.dtype()) || weight.dtype() != x.dtype() || bias.dtype() != x.dtype()) {
    throw DTypeError("linear", "expects three float32 or three float64 tensors, got " +
                                   std::string(dtype_name(x.dtype())) + ", " +
                                   std::string(dtype_name(weight.dtype())) + " and " +
                                   std::string(dtype_name(bias.dtype())) +
                                   conversion_hint({weight.dtype(), x.dtype(), bias.dtype()}));
  }
  const int64_t in = weight.shape()[1], out_features = weight.shape()[0];
  Shape out_shape = x.shape();
  out_shape[out_shape.rank() - 1] = out_features;
  const int64_t m = rows_of("linear", x.shape());       // x's leading dimensions, counted
  const Tensor rows = x.contiguous().reshape({m, in});  // (M, in)
  // every row starts as the bias; a clone, never a view (with one row, the expand alone is "contiguous")
  Tensor out = bias.expand({m, out_features}).clone();
  if (m == 0 || in == 0 || out_features == 0) return out.reshape(out_shape);
  num_threads();  // make sure OpenBLAS has been given minigrad's thread setting
  const BlasOperand W = as_blas_operand(weight.t());  // Wᵀ (in, out): W read with the transpose flag
  dispatch_float(x.dtype(), "linear", [&]<typename T>() {
    gemm(false, W.trans == CblasTrans, m, out_features, in, T(1), rows.data_ptr<const T>(), in,
         W.tensor.data_ptr<const T>(), W.ld, T(1), out.data_ptr<T>(), out_features);
  });
  return out.reshape(out_shape);
}

namespace {

// While alive, the calling thread's OpenMP thread count is 1: OpenBLAS's OpenMP build threads a call over
// omp_get_max_threads() of the thread that makes it, and minigrad splits its products itself. The count
// is put back afterwards, for a program that uses OpenMP on its own threads.
class OneBlasThread {
 public:
  OneBlasThread() : before_(omp_get_max_threads()) {
    if (before_ != 1) omp_set_num_threads(1);
  }
  ~OneBlasThread() {
    if (before_ != 1) omp_set_num_threads(before_);
  }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int before_;
};

// One product on the calling thread: minigrad's own kernel for a small B where it applies (thin_gemm.h),
// otherwise one BLAS call.
template <typename T>
void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr bool is_double = std::is_same_v<T, double>;
  if (thin_gemm_applies(ta, m, n, k, is_double))
    return thin_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const OneBlasThread one;
  const CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans, op_b = tb ? CblasTrans : CblasNoTrans;
  if constexpr (is_double) {
    cblas_dgemm(CblasRowMajor, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_sgemm(CblasRowMajor, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// Products of fewer multiply-adds (m·n·k) than this are one BLAS call: below it, waking a thread costs
// more than half the product (64³ ran slower split in two than whole).
constexpr int64_t kSplitGemmWork = int64_t{1} << 20;

// minigrad splits a large product between its threads itself, one single-threaded BLAS call per piece,
// instead of letting OpenBLAS thread the call. OpenBLAS's own split shares packed panels between its
// threads and synchronises on every block, which gains little on the tall, thin products of a
// Transformer step; independent pieces scale better (docs/performance.md, "Threads and memory"). The
// split: along k when k dominates (a weight's gradient, summed over every token), each
// thread summing its share of k and the shares added at the end; otherwise into bands of C's rows (or
// columns when C is wide), each thread's band a multiple of 16 rows so that BLAS's tiles stay whole.
// The result equals the one-call result up to rounding, which depends on the thread count (as it did
// with OpenBLAS's own split).
template <typename T>
void split_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const int threads = num_threads();
  if (threads <= 1 || in_parallel() || m * n * k < kSplitGemmWork) {
    blas_call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // Where thread t's piece of [0, size) starts (t = threads: the end).
  auto start = [threads](int64_t size, int t) {
    return t == threads ? size : std::min(size, (size * t / threads + 15) / 16 * 16);
  };
  // Row i of op(A) and column j of op(B) as stored: a row of A, or a column of a transposed one.
  auto a_row = [&](int64_t i) { return ta ? a + i : a + i * lda; };
  auto a_col = [&](int64_t p) { return ta ? a + p * lda : a + p; };
  auto b_row = [&](int64_t p) { return tb ? b + p : b + p * ldb; };
  auto b_col = [&](int64_t j) { return tb ? b + j * ldb : b + j; };

  if (k >= 4 * std::max(m, n)) {
    // Thread 0 sums its share of k into C (with beta), the others into buffers of their own (BLAS
    // writes every entry: no zeros needed first).
    const auto partial = std::make_unique_for_overwrite<T[]>(static_cast<size_t>((threads - 1) * m * n));
    parallel_run(threads, [&](int t) {
      const int64_t p0 = start(k, t), p1 = start(k, t + 1);
      if (t == 0) {
        blas_call(ta, tb, m, n, p1 - p0, alpha, a_col(p0), lda, b_row(p0), ldb, beta, c, ldc);
      } else if (p1 > p0) {
        blas_call(ta, tb, m, n, p1 - p0, alpha, a_col(p0), lda, b_row(p0), ldb, T(0),
                  &partial[(t - 1) * m * n], n);
      } else {
        std::fill_n(&partial[(t - 1) * m * n], m * n, T(0));
      }
    });
    // Then C's rows take the buffers' sums in thread order, split between the threads when there are
    // enough of them: each entry's sum is the same either way.
    parallel_for(m, n * (threads - 1), [&](int64_t begin, int64_t end) {
      for (int t = 1; t < threads; ++t) {
        const T* p = &partial[(t - 1) * m * n];
        for (int64_t i = begin; i < end; ++i) {
          for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += p[i * n + j];
        }
      }
    });
    return;
  }
  const bool by_rows = m >= n;
  parallel_run(threads, [&](int t) {
    const int64_t from = start(by_rows ? m : n, t), to = start(by_rows ? m : n, t + 1);
    if (to > from && by_rows) {
      blas_call(ta, tb, to - from, n, k, alpha, a_row(from), lda, b, ldb, beta, c + from * ldc, ldc);
    } else if (to > from) {
      blas_call(ta, tb, m, to - from, k, alpha, a, lda, b_col(from), ldb, beta, c + from, ldc);
    }
  });
}

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  split_gemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  split_gemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ValueError("matmul", "an operand is undefined");
  if (a.rank() < 2 || b.rank() < 2) {
    throw ShapeError("matmul", "expects operands of rank 2 or more, got shapes " + a.shape().str() + " and " +
                                   b.shape().str());
  }
  if (a.dtype() != b.dtype() || !is_floating(a.dtype())) {
    throw DTypeError(
        "matmul", "expected two float32 or two float64 tensors, got " + std::string(dtype_name(a.dtype())) +
                      " and " + std::string(dtype_name(b.dtype())) + conversion_hint({a.dtype(), b.dtype()}));
  }
  const int64_t m = a.shape()[a.rank() - 2], k = a.shape()[a.rank() - 1];
  const int64_t k2 = b.shape()[b.rank() - 2], n = b.shape()[b.rank() - 1];
  if (k != k2) {
    throw ShapeError("matmul", "shapes " + a.shape().str() + " and " + b.shape().str() +
                                   " are not aligned (" + std::to_string(k) + " != " + std::to_string(k2) +
                                   ")");
  }
  const Shape a_batch(std::span<const int64_t>(a.shape().begin(), a.rank() - 2));
  const Shape b_batch(std::span<const int64_t>(b.shape().begin(), b.rank() - 2));
  const Shape batch = broadcast_shapes("matmul", a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);

  num_threads();  // make sure OpenBLAS has been given minigrad's thread setting
  if (m == 0 || n == 0 || k == 0) return Tensor::zeros(out_shape, a.dtype());
  Tensor out = Tensor::empty(out_shape, a.dtype());

  // [..., M, K] @ [K, N] with a row-contiguous batch of rows is one big [B*M, K] @ [K, N]: the common
  // case of a Linear layer on a (batch, seq, hidden) input.
  const BlasOperand B = as_blas_operand(b);
  if (b.rank() == 2 && a.rank() > 2) {
    const Tensor rows = a.contiguous().reshape({-1, k});
    dispatch_float(a.dtype(), "matmul", [&]<typename T>() {
      blas_gemm<T>(CblasNoTrans, B.trans, rows.shape()[0], n, k, rows.data_ptr<const T>(), k,
                   B.tensor.data_ptr<const T>(), B.ld, out.data_ptr<T>(), n);
    });
    return out;
  }

  // One gemm per batch element; each operand steps through its own batch strides (0 where broadcast).
  const BlasOperand A = as_blas_operand(a);
  const Tensor& at = A.tensor;
  const Tensor& bt = B.tensor;
  Shape a_strides = Shape::filled(batch.rank(), 0), b_strides = Shape::filled(batch.rank(), 0);
  for (int d = 0; d < batch.rank(); ++d) {
    const int da = d - (batch.rank() - a_batch.rank()), db = d - (batch.rank() - b_batch.rank());
    if (da >= 0 && a_batch[da] != 1) a_strides[d] = at.strides()[da];
    if (db >= 0 && b_batch[db] != 1) b_strides[d] = bt.strides()[db];
  }
  dispatch_float(a.dtype(), "matmul", [&]<typename T>() {
    const T* pa = at.data_ptr<const T>();
    const T* pb = bt.data_ptr<const T>();
    T* pc = out.data_ptr<T>();
    // Batch elements are shared between the threads; a product large enough to be split itself
    // (split_gemm) is split inside a thread's share only when that share is the whole batch.
    parallel_for(batch.numel(), m * n * k, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int64_t oa = 0, ob = 0;
        for (int64_t d = batch.rank() - 1, rest = i; d >= 0; --d) {
          const int64_t index = rest % batch[d];
          rest /= batch[d];
          oa += index * a_strides[d];
          ob += index * b_strides[d];
        }
        blas_gemm<T>(A.trans, B.trans, m, n, k, pa + oa, A.ld, pb + ob, B.ld, pc + i * m * n, n);
      }
    });
  });
  return out;
}

}  // namespace minigrad
