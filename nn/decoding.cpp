#include "minigrad/nn/decoding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad::nn {

namespace {

// The last position's logits: (B, n, V) -> (B, V), contiguous.
Tensor last_position(const Variable& logits) {
  return logits.data().select(1, logits.shape()[1] - 1).contiguous();
}

void check_tokens(const Tensor& tokens, std::string_view op) {
  if (!tokens.defined() || tokens.dtype() != DType::Int64 || tokens.rank() != 2 || tokens.shape()[0] < 1 ||
      tokens.shape()[1] < 1) {
    throw ShapeError(
        op, "expects tokens int64 (B, n) with B, n >= 1, got " +
                (tokens.defined() ? std::string(dtype_name(tokens.dtype())) + " " + tokens.shape().str()
                                  : std::string("none")));
  }
}

}  // namespace

CachedDecoderSteps::CachedDecoderSteps(TransformerDecoder& decoder, const Variable& memory,
                                       const Tensor& source_valid_lens)
    : decoder_(decoder) {
  NoGradGuard no_grad;
  decoder_.eval();
  cache_ = decoder_.start_cache(memory, source_valid_lens);
}

Tensor CachedDecoderSteps::next_logits(const Tensor& tokens) {
  check_tokens(tokens, "CachedDecoderSteps");
  NoGradGuard no_grad;
  return last_position(decoder_.forward_step(tokens, cache_));
}

void CachedDecoderSteps::select_rows(const Tensor& rows) {
  cache_.select_rows(rows);
}

UncachedDecoderSteps::UncachedDecoderSteps(TransformerDecoder& decoder, const Variable& memory,
                                           const Tensor& source_valid_lens)
    : decoder_(decoder), memory_(memory), source_valid_lens_(source_valid_lens) {
  decoder_.eval();
}

Tensor UncachedDecoderSteps::next_logits(const Tensor& tokens) {
  check_tokens(tokens, "UncachedDecoderSteps");
  NoGradGuard no_grad;
  tokens_ = tokens_.defined() ? concat({tokens_, tokens}, 1) : tokens.contiguous();
  return last_position(decoder_(tokens_, memory_, {.source_valid_lens = source_valid_lens_}));
}

void UncachedDecoderSteps::select_rows(const Tensor& rows) {
  if (tokens_.defined()) tokens_ = index_select(tokens_, 0, rows);
  if (memory_.defined()) memory_ = Variable(index_select(memory_.data(), 0, rows));
  if (source_valid_lens_.defined()) source_valid_lens_ = index_select(source_valid_lens_, 0, rows);
}

namespace {

void check_common(std::string_view op, const Tensor& prefix, int64_t max_new_tokens) {
  check_tokens(prefix, op);
  if (max_new_tokens < 1)
    throw ValueError(op, "max_new_tokens must be at least 1, got " + std::to_string(max_new_tokens));
}

// The loop greedy search and sampling share: `pick` chooses each row's next token from its logits.
Generation generate(StepModel& model, const Tensor& prefix, int64_t max_new_tokens, int64_t end_token,
                    const std::function<int64_t(const std::vector<double>&)>& pick) {
  const int64_t batch = prefix.shape()[0];
  Generation out;
  out.tokens.resize(static_cast<size_t>(batch));
  std::vector<bool> done(static_cast<size_t>(batch), false);
  Tensor logits = model.next_logits(prefix);  // (B, V)
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    out.logits.push_back(logits);
    const int64_t vocab = logits.shape()[1];
    const std::vector<double> all = logits.to_vector<double>();
    std::vector<int64_t> next(static_cast<size_t>(batch));
    bool all_done = true;
    for (int64_t row = 0; row < batch; ++row) {
      const size_t r = static_cast<size_t>(row);
      // A finished row is still fed (the batch moves together) but nothing more is recorded for it.
      next[r] = done[r]
                    ? std::max<int64_t>(end_token, 0)
                    : pick(std::vector<double>(all.begin() + row * vocab, all.begin() + (row + 1) * vocab));
      if (!done[r]) {
        out.tokens[r].push_back(next[r]);
        done[r] = next[r] == end_token;
      }
      all_done = all_done && done[r];
    }
    if (all_done || step + 1 == max_new_tokens) break;
    logits = model.next_logits(Tensor::from_vector(next, {batch, 1}));
  }
  return out;
}

