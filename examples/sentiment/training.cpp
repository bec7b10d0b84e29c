#include "examples/sentiment/training.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "examples/common/progress.h"
#include "examples/common/schedule.h"

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

namespace {

// The steps of the run: the epochs' batches, or options.max_steps if fewer. Refuses a run without
// examples, or with fewer reviews in a batch than ranks.
int64_t total_steps(const std::vector<Example>& examples, const Config& c, const TrainOptions& options) {
  if (examples.empty()) throw ValueError("train", "no examples to train on");
  if (c.batch_size < options.ranks.world) {
    throw ValueError("train", "--batch-size " + std::to_string(c.batch_size) + " is smaller than the " +
                                  std::to_string(options.ranks.world) +
                                  " ranks: every rank needs a share of each batch");
  }
  const int64_t steps_per_epoch = (static_cast<int64_t>(examples.size()) + c.batch_size - 1) / c.batch_size;
  const int64_t total = steps_per_epoch * c.epochs;
  return options.max_steps > 0 ? std::min(total, options.max_steps) : total;
}

// The forward and backward pass of one step, on this rank's share of `batch` (all of it in a world of
// one): the batch (changed by options.augment), the logits, the loss with label smoothing, its gradients.
// Returns the share's loss · examples, correct predictions, examples and tokens: zeros for an empty share,
// whose rank only joins the sums.
std::array<double, 4> forward_backward(SentimentModel& model, const std::vector<Example>& examples,
                                       const std::vector<size_t>& batch, const Config& c,
                                       const TrainOptions& options) {
  const Ranks& ranks = options.ranks;
  const std::vector<size_t> mine = ranks.share_of_batch(batch, examples);
  if (mine.empty()) return {0, 0, 0, 0};
  Batch b = make_batch(examples, mine, c.max_len);
  if (options.augment) options.augment(b);
  const Variable logits = model(b);  // (B, 2)
  Variable loss = cross_entropy(logits, b.labels, {.label_smoothing = c.label_smoothing});
  const double n = static_cast<double>(mine.size());
  const std::array<double, 4> stats = {loss.item() * n, static_cast<double>(count_correct(logits, b.labels)),
                                       n, static_cast<double>(b.token_count)};
  // Each rank's mean, weighted by its share: averaged over the ranks, the whole batch's mean.
  if (ranks.world > 1) loss = loss * (n * ranks.world / static_cast<double>(batch.size()));
  loss.backward();
  return stats;
}

// sums: loss · examples, correct, examples, over the epoch so far. "epoch 1/2  loss 0.4312  acc 0.8125"
std::string progress_text(int64_t epoch, int64_t epochs, const std::array<double, 3>& sums) {
  char text[120];
  std::snprintf(text, sizeof text, "epoch %lld/%lld  loss %.4f  acc %.4f", static_cast<long long>(epoch),
                static_cast<long long>(epochs), sums[0] / sums[2], sums[1] / sums[2]);
  return text;
}

// The line after an epoch with validation: "epoch 1: training loss 0.4 acc 0.8; validation loss ...".
std::string epoch_text(int64_t epoch, const TrainingLog& log) {
  const Evaluation& e = log.epoch_validation.back();
  char text[160];
  std::snprintf(text, sizeof text,
                "epoch %lld: training loss %.4f acc %.4f; validation loss %.4f acc %.4f (%.1f s)",
                static_cast<long long>(epoch), log.epoch_loss.back(), log.epoch_accuracy.back(), e.loss,
                e.accuracy, e.seconds);
  return text;
}

}  // namespace

TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options) {
  const Config& c = checkpoint.config;
  const Ranks& ranks = options.ranks;
  const int64_t total = total_steps(examples, c, options);
  SentimentModel& model = *checkpoint.model;
  const auto start = Clock::now();
  Optimizers optimizer(model, c);
  TrainingHooks no_hooks;
  TrainingHooks& hooks = options.hooks ? *options.hooks : no_hooks;
  const optim::WarmupCosine schedule = examples::warmup_cosine(c.lr, c.warmup, total);
  Generator order(c.seed + 1);  // batch order, the same on every rank; dropout: the default generator
  Position at{.epoch_order = order.state()};
  hooks.start(at, optimizer);
  examples::Progress progress(out, options.interactive, total);
  TrainingLog log;
  log.first_epoch = at.epoch;
  const int64_t first_step = at.step;
  model.train();
  for (int64_t epoch = at.epoch; epoch <= c.epochs && at.step < total; ++epoch) {
    std::array<double, 3> sums = {0, 0, 0};  // over the epoch, all ranks: loss · examples, correct, examples
    order.set_state(at.epoch_order);
    const std::vector<std::vector<size_t>> batches = training_batches(examples, c.batch_size, order);
    for (size_t b = static_cast<size_t>(at.batch); b < batches.size() && at.step < total; ++b) {
      optimizer.set_learning_rate(schedule.at(at.step));
      optimizer.zero_grad();
      // This rank's loss · examples, correct, examples and tokens; after reduce_and_clip, all ranks'.
      std::array<double, 4> stats = forward_backward(model, examples, batches[b], c, options);
      log.waiting_seconds +=
          reduce_and_clip(optimizer.parameters(), ranks, stats, c.clip, "train", at.step, "--lr");
      optimizer.step();
      for (size_t k = 0; k < 3; ++k) sums[k] += stats[k];
      log.tokens += stats[3];
      const bool epoch_end = b + 1 == batches.size();
      at = epoch_end ? Position{at.step + 1, epoch + 1, 0, order.state()}
                     : Position{at.step + 1, epoch, static_cast<int64_t>(b + 1), at.epoch_order};
      hooks.after_step(at, epoch_end, optimizer);
      progress.update(at.step, progress_text(epoch, c.epochs, sums), log.tokens);
    }
    log.epoch_loss.push_back(sums[2] > 0 ? sums[0] / sums[2] : 0);
    log.epoch_accuracy.push_back(sums[2] > 0 ? sums[1] / sums[2] : 0);
    if (options.validation && at.batch == 0) {  // the epoch ran to its end (not cut by max_steps)
      hooks.with_kept_weights(
          [&] { log.epoch_validation.push_back(evaluate(model, *options.validation, 64, ranks)); });
      model.train();
      progress.message(epoch_text(epoch, log));
    }
  }
  model.eval();
  hooks.end(at, optimizer);
  log.steps = at.step - first_step;
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

}  // namespace sentiment
