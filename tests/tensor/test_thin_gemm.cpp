// minigrad's own kernel for small products (tensor/thin_gemm.h) against cblas_sgemm / cblas_dgemm: every
// row and column remainder of its blocks, k from 1 up, A and B transposed or not, B wide or thin,
// strided buffers, alpha and beta, and NaN and infinities where BLAS puts them.
#include <cblas.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "minigrad/tensor/matmul.h"
#include "minigrad/tensor/thin_gemm.h"
#include "minigrad/tensor/threads.h"
#include "test_helpers.h"

using namespace minigrad;

namespace {

void reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}
void reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                    int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

// One product, given padding of each buffer's rows (lda > k and so on), both ways; returns the largest
// difference, relative to the sum of |a|·|b| over k (the size the rounding error scales with). A NaN in
// one answer must be a NaN in the other, an infinity the same infinity.
template <typename T>
double compare(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, T beta, std::mt19937& random,
               const std::vector<std::pair<int64_t, T>>& a_specials = {},
               const std::vector<std::pair<int64_t, T>>& b_specials = {}) {
  // A as stored: m × k, or k × m for a transposed A; op(A)'s element (i, p) at a_at(i, p).
  const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 5, ldc = n + 7;
  auto a_at = [&](int64_t i, int64_t p) { return ta ? p * lda + i : i * lda + p; };
  std::normal_distribution<double> normal;
  std::vector<T> a((ta ? k : m) * lda), b((tb ? n : k) * ldb), c(m * ldc);
  for (T& x : a) x = T(normal(random));
  for (T& x : b) x = T(normal(random));
  for (T& x : c) x = T(normal(random));
  for (const auto& [index, value] : a_specials) a[index] = value;
  for (const auto& [index, value] : b_specials) b[index] = value;
  std::vector<T> expected = c, got = c;
  reference_gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, expected.data(), ldc);
  thin_gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, got.data(), ldc);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const T e = expected[i * ldc + j], g = got[i * ldc + j];
      if (j >= n) {  // past the product's columns: untouched
        BOOST_TEST_REQUIRE(g == c[i * ldc + j]);
        continue;
      }
      if (std::isnan(e) || std::isinf(e)) {
        BOOST_TEST_REQUIRE((std::isnan(e) ? std::isnan(g) : g == e),
                           "at (" << i << ", " << j << "): " << g << " where BLAS gives " << e);
        continue;
      }
      double scale = std::abs(double(beta) * double(c[i * ldc + j]));
      for (int64_t p = 0; p < k; ++p)
        scale +=
            std::abs(double(alpha) * double(a[a_at(i, p)]) * double(tb ? b[j * ldb + p] : b[p * ldb + j]));
      worst = std::max(worst, std::abs(double(g) - double(e)) / std::max(scale, 1e-30));
    }
  }
  return worst;
}

