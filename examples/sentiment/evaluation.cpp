#include "examples/sentiment/evaluation.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <utility>

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

int64_t count_correct(const Variable& logits, const Tensor& labels) {
  return static_cast<int64_t>(sum(eq(argmax(logits.data(), 1), labels).to(DType::Float64)).item());
}

Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size,
                    const Ranks& ranks) {
  const auto start = Clock::now();
  NoGradGuard no_grad;
  model.eval();
  // This rank's share of the examples (all of them in a world of one).
  const auto [first, last] = ranks.share(static_cast<int64_t>(examples.size()));
  const std::vector<Example> share(examples.begin() + first, examples.begin() + last);
  std::array<double, 3> totals = {0, 0, 0};  // loss sum, correct, count
  for (const auto& indices : evaluation_batches(share, batch_size)) {
    const Batch batch = make_batch(share, indices, model.encoder->options.max_len);
    const Variable logits = model(batch.tokens, batch.lengths, batch.nb_rows, batch.nb_ratios);
    const double n = static_cast<double>(batch.labels.numel());
    totals[0] += cross_entropy(logits, batch.labels).item() * n;
    totals[1] += static_cast<double>(count_correct(logits, batch.labels));
    totals[2] += n;
  }
  if (ranks.world > 1) ranks.sum(totals);
  Evaluation result;
  result.count = static_cast<int64_t>(totals[2]);
  result.accuracy = result.count ? totals[1] / totals[2] : 0;
  result.loss = result.count ? totals[0] / totals[2] : 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

std::vector<double> positive_log_odds(SentimentModel& model, const std::vector<Example>& examples) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<double> out(examples.size());
  for (const auto& indices : evaluation_batches(examples, 256)) {
    const Batch batch = make_batch(examples, indices, model.encoder->options.max_len);
    const Tensor z = model(batch.tokens, batch.lengths, batch.nb_rows, batch.nb_ratios).data();  // (B, 2)
    for (size_t i = 0; i < indices.size(); ++i) {
      const auto row = static_cast<int64_t>(i);
      out[indices[i]] = z.at({row, 1}) - z.at({row, 0});
    }
  }
  return out;
}

std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples) {
  // softmax(z)[1] = σ(z₁ - z₀)
  std::vector<double> p = positive_log_odds(model, examples);
  for (double& v : p) v = 1 / (1 + std::exp(-v));
  return p;
}

namespace {

// Whether two checkpoints turn text into the same examples: the same vocabulary, length and NB n-grams
// (members of an ensemble trained on the same reviews do).
bool same_encoding(const Checkpoint& a, const Checkpoint& b) {
  if (a.vocabulary.tokens() != b.vocabulary.tokens() || a.config.max_len != b.config.max_len) return false;
  const NbFeatures *x = a.model->nb_features(), *y = b.model->nb_features();
  if (!x || !y) return x == y;
  const Tensor kx = x->keys().contiguous(), ky = y->keys().contiguous();
  return x->max_n() == y->max_n() && kx.numel() == ky.numel() &&
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
      encoded.emplace_back(m, encode(reviews, m->vocabulary, m->config.max_len, m->model->nb_features()));
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

Prediction predict(const Checkpoint& checkpoint, const std::string& text) {
  const std::vector<Example> examples =
      encode({{text, 0}}, checkpoint.vocabulary, checkpoint.config.max_len, checkpoint.model->nb_features());
  Prediction out;
  out.positive = positive_probabilities(*checkpoint.model, examples)[0];
  for (int64_t id : examples[0].ids) out.tokens.push_back(checkpoint.vocabulary.token(id));
  // The batch was padded (to a multiple of 16): keep the review's own tokens only.
  const int64_t n = static_cast<int64_t>(out.tokens.size());
  for (const Tensor& w : checkpoint.model->encoder->attention_weights()) {  // (1, heads, T, T)
    out.attention.push_back(w.select(0, 0).slice(1, 0, n).slice(2, 0, n).contiguous());
  }
  return out;
}

}  // namespace sentiment
