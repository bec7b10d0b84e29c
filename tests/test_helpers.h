// Helpers shared by the test files.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::testing {

// Sets the thread count for one scope (a test that must take the parallel path, or must not) and
// restores it on the way out, a failed check's exception included.
struct ThreadCount {
  explicit ThreadCount(int n) : before(num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(before); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
  int before;
};

// Runs f and checks that it throws an E whose message is exactly `message` (or, with `whole = false`,
// contains it).
template <typename E, typename F>
void expect_error(F&& f, const std::string& message, bool whole = true) {
  try {
    f();
    BOOST_ERROR("expected an exception: " << message);
  } catch (const E& e) {
    const std::string what = e.what();
    BOOST_TEST((whole ? what == message : what.find(message) != std::string::npos),
               "message was: " << what << "\nexpected " << (whole ? "" : "it to contain: ") << message);
  } catch (const std::exception& e) {
    BOOST_ERROR("wrong exception type; message: " << e.what() << "; expected: " << message);
  }
}

template <typename E, typename F>
void expect_error_containing(F&& f, const std::string& part) {
  expect_error<E>(std::forward<F>(f), part, /*whole=*/false);
}

// A leaf that requires grad, with the given values.
inline Variable leaf(std::initializer_list<double> values, const Shape& shape, DType dtype = DType::Float64) {
  return Variable(Tensor::from_values(values, shape, dtype), true);
}

// A float64 tensor of N(0, 1) values drawn from a generator seeded with `seed`, as a Variable that does
// or does not require grad.
inline Variable random_normal(const Shape& shape, uint64_t seed, bool requires_grad = false) {
  Generator generator(seed);
  return Variable(Tensor::normal(shape, 0, 1, DType::Float64, &generator), requires_grad);
}

// A 1-D int64 tensor of token or row ids.
inline Tensor ids_of(const std::vector<int64_t>& ids) {
  return Tensor::from_vector(ids, {static_cast<int64_t>(ids.size())});
}

// Elementwise |actual - expected| <= tol, with a message naming the first mismatch. An expected NaN
// asks for a NaN, and an expected infinity for the same infinity.
inline void expect_close(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-6) {
  const std::vector<double> got = actual.to_vector<double>();
  BOOST_REQUIRE_EQUAL(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = std::isnan(expected[i])
                          ? std::isnan(got[i])
                          : got[i] == expected[i] || std::abs(got[i] - expected[i]) <= tol;
    BOOST_TEST(same, "element " << i << ": " << got[i] << " vs " << expected[i]);
  }
}

inline void expect_equal(const Tensor& actual, const std::vector<double>& expected) {
  expect_close(actual, expected, 0);
}

// A Transformer example's Config (dates, lm, sentiment: the same field names) made small enough to train
// in a test: `width` wide, two heads, a feed-forward block twice as wide; batches of batch_size at lr.
template <typename Config>
Config small_transformer(int64_t width, int64_t batch_size, double lr) {
  Config c;
  c.num_hiddens = width;
  c.num_heads = 2;
  c.ffn_num_hiddens = 2 * width;
  c.batch_size = batch_size;
  c.lr = lr;
  return c;
}

}  // namespace minigrad::testing
