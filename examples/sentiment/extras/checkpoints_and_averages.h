// What a longer run adds to training (TrainingHooks, training.h): an exponential moving average of the
// weights (--ema-decay), which the run evaluates and keeps; checkpoints after every few steps
// (--checkpoint-every) with the training state beside the weights, and resuming from one (--resume):
// where the run is, the optimizers' moments, each rank's dropout generator and the weight averages, so
// that a resumed run goes on exactly as the interrupted one would have.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "examples/sentiment/training.h"
#include "minigrad/minigrad.h"

namespace sentiment {

struct LongRunOptions {
  // > 0: call `save` after every this many steps and at the end of each epoch, with the bytes of the
  // training state (serialize_training_state). Called on every rank; the caller writes the checkpoint on
  // rank 0 only.
  int64_t checkpoint_every = 0;
  std::function<void(int64_t step, const std::string& training_state)> save{};
  // A training state to continue from (with the model's weights already loaded): the run then goes on
  // exactly as the interrupted one would have, given the same seed, rank count and thread count.
  const minigrad::SafetensorsFile* resume = nullptr;
  std::string resume_source{};  // names `resume` in errors
};

// The hooks of a run with ema_decay's averages (extended_config.h) and `options`' checkpoints; pass the same
// ranks as the training's.
class LongRun : public TrainingHooks {
 public:
  LongRun(SentimentModel& model, const Config& config, const Ranks& ranks, LongRunOptions options);
  // Starts the averages from the model's weights; a resumed run restores its state (throws an Error
  // from "resume" naming the source if it does not fit this run).
  void start(Position& at, Optimizers& optimizers) override;
  void after_step(const Position& at, bool epoch_end, Optimizers& optimizers) override;
  void with_kept_weights(const std::function<void()>& use) override;
  void end(const Position& at, Optimizers& optimizers) override;
  // With checkpoint_every: the training state at the end, for a final checkpoint that can be resumed.
  const std::string& final_state() const { return final_state_; }

 private:
  SentimentModel& model_;
  double decay_;
  Ranks ranks_;
  LongRunOptions options_;
  std::optional<minigrad::optim::ExponentialMovingAverage> average_;  // with ema_decay > 0
  std::string final_state_;
};

// The training state at `position`, serialised (optim::serialize_training_state). A collective call: it
// gathers every rank's dropout generator. With weight averaging, `average` is called with the averages
// swapped into the model, so that it holds the training weights; nullptr without.
std::string serialize_training_state(const Position& position, Optimizers& optimizers,
                                     const minigrad::optim::ExponentialMovingAverage* average,
                                     const Ranks& ranks);

// Restores a state saved by serialize_training_state: the optimizers' moments, this rank's dropout
// generator (the default generator) and the weight averages, swapped out so that the model goes on with
// its training weights; returns where the run was. Throws an Error from "resume" naming `source` if the
// state does not fit this run (another number of ranks, averages or none).
Position restore_training_state(const minigrad::SafetensorsFile& file, const std::string& source,
                                Optimizers& optimizers, minigrad::optim::ExponentialMovingAverage* average,
                                const Ranks& ranks);

}  // namespace sentiment
