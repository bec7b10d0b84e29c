#include "examples/sentiment/extras/ensembles.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "examples/sentiment/extras/extended_model.h"

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

namespace {

// Whether two checkpoints turn text into the same examples: the same vocabulary, length and NB n-grams
// (members of an ensemble trained on the same reviews do).
bool same_encoding(const Checkpoint& a, const Checkpoint& b) {
  if (a.vocabulary.tokens() != b.vocabulary.tokens() || a.config.max_len != b.config.max_len) return false;
  const NbBranch *x = nb_branch(*a.model), *y = nb_branch(*b.model);
  if (!x || !y) return x == y;
  const Tensor kx = x->features().keys().contiguous(), ky = y->features().keys().contiguous();
  return x->features().max_n() == y->features().max_n() && kx.numel() == ky.numel() &&
         std::equal(kx.data_ptr<int64_t>(), kx.data_ptr<int64_t>() + kx.numel(), ky.data_ptr<int64_t>());
}

}  // namespace

std::vector<double> ensemble_log_odds(const std::vector<const Checkpoint*>& members,
                                      const std::vector<Review>& reviews) {
  if (members.empty()) throw ValueError("ensemble", "needs at least one model");
  std::vector<double> mean(reviews.size(), 0.0);
  // Each member reads the text its own way (its vocabulary, its n-grams); members that read it alike
  // share one encoding.
  std::vector<std::pair<const Checkpoint*, std::vector<Example>>> encoded;
  for (const Checkpoint* m : members) {
    auto it = std::find_if(encoded.begin(), encoded.end(),
                           [&](const auto& e) { return same_encoding(*e.first, *m); });
    if (it == encoded.end()) {
      encoded.emplace_back(m, encode(reviews, m->vocabulary, m->config.max_len, m->model->featurizer()));
      it = encoded.end() - 1;
    }
    const std::vector<double> z = positive_log_odds(*m->model, it->second);
    for (size_t i = 0; i < z.size(); ++i) mean[i] += z[i] / static_cast<double>(members.size());
  }
  return mean;
}

Evaluation evaluate_ensemble(const std::vector<const Checkpoint*>& members,
                             const std::vector<Review>& reviews) {
  const auto start = Clock::now();
  const std::vector<double> z = ensemble_log_odds(members, reviews);
  Evaluation result{.count = static_cast<int64_t>(reviews.size())};
  for (size_t i = 0; i < z.size(); ++i) {
    // Cross-entropy of σ(z) for label 1, of 1 - σ(z) = σ(-z) for label 0: log(1 + e^(-s)), s = ±z.
    const double s = reviews[i].label == 1 ? z[i] : -z[i];
    result.accuracy += s > 0 ? 1.0 : 0.0;
    result.loss += s > 0 ? std::log1p(std::exp(-s)) : -s + std::log1p(std::exp(s));
  }
  if (result.count > 0) {
    result.accuracy /= static_cast<double>(result.count);
    result.loss /= static_cast<double>(result.count);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace sentiment
