#include "examples/dates/training.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "examples/common/progress.h"
#include "examples/common/schedule.h"
#include "minigrad/tensor/data.h"

namespace dates {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

Batch make_batch(const std::vector<Example>& examples, int64_t max_source_len) {
  const int64_t b = static_cast<int64_t>(examples.size());
  if (b == 0) throw ValueError("dates", "an empty batch");
  std::vector<std::vector<int64_t>> sources;
  for (const Example& e : examples) {
    if (e.source.empty()) throw ValueError("dates", "empty source: there is no date to read");
    sources.push_back(CharVocabulary::encode(e.source));
    if (static_cast<int64_t>(e.source.size()) > max_source_len) {
      throw ValueError("dates", "\"" + e.source + "\" has " + std::to_string(e.source.size()) +
                                    " characters; the model reads at most " + std::to_string(max_source_len));
    }
  }
  auto [source, source_lens] =
      pad_sequences(sources, {.padding = CharVocabulary::kPad});  // (B, longest), (B)
  Batch batch{source, source_lens, Tensor::empty({b, kTargetSteps}, DType::Int64),
              Tensor::empty({b, kTargetSteps}, DType::Int64)};
  int64_t* input = batch.decoder_input.data_ptr<int64_t>();
  int64_t* labels = batch.labels.data_ptr<int64_t>();
  for (int64_t row = 0; row < b; ++row) {
    const std::vector<int64_t>& s = sources[static_cast<size_t>(row)];
    std::vector<int64_t> target = CharVocabulary::encode(examples[static_cast<size_t>(row)].target);
    if (static_cast<int64_t>(target.size()) != kTargetSteps - 1)
      throw ValueError("dates",
                       "target \"" + examples[static_cast<size_t>(row)].target + "\" is not an ISO date");
    // decoder input: <bos> t0 … t9; labels: t0 … t9 <eos>
    input[row * kTargetSteps] = CharVocabulary::kBos;
    std::copy(target.begin(), target.end(), input + row * kTargetSteps + 1);
    std::copy(target.begin(), target.end(), labels + row * kTargetSteps);
    labels[row * kTargetSteps + kTargetSteps - 1] = CharVocabulary::kEos;
    batch.tokens += static_cast<int64_t>(s.size()) + kTargetSteps;
  }
  return batch;
}

TrainingLog train(Checkpoint& checkpoint, const std::vector<Date>& training_days, std::ostream& out,
                  bool interactive, int64_t max_steps) {
  const Config& c = checkpoint.config;
  nn::Transformer& model = *checkpoint.model;
  if (training_days.empty()) throw ValueError("dates", "no training days");
  const auto start = Clock::now();
  Generator data(c.seed + 1);  // which days, in which styles; initialisation uses the default generator
  const int64_t total = max_steps > 0 ? std::min(max_steps, c.steps) : c.steps;
  optim::AdamW optimizer(model.parameters(), {.lr = c.lr, .weight_decay = c.weight_decay});
  const optim::WarmupCosine schedule = examples::warmup_cosine(c.lr, c.warmup, total);
  examples::Progress progress(out, interactive, total);
  TrainingLog log;
  double tokens = 0;
  examples::LossSummary losses;
  model.train();
  for (int64_t step = 0; step < total; ++step) {
    std::vector<Example> examples;
    for (int64_t i = 0; i < c.batch_size; ++i) {
      const Date& d = training_days[data.next_below(training_days.size())];
      const Style style = random_style(data);
      examples.push_back({write_date(d, style), iso(d), style});
    }
    const Batch batch = make_batch(examples, c.max_source_len);
    optimizer.set_learning_rate(schedule.at(step));
    optimizer.zero_grad();
    const Variable logits =
        model(batch.source, batch.decoder_input, {.source_valid_lens = batch.source_lens});  // (B, 11, V)
    const Variable loss =
        cross_entropy(reshape(logits, {-1, CharVocabulary::kSize}), batch.labels.reshape({-1}));
    loss.backward();
    optim::clip_grad_norm_(optimizer.parameters(), c.clip);
    optimizer.step();
    tokens += static_cast<double>(batch.tokens);
    losses.add(loss.item());
    char stats[64];
    std::snprintf(stats, sizeof stats, "loss %.4f", loss.item());
    progress.update(step + 1, stats, tokens);
  }
  model.eval();
  log.first_loss = losses.first();
  log.last_loss = losses.last();
  log.steps = total;
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

namespace {

// Batched greedy decoding of sources (all valid): the ISO strings the model writes.
std::vector<std::string> normalise(nn::Transformer& model, const std::vector<Example>& examples,
                                   int64_t max_source_len) {
  NoGradGuard no_grad;
  model.eval();
  const Batch batch = make_batch(examples, max_source_len);
  const Variable memory = model.encode(batch.source, batch.source_lens);
  nn::CachedDecoderSteps steps(*model.decoder, memory, batch.source_lens);
  const int64_t b = batch.source.shape()[0];
  const nn::Generation g = nn::greedy(steps, Tensor::full({b, 1}, CharVocabulary::kBos, DType::Int64),
                                      {.max_new_tokens = kTargetSteps, .end_token = CharVocabulary::kEos});
  std::vector<std::string> out;
  for (const auto& tokens : g.tokens) out.push_back(CharVocabulary::decode(tokens));
  return out;
}

}  // namespace

Evaluation evaluate(nn::Transformer& model, const std::vector<Example>& examples, int64_t max_source_len,
                    int64_t batch_size) {
  const auto start = Clock::now();
  Evaluation e;
  e.by_style.assign(kStyleCount, {0, 0});
  for (size_t at = 0; at < examples.size(); at += static_cast<size_t>(batch_size)) {
    const std::vector<Example> part(
        examples.begin() + static_cast<std::ptrdiff_t>(at),
        examples.begin() + static_cast<std::ptrdiff_t>(std::min(examples.size(), at + batch_size)));
    const std::vector<std::string> written = normalise(model, part, max_source_len);
    for (size_t i = 0; i < part.size(); ++i) {
      const bool right = written[i] == part[i].target;
      auto& [correct, count] = e.by_style[static_cast<size_t>(part[i].style)];
      correct += right;
      ++count;
      e.correct += right;
      if (!right) e.mistakes.emplace_back(part[i], written[i]);
    }
  }
  e.count = static_cast<int64_t>(examples.size());
  e.accuracy = e.count ? static_cast<double>(e.correct) / static_cast<double>(e.count) : 0;
  e.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return e;
}

std::vector<Example> validation_examples(const Config& config, const Split& split) {
  Generator g(config.seed + 2);
  return examples_for(split.validation, g);
}

std::vector<Example> held_out_examples(const Config& config, const Split& split) {
  Generator g(config.seed + 3);
  return examples_for(split.held_out, g);
}

Prediction predict(const Checkpoint& checkpoint, const std::string& text, int64_t beam_width, int64_t layer) {
  nn::Transformer& model = *checkpoint.model;
  if (beam_width < 1)
    throw ValueError("dates", "beam width must be at least 1, got " + std::to_string(beam_width));
  const int64_t layers = checkpoint.config.num_decoder_layers;
  if (layer < 0) layer += layers;
  if (layer < 0 || layer >= layers)
    throw ValueError(
        "dates", "the decoder has " + std::to_string(layers) + " layers, no layer " + std::to_string(layer));
  NoGradGuard no_grad;
  model.eval();
  const Batch batch = make_batch({{text, "0000-00-00"}}, checkpoint.config.max_source_len);
  const Variable memory = model.encode(batch.source, batch.source_lens);
  Prediction p;
  std::vector<int64_t> written;
  const Tensor start = Tensor::full({1, 1}, CharVocabulary::kBos, DType::Int64);
  if (beam_width == 1) {
    nn::CachedDecoderSteps steps(*model.decoder, memory, batch.source_lens);
    written = nn::greedy(steps, start, {.max_new_tokens = kTargetSteps, .end_token = CharVocabulary::kEos})
                  .tokens[0];
  } else {
    nn::CachedDecoderSteps steps(*model.decoder, memory, batch.source_lens);
    p.beams = nn::beam_search(
        steps, start,
        {.beam_width = beam_width, .max_new_tokens = kTargetSteps, .end_token = CharVocabulary::kEos});
    written = p.beams.at(0).tokens;
  }
  p.output = CharVocabulary::decode(written);
  for (char c : text) p.input_chars.push_back(std::string(1, c));
  for (int64_t id : written) p.output_chars.push_back(CharVocabulary::token(id));
  // Teacher-force the decoder on its own output to read the cross-attention weights at every step:
  // the row of output character i is the step that wrote it (its input is <bos> and the characters before).
  std::vector<int64_t> input{CharVocabulary::kBos};
  input.insert(input.end(), written.begin(), written.end() - 1);
  const int64_t steps = static_cast<int64_t>(input.size());
  (*model.decoder)(Tensor::from_vector(input, {1, steps}), memory, {.source_valid_lens = batch.source_lens});
  const Tensor w = model.decoder->cross_attention_weights()[static_cast<size_t>(layer)];  // (1, heads, T, S)
  p.cross_attention = mean(w.select(0, 0), {0});                                          // (T, S)
  return p;
}

}  // namespace dates
