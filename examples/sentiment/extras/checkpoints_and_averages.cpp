#include "examples/sentiment/extras/checkpoints_and_averages.h"

#include <stdexcept>
#include <vector>

#include "examples/sentiment/extras/extended_config.h"

namespace sentiment {

using namespace minigrad;

namespace {

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

std::string dropout_name(int rank) {
  return "dropout.rank" + std::to_string(rank);
}

}  // namespace

std::string serialize_training_state(const Position& position, Optimizers& optimizers,
                                     const optim::ExponentialMovingAverage* average, const Ranks& ranks) {
  optim::TrainingState state{.step = position.step,
                             .generators = {{"order", position.epoch_order}},
                             .metadata = {{"epoch", std::to_string(position.epoch)},
                                          {"batch", std::to_string(position.batch)},
                                          {"ranks", std::to_string(ranks.world)}}};
  const std::vector<Generator::State> dropout =
      ranks.world > 1 ? ranks.gather(default_generator().state())
                      : std::vector<Generator::State>{default_generator().state()};
  for (size_t r = 0; r < dropout.size(); ++r)
    state.generators[dropout_name(static_cast<int>(r))] = dropout[r];
  // Called with the averages swapped in: average holds the training weights.
  if (average) state.averages = average->state_tensors();
  const std::vector<optim::Optimizer*> all = optimizers.all();
  return optim::serialize_training_state({all.begin(), all.end()}, state);
}

Position restore_training_state(const SafetensorsFile& file, const std::string& source,
                                Optimizers& optimizers, optim::ExponentialMovingAverage* average,
                                const Ranks& ranks) {
  const optim::TrainingState state = optim::load_training_state(file, source, optimizers.all());
  const int64_t saved_ranks = whole_number(state, "ranks", source);
  if (saved_ranks != ranks.world) {
    throw Error("resume", source + ": saved by a run of " + std::to_string(saved_ranks) +
                              " rank(s); this run has " + std::to_string(ranks.world) +
                              " (resume with the same number of processes)");
  }
  const std::string dropout = dropout_name(ranks.rank);
  if (!state.generators.count("order") || !state.generators.count(dropout)) {
    throw Error("resume", source + ": no generator state 'order' or '" + dropout + "'");
  }
  const Position at{state.step, whole_number(state, "epoch", source), whole_number(state, "batch", source),
                    state.generators.at("order")};
  default_generator().set_state(state.generators.at(dropout));
  if ((average != nullptr) != !state.averages.empty()) {
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
  return at;
}

LongRun::LongRun(SentimentModel& model, const Config& config, const Ranks& ranks, LongRunOptions options)
    : model_(model),
      decay_(ExtendedConfig::of(config).ema_decay),
      ranks_(ranks),
      options_(std::move(options)) {}

void LongRun::start(Position& at, Optimizers& optimizers) {
  if (decay_ > 0)
    average_.emplace(model_.named_parameters(), optim::ExponentialMovingAverageOptions{.decay = decay_});
  optim::ExponentialMovingAverage* average = average_ ? &*average_ : nullptr;
  if (options_.resume)
    at = restore_training_state(*options_.resume, options_.resume_source, optimizers, average, ranks_);
}

void LongRun::after_step(const Position& at, bool epoch_end, Optimizers& optimizers) {
  if (average_) average_->update();
  if (options_.checkpoint_every > 0 && options_.save &&
      (at.step % options_.checkpoint_every == 0 || epoch_end)) {
    model_.eval();  // saved as the model will be used: in eval mode (the same weights), with the averages
    with_kept_weights([&] {
      options_.save(at.step,
                    serialize_training_state(at, optimizers, average_ ? &*average_ : nullptr, ranks_));
    });
    model_.train();
  }
}

void LongRun::with_kept_weights(const std::function<void()>& use) {
  if (average_) average_->swap();  // the averages into the model, its training weights into the average
  use();
  if (average_) average_->swap();
}

void LongRun::end(const Position& at, Optimizers& optimizers) {
  if (average_) average_->swap();  // the model keeps the averages
  // Where the run ended, for a final checkpoint that can be resumed (with more epochs, say).
  if (options_.checkpoint_every > 0)
    final_state_ = serialize_training_state(at, optimizers, average_ ? &*average_ : nullptr, ranks_);
}

}  // namespace sentiment
