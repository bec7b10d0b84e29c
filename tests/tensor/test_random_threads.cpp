#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(random_and_threads)

BOOST_AUTO_TEST_CASE(same_seed_same_numbers) {
  Generator a(42), b(42), c(43);
  const Tensor x = Tensor::normal({100}, 0, 1, DType::Float32, &a);
  const Tensor y = Tensor::normal({100}, 0, 1, DType::Float32, &b);
  const Tensor z = Tensor::normal({100}, 0, 1, DType::Float32, &c);
  BOOST_TEST(x.to_vector() == y.to_vector());
  BOOST_TEST(x.to_vector() != z.to_vector());
  manual_seed(5);
  const Tensor u1 = Tensor::uniform({10});
  manual_seed(5);
  BOOST_TEST(Tensor::uniform({10}).to_vector() == u1.to_vector());
}

BOOST_AUTO_TEST_CASE(saving_the_state_replays_the_sequence) {
  Generator g(9);
  g.next_u64();
  const Generator::State saved = g.state();
  const uint64_t first = g.next_u64(), second = g.next_u64();
  g.set_state(saved);
  BOOST_TEST(g.next_u64() == first);
  BOOST_TEST(g.next_u64() == second);
}

BOOST_AUTO_TEST_CASE(distributions_have_the_right_moments) {
  Generator g(3);
  const Tensor n = Tensor::normal({200000}, 2.0, 3.0, DType::Float64, &g);
  const double m = mean(n).item();
  const double var = mean(pow(n - m, 2)).item();
  BOOST_TEST(std::abs(m - 2.0) < 0.03);
  BOOST_TEST(std::abs(std::sqrt(var) - 3.0) < 0.03);
  const Tensor u = Tensor::uniform({200000}, -1, 3, DType::Float64, &g);
  BOOST_TEST(max(u).item() < 3);
  BOOST_TEST(-max(-u).item() >= -1);
  BOOST_TEST(std::abs(mean(u).item() - 1.0) < 0.02);
  const Tensor keep = Tensor::bernoulli({200000}, 0.3, &g);
  BOOST_TEST(std::abs(mean(keep.to(DType::Float64)).item() - 0.3) < 0.005);
  for (int i = 0; i < 1000; ++i) BOOST_REQUIRE(g.next_below(7) < 7);
  expect_error<ValueError>([&] { Tensor::bernoulli({2}, 1.5, &g); },
                           "bernoulli: p must be in [0, 1], got 1.500000");
}

BOOST_AUTO_TEST_CASE(dropout_masks_depend_on_the_seed_and_index_only) {
  const int before = num_threads();
  const Tensor x = Tensor::ones({1001, 257}, DType::Float32);  // odd sizes: rows start mid-pair
  set_num_threads(1);
  const std::vector<double> one = dropout(x, 0.1, 77).to_vector();
  set_num_threads(2);
  BOOST_TEST(dropout(x, 0.1, 77).to_vector() == one);  // any thread count
  BOOST_TEST(dropout(x, 0.1, 78).to_vector() != one);  // another seed, another mask
  set_num_threads(before);
  // Any blocking: one row applied on its own, from its first index, gives that row of the whole.
  // So does factors, which writes the factors themselves (what apply multiplies by). Both from an odd
  // first index (a half pair first, whole pairs after) and from an even one (a half pair at the end).
  const DropoutMask mask(0.1, 77);
  for (const int64_t first : {3 * 257, 2 * 257}) {
    std::vector<float> factors(257), applied(257, 1.0f);
    mask.factors(factors.data(), first, 257);
    mask.apply(applied.data(), applied.data(), first, 257);
    for (int j = 0; j < 257; ++j) {
      BOOST_REQUIRE(factors[j] == one[first + j]);
      BOOST_REQUIRE(applied[j] == one[first + j]);
    }
  }
  // The kept fraction and the scale, and the exact float64 thresholds p = 0 and p = 1.
  size_t kept = 0;
  for (double v : one) {
    BOOST_REQUIRE((v == 0 || v == static_cast<float>(1 / 0.9)));
    kept += v != 0;
  }
  BOOST_TEST(std::abs(double(kept) / one.size() - 0.9) < 0.005);
  const Tensor y = Tensor::ones({7}, DType::Float64);
  BOOST_TEST(dropout(y, 0.0, 1).to_vector() == y.to_vector());
  BOOST_TEST(dropout(y, 1.0, 1).to_vector() == std::vector<double>(7, 0.0));
  // A NaN stays NaN where it is dropped, as x·0 in PyTorch's dropout.
  BOOST_TEST(std::isnan(dropout(Tensor::full({64}, NAN, DType::Float32), 0.5, 3).to_vector()[0]));
}

