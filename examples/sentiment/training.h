// Training the classifier: AdamW (and SparseAdam for row-sparse tables), warm-up and cosine decay,
// clipping, dropout, validation after each epoch; several ranks; what a longer run adds (weight averages,
// checkpoints to resume from: extras/checkpoints_and_averages.h) through TrainingHooks.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/optimizer_step.h"
#include "examples/sentiment/ranks.h"

namespace sentiment {

// Where a run is: the step, and the position in the epoch's batch order, which the batch-order generator's
// state at the start of the epoch (and the epoch's number) determines.
struct Position {
  int64_t step = 0;
  int64_t epoch = 1;
  int64_t batch = 0;  // batches of this epoch already done
  minigrad::Generator::State epoch_order{};
};

// What a longer run adds around the loop, at four points; each does nothing by default.
class TrainingHooks {
 public:
  virtual ~TrainingHooks() = default;
  // Before the first step: `at` is the start of training; a resumed run moves it to where it was.
  virtual void start(Position& /*at*/, Optimizers& /*optimizers*/) {}
  // After each step, `at` the position after it, `epoch_end` if it ended an epoch.
  virtual void after_step(const Position& /*at*/, bool /*epoch_end*/, Optimizers& /*optimizers*/) {}
  // Runs use() with the weights the run keeps in the model (a moving average's, say): validation's.
  virtual void with_kept_weights(const std::function<void()>& use) { use(); }
  // After the last step, the model in eval mode: leaves the weights the run keeps in it.
  virtual void end(const Position& /*at*/, Optimizers& /*optimizers*/) {}
};

struct TrainingLog {
  double seconds = 0;
  std::vector<double> epoch_loss;            // mean training loss of each epoch
  std::vector<double> epoch_accuracy;        // training accuracy of each epoch
  std::vector<Evaluation> epoch_validation;  // with options.validation: after each epoch run to its end
  int64_t first_epoch = 1;                   // the number of the epoch in epoch_loss[0] (> 1 when resumed)
  int64_t steps = 0;                         // steps taken by this call
  double tokens = 0;                         // real (unpadded) tokens trained on, over all ranks
  // With several ranks: the time this rank waited at each step's end for the slowest rank to finish its
  // forward and backward (its time in the step's first collective, a sum of a few numbers).
  double waiting_seconds = 0;
};

struct TrainOptions {
  bool interactive = false;  // a live progress bar, instead of a log line every few seconds
  int64_t max_steps = 0;     // > 0: stop after this many steps (smoke tests)
  Ranks ranks{};
  // Evaluated after each epoch (evaluate(), which draws no random numbers, so resuming stays exact).
  const std::vector<Example>* validation = nullptr;
  TrainingHooks* hooks = nullptr;  // none: nothing added
  // Changes each training batch before its forward pass (extras/' token dropout); none: nothing.
  std::function<void(Batch&)> augment{};
};

// Trains the checkpoint's model with AdamW, linear warm-up and cosine decay, gradient clipping and
// dropout, as its config says. With several ranks, each takes its share of every batch (from one batch
// order that all compute from the seed) and the gradients are averaged before the step. Progress goes
// to `out`. Throws, naming the step, if the loss or the gradient norm is not finite (before that step
// changes any weight), or if there are no examples.
TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options = {});

}  // namespace sentiment
