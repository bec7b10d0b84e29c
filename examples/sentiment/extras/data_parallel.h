// Training on several processes (distributed/): how a batch is cut between the ranks so that each part
// costs about the same.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/config.h"
#include "minigrad/minigrad.h"

namespace sentiment {

// The multiply-adds of the encoder's matrix products, forward, for one review of a batch whose longest
// review has `longest` tokens, so that it is padded to T = padded_length(longest, config.max_len): per
// layer and token, the attention projections and the feed-forward network (4d² + 2d·FFN) and attention's
// scores and weighted sums (2d·T). The backward pass costs about twice that, in the same proportions, so
// it also weighs whole steps against each other.
int64_t review_cost(const Config& config, int64_t longest);

// Cuts a batch of reviews lengths[i] tokens long into `world` contiguous shares [cuts[r], cuts[r + 1])
// so that the costliest share costs as little as possible. Every review in a share is padded to the
// share's longest, so a share costs its size × review_cost(its longest review's length), which must be
// positive and grow with the length. Equal halves of a batch sorted by length can differ by a whole
// padding step of 16 tokens; then the rank with the longer reviews should take fewer of them. Every
// share holds a review if there are enough of them.
std::vector<int64_t> balanced_cuts(std::span<const int64_t> lengths, int world,
                                   const std::function<int64_t(int64_t longest)>& review_cost);

// Rank `rank`'s part of a training batch of `world` ranks: contiguous parts, which pad least (reviews
// dealt to the ranks in turn made every rank pad to the batch's longest: README), cut by balanced_cuts so
// that they cost the ranks about the same: the rank with the batch's longest reviews takes fewer.
std::vector<size_t> balanced_part(const std::vector<size_t>& batch, const std::vector<Example>& examples,
                                  const Config& config, int rank, int world);

}  // namespace sentiment
