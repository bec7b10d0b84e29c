#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
// The textbook triple loop, for reference, over the last two dims of (already broadcast) 3-D operands.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b) {
  const int64_t batch = a.shape()[0], m = a.shape()[1], k = a.shape()[2], n = b.shape()[2];
  std::vector<double> out;
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += a.at({p, i, q}) * b.at({p, q, j});
        out.push_back(s);
      }
  return out;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(matmul_tests)

BOOST_AUTO_TEST_CASE(two_dimensional) {
  const Tensor a = Tensor::from_values({1, 2, 3, 4, 5, 6}, {2, 3}),
               b = Tensor::from_values({7, 8, 9, 10, 11, 12}, {3, 2});
  expect_equal(matmul(a, b), {58, 64, 139, 154});
}

BOOST_AUTO_TEST_CASE(transposed_views_give_the_same_product) {
  Generator g(1);
  const Tensor a = Tensor::normal({5, 4}, 0, 1, DType::Float64, &g),
               b = Tensor::normal({4, 3}, 0, 1, DType::Float64, &g);
  const std::vector<double> expected = matmul(a, b).to_vector();
  const Tensor at = a.t().contiguous().t(), bt = b.t().contiguous().t();  // same values, column-major strides
  expect_close(matmul(at, b), expected, 1e-12);
  expect_close(matmul(a, bt), expected, 1e-12);
  expect_close(matmul(at, bt), expected, 1e-12);
  // A column slice: rows are strided, not contiguous; falls back to a copy.
  const Tensor wide = Tensor::normal({5, 8}, 0, 1, DType::Float64, &g);
  expect_close(matmul(wide.slice(1, 0, 8, 2), b), matmul(wide.slice(1, 0, 8, 2).contiguous(), b).to_vector(),
               1e-12);
}

BOOST_AUTO_TEST_CASE(batched_and_broadcast_batches) {
  Generator g(2);
  const Tensor a = Tensor::normal({3, 2, 4}, 0, 1, DType::Float64, &g),
               b = Tensor::normal({3, 4, 5}, 0, 1, DType::Float64, &g);
  expect_close(matmul(a, b), naive_matmul(a, b), 1e-12);
  // [2,1,2,4] @ [3,4,5] -> [2,3,2,5]
  const Tensor a4 = Tensor::normal({2, 1, 2, 4}, 0, 1, DType::Float64, &g);
  const Tensor out = matmul(a4, b);
  BOOST_TEST(out.shape() == (Shape{2, 3, 2, 5}));
  const Tensor expected_a = a4.expand({2, 3, 2, 4}).reshape({6, 2, 4});
  const Tensor expected_b = b.expand({2, 3, 4, 5}).reshape({6, 4, 5});
  expect_close(out, naive_matmul(expected_a, expected_b), 1e-12);
  // batched @ 2-D (a Linear layer's case)
  const Tensor w = Tensor::normal({4, 5}, 0, 1, DType::Float64, &g);
  expect_close(matmul(a, w), naive_matmul(a, w.expand({3, 4, 5})), 1e-12);
  // batched with a transposed last pair (attention's Q·Kᵀ)
  const Tensor k = Tensor::normal({3, 6, 4}, 0, 1, DType::Float64, &g);
  expect_close(matmul(a, k.transpose(1, 2)), naive_matmul(a, k.transpose(1, 2).contiguous()), 1e-12);
}

// Large products are split between threads by minigrad (tensor/matmul.cpp): into bands of C's rows, of
// its columns, or of the sum over k. Each path, with transposed operands, padded leading dimensions and
// beta != 0, against the textbook sum; 3 threads give uneven pieces and two partial sums over k.
BOOST_AUTO_TEST_CASE(products_split_between_threads_equal_the_textbook_sum) {
  struct Case {
    const char* path;
    int64_t m, n, k;
  };
  // "k, rows in parallel": on 3 threads, C (128 × 256) takes its two partial sums on two threads.
  const Case cases[] = {{"rows", 1000, 40, 30},
                        {"columns", 20, 1100, 50},
                        {"k", 30, 20, 2000},
                        {"k, rows in parallel", 128, 256, 1024}};
  const int before = num_threads();
  Generator g(9);
  for (const int threads : {2, 3}) {
    set_num_threads(threads);
    for (const Case& c : cases) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          // As stored: A is (m, k), or (k, m) when transposed; B is (k, n) or (n, k); rows padded by 3.
          const int64_t a_rows = ta ? c.k : c.m, a_cols = ta ? c.m : c.k;
          const int64_t b_rows = tb ? c.n : c.k, b_cols = tb ? c.k : c.n;
          const int64_t lda = a_cols + 3, ldb = b_cols + 3, ldc = c.n + 3;
          const std::vector<double> a = Tensor::normal({a_rows, lda}, 0, 1, DType::Float64, &g).to_vector();
          const std::vector<double> b = Tensor::normal({b_rows, ldb}, 0, 1, DType::Float64, &g).to_vector();
          std::vector<double> out = Tensor::normal({c.m, ldc}, 0, 1, DType::Float64, &g).to_vector();
          const std::vector<double> before_product = out;
          gemm(ta, tb, c.m, c.n, c.k, 0.5, a.data(), lda, b.data(), ldb, 2.0, out.data(), ldc);
          double worst = 0;
          for (int64_t i = 0; i < c.m; ++i) {
            for (int64_t j = 0; j < c.n; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < c.k; ++p)
                sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
              const double expected = 0.5 * sum + 2.0 * before_product[i * ldc + j];
              worst = std::max(worst, std::abs(out[i * ldc + j] - expected));
            }
            for (int64_t j = c.n; j < ldc; ++j)
              BOOST_REQUIRE(out[i * ldc + j] == before_product[i * ldc + j]);
          }
          BOOST_TEST(worst < 1e-10, c.path << " ta=" << ta << " tb=" << tb << " threads=" << threads
                                           << ": worst error " << worst);
        }
      }
    }
  }
  set_num_threads(before);
}

