#include "examples/sentiment/training.h"

#include "examples/common/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <ostream>

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary,
                            int64_t max_len) {
  if (max_len < 2) throw ValueError("encode", "max_len must be at least 2");
  std::vector<Example> out;
  out.reserve(reviews.size());
  for (const Review& r : reviews) {
    std::vector<int64_t> ids;
    for (const std::string& token : tokenize(r.text)) ids.push_back(vocabulary.id(token));
    if (static_cast<int64_t>(ids.size()) > max_len) {
      const int64_t head = max_len / 2, tail = max_len - head;
      ids.erase(ids.begin() + head, ids.end() - tail);
    }
    if (ids.empty()) ids.push_back(Vocabulary::kUnk);
    out.push_back({std::move(ids), r.label});
  }
  return out;
}

Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices, int64_t max_len) {
  const int64_t b = static_cast<int64_t>(indices.size());
  int64_t t = 1;
  for (size_t i : indices) t = std::max<int64_t>(t, static_cast<int64_t>(examples[i].ids.size()));
  if (t > max_len) {
    throw ValueError("make_batch", "an example has " + std::to_string(t) + " tokens, more than max_len " +
                                       std::to_string(max_len));
  }
  // Round the length up to a multiple of 16: batches then come in a few shapes, whose buffers the
  // allocator recycles, instead of a new shape (and fresh memory from the kernel) at almost every step.
  // Never past max_len, the length of the positional-encoding table.
  t = std::min((t + 15) / 16 * 16, max_len);
  Batch batch{Tensor::zeros({b, t}, DType::Int64), Tensor::empty({b}, DType::Int64),
              Tensor::empty({b}, DType::Int64)};
  int64_t* tokens = batch.tokens.data_ptr<int64_t>();
  for (int64_t row = 0; row < b; ++row) {
    const Example& e = examples[indices[static_cast<size_t>(row)]];
    std::copy(e.ids.begin(), e.ids.end(), tokens + row * t);  // the rest stays <pad> (0)
    batch.lengths.data_ptr<int64_t>()[row] = static_cast<int64_t>(e.ids.size());
    batch.labels.data_ptr<int64_t>()[row] = e.label;
    batch.token_count += static_cast<int64_t>(e.ids.size());
  }
  return batch;
}

namespace {

std::vector<std::vector<size_t>> chunk(const std::vector<size_t>& order, int64_t batch_size) {
  std::vector<std::vector<size_t>> batches;
  for (size_t at = 0; at < order.size(); at += static_cast<size_t>(batch_size)) {
    batches.emplace_back(
        order.begin() + static_cast<std::ptrdiff_t>(at),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), at + batch_size)));
  }
  return batches;
}

template <typename T>
void shuffle(std::vector<T>& v,
             Generator& g) {  // Fisher-Yates with minigrad's generator: same seed, same order
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[g.next_below(i)]);
}

}  // namespace

std::vector<std::vector<size_t>> training_batches(const std::vector<Example>& examples, int64_t batch_size,
                                                  Generator& generator) {
  if (batch_size < 1) throw ValueError("training_batches", "batch_size must be positive");
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, generator);
  const size_t window = static_cast<size_t>(batch_size) * 50;
  for (size_t at = 0; at < order.size(); at += window) {
    auto first = order.begin() + static_cast<std::ptrdiff_t>(at);
    auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), at + window));
    std::stable_sort(first, last,
                     [&](size_t a, size_t b) { return examples[a].ids.size() < examples[b].ids.size(); });
  }
  std::vector<std::vector<size_t>> batches = chunk(order, batch_size);
  shuffle(batches, generator);
  return batches;
}

std::vector<std::vector<size_t>> evaluation_batches(const std::vector<Example>& examples,
                                                    int64_t batch_size) {
  // Longest first: every later batch fits in the buffers the first one freed, so the allocator recycles
  // them instead of asking the kernel for fresh pages at each new, longer batch.
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return examples[a].ids.size() > examples[b].ids.size(); });
  return chunk(order, batch_size);
}