template <typename T>
void every_block_remainder() {
  std::mt19937 random(7);
  constexpr int64_t width = 64 / sizeof(T);
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  // m: every block remainder; one chunk of 96 rows exactly (96), and past it by 4 rows (100) and by two
  // whole blocks and a row (109); two chunks exactly (192), and past them (197)
  for (const int64_t m : {1, 5, 6, 7, 13, 96, 100, 109, 192, 197}) {
    // n: every panel width, a wide B copied panel by panel (256 floats), and 17 vectors (panels of 4, then 1)
    for (const int64_t n :
         {width, 2 * width, 3 * width, 4 * width, 5 * width, 256 / width * width, 17 * width}) {
      for (const int64_t k : {1, 3, 64, 100}) {
        for (const bool ta : {false, true}) {
          for (const bool tb : {false, true}) {
            BOOST_TEST_CONTEXT("m " << m << ", n " << n << ", k " << k << ", transposed A " << ta
                                    << ", transposed B " << tb) {
              BOOST_TEST(compare<T>(ta, tb, m, n, k, T(1), T(0), random) < tolerance);
              BOOST_TEST(compare<T>(ta, tb, m, n, k, T(0.5), T(1), random) < tolerance);
              BOOST_TEST(compare<T>(ta, tb, m, n, k, T(2), T(-1.5), random) < tolerance);
            }
          }
        }
      }
    }
  }
  // The largest k and n it is given.
  BOOST_TEST(compare<T>(false, false, 7, 2 * width, 1024, T(1), T(0), random) < tolerance);
  BOOST_TEST(compare<T>(true, false, 7, 2 * width, 1024, T(1), T(0), random) < tolerance);
  BOOST_TEST(compare<T>(false, true, 13, 1024, 64, T(1), T(0), random) < tolerance);
  BOOST_TEST(compare<T>(false, true, 101, 1024, 1024, T(1), T(0), random) < tolerance);  // A as stored
  BOOST_TEST(compare<T>(false, false, 101, 1024, 1024, T(0.5), T(1), random) < tolerance);
  // A long k, in pieces of 256: four and one more (1,025), five exactly (1,280), five and a part (1,300);
  // A and B either way, B of one panel and of two (the second cut short).
  for (const int64_t k : {1025, 1280, 1300}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        BOOST_TEST_CONTEXT("k " << k << ", transposed A " << ta << ", transposed B " << tb) {
          BOOST_TEST(compare<T>(ta, tb, 7, 3 * width, k, T(1), T(0), random) < tolerance);
          BOOST_TEST(compare<T>(ta, tb, 13, width, k, T(0.5), T(-1.5), random) < tolerance);
          BOOST_TEST(compare<T>(ta, tb, 64, 5 * width, k, T(1), T(1), random) < tolerance);
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(thin_gemm_kernel)

BOOST_AUTO_TEST_CASE(matches_blas_on_every_block_remainder_float32) {
  every_block_remainder<float>();
}
BOOST_AUTO_TEST_CASE(matches_blas_on_every_block_remainder_float64) {
  every_block_remainder<double>();
}

BOOST_AUTO_TEST_CASE(nan_and_infinities_propagate_as_blas_gives_them) {
  std::mt19937 random(3);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // a[0][2] NaN: row 0 all NaN. a[7][0] +inf: row 7 ±inf by b's signs. Both with and without beta.
  const int64_t lda = 64 + 3;
  for (const float beta : {0.0f, 1.0f}) {
    BOOST_TEST(compare<float>(false, false, 9, 32, 64, 1.0f, beta, random, {{2, nan}, {7 * lda, inf}}) <
               1e-5);
    BOOST_TEST(compare<float>(false, true, 9, 48, 64, 1.0f, beta, random, {{2, nan}, {7 * lda, -inf}}) <
               1e-5);
    // A transposed (64 × 9, rows 9 + 3 apart): a[2][0] NaN makes row 0 of op(A) NaN, a[0][7] -inf row 7.
    BOOST_TEST(compare<float>(true, false, 9, 32, 64, 1.0f, beta, random, {{2 * 12, nan}, {7, -inf}}) < 1e-5);
    // B transposed (48 × 70, rows 70 + 5 apart), copied into panels by 16 × 16 tiles and, past k = 64, an
    // element at a time: b[3][17] NaN makes column 3 of C NaN (in a tile), b[20][66] +inf column 20 (past
    // the tiles). A wide B as stored (64 × 256, rows 261 apart), copied too: b[5][200] NaN, column 200.
    BOOST_TEST(compare<float>(false, true, 9, 48, 70, 1.0f, beta, random, {},
                              {{3 * 75 + 17, nan}, {20 * 75 + 66, inf}}) < 1e-5);
    BOOST_TEST(compare<float>(false, false, 9, 256, 64, 1.0f, beta, random, {}, {{5 * 261 + 200, nan}}) <
               1e-5);
    // A long k: a NaN in the last piece (k = 1100, pieces of 256) and an infinity in the first.
    BOOST_TEST(compare<float>(true, false, 9, 32, 1100, 1.0f, beta, random, {{1090 * 12, nan}, {7, inf}}) <
               1e-5);
  }
  // With beta = 0, C is not read: a NaN there does not reach the result (as BLAS).
  std::vector<float> a(6 * 4, 1.0f), b(4 * 16, 1.0f), c(6 * 16, nan);
  thin_gemm(false, false, 6, 16, 4, 1.0f, a.data(), 4, b.data(), 16, 0.0f, c.data(), 16);
  for (const float x : c) BOOST_TEST_REQUIRE(x == 4.0f);
  // The same over a long k, A transposed (k × 6), in pieces: only the first piece takes beta = 0.
  std::vector<float> long_a(1100 * 6, 1.0f), long_b(1100 * 16, 1.0f), long_c(6 * 16, nan);
  thin_gemm(true, false, 6, 16, 1100, 1.0f, long_a.data(), 6, long_b.data(), 16, 0.0f, long_c.data(), 16);
  for (const float x : long_c) BOOST_TEST_REQUIRE(x == 1100.0f);
}

BOOST_AUTO_TEST_CASE(gemm_uses_it_where_it_applies_and_gives_blas_results) {
  // What gemm() (every product of minigrad) hands it, and the answer through gemm().
  BOOST_TEST(!thin_gemm_applies(false, 1000, 24, 64, false));    // n not a multiple of 16 floats
  BOOST_TEST(!thin_gemm_applies(false, 1000, 256, 128, false));  // n past 192 over k past 64: under 2048 rows
  BOOST_TEST(!thin_gemm_applies(true, 4096, 256, 128, false));   // the same with A transposed
  BOOST_TEST(!thin_gemm_applies(false, 4096, 256, 1025, false));  // A as stored, k past 1024
  BOOST_TEST(!thin_gemm_applies(false, 4096, 1040, 512, false));  // n past 1024 over k past 64
  BOOST_TEST(!thin_gemm_applies(false, 4096, 512, 128, true));    // float64: measured on float32 only
  BOOST_TEST(!thin_gemm_applies(true, 1000, 1024, 65, false));    // A transposed, wide over k past 64
  BOOST_TEST(!thin_gemm_applies(false, 1000, 2048, 64, false));   // n past 1024
  BOOST_TEST(!thin_gemm_applies(false, 64, 64, 64, false));       // fewer than 128 rows
  BOOST_TEST(!thin_gemm_applies(true, 1000, 64, 2048, false));    // k past 1024 with more than 256 rows
  BOOST_TEST(!thin_gemm_applies(true, 257, 64, 2048, false));
  BOOST_TEST(!thin_gemm_applies(true, 63, 64, 32768, false));   // k past 1024 with fewer than 64 rows
  BOOST_TEST(!thin_gemm_applies(true, 64, 64, 1024, false));    // 64 rows, k not past 1024
  BOOST_TEST(!thin_gemm_applies(true, 128, 256, 4096, false));  // k past 1024 with n past 192
  BOOST_TEST(!thin_gemm_applies(false, 128, 64, 2048, false));  // k past 1024 with A as stored (P·V)
#if defined(__AVX512F__)
  BOOST_TEST(thin_gemm_applies(false, 32768, 64, 64, false));
  BOOST_TEST(thin_gemm_applies(false, 32768, 64, 64, true));
  BOOST_TEST(thin_gemm_applies(false, 128, 1024, 64, false));     // attention's scores for 1024 keys
  BOOST_TEST(thin_gemm_applies(false, 4096, 512, 128, false));    // A's feed-forward block, x·W₁ᵀ
  BOOST_TEST(thin_gemm_applies(false, 2048, 1024, 1024, false));  // the fewest rows, the largest B
  BOOST_TEST(thin_gemm_applies(true, 1000, 1024, 64, false));     // A transposed, wide over k = 64
  BOOST_TEST(thin_gemm_applies(true, 64, 64, 32768, false));  // a weight's gradient over S's 32,768 tokens
  BOOST_TEST(thin_gemm_applies(true, 256, 192, 1025, false));
#else
  BOOST_TEST(!thin_gemm_applies(false, 32768, 64, 64, false));  // without AVX-512: BLAS everywhere
#endif
  std::mt19937 random(5);
  std::normal_distribution<float> normal;
  const int64_t m = 3000, n = 192, k = 64;  // S's query, key and value projections, in one
  std::vector<float> x(m * k), w(n * k), expected(m * n), got(m * n);
  for (float& v : x) v = normal(random);
  for (float& v : w) v = normal(random);
  reference_gemm(false, true, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, expected.data(), n);
  gemm(false, true, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, got.data(), n);  // x·Wᵀ, a linear layer's
  for (int64_t i = 0; i < m * n; ++i) BOOST_TEST_REQUIRE(std::abs(got[i] - expected[i]) < 1e-4f);

  // Attention's products for a block of 128 queries over 1024 keys, one head of 64: the scores Q·Kᵀ (a
  // wide B) and the values' gradient Pᵀ·dO (a transposed A, added to what is there).
  const int64_t rows = 128, keys = 1024, d = 64;
  std::vector<float> q(rows * d), keys_(keys * d), scores(rows * keys), expected_scores(rows * keys);
  for (float& v : q) v = normal(random);
  for (float& v : keys_) v = normal(random);
  reference_gemm(false, true, rows, keys, d, 0.125f, q.data(), d, keys_.data(), d, 0.0f,
                 expected_scores.data(), keys);
  gemm(false, true, rows, keys, d, 0.125f, q.data(), d, keys_.data(), d, 0.0f, scores.data(), keys);
  for (int64_t i = 0; i < rows * keys; ++i)
    BOOST_TEST_REQUIRE(std::abs(scores[i] - expected_scores[i]) < 1e-4f);
  std::vector<float> dv(keys * d, 1.0f), expected_dv(keys * d, 1.0f);
  reference_gemm(true, false, keys, d, rows, 1.0f, scores.data(), keys, q.data(), d, 1.0f, expected_dv.data(),
                 d);
  gemm(true, false, keys, d, rows, 1.0f, scores.data(), keys, q.data(), d, 1.0f, dv.data(), d);
  for (int64_t i = 0; i < keys * d; ++i) BOOST_TEST_REQUIRE(std::abs(dv[i] - expected_dv[i]) < 1e-3f);

  // Two products on two threads, the threads set back before anything is checked.
  const int threads_before = num_threads();
  set_num_threads(2);
  // A's feed-forward product x·W₁ᵀ (4096 × 128 · (512 × 128)ᵀ): 2,048 rows a thread, each thread copying
  // W₁ into panels of its own.
  const int64_t ff_rows = 4096, ff_in = 128, ff_out = 512;
  std::vector<float> ff_x(ff_rows * ff_in), ff_w(ff_out * ff_in), ff_y(ff_rows * ff_out),
      expected_ff_y(ff_rows * ff_out);
  for (float& v : ff_x) v = normal(random);
  for (float& v : ff_w) v = normal(random);
  reference_gemm(false, true, ff_rows, ff_out, ff_in, 1.0f, ff_x.data(), ff_in, ff_w.data(), ff_in, 0.0f,
                 expected_ff_y.data(), ff_out);
  gemm(false, true, ff_rows, ff_out, ff_in, 1.0f, ff_x.data(), ff_in, ff_w.data(), ff_in, 0.0f, ff_y.data(),
       ff_out);
  // A weight's gradient dYᵀ·X over 5,000 tokens (out 64, in 128): split along k between the threads, each
  // share of 2,500 in pieces.
  const int64_t tokens = 5000, out = 64, in = 128;
  std::vector<float> dy(tokens * out), xs(tokens * in), dw(out * in), expected_dw(out * in);
  for (float& v : dy) v = normal(random);
  for (float& v : xs) v = normal(random);
  reference_gemm(true, false, out, in, tokens, 1.0f, dy.data(), out, xs.data(), in, 0.0f, expected_dw.data(),
                 in);
  gemm(true, false, out, in, tokens, 1.0f, dy.data(), out, xs.data(), in, 0.0f, dw.data(), in);
  set_num_threads(threads_before);
  for (int64_t i = 0; i < ff_rows * ff_out; ++i)
    BOOST_TEST_REQUIRE(std::abs(ff_y[i] - expected_ff_y[i]) < 1e-3f);
  for (int64_t i = 0; i < out * in; ++i) BOOST_TEST_REQUIRE(std::abs(dw[i] - expected_dw[i]) < 1e-2f);
}

BOOST_AUTO_TEST_SUITE_END()
