#include "examples/sentiment/training.h"

#include "examples/common/cli_options.h"
#include "examples/common/progress.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <utility>

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary, int64_t max_len,
                            const NbFeatures* nb) {
  if (max_len < 2) throw ValueError("encode", "max_len must be at least 2");
  std::vector<Example> out;
  out.reserve(reviews.size());
  for (const Review& r : reviews) {
    std::vector<int64_t> ids;
    const std::vector<std::string> tokens = tokenize(r.text);
    for (const std::string& token : tokens) ids.push_back(vocabulary.id(token));
    NbFeatures::Present present;
    if (nb) present = nb->present(tokens);
    if (static_cast<int64_t>(ids.size()) > max_len) {
      const int64_t head = max_len / 2, tail = max_len - head;
      ids.erase(ids.begin() + head, ids.end() - tail);
    }
    if (ids.empty()) ids.push_back(Vocabulary::kUnk);
    out.push_back({std::move(ids), r.label, std::move(present.rows), std::move(present.ratios)});
  }
  return out;
}

NgramVocabulary build_ngram_vocabulary(const Config& config, const std::vector<Example>& examples) {
  if (config.ngram_buckets == 0 || !config.ngram_vocabulary) return {};
  std::vector<std::span<const int64_t>> documents;
  documents.reserve(examples.size());
  for (const Example& e : examples) documents.emplace_back(e.ids);
  return NgramVocabulary::build(documents, config.ngram_max, config.ngram_buckets);
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
  for (size_t i : indices) k = std::max(k, examples[i].nb_rows.size());
  batch.nb_rows = Tensor::zeros({b, static_cast<int64_t>(k)}, DType::Int64);
  batch.nb_ratios = Tensor::zeros({b, static_cast<int64_t>(k)}, DType::Float32);
  for (int64_t row = 0; row < b; ++row) {
    const Example& e = examples[indices[static_cast<size_t>(row)]];
    std::copy(e.nb_rows.begin(), e.nb_rows.end(),
              batch.nb_rows.data_ptr<int64_t>() + row * static_cast<int64_t>(k));
    std::copy(e.nb_ratios.begin(), e.nb_ratios.end(),
              batch.nb_ratios.data_ptr<float>() + row * static_cast<int64_t>(k));
  }
  return batch;
}

Tensor drop_tokens(const Tensor& tokens, const Tensor& lengths, double p, Generator& generator) {
  check_tokens("drop_tokens", tokens, lengths);
  if (!(p >= 0 && p < 1)) throw ValueError("drop_tokens", "p must be in [0, 1), got " + std::to_string(p));
  Tensor out = tokens.clone();  // contiguous
  const int64_t b = out.shape()[0], t = out.shape()[1];
  int64_t* id = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t length = std::clamp<int64_t>(static_cast<int64_t>(lengths.at({i})), 0, t);
    for (int64_t j = 0; j < length; ++j)
      if (generator.next_double() < p) id[i * t + j] = Vocabulary::kUnk;
  }
  return out;
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
  for (size_t i = 0; i < reviews.size(); ++i)
    (held[i] ? split.validation : split.training).push_back(reviews[i]);
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
  // 1,024 tokens, past the storage cache's 2 GiB, so each batch's were faulted in afresh. With 8,192
  // tokens, the ensemble of three read the 2,500 held-out reviews in 4.7 s instead of 13.2 (budgets of
  // 4,096 to 65,536 took 4.7 to 6.2 s), with the same accuracy and loss.
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

namespace {

// How many rows of logits (B, 2) pick the label.
int64_t count_correct(const Variable& logits, const Tensor& labels) {
  return static_cast<int64_t>(sum(eq(argmax(logits.data(), 1), labels).to(DType::Float64)).item());
}

}  // namespace

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
    const Variable logits = model.forward(batch.tokens, batch.lengths, batch.nb_rows, batch.nb_ratios);
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
    const Tensor z =
        model.forward(batch.tokens, batch.lengths, batch.nb_rows, batch.nb_ratios).data();  // (B, 2)
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

