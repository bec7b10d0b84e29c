#include "examples/sentiment/batches.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace sentiment {

using namespace minigrad;

std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary, int64_t max_len,
                            const Featurizer& featurizer) {
  if (max_len < 2) throw ValueError("encode", "max_len must be at least 2");
  std::vector<Example> out;
  out.reserve(reviews.size());
  for (const Review& r : reviews) {
    std::vector<int64_t> ids;
    const std::vector<std::string> tokens = tokenize(r.text);
    for (const std::string& token : tokens) ids.push_back(vocabulary.id(token));
    FeatureBag bag;
    if (featurizer) bag = featurizer(tokens);
    if (static_cast<int64_t>(ids.size()) > max_len) {
      const int64_t head = max_len / 2, tail = max_len - head;
      ids.erase(ids.begin() + head, ids.end() - tail);
    }
    if (ids.empty()) ids.push_back(Vocabulary::kUnk);
    out.push_back({std::move(ids), r.label, std::move(bag)});
  }
  return out;
}

void check_tokens(const std::string& op, const Tensor& tokens, const Tensor& lengths) {
  if (tokens.rank() != 2 || tokens.dtype() != DType::Int64 || lengths.dtype() != DType::Int64 ||
      lengths.shape() != Shape{tokens.shape()[0]}) {
    throw ShapeError(op, "expects int64 tokens (B, T) and lengths (B), got tokens " + tokens.shape().str() +
                             " and lengths " + lengths.shape().str());
  }
}

namespace {
// Batches are padded to a multiple of 16 tokens: they then come in a few shapes, whose buffers the
// allocator recycles, instead of a new shape (and fresh memory from the kernel) at almost every step.
// Never past max_len, the length of the positional-encoding table.
constexpr int64_t kPadMultiple = 16;
}  // namespace

int64_t padded_length(int64_t longest, int64_t max_len) {
  return std::min((longest + kPadMultiple - 1) / kPadMultiple * kPadMultiple, max_len);
}

Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices, int64_t max_len) {
  const int64_t b = static_cast<int64_t>(indices.size());
  std::vector<std::vector<int64_t>> ids;
  ids.reserve(indices.size());
  for (size_t i : indices) {
    const int64_t t = static_cast<int64_t>(examples[i].ids.size());  // encode() made it 1 or more
    if (t > max_len) {
      throw ValueError("make_batch", "an example has " + std::to_string(t) + " tokens, more than max_len " +
                                         std::to_string(max_len));
    }
    ids.push_back(examples[i].ids);
  }
  // (B, T), T = padded_length(longest, max_len); and (B)
  auto [tokens, lengths] =
      pad_sequences(ids, {.padding = Vocabulary::kPad, .max_len = max_len, .multiple_of = kPadMultiple});
  Batch batch{tokens, lengths, Tensor::empty({b}, DType::Int64)};
  for (int64_t row = 0; row < b; ++row) {
    const Example& e = examples[indices[static_cast<size_t>(row)]];
    batch.labels.data_ptr<int64_t>()[row] = e.label;
    batch.token_count += static_cast<int64_t>(e.ids.size());
  }
  size_t k = 1;
  for (size_t i : indices) k = std::max(k, examples[i].bag.rows.size());
  batch.bag_rows = Tensor::zeros({b, static_cast<int64_t>(k)}, DType::Int64);
  batch.bag_weights = Tensor::zeros({b, static_cast<int64_t>(k)}, DType::Float32);
  for (int64_t row = 0; row < b; ++row) {
    const FeatureBag& bag = examples[indices[static_cast<size_t>(row)]].bag;
    std::copy(bag.rows.begin(), bag.rows.end(),
              batch.bag_rows.data_ptr<int64_t>() + row * static_cast<int64_t>(k));
    std::copy(bag.weights.begin(), bag.weights.end(),
              batch.bag_weights.data_ptr<float>() + row * static_cast<int64_t>(k));
  }
  return batch;
}

namespace {

// v in a random order: the same seed, the same order.
template <typename T>
void shuffle(std::vector<T>& v, Generator& g) {
  const std::vector<int64_t> order = randperm(static_cast<int64_t>(v.size()), &g).to_vector<int64_t>();
  std::vector<T> shuffled;
  shuffled.reserve(v.size());
  for (int64_t i : order) shuffled.push_back(std::move(v[static_cast<size_t>(i)]));
  v = std::move(shuffled);
}

std::vector<std::vector<size_t>> chunk(const std::vector<size_t>& order, int64_t batch_size) {
  std::vector<std::vector<size_t>> batches;
  for (size_t at = 0; at < order.size(); at += static_cast<size_t>(batch_size)) {
    batches.emplace_back(
        order.begin() + static_cast<std::ptrdiff_t>(at),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), at + batch_size)));
  }
  return batches;
}

}  // namespace

