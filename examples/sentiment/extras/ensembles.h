// Ensembles: several checkpoints (seeds of one configuration, say) read each review and average their
// log-odds. The main job's model is an ensemble of three.
#pragma once

#include <vector>

#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/predictions.h"

namespace sentiment {

// An ensemble of checkpoints (seeds of one configuration, say) reads each review with every member and
// averages their log-odds: P(positive) = σ(mean of the members' log-odds). Accuracy and mean
// cross-entropy of that on the reviews; one member gives that member's own figures.
Evaluation evaluate_ensemble(const std::vector<const Checkpoint*>& members,
                             const std::vector<Review>& reviews);
// The ensemble's mean log-odds for each review, in order.
std::vector<double> ensemble_log_odds(const std::vector<const Checkpoint*>& members,
                                      const std::vector<Review>& reviews);

}  // namespace sentiment
