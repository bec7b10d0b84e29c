// minigrad-lm: a decoder-only Transformer language model of movie reviews, trained from scratch on the
// IMDB training reviews and measured by perplexity on the test reviews.
//
//   minigrad-lm train --data data/aclImdb --out out/lm
//   minigrad-lm eval --model out/lm --data data/aclImdb
//   minigrad-lm generate --model out/lm --prompt "This movie was" --top-p 0.9
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "examples/common/config_flags.h"
#include "examples/lm/lm.h"

namespace {

using namespace lm;
using namespace minigrad;

// Every k-th review, so that a subset spans both labels and every film; limit 0 keeps all.
std::vector<Review> spread(std::vector<Review> reviews, int64_t limit) {
  if (limit <= 0 || limit >= static_cast<int64_t>(reviews.size())) return reviews;
  std::vector<Review> subset;
  const size_t stride = reviews.size() / static_cast<size_t>(limit);
  for (size_t i = 0; subset.size() < static_cast<size_t>(limit); i += stride) subset.push_back(reviews[i]);
  return subset;
}

void print_perplexity(const Perplexity& p, int64_t reviews) {
  std::printf(
      "test perplexity: %.2f per token, %.4f bits per character (%lld reviews, %lld tokens, %.1f s)\n",
      p.per_token, p.bits_per_char, static_cast<long long>(reviews), static_cast<long long>(p.tokens),
      p.seconds);
}

Corpus test_corpus(const std::string& data, const Vocabulary& vocabulary, int64_t test_limit) {
  return encode(spread(sentiment::load_imdb_split(data, "test").reviews, test_limit), vocabulary);
}

int run_train(const Config& config, const std::string& data, const std::string& out_dir, bool evaluate_test,
              int64_t max_steps, int64_t train_limit, int64_t test_limit) {
  const auto start = std::chrono::steady_clock::now();
  manual_seed(config.seed);
  const std::vector<Review> reviews = spread(sentiment::load_imdb_split(data, "train").reviews, train_limit);
  Vocabulary vocabulary = build_vocabulary(reviews, config);
  const Corpus corpus = encode(reviews, vocabulary);
  Checkpoint checkpoint{config, vocabulary, make_model(config, vocabulary.size())};
  std::printf("training on %lld reviews (%zu tokens): vocabulary %lld tokens, %lld parameters, %d threads\n",
              static_cast<long long>(corpus.reviews), corpus.ids.size(),
              static_cast<long long>(vocabulary.size()),
              static_cast<long long>(checkpoint.model->parameter_count()), num_threads());
  std::printf("config: %s\n", config.to_json().dump().c_str());
  std::fflush(stdout);
  const TrainingLog log = train(checkpoint, corpus, std::cout, isatty(STDOUT_FILENO) != 0, max_steps);
  checkpoint.save(out_dir);
  std::printf(
      "trained in %.1f s, %.0f tokens/s (loss %.4f -> %.4f); saved "
      "%s/{model.safetensors,config.json,vocab.json}\n",
      log.seconds, log.tokens_per_second, log.first_loss, log.last_loss, out_dir.c_str());
  if (evaluate_test) {
    const Corpus test = test_corpus(data, vocabulary, test_limit);
    print_perplexity(evaluate(*checkpoint.model, test, config.context), test.reviews);
  }
  std::printf("total wall time (loading, training, evaluation): %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

int run_eval(const std::string& model_dir, const std::string& data, int64_t test_limit) {
  const Checkpoint checkpoint = Checkpoint::load(model_dir);
  const Corpus test = test_corpus(data, checkpoint.vocabulary, test_limit);
  print_perplexity(evaluate(*checkpoint.model, test, checkpoint.config.context), test.reviews);
  return 0;
}

int run_generate(const std::string& model_dir, const std::string& prompt, const nn::SamplingOptions& options,
                 uint64_t seed, int64_t samples, bool compare_cache) {
  const Checkpoint checkpoint = Checkpoint::load(model_dir);
  Generator generator(seed);
  for (int64_t i = 0; i < samples; ++i) {
    const Generator::State state = generator.state();
    const Sample s = generate(checkpoint, prompt, options, generator, /*use_cache=*/true);
    std::printf("[%lld] %s\n", static_cast<long long>(i + 1), s.text.c_str());
    std::printf("     %lld new tokens in %.3f s with the key/value cache: %.0f tokens/s\n",
                static_cast<long long>(s.new_tokens), s.seconds,
                static_cast<double>(s.new_tokens) / s.seconds);
    if (compare_cache) {  // the same draws again, recomputing every prefix
      Generator again;
      again.set_state(state);
      const Sample u = generate(checkpoint, prompt, options, again, /*use_cache=*/false);
      std::printf("     %lld new tokens in %.3f s without it: %.0f tokens/s (%s text)\n",
                  static_cast<long long>(u.new_tokens), u.seconds,
                  static_cast<double>(u.new_tokens) / u.seconds, u.text == s.text ? "the same" : "DIFFERENT");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "A causal Transformer language model of IMDB movie reviews, trained from scratch by minigrad."};
  app.require_subcommand(1);
  examples::add_threads_flag(app);

  Config config;
  std::string data = "data/aclImdb", out_dir = "out/lm";
  bool no_eval = false;
  int64_t max_steps = 0, train_limit = 0, test_limit = 2500;
  CLI::App* train =
      app.add_subcommand("train", "Train on the IMDB training reviews, save, report test perplexity");
  train->add_option("--data", data, "The aclImdb folder")->capture_default_str();
  train->add_option("--out", out_dir, "Where to save the checkpoint")->capture_default_str();
  examples::add_config_flags(train, config, kConfigFields);  // every field of Config
  train->add_flag("--no-eval", no_eval, "Skip the test perplexity");
  train->add_option("--max-steps", max_steps, "Stop after this many steps (quick checks)")
      ->check(CLI::Range(1, 100000000));
  train->add_option("--train-limit", train_limit, "Train on this many reviews only (quick checks)")
      ->check(CLI::Range(2, 100000000));
  train
      ->add_option("--test-limit", test_limit,
                   "Test reviews to evaluate, spread over the split (0: all 25,000)")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();

  std::string model_dir = "out/lm";
  CLI::App* eval = app.add_subcommand("eval", "Perplexity of a checkpoint on the IMDB test reviews");
  eval->add_option("--model", model_dir, "Checkpoint folder")->capture_default_str();
  eval->add_option("--data", data, "The aclImdb folder")->capture_default_str();
  eval->add_option("--test-limit", test_limit, "Test reviews, spread over the split (0: all 25,000)")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();

  std::string prompt = "This movie was";
  nn::SamplingOptions sampling{.max_new_tokens = 60, .temperature = 0.8, .top_k = 0, .top_p = 0.95};
  uint64_t seed = 0;
  int64_t samples = 3;
  bool compare_cache = false;
  CLI::App* generate = app.add_subcommand("generate", "Continue a prompt by sampling from the model");
  generate->add_option("--model", model_dir, "Checkpoint folder")->capture_default_str();
  generate->add_option("--prompt", prompt, "The start of a review")->capture_default_str();
  generate
      ->add_option("--tokens", sampling.max_new_tokens, "New tokens at most (the context limits them too)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  generate->add_option("--temperature", sampling.temperature, "Below 1 sharper, above 1 flatter; 0 greedy")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  generate->add_option("--top-k", sampling.top_k, "Draw from the k most likely tokens only (0: all)")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  generate->add_option("--top-p", sampling.top_p, "Draw from the smallest set with this much probability")
      ->check(CLI::Range(1e-9, 1.0))
      ->capture_default_str();
  generate->add_option("--seed", seed, "Seed of the sampling generator")->capture_default_str();
  generate->add_option("--samples", samples, "How many continuations")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  generate->add_flag("--compare-cache", compare_cache,
                     "Also generate each sample without the key/value cache, and compare speed and text");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*train) {
      if (config.num_hiddens % config.num_heads != 0) throw ValueError("lm", "--heads must divide --hiddens");
      return run_train(config, data, out_dir, !no_eval, max_steps, train_limit, test_limit);
    }
    if (*eval) return run_eval(model_dir, data, test_limit);
    return run_generate(model_dir, prompt, sampling, seed, samples, compare_cache);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
