#include "examples/sentiment/training.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "examples/common/cli_options.h"
#include "examples/common/progress.h"
#include "examples/sentiment/optimizer_step.h"

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

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