Split hold_out(const std::vector<Review>& reviews, int64_t count, uint64_t seed, int64_t block) {
  if (count < 0) throw ValueError("hold_out", "a validation count must not be negative");
  if (block < 1) throw ValueError("hold_out", "a block must hold at least one review");
  // Each label's reviews by file number, cut into blocks; whole blocks, shuffled, are held out until
  // count/2 negatives and count - count/2 positives are (the last block taken may be cut short).
  std::array<std::vector<size_t>, 2> by_label;
  for (size_t i = 0; i < reviews.size(); ++i) by_label[reviews[i].label == 1 ? 1 : 0].push_back(i);
  std::vector<bool> held(reviews.size(), false);
  Generator generator(seed);
  for (int label = 0; label < 2; ++label) {
    std::vector<size_t>& indices = by_label[static_cast<size_t>(label)];
    const int64_t want = label == 0 ? count / 2 : count - count / 2;
    // At least one review of the label must stay for training.
    if (want > 0 && want >= static_cast<int64_t>(indices.size())) {
      throw ValueError("hold_out", "cannot hold " + std::to_string(count) + " reviews out for validation: " +
                                       std::to_string(indices.size()) + " are " +
                                       (label ? "positive" : "negative") + " (use a smaller --validation)");
    }
    std::stable_sort(indices.begin(), indices.end(),
                     [&](size_t a, size_t b) { return reviews[a].number < reviews[b].number; });
    std::vector<std::vector<size_t>> blocks = chunk(indices, block);
    shuffle(blocks, generator);
    int64_t taken = 0;
    for (const std::vector<size_t>& b : blocks) {
      for (size_t i : b) {
        if (taken == want) break;
        held[i] = true;
        ++taken;
      }
    }
  }
  Split split;
  std::unordered_set<std::string_view> held_texts;
  for (size_t i = 0; i < reviews.size(); ++i) {
    if (held[i]) {
      split.validation.push_back(reviews[i]);
      held_texts.insert(reviews[i].text);
    }
  }
  for (size_t i = 0; i < reviews.size(); ++i) {
    if (held[i]) continue;
    if (held_texts.contains(reviews[i].text))
      ++split.duplicates_removed;  // a copy of a held-out review: validation must not test what trained
    else
      split.training.push_back(reviews[i]);
  }
  return split;
}

std::vector<std::vector<size_t>> training_batches(const std::vector<Example>& examples, int64_t batch_size,
                                                  Generator& generator) {
  if (batch_size < 1) throw ValueError("training_batches", "batch_size must be positive");
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, generator);
  const size_t window = static_cast<size_t>(batch_size) * 50;
  for (size_t at = 0; at < order.size(); at += window) {
    auto first = order.begin() + static_cast<std::ptrdiff_t>(at);
    auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), at + window));
    std::stable_sort(first, last,
                     [&](size_t a, size_t b) { return examples[a].ids.size() < examples[b].ids.size(); });
  }
  std::vector<std::vector<size_t>> batches = chunk(order, batch_size);
  shuffle(batches, generator);
  return batches;
}

std::vector<std::vector<size_t>> evaluation_batches(const std::vector<Example>& examples,
                                                    int64_t batch_size) {
  // Longest first: every later batch fits in the buffers the first one freed, so the allocator recycles
  // them instead of asking the kernel for fresh pages at each new, longer batch. The token budget keeps
  // those buffers small: attention's scores and weights are (B, heads, T, T), 4 GB for 256 reviews of
  // 1,024 tokens, past the storage cache's 2 GiB, so each batch's were faulted in afresh. 8,192 tokens
  // was as fast as any budget tried, with the same accuracy and loss (docs/history/sentiment.md, "Reviews
  // of 1,024 tokens").
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return examples[a].ids.size() > examples[b].ids.size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t first = 0; first < order.size();) {
    const auto longest = std::max<int64_t>(1, static_cast<int64_t>(examples[order[first]].ids.size()));
    const auto size = static_cast<size_t>(std::clamp<int64_t>(kEvaluationTokens / longest, 1, batch_size));
    const size_t last = std::min(order.size(), first + size);
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(first),
                         order.begin() + static_cast<std::ptrdiff_t>(last));
    first = last;
  }
  return batches;
}

}  // namespace sentiment
