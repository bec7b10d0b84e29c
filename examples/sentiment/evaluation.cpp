#include "examples/sentiment/evaluation.h"

#include <array>
#include <chrono>
#include <utility>

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

int64_t count_correct(const Variable& logits, const Tensor& labels) {
  return static_cast<int64_t>(sum(eq(argmax(logits.data(), 1), labels).to(DType::Float64)).item());
}

Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size,
                    const Ranks& ranks) {
  const auto start = Clock::now();
  NoGradGuard no_grad;
  model.eval();
  // This rank's share of the examples (all of them in a world of one).
  const auto [first, last] = ranks.share(static_cast<int64_t>(examples.size()));
  const std::vector<Example> share(examples.begin() + first, examples.begin() + last);
  std::array<double, 3> totals = {0, 0, 0};  // loss sum, correct, count
  for (const auto& indices : evaluation_batches(share, batch_size)) {
    const Batch batch = make_batch(share, indices, model.encoder->options.tokens.max_len);
    const Variable logits = model(batch);
    const double n = static_cast<double>(batch.labels.numel());
    totals[0] += cross_entropy(logits, batch.labels).item() * n;
    totals[1] += static_cast<double>(count_correct(logits, batch.labels));
    totals[2] += n;
  }
  if (ranks.world > 1) ranks.sum(totals);
  Evaluation result;
  result.count = static_cast<int64_t>(totals[2]);
  result.accuracy = result.count ? totals[1] / totals[2] : 0;
  result.loss = result.count ? totals[0] / totals[2] : 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace sentiment
