#include "examples/sentiment/extras/data_parallel.h"

#include <algorithm>

namespace sentiment {

using namespace minigrad;

int64_t review_cost(const Config& config, int64_t longest) {
  const int64_t d = config.num_hiddens, t = padded_length(longest, config.max_len);
  return config.num_layers * t * (4 * d * d + 2 * d * config.ffn_num_hiddens + 2 * d * t);
}

std::vector<int64_t> balanced_cuts(std::span<const int64_t> lengths, int world,
                                   const std::function<int64_t(int64_t longest)>& review_cost) {
  if (world < 1) throw ValueError("balanced_cuts", "world must be positive, got " + std::to_string(world));
  const auto n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> cuts(static_cast<size_t>(world) + 1);
  if (n <= world) {  // a review each while they last
    for (size_t r = 0; r < cuts.size(); ++r) cuts[r] = std::min(static_cast<int64_t>(r), n);
    return cuts;
  }
  // Cuts greedily within a budget: each share but the last takes reviews while it costs no more than the
  // budget and leaves one for each share after it; the last takes the rest. Returns the costliest share's
  // cost. If any cutting keeps every share within the budget, this one does: by induction, none of its
  // cuts falls before that cutting's, so its last share is part of that cutting's last.
  auto cut_within = [&](int64_t budget) {
    int64_t costliest = 0;
    for (int r = 0; r < world; ++r) {
      const bool last = r + 1 == world;
      const int64_t begin = cuts[static_cast<size_t>(r)], limit = last ? n : n - (world - 1 - r);
      int64_t end = begin + 1, longest = lengths[static_cast<size_t>(begin)];
      for (; end < limit; ++end) {
        const int64_t longer = std::max(longest, lengths[static_cast<size_t>(end)]);
        if (!last && (end + 1 - begin) * review_cost(longer) > budget) break;
        longest = longer;
      }
      cuts[static_cast<size_t>(r) + 1] = end;
      costliest = std::max(costliest, (end - begin) * review_cost(longest));
    }
    return costliest;
  };
  // The least budget that greedy cutting keeps to, by bisection: `low` is too little, `high` enough (the
  // whole batch as one share costs more than any share of it).
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  int64_t low = 0, high = n * review_cost(longest);
  while (high - low > 1) {
    const int64_t budget = low + (high - low) / 2;
    (cut_within(budget) <= budget ? high : low) = budget;
  }
  cut_within(high);
  return cuts;
}

std::vector<size_t> balanced_part(const std::vector<size_t>& batch, const std::vector<Example>& examples,
                                  const Config& config, int rank, int world) {
  std::vector<int64_t> lengths;
  for (size_t i : batch) lengths.push_back(static_cast<int64_t>(examples[i].ids.size()));
  const std::vector<int64_t> cuts =
      balanced_cuts(lengths, world, [&](int64_t longest) { return review_cost(config, longest); });
  return {batch.begin() + cuts[static_cast<size_t>(rank)],
          batch.begin() + cuts[static_cast<size_t>(rank) + 1]};
}

}  // namespace sentiment
