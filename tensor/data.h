// Helpers for feeding a model: shuffled mini-batches of indices, and token sequences padded into a
// batch. What PyTorch's randperm, DataLoader(shuffle, drop_last) and pad_sequence do.
//
//   for (const Tensor& batch : index_batches(n, {.batch_size = 32, .generator = &gen})) {
//     Variable x(index_select(inputs, 0, batch));  // the rows of this batch
//     ...
//   }
#pragma once

#include <cstdint>
#include <vector>

#include "minigrad/tensor/random.h"
#include "minigrad/tensor/tensor.h"

namespace minigrad {

// 0, 1, ..., n-1 in a random order (int64, shape [n]), drawn from `generator` (default: this thread's).
Tensor randperm(int64_t n, Generator* generator = nullptr);

struct BatchOptions {
  int64_t batch_size = 1;
  bool shuffle = true;             // a new random order on every call
  bool drop_last = false;          // leave out a last batch smaller than batch_size
  Generator* generator = nullptr;  // for the order; nullptr: this thread's default. Not owned.
};

// The indices 0..n-1, in random order if options.shuffle, cut into batches of options.batch_size (int64
// tensors of shape [batch_size]; the last one smaller unless options.drop_last leaves it out).
std::vector<Tensor> index_batches(int64_t n, const BatchOptions& options);

struct PaddedSequences {
  Tensor tokens;      // (B, T) int64, T the longest length (at most max_len); padding after each sequence
  Tensor valid_lens;  // (B) int64: each sequence's length in tokens (after cutting to max_len)
};

struct PadOptions {
  int64_t padding = 0;      // the id written after each sequence
  int64_t max_len = 0;      // > 0: sequences are cut to this many tokens, and T is at most this
  int64_t multiple_of = 1;  // T rounded up to a multiple of this (then capped at max_len): batches
                            // come in a few shapes, whose buffers an allocator can reuse
};

// Token sequences of different lengths as one batch: each sequence cut to max_len (if max_len > 0) and
// padded to the longest (rounded up to multiple_of), with the lengths a model's mask needs.
//   auto [tokens, valid_lens] = pad_sequences({{5, 3, 8}, {7}});  // [[5, 3, 8], [7, 0, 0]], [3, 1]
//   pad_sequences(ids, {.padding = 0, .max_len = 512, .multiple_of = 16});  // T: 16, 32, ... or 512
PaddedSequences pad_sequences(const std::vector<std::vector<int64_t>>& sequences,
                              const PadOptions& options = {});

}  // namespace minigrad