int64_t argmax_of(const std::vector<double>& v) {
  return static_cast<int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

Generation greedy(StepModel& model, const Tensor& prefix, const GreedyOptions& options) {
  check_common("greedy", prefix, options.max_new_tokens);
  return generate(model, prefix, options.max_new_tokens, options.end_token, argmax_of);
}

std::vector<double> sampling_distribution(const std::vector<double>& logits, const SamplingOptions& options) {
  if (options.temperature < 0 || !std::isfinite(options.temperature))
    throw ValueError("sample", "temperature must be >= 0, got " + std::to_string(options.temperature));
  if (options.top_k < 0)
    throw ValueError("sample", "top_k must be >= 0, got " + std::to_string(options.top_k));
  if (!(options.top_p > 0 && options.top_p <= 1))
    throw ValueError("sample", "top_p must be in (0, 1], got " + std::to_string(options.top_p));
  if (logits.empty()) throw ValueError("sample", "no logits");
  std::vector<double> p(logits.size(), 0.0);
  if (options.temperature == 0) {  // the limit of a vanishing temperature: all mass on the argmax
    p[static_cast<size_t>(argmax_of(logits))] = 1;
    return p;
  }
  // Tokens from the most to the least likely (ties by id, so the result is deterministic).
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
  size_t keep = order.size();
  if (options.top_k > 0) keep = std::min(keep, static_cast<size_t>(options.top_k));
  // softmax(logits / T) over the kept tokens, subtracting the max first.
  const double top = logits[order[0]] / options.temperature;
  double total = 0;
  for (size_t i = 0; i < keep; ++i)
    total += p[order[i]] = std::exp(logits[order[i]] / options.temperature - top);
  for (size_t i = 0; i < keep; ++i) p[order[i]] /= total;
  // Nucleus: the shortest prefix of `order` whose mass reaches top_p (Holtzman et al., 2020).
  if (options.top_p < 1) {
    double mass = 0;
    size_t nucleus = 0;
    while (nucleus < keep && mass < options.top_p) mass += p[order[nucleus++]];
    for (size_t i = nucleus; i < keep; ++i) p[order[i]] = 0;
    for (size_t i = 0; i < nucleus; ++i) p[order[i]] /= mass;
  }
  return p;
}

Generation sample(StepModel& model, const Tensor& prefix, const SamplingOptions& options,
                  Generator& generator) {
  check_common("sample", prefix, options.max_new_tokens);
  sampling_distribution({0.0}, options);  // checks the options before any work
  return generate(model, prefix, options.max_new_tokens, options.end_token,
                  [&](const std::vector<double>& row) {
                    const std::vector<double> p = sampling_distribution(row, options);
                    // Inverse CDF: the first token whose cumulative probability passes u.
                    const double u = generator.next_double();
                    double cumulative = 0;
                    int64_t last_possible = 0;
                    for (size_t i = 0; i < p.size(); ++i) {
                      if (p[i] == 0) continue;
                      cumulative += p[i];
                      last_possible = static_cast<int64_t>(i);
                      if (u < cumulative) return last_possible;
                    }
                    return last_possible;  // u within rounding of 1
                  });
}

std::vector<Hypothesis> beam_search(StepModel& model, const Tensor& prefix,
                                    const BeamSearchOptions& options) {
  if (options.beam_width < 1)
    throw ValueError("beam_search",
                     "beam width must be at least 1, got " + std::to_string(options.beam_width));
  check_common("beam_search", prefix, options.max_new_tokens);
  if (prefix.shape()[0] != 1)
    throw ShapeError("beam_search", "expects one prefix (1, P), got " + prefix.shape().str());
  const size_t width = static_cast<size_t>(options.beam_width);
  auto score = [&](double log_prob, size_t length) {
    return log_prob / std::pow(static_cast<double>(length), options.length_penalty);
  };
  // Over when beam_width hypotheses have ended and no live one scores better than the worst of them at its
  // current length. Without a length penalty this is exact (extending a hypothesis only lowers its
  // log-probability); with one it is Hugging Face's heuristic, since a longer hypothesis divides by more.
  auto search_is_over = [&](std::vector<Hypothesis>& ended, const std::vector<Hypothesis>& alive) {
    if (alive.empty()) return true;
    if (ended.size() < width) return false;
    std::stable_sort(ended.begin(), ended.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    double best_alive = -std::numeric_limits<double>::infinity();
    for (const Hypothesis& h : alive) best_alive = std::max(best_alive, h.score);
    return best_alive <= ended[width - 1].score;
  };
  struct Candidate {
    double log_prob;
    size_t beam;
    int64_t token;
  };
  std::vector<Hypothesis> live(1), finished;  // live[i] is the model's row i
  Tensor logits = model.next_logits(prefix);  // (live, V)
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    const int64_t vocab = logits.shape()[1];
    const std::vector<double> all = logits.to_vector<double>();
    std::vector<Candidate> candidates;
    for (size_t b = 0; b < live.size(); ++b) {
      // log-softmax of the row, max subtracted first
      const double* row = all.data() + static_cast<int64_t>(b) * vocab;
      const double top = *std::max_element(row, row + vocab);
      double total = 0;
      for (int64_t v = 0; v < vocab; ++v) total += std::exp(row[v] - top);
      const double log_total = top + std::log(total);
      for (int64_t v = 0; v < vocab; ++v) candidates.push_back({live[b].log_prob + row[v] - log_total, b, v});
    }
    // The best 2·width extensions are enough: at most width of them end, and width more survive.
    const size_t best = std::min(candidates.size(), 2 * width);
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(best),
                      candidates.end(), [](const Candidate& a, const Candidate& b) {
                        return a.log_prob > b.log_prob || (a.log_prob == b.log_prob && a.token < b.token);
                      });
    std::vector<Hypothesis> next;
    std::vector<int64_t> rows, tokens;
    for (size_t i = 0; i < best && next.size() < width; ++i) {
      const Candidate& c = candidates[i];
      Hypothesis h{live[c.beam].tokens, c.log_prob, 0, false};
      h.tokens.push_back(c.token);
      h.score = score(h.log_prob, h.tokens.size());
      if (c.token == options.end_token) {
        h.finished = true;
        finished.push_back(std::move(h));
      } else {
        rows.push_back(static_cast<int64_t>(c.beam));
        tokens.push_back(c.token);
        next.push_back(std::move(h));
      }
    }
    live = std::move(next);
    if (search_is_over(finished, live) || step + 1 == options.max_new_tokens) break;
    const int64_t n = static_cast<int64_t>(rows.size());
    model.select_rows(Tensor::from_vector(rows, {n}));
    logits = model.next_logits(Tensor::from_vector(tokens, {n, 1}));
  }
  // Hypotheses cut off by max_new_tokens compete too, so that there is always an answer.
  for (Hypothesis& h : live) finished.push_back(std::move(h));
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (finished.size() > width) finished.resize(width);
  return finished;
}

}  // namespace minigrad::nn
