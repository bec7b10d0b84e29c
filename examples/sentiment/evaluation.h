// Measuring the classifier: accuracy and loss on examples. (Log-odds for ensembles, and one review's
// prediction with its attention weights: extras/predictions.h.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/model.h"
#include "examples/sentiment/ranks.h"

namespace sentiment {

struct Evaluation {
  int64_t count = 0;
  double accuracy = 0;
  double loss = 0;  // mean cross-entropy
  double seconds = 0;
};

// Accuracy and loss of the model (in eval mode, without recording a graph) on the examples; with several
// ranks, each evaluates its share and the counts are summed.
Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size = 64,
                    const Ranks& ranks = {});

// How many rows of logits (B, 2) pick the label.
int64_t count_correct(const minigrad::Variable& logits, const minigrad::Tensor& labels);

}  // namespace sentiment
