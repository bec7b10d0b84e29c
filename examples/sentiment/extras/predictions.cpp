#include "examples/sentiment/extras/predictions.h"

#include <cmath>

namespace sentiment {

using namespace minigrad;

std::vector<double> positive_log_odds(SentimentModel& model, const std::vector<Example>& examples) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<double> out(examples.size());
  for (const auto& indices : evaluation_batches(examples, 256)) {
    const Batch batch = make_batch(examples, indices, model.encoder->options.tokens.max_len);
    const Tensor z = model(batch).data();  // (B, 2)
    for (size_t i = 0; i < indices.size(); ++i) {
      const auto row = static_cast<int64_t>(i);
      out[indices[i]] = z.at({row, 1}) - z.at({row, 0});
    }
  }
  return out;
}

std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples) {
  // softmax(z)[1] = σ(z₁ - z₀)
  std::vector<double> p = positive_log_odds(model, examples);
  for (double& v : p) v = 1 / (1 + std::exp(-v));
  return p;
}

Prediction predict(const Checkpoint& checkpoint, const std::string& text) {
  const std::vector<Example> examples =
      encode({{text, 0}}, checkpoint.vocabulary, checkpoint.config.max_len, checkpoint.model->featurizer());
  Prediction out;
  out.positive = positive_probabilities(*checkpoint.model, examples)[0];
  for (int64_t id : examples[0].ids) out.tokens.push_back(checkpoint.vocabulary.token(id));
  // The batch was padded (to a multiple of 16): keep the review's own tokens only.
  const int64_t n = static_cast<int64_t>(out.tokens.size());
  for (const Tensor& w : checkpoint.model->encoder->attention_weights()) {  // (1, heads, T, T)
    out.attention.push_back(w.select(0, 0).slice(1, 0, n).slice(2, 0, n).contiguous());
  }
  return out;
}

}  // namespace sentiment