std::pair<int64_t, int64_t> Ranks::share(int64_t count) const {
  const int64_t base = count / world, extra = count % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::pair<int64_t, int64_t> Ranks::share(std::span<const int64_t> lengths,
                                         const std::function<int64_t(int64_t longest)>& review_cost) const {
  const std::vector<int64_t> cuts = balanced_cuts(lengths, world, review_cost);
  return {cuts[static_cast<size_t>(rank)], cuts[static_cast<size_t>(rank) + 1]};
}

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

namespace {

// This rank's share of a training batch: the whole batch in a world of one. Contiguous parts, which pad
// least (reviews dealt to the ranks in turn made every rank pad to the batch's longest: README), cut so
// that they cost the ranks about the same: the rank with the batch's longest reviews takes fewer.
std::vector<size_t> share_of_batch(const std::vector<size_t>& batch, const std::vector<Example>& examples,
                                   const Config& config, const Ranks& ranks) {
  if (ranks.world == 1) return batch;
  std::vector<int64_t> lengths;
  for (size_t i : batch) lengths.push_back(static_cast<int64_t>(examples[i].ids.size()));
  const auto [begin, end] =
      ranks.share(lengths, [&](int64_t longest) { return review_cost(config, longest); });
  return {batch.begin() + begin, batch.begin() + end};
}

// The end of a step, the same for pretraining and training: `stats` (loss · count, correct, count, ...)
// summed and the gradients averaged over the ranks, then the gradients clipped. A NaN or inf would
// poison every weight at the step, so it throws from `op` before the caller steps, with the last good
// checkpoint still in place (every rank sees the same summed loss and norm, and stops alike). Returns the
// seconds this rank spent in the first of those collectives (TrainingLog::waiting_seconds).
double reduce_and_clip(const std::vector<Variable>& parameters, const Ranks& ranks, std::span<double> stats,
                       double clip, const std::string& op, int64_t step, const std::string& lr_option) {
  double waited = 0;
  if (ranks.world > 1) {
    // The few stats first: a collective ends only when the slowest rank has joined it, so this one
    // takes what this rank waits for the others, and the gradients' sum after it only what it costs.
    const auto start = Clock::now();
    ranks.sum(stats);
    waited = std::chrono::duration<double>(Clock::now() - start).count();
    ranks.average_gradients(parameters);
  }
  const double loss = stats[0] / stats[2];
  const double norm = optim::clip_grad_norm_(parameters, clip);
  if (!std::isfinite(loss) || !std::isfinite(norm)) {
    throw Error(op, "step " + std::to_string(step + 1) + ": the " +
                        (std::isfinite(loss) ? "gradient norm" : "loss") + " is " +
                        std::to_string(std::isfinite(loss) ? norm : loss) +
                        "; stopping without taking the step (try a lower " + lr_option + ")");
  }
  return waited;
}

}  // namespace

MaskedTokens mask_tokens(const Tensor& tokens, const Tensor& lengths, double p, int64_t vocab_size,
                         Generator& generator) {
  check_tokens("mask_tokens", tokens, lengths);
  if (!(p > 0 && p <= 1)) throw ValueError("mask_tokens", "p must be in (0, 1], got " + std::to_string(p));
  if (vocab_size < 3)
    throw ValueError("mask_tokens", "needs a vocabulary with a token besides <pad> and <unk>");
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1];
  MaskedTokens out{.inputs = tokens.clone(), .positions = {}, .targets = {}};
  int64_t* id = out.inputs.data_ptr<int64_t>();
  std::vector<int64_t> positions, targets;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t length = std::clamp<int64_t>(static_cast<int64_t>(lengths.at({i})), 0, t);
    const size_t before = positions.size();
    for (int64_t j = 0; j < length; ++j)
      if (generator.next_double() < p) positions.push_back(i * t + j);
    if (positions.size() == before && length > 0)
      positions.push_back(i * t + static_cast<int64_t>(generator.next_below(static_cast<uint64_t>(length))));
  }
  for (int64_t at : positions) {
    targets.push_back(id[at]);
    const double u = generator.next_double();
    if (u < 0.8) {
      id[at] = Vocabulary::kUnk;
    } else if (u < 0.9) {
      id[at] = 2 + static_cast<int64_t>(generator.next_below(static_cast<uint64_t>(vocab_size - 2)));
    }
  }
  const auto m = static_cast<int64_t>(positions.size());
  out.positions = Tensor::from_vector(positions, {m});
  out.targets = Tensor::from_vector(targets, {m});
  return out;
}

