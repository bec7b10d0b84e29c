// The other processes of a data-parallel run, as training and evaluation see them. The default is a
// world of one, and then none of the functions is called; extras/parallel.h fills them in over MPI.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "examples/sentiment/batches.h"
#include "minigrad/minigrad.h"

namespace sentiment {

struct Ranks {
  int rank = 0;
  int world = 1;
  // Replaces each parameter's gradient by its mean over the ranks.
  std::function<void(const std::vector<minigrad::Variable>&)> average_gradients{};
  // Sums the values over the ranks, in place.
  std::function<void(std::span<double>)> sum{};
  // Every rank's `state`, in rank order, on every rank.
  std::function<std::vector<minigrad::Generator::State>(const minigrad::Generator::State&)> gather{};
  // This rank's part of a training batch (indices into `examples`), in a world of several.
  std::function<std::vector<size_t>(const std::vector<size_t>& batch, const std::vector<Example>& examples)>
      part_of_batch{};

  // This rank's part of a training batch: all of it in a world of one.
  std::vector<size_t> share_of_batch(const std::vector<size_t>& batch,
                                     const std::vector<Example>& examples) const {
    return world == 1 ? batch : part_of_batch(batch, examples);
  }
  // This rank's contiguous share [begin, end) of `count` items, as equal as can be (distributed::shard's
  // split: the first count % world ranks take one more).
  std::pair<int64_t, int64_t> share(int64_t count) const {
    const int64_t base = count / world, extra = count % world;
    const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
    return {begin, begin + base + (rank < extra ? 1 : 0)};
  }
};

}  // namespace sentiment
