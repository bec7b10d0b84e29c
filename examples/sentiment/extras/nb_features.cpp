#include "examples/sentiment/extras/nb_features.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sentiment {

using namespace minigrad;

uint64_t NbFeatures::key(const std::vector<std::string>& tokens, size_t begin, size_t n) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a over the words, each followed by a 0x1f separator
  for (size_t i = begin; i < begin + n; ++i) {
    for (unsigned char c : tokens[i]) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0x1fu) * 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

namespace {

// Every n-gram key of a review (n = 1 .. max_n), each once, sorted.
std::vector<uint64_t> review_keys(const std::vector<std::string>& tokens, int64_t max_n) {
  std::vector<uint64_t> keys;
  for (size_t i = 0; i < tokens.size(); ++i)
    for (size_t n = 1; n <= static_cast<size_t>(max_n) && i + n <= tokens.size(); ++n)
      keys.push_back(NbFeatures::key(tokens, i, n));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace

NbFeatures NbFeatures::build(const std::vector<std::vector<std::string>>& reviews,
                             const std::vector<int64_t>& labels, int64_t max_n, int64_t rows,
                             int64_t min_reviews) {
  if (reviews.size() != labels.size()) throw ValueError("NbFeatures", "needs a label for each review");
  if (max_n < 1 || rows < 2 || min_reviews < 1)
    throw ValueError("NbFeatures", "needs max_n >= 1, rows >= 2 and min_reviews >= 1");
  struct Count {
    int64_t positive = 0, negative = 0;
  };
  std::unordered_map<uint64_t, Count> counts;
  for (size_t i = 0; i < reviews.size(); ++i)
    for (uint64_t k : review_keys(reviews[i], max_n)) ++(labels[i] ? counts[k].positive : counts[k].negative);
  std::vector<std::pair<uint64_t, Count>> kept;
  for (const auto& [k, c] : counts)
    if (c.positive + c.negative >= min_reviews) kept.emplace_back(k, c);
  // The n-grams in the most reviews first; ties by key, so the order does not depend on the hash map's.
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    const int64_t na = a.second.positive + a.second.negative, nb = b.second.positive + b.second.negative;
    return na != nb ? na > nb : a.first < b.first;
  });
  if (static_cast<int64_t>(kept.size()) > rows - 1) kept.resize(static_cast<size_t>(rows - 1));
  // r from the smoothed counts of the kept n-grams (α = 1).
  double p_total = 0, q_total = 0;
  for (const auto& [k, c] : kept) {
    p_total += 1.0 + static_cast<double>(c.positive);
    q_total += 1.0 + static_cast<double>(c.negative);
  }
  std::vector<int64_t> keys(static_cast<size_t>(rows), 0);
  std::vector<float> ratios(static_cast<size_t>(rows), 0.0f);
  for (size_t i = 0; i < kept.size(); ++i) {
    const auto& [k, c] = kept[i];
    keys[i + 1] = std::bit_cast<int64_t>(k);
    ratios[i + 1] = static_cast<float>(std::log(((1.0 + static_cast<double>(c.positive)) / p_total) /
                                                ((1.0 + static_cast<double>(c.negative)) / q_total)));
  }
  return NbFeatures(Tensor::from_vector(keys, {rows}), Tensor::from_vector(ratios, {rows}), max_n);
}

NbFeatures::NbFeatures(Tensor keys, Tensor ratios, int64_t max_n)
    : keys_(std::move(keys)), ratios_(std::move(ratios)), max_n_(max_n) {
  if (keys_.rank() != 1 || keys_.dtype() != DType::Int64 || ratios_.rank() != 1 ||
      ratios_.shape() != keys_.shape()) {
    throw ShapeError("NbFeatures", "expects keys (rows) int64 and ratios (rows), got keys " +
                                       keys_.shape().str() + " and ratios " + ratios_.shape().str());
  }
  if (max_n < 1) throw ValueError("NbFeatures", "max_n must be at least 1");
  ratio_of_row_ = ratios_.to(DType::Float32).to_vector<float>();
  const std::vector<int64_t> k = keys_.to_vector<int64_t>();
  for (size_t row = 1; row < k.size(); ++row) {
    if (k[row] == 0) continue;  // an unused row
    if (!row_of_.emplace(std::bit_cast<uint64_t>(k[row]), static_cast<int64_t>(row)).second)
      throw ValueError("NbFeatures", "the key of row " + std::to_string(row) + " appears twice");
  }
}

FeatureBag NbFeatures::present(const std::vector<std::string>& tokens) const {
  FeatureBag out;
  for (uint64_t k : review_keys(tokens, max_n_)) {
    const auto it = row_of_.find(k);
    if (it != row_of_.end()) out.rows.push_back(it->second);
  }
  std::sort(out.rows.begin(), out.rows.end());
  for (int64_t row : out.rows) out.weights.push_back(ratio_of_row_[static_cast<size_t>(row)]);
  return out;
}

}  // namespace sentiment
