#include "minigrad/tensor/data.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace minigrad {

Tensor randperm(int64_t n, Generator* generator) {
  if (n < 0) throw ValueError("randperm", "n must be non-negative, got " + std::to_string(n));
  Generator& gen = generator != nullptr ? *generator : default_generator();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Fisher-Yates from the back: position i - 1 takes a uniform pick among positions 0..i-1, not yet fixed.
  // (Shuffling a vector v in place with the same draws gives v[order[0]], v[order[1]], ...)
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[gen.next_below(i)]);
  return Tensor::from_vector(order, {n});
}

std::vector<Tensor> index_batches(int64_t n, const BatchOptions& options) {
  if (n < 0) throw ValueError("index_batches", "n must be non-negative, got " + std::to_string(n));
  if (options.batch_size <= 0) {
    throw ValueError("index_batches",
                     "batch_size must be positive, got " + std::to_string(options.batch_size));
  }
  const Tensor order = options.shuffle ? randperm(n, options.generator) : Tensor::arange(n, DType::Int64);
  std::vector<Tensor> batches;
  for (int64_t start = 0; start < n; start += options.batch_size) {
    const int64_t end = std::min(n, start + options.batch_size);
    if (end - start < options.batch_size && options.drop_last) break;
    batches.push_back(order.slice(0, start, end).contiguous());
  }
  return batches;
}

PaddedSequences pad_sequences(const std::vector<std::vector<int64_t>>& sequences, const PadOptions& options) {
  const int64_t max_len = options.max_len;
  if (max_len < 0) throw ValueError("pad_sequences", "max_len must be 0 (no limit) or positive");
  if (options.multiple_of < 1) {
    throw ValueError("pad_sequences",
                     "multiple_of must be 1 or more, got " + std::to_string(options.multiple_of));
  }
  const int64_t batch = static_cast<int64_t>(sequences.size());
  int64_t longest = 0;
  std::vector<int64_t> lens;
  for (const auto& s : sequences) {
    const int64_t len = max_len > 0 ? std::min<int64_t>(max_len, static_cast<int64_t>(s.size()))
                                    : static_cast<int64_t>(s.size());
    lens.push_back(len);
    longest = std::max(longest, len);
  }
  longest = (longest + options.multiple_of - 1) / options.multiple_of * options.multiple_of;
  if (max_len > 0) longest = std::min(longest, max_len);
  std::vector<int64_t> tokens(static_cast<size_t>(batch * longest), options.padding);
  for (int64_t b = 0; b < batch; ++b) {
    std::copy_n(sequences[static_cast<size_t>(b)].begin(), lens[static_cast<size_t>(b)],
                tokens.begin() + b * longest);
  }
  return {Tensor::from_vector(tokens, {batch, longest}), Tensor::from_vector(lens, {batch})};
}

}  // namespace minigrad