BOOST_AUTO_TEST_CASE(float32_and_empty_inner_dimension) {
  const Tensor a = Tensor::ones({2, 3}), b = Tensor::ones({3, 4});
  expect_equal(matmul(a, b), std::vector<double>(8, 3));
  expect_equal(matmul(Tensor::ones({2, 0}), Tensor::ones({0, 3})), std::vector<double>(6, 0));
}

BOOST_AUTO_TEST_CASE(errors) {
  expect_error<ShapeError>(
      [] {
        matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5}));
      },
      "matmul: shapes [2,3] and [4,5] are not aligned (3 != 4)");
  expect_error<ShapeError>(
      [] {
        matmul(Tensor::zeros({3}), Tensor::zeros({3, 5}));
      },
      "matmul: expects operands of rank 2 or more, got shapes [3] and [3,5]");
  expect_error<ShapeError>(
      [] {
        matmul(Tensor::zeros({2, 2, 3}), Tensor::zeros({3, 3, 5}));
      },
      "matmul: shapes [2] and [3] cannot be broadcast together (2 vs 3 at dim -1)");
  expect_error<DTypeError>(
      [] {
        matmul(Tensor::zeros({2, 3}), Tensor::zeros({3, 5}, DType::Float64));
      },
      "matmul: expected two float32 or two float64 tensors, got float32 and float64; convert with "
      ".to(DType::Float32)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(linear_op)

BOOST_AUTO_TEST_CASE(linear_is_matmul_plus_bias_and_leaves_the_bias_alone) {
  Generator g(6);
  const Tensor w = Tensor::normal({5, 3}, 0, 1, DType::Float64, &g);
  const Tensor b = Tensor::normal({5}, 0, 1, DType::Float64, &g);
  const std::vector<double> bias_before = b.to_vector();
  // One row (where the bias broadcast to the output is itself "contiguous"), a batch, and 3-D input.
  for (const Shape& shape : {Shape{1, 3}, Shape{4, 3}, Shape{2, 7, 3}, Shape{3}}) {
    const Tensor x = Tensor::normal(shape, 0, 1, DType::Float64, &g);
    const Tensor expected = add(matmul(x.rank() == 1 ? x.unsqueeze(0) : x, w.t()), b);
    const Tensor actual = linear(x, w, b);
    BOOST_TEST(max(abs(sub(actual.reshape(expected.shape()), expected))).item() < 1e-12, shape.str());
    BOOST_TEST(b.to_vector() == bias_before, shape.str());  // the product was not added into the bias
  }
  expect_error<ShapeError>(
      [&] {
        linear(Tensor::ones({2, 4}, DType::Float64), w, b);
      },
      "linear: expects x (..., in), weight (out, in) and bias (out), got [2,4], [5,3] and [5]");
}

BOOST_AUTO_TEST_CASE(linear_of_no_features_is_the_bias_in_every_row) {
  // As F.linear: x (2, 3, 0) and weight (4, 0) give (2, 3, 4), each row the bias; no rows give none.
  const Tensor b = Tensor::from_values({1, 2, 3, 4}, {4}, DType::Float64);
  const Tensor y = linear(Tensor::zeros({2, 3, 0}, DType::Float64), Tensor::zeros({4, 0}, DType::Float64), b);
  BOOST_TEST(equal(y, b.expand({2, 3, 4})));
  BOOST_TEST(linear(Tensor::zeros({0, 5}), Tensor::zeros({4, 5}), Tensor::zeros({4})).shape() ==
             (Shape{0, 4}));
  // and no output features: (3, 5) -> (3, 0)
  BOOST_TEST(linear(Tensor::ones({3, 5}), Tensor::zeros({0, 5}), Tensor::zeros({0})).shape() ==
             (Shape{3, 0}));
}

BOOST_AUTO_TEST_SUITE_END()
