#include "examples/sentiment/extras/pretraining.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <utility>

#include "examples/common/progress.h"
#include "examples/common/schedule.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/extended_config.h"
#include "examples/sentiment/optimizer_step.h"

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

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

PretrainingLog pretrain(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                        const TrainOptions& options) {
  const Config& c = checkpoint.config;
  const ExtendedConfig e = ExtendedConfig::of(c);
  PretrainingLog log;
  if (e.pretrain_epochs == 0) return log;
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
  optim::AdamW optimizer(parameters, {.lr = e.pretrain_lr, .weight_decay = c.weight_decay});
  Generator order_generator(c.seed + 2);  // its own batch order, the same on every rank
  const int64_t steps_per_epoch = (static_cast<int64_t>(examples.size()) + c.batch_size - 1) / c.batch_size;
  int64_t total = steps_per_epoch * e.pretrain_epochs;
  if (options.max_steps > 0) total = std::min(total, options.max_steps);
  const optim::WarmupCosine schedule = examples::warmup_cosine(e.pretrain_lr, c.warmup, total);
  examples::Progress progress(out, options.interactive, total);
  int64_t step = 0;
  double tokens = 0;
  model.train();
  for (int64_t epoch = 1; epoch <= e.pretrain_epochs && step < total; ++epoch) {
    // Over the epoch, all ranks: loss · predictions, correct, predictions.
    std::array<double, 3> sums = {0, 0, 0};
    const std::vector<std::vector<size_t>> batches =
        training_batches(examples, c.batch_size, order_generator);
    for (size_t b = 0; b < batches.size() && step < total; ++b) {
      const std::vector<size_t> mine = ranks.share_of_batch(batches[b], examples);
      optimizer.set_learning_rate(schedule.at(step));
      optimizer.zero_grad();
      std::array<double, 4> stats = {0, 0, 0, 0};  // loss · predictions, correct, predictions, tokens
      if (!mine.empty()) {
        const Batch batch = make_batch(examples, mine, c.max_len);
        const MaskedTokens masked =
            mask_tokens(batch.tokens, batch.lengths, e.mask_prob, vocab_size, default_generator());
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
                    static_cast<long long>(epoch), static_cast<long long>(e.pretrain_epochs),
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

}  // namespace sentiment
