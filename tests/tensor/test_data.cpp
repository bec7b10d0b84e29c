// Data helpers: randperm, shuffled index batches, padded token sequences.
#include <algorithm>
#include <set>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(data)

BOOST_AUTO_TEST_CASE(randperm_is_a_permutation_fixed_by_the_seed) {
  Generator a(7), b(7), c(8);
  const std::vector<int64_t> p = randperm(50, &a).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) BOOST_TEST(sorted[static_cast<size_t>(i)] == i);
  BOOST_TEST(randperm(50, &b).to_vector<int64_t>() == p, boost::test_tools::per_element());
  BOOST_TEST(randperm(50, &c).to_vector<int64_t>() != p);  // another seed, another order
  BOOST_TEST(randperm(50, &a).to_vector<int64_t>() != p);  // the next call, another order
  BOOST_TEST(randperm(0, &a).numel() == 0);
  expect_error<ValueError>([&] { randperm(-1, &a); }, "randperm: n must be non-negative, got -1");
}

BOOST_AUTO_TEST_CASE(index_batches_cover_every_index_once_and_keep_or_drop_the_last) {
  Generator gen(1);
  const std::vector<Tensor> kept = index_batches(10, {.batch_size = 4, .generator = &gen});
  BOOST_TEST(kept.size() == 3u);
  BOOST_TEST(kept[2].numel() == 2);  // the partial last batch
  std::set<int64_t> seen;
  for (const Tensor& batch : kept) {
    BOOST_TEST(batch.dtype() == DType::Int64);
    for (int64_t i : batch.to_vector<int64_t>()) seen.insert(i);
  }
  BOOST_TEST(seen.size() == 10u);
  const std::vector<Tensor> dropped =
      index_batches(10, {.batch_size = 4, .drop_last = true, .generator = &gen});
  BOOST_TEST(dropped.size() == 2u);
  // without shuffling, in order
  const std::vector<Tensor> ordered = index_batches(5, {.batch_size = 2, .shuffle = false});
  expect_equal(ordered[0], {0, 1});
  expect_equal(ordered[2], {4});
  expect_error<ValueError>([] { index_batches(5, {.batch_size = 0}); },
                           "index_batches: batch_size must be positive, got 0");
}

BOOST_AUTO_TEST_CASE(pad_sequences_pads_to_the_longest_and_gives_the_lengths) {
  const PaddedSequences batch = pad_sequences({{5, 3, 8}, {7}, {}});
  BOOST_TEST(batch.tokens.shape() == Shape({3, 3}));
  expect_equal(batch.tokens, {5, 3, 8, 7, 0, 0, 0, 0, 0});
  expect_equal(batch.valid_lens, {3, 1, 0});
  const PaddedSequences cut = pad_sequences({{5, 3, 8, 9}, {7}}, {.padding = -1, .max_len = 2});
  BOOST_TEST(cut.tokens.shape() == Shape({2, 2}));
  expect_equal(cut.tokens, {5, 3, 7, -1});
  expect_equal(cut.valid_lens, {2, 1});
}

BOOST_AUTO_TEST_CASE(pad_sequences_rounds_the_length_up_to_a_multiple_but_never_past_max_len) {
  const PaddedSequences rounded = pad_sequences({{5, 3, 8}, {7}}, {.padding = 9, .multiple_of = 4});
  BOOST_TEST(rounded.tokens.shape() == Shape({2, 4}));
  expect_equal(rounded.tokens, {5, 3, 8, 9, 7, 9, 9, 9});
  expect_equal(rounded.valid_lens, {3, 1});
  // 5 tokens round up to 8, but max_len 6 caps it (and cuts the longest sequence to 6).
  const PaddedSequences capped =
      pad_sequences({{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11, 12}}, {.max_len = 6, .multiple_of = 4});
  BOOST_TEST(capped.tokens.shape() == Shape({2, 6}));
  expect_equal(capped.valid_lens, {5, 6});
  expect_error<ValueError>([] { pad_sequences({{1}}, {.multiple_of = 0}); },
                           "pad_sequences: multiple_of must be 1 or more, got 0");
}

BOOST_AUTO_TEST_SUITE_END()
