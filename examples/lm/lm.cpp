#include "examples/lm/lm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "examples/common/checkpoint_folder.h"
#include "examples/common/json_file.h"
#include "examples/common/progress.h"
#include "examples/common/schedule.h"
#include "minigrad/tensor/file_io.h"

namespace lm {

using namespace minigrad;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
constexpr const char* kKind = "minigrad-lm";
}

json Config::to_json() const {
  json j = examples::fields_to_json(*this, kConfigFields);
  j["kind"] = kKind;  // another program refuses this checkpoint
  return j;
}

Config Config::from_json(const json& j, const std::string& source) {
  examples::check_config_kind(j, source, kKind, "a language model");
  return examples::fields_from_json<Config>(j, kConfigFields, "checkpoint", source);
}

std::string Config::architecture() const {
  std::ostringstream s;
  s << kKind << " context=" << context << " num_hiddens=" << num_hiddens << " num_heads=" << num_heads
    << " ffn_num_hiddens=" << ffn_num_hiddens << " num_layers=" << num_layers;
  return s.str();
}

Vocabulary build_vocabulary(const std::vector<Review>& reviews, const Config& config) {
  std::vector<std::vector<std::string>> tokenized;
  tokenized.reserve(reviews.size());
  for (const Review& r : reviews) tokenized.push_back(sentiment::tokenize(r.text));
  std::vector<std::string> tokens =
      Vocabulary::build(tokenized, config.vocab_size - 1, config.min_freq).tokens();
  // The tokenizer splits "<" off as punctuation, so no text produces the token "<eos>".
  tokens.insert(tokens.begin() + kEos, "<eos>");
  return Vocabulary(std::move(tokens));
}

Corpus encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary) {
  Corpus c;
  for (const Review& r : reviews) {
    for (const std::string& token : sentiment::tokenize(r.text)) c.ids.push_back(vocabulary.id(token));
    c.ids.push_back(kEos);
    c.characters += static_cast<int64_t>(r.text.size());
    ++c.reviews;
  }
  return c;
}

std::shared_ptr<nn::TransformerDecoder> make_model(const Config& c, int64_t vocab_size) {
  auto model = std::make_shared<nn::TransformerDecoder>(
      nn::TransformerDecoderOptions{.layer = {.num_hiddens = c.num_hiddens,
                                              .ffn_num_hiddens = c.ffn_num_hiddens,
                                              .num_heads = c.num_heads,
                                              .dropout = c.dropout,
                                              .norm_first = true},
                                    .num_layers = c.num_layers,
                                    .tokens = {.vocab_size = vocab_size, .max_len = c.context},
                                    .cross_attention = false,
                                    .tie_weights = true});
  // N(0, 1/d): after ·√d the embedding has the positional encoding's scale, and as the (tied) output
  // projection of a layer-normed state it starts with logits of about unit size.
  const Tensor& table = model->embedding->weight.data();
  table.copy_(Tensor::normal(table.shape(), 0, 1 / std::sqrt(static_cast<double>(c.num_hiddens))));
  return model;
}

void Checkpoint::save(const std::filesystem::path& dir) const {
  examples::save_checkpoint_folder(
      dir, config.to_json(), vocabulary.tokens(), *model,
      {{"architecture", config.architecture()}, {"vocabulary", std::to_string(vocabulary.size())}});
}

Checkpoint Checkpoint::load(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw Error("checkpoint", dir.string() + " is not a folder (train a model first, or pass --model DIR)");
  const Config config =
      Config::from_json(examples::parse_json(dir / "config.json"), (dir / "config.json").string());
  const json tokens = examples::parse_json(dir / "vocab.json");
  if (!tokens.is_array())
    throw Error("checkpoint", (dir / "vocab.json").string() + " is not a list of tokens");
  Vocabulary vocabulary(tokens.get<std::vector<std::string>>());
  const std::string weights = (dir / "model.safetensors").string();
  const SafetensorsFile file = load_safetensors(weights);
  examples::check_architecture(file, weights, config.architecture());
  auto model = make_model(config, vocabulary.size());
  optim::load_weights(*model, file, weights);
  model->eval();
  return Checkpoint{config, std::move(vocabulary), std::move(model)};
}

namespace {

// Windows of the stream: inputs ids[o, o + T) and targets ids[o + 1, o + T + 1) for each offset o.
std::pair<Tensor, Tensor> windows(const std::vector<int64_t>& ids, const std::vector<int64_t>& offsets,
                                  int64_t t) {
  const int64_t b = static_cast<int64_t>(offsets.size());
  Tensor inputs = Tensor::empty({b, t}, DType::Int64), targets = Tensor::empty({b, t}, DType::Int64);
  for (int64_t row = 0; row < b; ++row) {
    const auto start = ids.begin() + offsets[static_cast<size_t>(row)];
    std::copy(start, start + t, inputs.data_ptr<int64_t>() + row * t);
    std::copy(start + 1, start + t + 1, targets.data_ptr<int64_t>() + row * t);
  }
  return {inputs, targets};
}

}  // namespace

