// The optimizer step of pretraining and training: the classifier's optimizers, and what comes between
// the backward pass and the step (the ranks' gradients averaged, clipping, the check for a NaN).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "examples/sentiment/model.h"
#include "examples/sentiment/ranks.h"
#include "minigrad/minigrad.h"

namespace sentiment {

// The end of a step, the same for pretraining and training: `stats` (loss · count, correct, count, ...)
// summed and the gradients averaged over the ranks, then the gradients clipped. A NaN or inf would
// poison every weight at the step, so it throws from `op` before the caller steps, with the last good
// checkpoint still in place (every rank sees the same summed loss and norm, and stops alike). Returns the
// seconds this rank spent in the first of those collectives (TrainingLog::waiting_seconds).
double reduce_and_clip(const std::vector<minigrad::Variable>& parameters, const Ranks& ranks,
                       std::span<double> stats, double clip, const std::string& op, int64_t step,
                       const std::string& lr_option);

// The classifier's optimizers: AdamW for the whole model, or, if it has row-sparse tables (an
// nn::Embedding made sparse, as extras/ makes them), AdamW for all but those and SparseAdam for those
// (AdamW refuses their gradients: it would step every row); with review logits, a third (SparseAdam)
// for their tables, at their lr_scale(). One schedule for all.
class Optimizers {
 public:
  Optimizers(SentimentModel& model, const Config& c);
  const std::vector<minigrad::Variable>& parameters() const { return parameters_; }
  void set_learning_rate(double lr);
  void zero_grad();
  void step();
  // In a fixed order, for the training state: AdamW, then the tables' SparseAdam and the review logits',
  // for those there are.
  std::vector<minigrad::optim::Optimizer*> all();

 private:
  double logits_scale_;                         // the review logits' learning rate over the rest's
  std::vector<minigrad::Variable> parameters_;  // all of them, in the model's order
  std::optional<minigrad::optim::AdamW> dense_;
  std::optional<minigrad::optim::SparseAdam> sparse_, logits_;
};

}  // namespace sentiment
