// Training the classifier: AdamW (and SparseAdam for the embedding tables), warm-up and cosine decay,
// clipping, dropout; checkpoints during training and resuming from them; several ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/ranks.h"

namespace sentiment {

struct TrainingLog {
  double seconds = 0;
  std::vector<double> epoch_loss;            // mean training loss of each epoch
  std::vector<double> epoch_accuracy;        // training accuracy of each epoch
  std::vector<Evaluation> epoch_validation;  // with options.validation: after each epoch run to its end
  int64_t first_epoch = 1;                   // the number of the epoch in epoch_loss[0] (> 1 when resumed)
  std::string final_state;                   // with checkpoint_every: the training state at the end
  int64_t steps = 0;                         // steps taken by this call
  double tokens = 0;                         // real (unpadded) tokens trained on, over all ranks
  // With several ranks: the time this rank waited at each step's end for the slowest rank to finish its
  // forward and backward (its time in the step's first collective, a sum of a few numbers).
  double waiting_seconds = 0;
};

struct TrainOptions {
  bool interactive = false;  // a live progress bar, instead of a log line every few seconds
  int64_t max_steps = 0;     // > 0: stop after this many steps (smoke tests)
  // > 0: call `save` after every this many steps and at the end of each epoch, with the bytes of the
  // training state (optim::serialize_training_state: the optimizer's moments, each rank's dropout
  // generator, the batch-order generator, the step and the position in the epoch). Called on every
  // rank; the caller writes the checkpoint on rank 0 only.
  int64_t checkpoint_every = 0;
  std::function<void(int64_t step, const std::string& training_state)> save{};
  // A training state to continue from (with the model's weights already loaded): the run then goes on
  // exactly as the interrupted one would have, given the same seed, rank count and thread count.
  const minigrad::SafetensorsFile* resume = nullptr;
  std::string resume_source{};  // names `resume` in errors
  Ranks ranks{};
  // Evaluated after each epoch (evaluate(), which draws no random numbers, so resuming stays exact).
  const std::vector<Example>* validation = nullptr;
};

// Trains the checkpoint's model with AdamW, linear warm-up and cosine decay, gradient clipping and
// dropout, as its config says. With several ranks, each takes its share of every batch (from one batch
// order that all compute from the seed) and the gradients are averaged before the step. Progress goes
// to `out`. Throws, naming the step, if the loss or the gradient norm is not finite (before that step
// changes any weight), if there are no examples, or if a resumed state does not fit this run.
TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options = {});

}  // namespace sentiment