PretrainingLog pretrain(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                        const TrainOptions& options) {
  const Config& c = checkpoint.config;
  PretrainingLog log;
  if (c.pretrain_epochs == 0) return log;
  c.check("pretrain");
  if (examples.empty()) throw ValueError("pretrain", "no examples to pretrain on");
  const Ranks& ranks = options.ranks;
  SentimentModel& model = *checkpoint.model;
  const auto start = Clock::now();
  const Variable table = model.encoder->embedding->weight;  // (V, d): the output layer too
  const int64_t vocab_size = table.shape()[0], d = table.shape()[1];
  Variable bias(Tensor::zeros({vocab_size}, table.dtype()), true);
  std::vector<std::pair<std::string, Variable>> parameters = model.named_parameters();
  parameters.emplace_back("mlm_bias", bias);
  optim::AdamW optimizer(parameters, {.lr = c.pretrain_lr, .weight_decay = c.weight_decay});
  Generator order_generator(c.seed + 2);  // its own batch order, the same on every rank
  const int64_t steps_per_epoch = (static_cast<int64_t>(examples.size()) + c.batch_size - 1) / c.batch_size;
  int64_t total = steps_per_epoch * c.pretrain_epochs;
  if (options.max_steps > 0) total = std::min(total, options.max_steps);
  const optim::WarmupCosine schedule = examples::warmup_cosine(c.pretrain_lr, c.warmup, total);
  examples::Progress progress(out, options.interactive, total);
  int64_t step = 0;
  double tokens = 0;
  model.train();
  for (int64_t epoch = 1; epoch <= c.pretrain_epochs && step < total; ++epoch) {
    // Over the epoch, all ranks: loss · predictions, correct, predictions.
    std::array<double, 3> sums = {0, 0, 0};
    const std::vector<std::vector<size_t>> batches =
        training_batches(examples, c.batch_size, order_generator);
    for (size_t b = 0; b < batches.size() && step < total; ++b) {
      const std::vector<size_t> mine = share_of_batch(batches[b], examples, c, ranks);
      optimizer.set_learning_rate(schedule.at(step));
      optimizer.zero_grad();
      std::array<double, 4> stats = {0, 0, 0, 0};  // loss · predictions, correct, predictions, tokens
      if (!mine.empty()) {
        const Batch batch = make_batch(examples, mine, c.max_len);
        const MaskedTokens masked =
            mask_tokens(batch.tokens, batch.lengths, c.mask_prob, vocab_size, default_generator());
        const Variable h = model.encode(masked.inputs, batch.lengths);  // (B, T, d)
        // The chosen positions' outputs (M, d), gathered as rows of a table, then scored against every
        // token's embedding: (M, d) · (V, d)ᵀ + (V) -> (M, V).
        const Variable chosen = embedding(reshape(h, {h.shape()[0] * h.shape()[1], d}), masked.positions);
        const Variable logits = linear(chosen, table, bias);
        Variable loss = cross_entropy(logits, masked.targets);
        const double m = static_cast<double>(masked.targets.numel());
        stats = {loss.item() * m, static_cast<double>(count_correct(logits, masked.targets)), m,
                 static_cast<double>(batch.token_count)};
        // Each rank's mean, weighted by its share of the batch's reviews (not exactly of its predictions).
        if (ranks.world > 1)
          loss = loss *
                 (static_cast<double>(mine.size()) * ranks.world / static_cast<double>(batches[b].size()));
        loss.backward();
      }
      reduce_and_clip(optimizer.parameters(), ranks, stats, c.clip, "pretrain", step, "--pretrain-lr");
      optimizer.step();
      ++step;
      for (int k = 0; k < 3; ++k) sums[static_cast<size_t>(k)] += stats[static_cast<size_t>(k)];
      tokens += stats[3];
      char text[120];
      std::snprintf(text, sizeof text, "pretraining %lld/%lld  loss %.4f  acc %.4f",
                    static_cast<long long>(epoch), static_cast<long long>(c.pretrain_epochs),
                    sums[0] / sums[2], sums[1] / sums[2]);
      progress.update(step, text, tokens);
    }
    log.epoch_loss.push_back(sums[2] > 0 ? sums[0] / sums[2] : 0);
    log.epoch_accuracy.push_back(sums[2] > 0 ? sums[1] / sums[2] : 0);
    char text[120];
    std::snprintf(text, sizeof text, "pretraining epoch %lld: masked-token loss %.4f acc %.4f",
                  static_cast<long long>(epoch), log.epoch_loss.back(), log.epoch_accuracy.back());
    progress.message(text);
  }
  model.eval();
  log.steps = step;
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

namespace {

// Where a run is: the step, and the position in the epoch's batch order, which the batch-order generator's
// state at the start of the epoch (and the epoch's number) determines.
struct Position {
  int64_t step = 0;
  int64_t epoch = 1;
  int64_t batch = 0;  // batches of this epoch already done
  Generator::State epoch_order{};
};

int64_t whole_number(const optim::TrainingState& state, const std::string& key, const std::string& source) {
  const auto it = state.metadata.find(key);
  try {
    if (it == state.metadata.end()) throw std::invalid_argument("missing");
    size_t used = 0;
    const int64_t value = std::stoll(it->second, &used);
    if (used != it->second.size() || value < 0) throw std::invalid_argument("not whole");
    return value;
  } catch (const std::logic_error&) {
    throw Error("resume",
                source + ": '" + key + "' is missing from the training state or not a whole number");
  }
}

// The classifier's optimizers: AdamW for the whole model, or, with config.sparse_embeddings, AdamW for
// all but the two embedding tables and SparseAdam for those (their gradients are row-sparse, which AdamW
// refuses: it would step every row); with the NB branch, a third (SparseAdam) for its table, at nb_lr.
// One schedule for all.
class Optimizers {
 public:
  Optimizers(SentimentModel& model, const Config& c) : nb_scale_(c.nb_lr > 0 ? c.nb_lr / c.lr : 1.0) {
    std::vector<std::pair<std::string, Variable>> dense, sparse, nb;
    for (const auto& [name, p] : model.named_parameters()) {
      const bool table =
          p.is_same(model.encoder->embedding->weight) || (model.ngrams && p.is_same(model.ngrams->weight));
      if (model.nb && p.is_same(model.nb->weight))
        nb.emplace_back(name, p);
      else
        (c.sparse_embeddings && table ? sparse : dense).emplace_back(name, p);
      parameters_.push_back(p);
    }
    dense_.emplace(dense, optim::AdamWOptions{.lr = c.lr, .weight_decay = c.weight_decay});
    if (!sparse.empty()) sparse_.emplace(sparse, optim::SparseAdamOptions{.lr = c.lr});
    if (!nb.empty()) nb_.emplace(nb, optim::SparseAdamOptions{.lr = c.lr * nb_scale_});
  }
  const std::vector<Variable>& parameters() const { return parameters_; }
  void set_learning_rate(double lr) {
    for (optim::Optimizer* o : all()) o->set_learning_rate(lr);
    if (nb_) nb_->set_learning_rate(lr * nb_scale_);
  }
  void zero_grad() {
    for (optim::Optimizer* o : all()) o->zero_grad();
  }
  void step() {
    for (optim::Optimizer* o : all()) o->step();
  }
  // In a fixed order, for the training state: AdamW, then the tables' SparseAdam and the NB branch's, for
  // those there are.
  std::vector<optim::Optimizer*> all() {
    std::vector<optim::Optimizer*> list = {&*dense_};
    if (sparse_) list.push_back(&*sparse_);
    if (nb_) list.push_back(&*nb_);
    return list;
  }

 private:
  double nb_scale_;                   // the NB branch's learning rate over the rest's
  std::vector<Variable> parameters_;  // all of them, in the model's order
  std::optional<optim::AdamW> dense_;
  std::optional<optim::SparseAdam> sparse_, nb_;
};

}  // namespace

TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options) {
  if (examples.empty()) throw ValueError("train", "no examples to train on");
  const Ranks& ranks = options.ranks;
  const Config& c = checkpoint.config;
  if (c.batch_size < ranks.world) {
    throw ValueError("train", "--batch-size " + std::to_string(c.batch_size) + " is smaller than the " +
                                  std::to_string(ranks.world) +
                                  " ranks: every rank needs a share of each batch");
  }
  SentimentModel& model = *checkpoint.model;
  const auto start = Clock::now();
  Generator order_generator(c.seed +
                            1);  // batch order, the same on every rank; dropout: the default generator
  const int64_t steps_per_epoch = (static_cast<int64_t>(examples.size()) + c.batch_size - 1) / c.batch_size;
  int64_t total = steps_per_epoch * c.epochs;
  if (options.max_steps > 0) total = std::min(total, options.max_steps);
  Optimizers optimizer(model, c);
  // With ema_decay, the averaged weights are the model's whenever it is evaluated or saved (swapped in,
  // then out again to go on training); the training weights live in the average's place meanwhile.
  std::optional<optim::ExponentialMovingAverage> average;
  if (c.ema_decay > 0)
    average.emplace(model.named_parameters(), optim::ExponentialMovingAverageOptions{.decay = c.ema_decay});
  auto with_averages = [&](const auto& use) {
    if (average) average->swap();
    use();
    if (average) average->swap();
  };
  const optim::WarmupCosine schedule = examples::warmup_cosine(c.lr, c.warmup, total);
  const std::string dropout_name = "dropout.rank" + std::to_string(ranks.rank);

  Position at{.epoch_order = order_generator.state()};
  if (options.resume) {
    const std::string& source = options.resume_source;
    const optim::TrainingState state = optim::load_training_state(*options.resume, source, optimizer.all());
    const int64_t saved_ranks = whole_number(state, "ranks", source);
    if (saved_ranks != ranks.world) {
      throw Error("resume", source + ": saved by a run of " + std::to_string(saved_ranks) +
                                " rank(s); this run has " + std::to_string(ranks.world) +
                                " (resume with the same number of processes)");
    }
    if (!state.generators.count("order") || !state.generators.count(dropout_name)) {
      throw Error("resume", source + ": no generator state 'order' or '" + dropout_name + "'");
    }
    at = {state.step, whole_number(state, "epoch", source), whole_number(state, "batch", source),
          state.generators.at("order")};
    default_generator().set_state(state.generators.at(dropout_name));
    if (static_cast<bool>(average) != !state.averages.empty()) {
      throw Error("resume", source + (average ? ": holds no weight averages (saved without --ema-decay)"
                                              : ": holds weight averages (saved with --ema-decay)"));
    }
    if (average) {
      // Saved swapped, as the model file holds the averages: the training weights are in state.averages.
      try {
        average->load_state_tensors(state.averages);
      } catch (const Error& e) {
        throw Error("resume", source + ": " + e.detail());
      }
      average->swap();
    }
  }
  // The training state at `position`, serialised, for options.save (a collective call: it gathers every
  // rank's dropout generator).
  auto training_state = [&](const Position& position) {
    optim::TrainingState state{.step = position.step,
                               .generators = {{"order", position.epoch_order}},
                               .metadata = {{"epoch", std::to_string(position.epoch)},
                                            {"batch", std::to_string(position.batch)},
                                            {"ranks", std::to_string(ranks.world)}}};
    const std::vector<Generator::State> dropout =
        ranks.world > 1 ? ranks.gather(default_generator().state())
                        : std::vector<Generator::State>{default_generator().state()};
    for (size_t r = 0; r < dropout.size(); ++r)
      state.generators["dropout.rank" + std::to_string(r)] = dropout[r];
    // Called with the averages swapped in: average holds the training weights.
    if (average) state.averages = average->state_tensors();
    const std::vector<optim::Optimizer*> optimizers = optimizer.all();
    return optim::serialize_training_state({optimizers.begin(), optimizers.end()}, state);
  };

  examples::Progress progress(out, options.interactive, total);
  TrainingLog log;
  int64_t step = at.step;
  const int64_t first_step = step;
  log.first_epoch = at.epoch;
  double tokens = 0;
  model.train();
  for (int64_t epoch = at.epoch; epoch <= c.epochs && step < total; ++epoch) {
    std::array<double, 3> sums = {0, 0, 0};  // over the epoch, all ranks: loss · examples, correct, examples
    order_generator.set_state(epoch == at.epoch ? at.epoch_order : order_generator.state());
    const Generator::State epoch_order = order_generator.state();
    const std::vector<std::vector<size_t>> batches =
        training_batches(examples, c.batch_size, order_generator);
    const size_t first = epoch == at.epoch ? static_cast<size_t>(at.batch) : 0;
    for (size_t b = first; b < batches.size() && step < total; ++b) {
      const std::vector<size_t> mine = share_of_batch(batches[b], examples, c, ranks);
      optimizer.set_learning_rate(schedule.at(step));
      optimizer.zero_grad();
      std::array<double, 4> stats = {0, 0, 0, 0};  // loss · examples, correct, examples, tokens
      if (!mine.empty()) {
        const Batch batch = make_batch(examples, mine, c.max_len);
        const Tensor tokens = c.token_dropout > 0 ? drop_tokens(batch.tokens, batch.lengths, c.token_dropout,
                                                                default_generator())
                                                  : batch.tokens;
        const Variable logits = model.forward(tokens, batch.lengths, batch.nb_rows, batch.nb_ratios);
        Variable loss = cross_entropy(logits, batch.labels, {.label_smoothing = c.label_smoothing});
        const double n = static_cast<double>(mine.size());
        stats = {loss.item() * n, static_cast<double>(count_correct(logits, batch.labels)), n,
                 static_cast<double>(batch.token_count)};
        // Each rank's mean, weighted by its share: averaged over the ranks, the whole batch's mean.
        if (ranks.world > 1) loss = loss * (n * ranks.world / static_cast<double>(batches[b].size()));
        loss.backward();
      }
      log.waiting_seconds +=
          reduce_and_clip(optimizer.parameters(), ranks, stats, c.clip, "train", step, "--lr");
      optimizer.step();
      if (average) average->update();
      ++step;
      for (int k = 0; k < 3; ++k) sums[static_cast<size_t>(k)] += stats[static_cast<size_t>(k)];
      tokens += stats[3];
      const bool epoch_end = b + 1 == batches.size();
      at = epoch_end ? Position{step, epoch + 1, 0, order_generator.state()}
                     : Position{step, epoch, static_cast<int64_t>(b + 1), epoch_order};
      if (options.checkpoint_every > 0 && options.save &&
          (step % options.checkpoint_every == 0 || epoch_end)) {
        model.eval();  // saved as it will be used; the weights are the same in either mode
        with_averages([&] { options.save(step, training_state(at)); });
        model.train();
      }
      char text[120];
      std::snprintf(text, sizeof text, "epoch %lld/%lld  loss %.4f  acc %.4f", static_cast<long long>(epoch),
                    static_cast<long long>(c.epochs), sums[0] / sums[2], sums[1] / sums[2]);
      progress.update(step, text, tokens);
    }
    log.epoch_loss.push_back(sums[2] > 0 ? sums[0] / sums[2] : 0);
    log.epoch_accuracy.push_back(sums[2] > 0 ? sums[1] / sums[2] : 0);
    if (options.validation && at.batch == 0) {  // the epoch ran to its end (not cut by max_steps)
      Evaluation e;
      with_averages([&] { e = evaluate(model, *options.validation, 64, ranks); });
      model.train();
      log.epoch_validation.push_back(e);
      char text[160];
      std::snprintf(text, sizeof text,
                    "epoch %lld: training loss %.4f acc %.4f; validation loss %.4f acc %.4f (%.1f s)",
                    static_cast<long long>(epoch), log.epoch_loss.back(), log.epoch_accuracy.back(), e.loss,
                    e.accuracy, e.seconds);
      progress.message(text);
    }
  }
  model.eval();
  if (average) average->swap();  // the model keeps the averages
  // Where the run ended, for a final checkpoint that can be resumed (with more epochs, say).
  if (options.checkpoint_every > 0) log.final_state = training_state(at);
  log.steps = step - first_step;
  log.tokens = tokens;
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

}  // namespace sentiment