TrainingLog train(Checkpoint& checkpoint, const Corpus& corpus, std::ostream& out, bool interactive,
                  int64_t max_steps) {
  const Config& c = checkpoint.config;
  nn::TransformerDecoder& model = *checkpoint.model;
  const int64_t t = c.context;
  if (static_cast<int64_t>(corpus.ids.size()) < t + 2)
    throw ValueError("lm", "the training text is too short");
  Generator data(c.seed + 1);  // window offsets; initialisation and dropout use the default generator
  const int64_t total = max_steps > 0 ? std::min(max_steps, c.steps) : c.steps;
  optim::AdamW optimizer(model.parameters(), {.lr = c.lr, .weight_decay = c.weight_decay});
  const optim::WarmupCosine schedule = examples::warmup_cosine(c.lr, c.warmup, total);
  examples::Progress progress(out, interactive, total);
  TrainingLog log;
  const auto start = Clock::now();
  double tokens = 0;
  examples::LossSummary losses;
  model.train();
  for (int64_t step = 0; step < total; ++step) {
    std::vector<int64_t> offsets;
    for (int64_t i = 0; i < c.batch_size; ++i)
      offsets.push_back(
          static_cast<int64_t>(data.next_below(corpus.ids.size() - static_cast<size_t>(t) - 1)));
    const auto [inputs, targets] = windows(corpus.ids, offsets, t);
    optimizer.set_learning_rate(schedule.at(step));
    optimizer.zero_grad();
    const Variable logits = model(inputs, Variable());  // (B, T, V)
    const Variable loss = cross_entropy(reshape(logits, {-1, logits.shape()[2]}), targets.reshape({-1}));
    loss.backward();
    optim::clip_grad_norm_(optimizer.parameters(), c.clip);
    optimizer.step();
    tokens += static_cast<double>(inputs.numel());
    losses.add(loss.item());
    char stats[64];
    std::snprintf(stats, sizeof stats, "loss %.4f (ppl %.1f)", loss.item(), std::exp(loss.item()));
    progress.update(step + 1, stats, tokens);
  }
  model.eval();
  log.first_loss = losses.first();
  log.last_loss = losses.last();
  log.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log.tokens_per_second = tokens / std::max(log.seconds, 1e-9);
  return log;
}

Perplexity evaluate(nn::TransformerDecoder& model, const Corpus& corpus, int64_t context,
                    int64_t batch_size) {
  const auto start = Clock::now();
  NoGradGuard no_grad;
  model.eval();
  Perplexity p;
  const int64_t n = static_cast<int64_t>(corpus.ids.size()) - 1;  // predictions: every token after the first
  std::vector<int64_t> offsets;
  auto run = [&](int64_t t) {
    const auto [inputs, targets] = windows(corpus.ids, offsets, t);
    const Variable logits = model(inputs, Variable());
    p.nll += cross_entropy(reshape(logits, {-1, logits.shape()[2]}), targets.reshape({-1})).item() *
             static_cast<double>(targets.numel());
    p.tokens += targets.numel();
    offsets.clear();
  };
  int64_t at = 0;
  for (; at + context <= n; at += context) {
    offsets.push_back(at);
    if (static_cast<int64_t>(offsets.size()) == batch_size) run(context);
  }
  if (!offsets.empty()) run(context);
  if (at < n) {  // the last, shorter window
    offsets.push_back(at);
    run(n - at);
  }
  p.per_token = std::exp(p.nll / static_cast<double>(std::max<int64_t>(p.tokens, 1)));
  p.bits_per_char = p.nll / std::log(2.0) / static_cast<double>(std::max<int64_t>(corpus.characters, 1));
  p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return p;
}

std::string detokenize(const std::vector<int64_t>& ids, const Vocabulary& vocabulary) {
  std::string out;
  for (int64_t id : ids) {
    if (id == kEos) break;
    const std::string& token = vocabulary.token(id);
    const bool closing =
        token.size() == 1 && std::string_view(".,!?;:)'\"").find(token[0]) != std::string::npos;
    if (!out.empty() && !closing && out.back() != '(') out += ' ';
    out += token;
  }
  return out;
}

Sample generate(const Checkpoint& checkpoint, const std::string& prompt, nn::SamplingOptions options,
                Generator& generator, bool use_cache) {
  std::vector<int64_t> prefix{kEos};  // reviews start after an <eos> in the training stream
  for (const std::string& token : sentiment::tokenize(prompt))
    prefix.push_back(checkpoint.vocabulary.id(token));
  const int64_t context = checkpoint.config.context, p = static_cast<int64_t>(prefix.size());
  if (p >= context) {
    throw ValueError("lm", "the prompt has " + std::to_string(p - 1) + " tokens; the model reads at most " +
                               std::to_string(context) + " tokens at once, including the " +
                               "<eos> before the prompt and at least one new token");
  }
  options.max_new_tokens = std::min(options.max_new_tokens, context - p);
  options.end_token = kEos;
  const auto start = Clock::now();
  nn::Generation g;
  const Tensor prefix_tensor = Tensor::from_vector(prefix, {1, p});
  if (use_cache) {
    nn::CachedDecoderSteps steps(*checkpoint.model);
    g = nn::sample(steps, prefix_tensor, options, generator);
  } else {
    nn::UncachedDecoderSteps steps(*checkpoint.model);
    g = nn::sample(steps, prefix_tensor, options, generator);
  }
  Sample s;
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  s.new_tokens = static_cast<int64_t>(g.tokens[0].size());
  std::vector<int64_t> all(prefix.begin() + 1, prefix.end());
  all.insert(all.end(), g.tokens[0].begin(), g.tokens[0].end());
  s.text = detokenize(all, checkpoint.vocabulary);
  return s;
}

}  // namespace lm