BOOST_AUTO_TEST_CASE(the_thread_setting_changes_nothing_but_speed) {
  const int before = num_threads();
  Generator g(4);
  const Tensor x = Tensor::normal({512, 512}, 0, 1, DType::Float64, &g);
  const Tensor w = Tensor::normal({512, 256}, 0, 1, DType::Float64, &g);
  set_num_threads(1);
  BOOST_TEST(num_threads() == 1);
  const std::vector<double> one_exp = exp(x).to_vector(), one_mm = matmul(x, w).to_vector();
  const std::vector<double> one_sm = softmax(x, 1).to_vector();
  set_num_threads(2);
  BOOST_TEST(num_threads() == 2);
  BOOST_TEST(exp(x).to_vector() == one_exp);        // elementwise: bit-identical
  BOOST_TEST(softmax(x, 1).to_vector() == one_sm);  // row-wise: bit-identical
  expect_close(matmul(x, w), one_mm, 1e-9);         // BLAS may sum in another order
  set_num_threads(before);
}

BOOST_AUTO_TEST_CASE(multinomial_draws_in_proportion_to_the_weights) {
  // 30,000 draws from weights [1, 0, 2, 7]: the category 1 of weight 0 never; the others at 0.1, 0.2 and
  // 0.7, within 0.015 (more than 4 standard deviations).
  Generator g(3);
  const Tensor drawn = multinomial(Tensor::from_values({1, 0, 2, 7}, {4}), 30000, /*replacement=*/true, &g);
  BOOST_TEST(drawn.shape() == Shape{30000});
  BOOST_TEST(drawn.dtype() == DType::Int64);
  std::vector<double> share(4, 0.0);
  for (int64_t i : drawn.to_vector<int64_t>()) share[static_cast<size_t>(i)] += 1.0 / 30000;
  BOOST_TEST(share[1] == 0.0);
  BOOST_TEST(std::abs(share[0] - 0.1) < 0.015);
  BOOST_TEST(std::abs(share[2] - 0.2) < 0.015);
  BOOST_TEST(std::abs(share[3] - 0.7) < 0.015);
  // Rows of (N, K) each drawn from their own weights; without replacement, each row's draws are distinct.
  const Tensor rows = multinomial(Tensor::from_values({0, 2, 1, 5, 5, 5}, {2, 3}), 2, false, &g);
  BOOST_TEST(rows.shape() == (Shape{2, 2}));
  const std::vector<int64_t> r = rows.to_vector<int64_t>();
  BOOST_TEST(r[0] + r[1] == 3);  // row 0 has two categories of nonzero weight, 1 and 2: both, in some order
  BOOST_TEST(r[0] != r[1]);
  BOOST_TEST(r[2] != r[3]);
  // The same generator state gives the same draws.
  Generator a(9), b(9);
  BOOST_TEST(multinomial(Tensor::ones({50}), 10, false, &a).to_vector<int64_t>() ==
             multinomial(Tensor::ones({50}), 10, false, &b).to_vector<int64_t>());
}

BOOST_AUTO_TEST_CASE(multinomial_refuses_weights_it_cannot_draw_from) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_error<ValueError>(
      [&] {
        multinomial(Tensor::from_values({1, nan}, {2}), 1);
      },
      "multinomial: the weights must be finite and non-negative, got nan at row 0, category 1");
  expect_error<ValueError>(
      [] {
        multinomial(Tensor::from_values({1, -1}, {2}), 1);
      },
      "multinomial: the weights must be finite and non-negative, got -1.000000 at row 0, "
      "category 1");
  expect_error<ValueError>(
      [] {
        multinomial(Tensor::zeros({2, 3}), 1);
      },
      "multinomial: row 0's weights sum to 0");
  expect_error<ValueError>(
      [] {
        multinomial(Tensor::from_values({0, 0, 1, 5, 5, 5}, {2, 3}), 2);
      },
      "multinomial: cannot draw 2 samples without replacement from 1 categories of nonzero weight (row 0)");
  expect_error<ShapeError>(
      [] {
        multinomial(Tensor::ones({1, 2, 3}), 1);
      },
      "multinomial: expects weights (K) or (N, K), got [1,2,3]");
}

BOOST_AUTO_TEST_SUITE_END()
