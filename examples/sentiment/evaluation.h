// Measuring the classifier: accuracy and loss on examples, log-odds, and one review's prediction with its
// attention weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/checkpoint.h"
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

// P(positive) for each example, in order.
std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples);
// The log-odds of positive, logit(positive) - logit(negative), for each example, in order.
std::vector<double> positive_log_odds(SentimentModel& model, const std::vector<Example>& examples);

struct Prediction {
  double positive = 0;                      // P(positive)
  std::vector<std::string> tokens;          // the review as the model saw it (after truncation)
  std::vector<minigrad::Tensor> attention;  // per layer: (heads, tokens, tokens), queries by keys
};

// Reads one review with the checkpoint's model and keeps its attention weights.
Prediction predict(const Checkpoint& checkpoint, const std::string& text);

// How many rows of logits (B, 2) pick the label.
int64_t count_correct(const minigrad::Variable& logits, const minigrad::Tensor& labels);

}  // namespace sentiment
