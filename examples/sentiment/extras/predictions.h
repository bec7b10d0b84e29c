// What a model says of reviews: the log-odds and P(positive) of examples (ensembles average the
// log-odds), and one review's prediction with its attention weights (the `predict` command).
#pragma once

#include <string>
#include <vector>

#include "examples/sentiment/checkpoint.h"
#include "minigrad/minigrad.h"

namespace sentiment {

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

}  // namespace sentiment