namespace {

// How many rows of logits (B, 2) pick the label.
int64_t count_correct(const Variable& logits, const Tensor& labels) {
  return static_cast<int64_t>(sum(eq(argmax(logits.data(), 1), labels).to(DType::Float64)).item());
}

}  // namespace

Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size) {
  const auto start = Clock::now();
  NoGradGuard no_grad;
  model.eval();
  Evaluation result;
  double loss_sum = 0;
  int64_t correct = 0;
  for (const auto& indices : evaluation_batches(examples, batch_size)) {
    const Batch batch = make_batch(examples, indices, model.encoder->options.max_len);
    const Variable logits = model.forward(batch.tokens, batch.lengths);
    const int64_t n = batch.labels.numel();
    loss_sum += cross_entropy(logits, batch.labels).item() * static_cast<double>(n);
    correct += count_correct(logits, batch.labels);
    result.count += n;
  }
  result.accuracy = result.count ? static_cast<double>(correct) / static_cast<double>(result.count) : 0;
  result.loss = result.count ? loss_sum / static_cast<double>(result.count) : 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<double> out(examples.size());
  for (const auto& indices : evaluation_batches(examples, 256)) {
    const Batch batch = make_batch(examples, indices, model.encoder->options.max_len);
    const Tensor p = softmax(model.forward(batch.tokens, batch.lengths).data(), 1);  // (B, 2)
    for (size_t i = 0; i < indices.size(); ++i) out[indices[i]] = p.at({static_cast<int64_t>(i), 1});
  }
  return out;
}

Prediction predict(const Checkpoint& checkpoint, const std::string& text) {
  const std::vector<Example> examples = encode({{text, 0}}, checkpoint.vocabulary, checkpoint.config.max_len);
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

TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options) {
  if (examples.empty()) throw ValueError("train", "no examples to train on");
  const int64_t max_steps = options.max_steps;
  const Config& c = checkpoint.config;
  SentimentModel& model = *checkpoint.model;
  const auto start = Clock::now();
  Generator order_generator(c.seed + 1);  // batch order; dropout draws from the default generator
  const int64_t steps_per_epoch = (static_cast<int64_t>(examples.size()) + c.batch_size - 1) / c.batch_size;
  int64_t total = steps_per_epoch * c.epochs;
  if (max_steps > 0) total = std::min(total, max_steps);
  optim::AdamW optimizer(model.named_parameters(), {.lr = c.lr, .weight_decay = c.weight_decay});
  const optim::WarmupCosine schedule(
      {.peak_lr = c.lr,
       .warmup_steps = static_cast<int64_t>(c.warmup * static_cast<double>(total)),
       .total_steps = std::max<int64_t>(total, 1) + 1});
  examples::Progress progress(out, options.interactive, total);
  TrainingLog log;
  int64_t step = 0;
  double tokens = 0;
  model.train();
  for (int64_t epoch = 1; epoch <= c.epochs && step < total; ++epoch) {
    double loss_sum = 0;
    int64_t seen = 0, correct = 0;
    for (const auto& indices : training_batches(examples, c.batch_size, order_generator)) {
      if (step >= total) break;
      const Batch batch = make_batch(examples, indices, c.max_len);
      optimizer.set_learning_rate(schedule.at(step));
      optimizer.zero_grad();
      const Variable logits = model.forward(batch.tokens, batch.lengths);
      const Variable loss = cross_entropy(logits, batch.labels);
      loss.backward();
      const double norm = optim::clip_grad_norm(optimizer.parameters(), c.clip);
      // A NaN or inf would poison every weight at the step: stop before it, with the last good
      // checkpoint still in place.
      if (!std::isfinite(loss.item()) || !std::isfinite(norm)) {
        throw Error("train", "step " + std::to_string(step + 1) + ": the " +
                                 (std::isfinite(loss.item()) ? "gradient norm" : "loss") + " is " +
                                 std::to_string(std::isfinite(loss.item()) ? norm : loss.item()) +
                                 "; stopping without taking the step (try a lower --lr)");
      }
      optimizer.step();
      ++step;
      if (options.checkpoint_every > 0 && step % options.checkpoint_every == 0 && options.save) {
        model.eval();  // saved as it will be used; the weights are the same in either mode
        options.save(step);
        model.train();
      }
      const int64_t n = batch.labels.numel();
      loss_sum += loss.item() * static_cast<double>(n);
      correct += count_correct(logits, batch.labels);
      seen += n;
      tokens += static_cast<double>(batch.token_count);
      char stats[120];
      std::snprintf(stats, sizeof stats, "epoch %lld/%lld  loss %.4f  acc %.4f",
                    static_cast<long long>(epoch), static_cast<long long>(c.epochs),
                    loss_sum / static_cast<double>(seen),
                    static_cast<double>(correct) / static_cast<double>(seen));
      progress.update(step, stats, tokens);
    }
    log.epoch_loss.push_back(seen ? loss_sum / static_cast<double>(seen) : 0);
    log.epoch_accuracy.push_back(seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0);
  }
  model.eval();
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

}  // namespace sentiment
