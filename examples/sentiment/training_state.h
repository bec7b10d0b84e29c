// What --checkpoint-every saves beside the weights and --resume restores: where a run is, the optimizers'
// moments, each rank's dropout generator and the weight averages, so that a resumed run goes on exactly
// as the interrupted one would have.
#pragma once

#include <cstdint>
#include <string>

#include "examples/sentiment/optimizer_step.h"
#include "examples/sentiment/ranks.h"
#include "minigrad/minigrad.h"

namespace sentiment {

// Where a run is: the step, and the position in the epoch's batch order, which the batch-order generator's
// state at the start of the epoch (and the epoch's number) determines.
struct Position {
  int64_t step = 0;
  int64_t epoch = 1;
  int64_t batch = 0;  // batches of this epoch already done
  minigrad::Generator::State epoch_order{};
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
