// Training on several ranks: how a batch is cut between them.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "examples/sentiment/extras/data_parallel.h"
#include "examples/sentiment/ranks.h"

#include "test_helpers.h"

using namespace minigrad;
using namespace sentiment;
namespace {

// The cost of a share [begin, end) of a batch: its size × the cost of a review padded to its longest.
int64_t share_cost(const std::vector<int64_t>& lengths, int64_t begin, int64_t end,
                   const std::function<int64_t(int64_t)>& cost) {
  if (begin == end) return 0;
  return (end - begin) * cost(*std::max_element(lengths.begin() + begin, lengths.begin() + end));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sentiment_example)

BOOST_AUTO_TEST_CASE(balanced_cuts_leave_the_costliest_share_as_cheap_as_any_cutting_can) {
  const Config config;
  const auto cost = [&](int64_t longest) { return review_cost(config, longest); };
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 2 + static_cast<int64_t>(random() % 14);
    std::vector<int64_t> lengths(static_cast<size_t>(n));
    for (int64_t& length : lengths) length = 1 + static_cast<int64_t>(random() % 80);
    if (trial % 2 == 0) std::sort(lengths.begin(), lengths.end());  // as training batches come
    // Two and three shares, against every way of cutting into non-empty contiguous shares.
    int64_t best2 = INT64_MAX, best3 = INT64_MAX;
    for (int64_t a = 1; a < n; ++a) {
      best2 = std::min(best2, std::max(share_cost(lengths, 0, a, cost), share_cost(lengths, a, n, cost)));
      for (int64_t b = a + 1; b < n; ++b) {
        best3 = std::min(best3, std::max({share_cost(lengths, 0, a, cost), share_cost(lengths, a, b, cost),
                                          share_cost(lengths, b, n, cost)}));
      }
    }
    for (int world : {2, 3}) {
      if (world > n) continue;
      const std::vector<int64_t> cuts = balanced_cuts(lengths, world, cost);
      BOOST_TEST_REQUIRE(cuts.size() == static_cast<size_t>(world) + 1);
      BOOST_TEST(cuts.front() == 0);
      BOOST_TEST(cuts.back() == n);
      int64_t costliest = 0;
      for (int r = 0; r < world; ++r) {
        BOOST_TEST(cuts[static_cast<size_t>(r)] < cuts[static_cast<size_t>(r) + 1],
                   "share " << r << " is empty");
        costliest = std::max(costliest, share_cost(lengths, cuts[static_cast<size_t>(r)],
                                                   cuts[static_cast<size_t>(r) + 1], cost));
      }
      BOOST_TEST(costliest == (world == 2 ? best2 : best3), "trial " << trial << ", " << world << " shares");
    }
  }
  // Fewer reviews than ranks: one each, then empty shares.
  BOOST_TEST((balanced_cuts(std::vector<int64_t>{5, 9}, 3, cost) == std::vector<int64_t>{0, 1, 2, 2}));
  BOOST_CHECK_THROW(balanced_cuts(std::vector<int64_t>{5}, 0, cost), ValueError);
}

BOOST_AUTO_TEST_CASE(a_rank_with_longer_reviews_takes_fewer_of_them) {
  // 40 reviews padded to 112 tokens and 24 to 128: in halves of 32, the second rank pads 8 short reviews
  // to 128 along with the long ones, while the first could take some of them for less.
  const Config config;
  std::vector<int64_t> lengths(40, 100);
  lengths.resize(64, 120);
  const auto cost = [&](int64_t longest) { return review_cost(config, longest); };
  const std::vector<int64_t> cuts = balanced_cuts(lengths, 2, cost);
  BOOST_TEST(cuts[1] > 32);  // the first rank takes more of the short reviews
  const int64_t even = std::max(share_cost(lengths, 0, 32, cost), share_cost(lengths, 32, 64, cost));
  const int64_t balanced =
      std::max(share_cost(lengths, 0, cuts[1], cost), share_cost(lengths, cuts[1], 64, cost));
  BOOST_TEST(balanced < even);
  // The ranks take their parts of a batch (indices into the examples) from the same cuts.
  std::vector<Example> examples;  // stored in the reverse order: batch[i] is the review lengths[i] long
  for (auto n = lengths.rbegin(); n != lengths.rend(); ++n)
    examples.push_back({std::vector<int64_t>(static_cast<size_t>(*n), 2), 0});
  std::vector<size_t> batch(64);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = 63 - i;
  const std::vector<size_t> part0 = balanced_part(batch, examples, config, 0, 2),
                            part1 = balanced_part(batch, examples, config, 1, 2);
  BOOST_TEST(part0 == std::vector<size_t>(batch.begin(), batch.begin() + cuts[1]));
  BOOST_TEST(part1 == std::vector<size_t>(batch.begin() + cuts[1], batch.end()));
}

BOOST_AUTO_TEST_CASE(ranks_take_contiguous_equal_shares_of_the_examples) {
  for (int world = 1; world <= 3; ++world) {
    for (int64_t size = 0; size <= 7; ++size) {
      int64_t next = 0;  // where the next rank's share must begin
      for (int rank = 0; rank < world; ++rank) {
        const auto [begin, end] = Ranks{.rank = rank, .world = world}.share(size);
        BOOST_TEST(begin == next, "rank " << rank << " of " << world << ", batch of " << size);
        // As equal as possible: the first size % world ranks take one more.
        BOOST_TEST(end - begin == size / world + (rank < size % world ? 1 : 0));
        next = end;
      }
      BOOST_TEST(next == size, "world " << world << ", batch of " << size);  // the whole batch
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
