// The language-model example: the token stream, a short training run and its checkpoint, perplexity,
// generation with and without the cache, and bad input.
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "examples/dates/model.h"
#include "examples/lm/lm.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace lm;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lm_test_" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Reviews with a pattern a small model can learn: "the <noun> was <adjective> ." sentences.
std::vector<Review> synthetic_reviews(int64_t n, Generator& g) {
  const std::vector<std::string> nouns = {"film", "movie", "plot", "acting", "story"};
  const std::vector<std::string> adjectives = {"great", "awful", "good", "boring", "fun"};
  std::vector<Review> out;
  for (int64_t i = 0; i < n; ++i) {
    std::string text;
    for (int s = 0; s < 4; ++s)
      text += "The " + nouns[g.next_below(nouns.size())] + " was " +
              adjectives[g.next_below(adjectives.size())] + ". ";
    out.push_back({text, 0});
  }
  return out;
}

Config tiny_config() {
  Config c = small_transformer<Config>(/*width=*/16, /*batch_size=*/16, /*lr=*/5e-3);
  c.vocab_size = 50;  // every token of the tiny corpus, seen once or more
  c.min_freq = 1;
  c.context = 16;
  c.num_layers = 1;
  c.dropout = 0;
  c.steps = 120;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lm_example)

BOOST_AUTO_TEST_CASE(reviews_become_one_stream_with_end_tokens) {
  const std::vector<Review> reviews = {{"Great film!", 1}, {"Awful<br />film.", 0}};
  Config c;
  c.min_freq = 1;
  const Vocabulary v = build_vocabulary(reviews, c);
  BOOST_TEST(v.token(kEos) == "<eos>");
  BOOST_TEST(v.token(0) == "<pad>");
  BOOST_TEST(v.token(1) == "<unk>");
  const Corpus corpus = encode(reviews, v);
  // great film ! <eos> awful film . <eos>
  BOOST_TEST(corpus.ids.size() == 8u);
  BOOST_TEST(corpus.ids[3] == kEos);
  BOOST_TEST(corpus.ids[7] == kEos);
  BOOST_TEST(corpus.ids[1] == corpus.ids[5]);  // "film" twice
  BOOST_TEST(corpus.characters == 11 + 16);
  BOOST_TEST(corpus.reviews == 2);
  BOOST_TEST(detokenize(corpus.ids, v) == "great film!");  // stops at <eos>
  const Vocabulary punctuation({"<pad>", "<unk>", "<eos>", "great", "(", "film", ")", "!"});
  BOOST_TEST(detokenize({3, 4, 5, 6, 7, 1}, punctuation) == "great (film)! <unk>");
}

BOOST_AUTO_TEST_CASE(a_short_training_run_learns_and_generates_the_same_with_and_without_cache) {
  manual_seed(0);
  Generator g(1);
  const std::vector<Review> reviews = synthetic_reviews(200, g);
  const Config config = tiny_config();
  Vocabulary vocabulary = build_vocabulary(reviews, config);
  const Corpus corpus = encode(reviews, vocabulary);
  Checkpoint checkpoint{config, vocabulary, make_model(config, vocabulary.size())};
  const Perplexity before = evaluate(*checkpoint.model, corpus, config.context);
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, corpus, progress, /*interactive=*/false);
  BOOST_TEST(log.last_loss < 0.5 * log.first_loss, "loss " << log.first_loss << " -> " << log.last_loss);
  const Perplexity after = evaluate(*checkpoint.model, corpus, config.context);
  BOOST_TEST(after.per_token < 0.2 * before.per_token, before.per_token << " -> " << after.per_token);
  BOOST_TEST(after.tokens == static_cast<int64_t>(corpus.ids.size()) - 1);  // every token after the first
  BOOST_TEST(std::abs(after.per_token - std::exp(after.nll / static_cast<double>(after.tokens))) < 1e-9);

  TempDir dir;
  checkpoint.save(dir.path);
  const Checkpoint loaded = Checkpoint::load(dir.path);
  BOOST_TEST(evaluate(*loaded.model, corpus, config.context).nll == after.nll);

  Generator g1(3), g2(3);
  const Sample cached = generate(loaded, "The film", {.max_new_tokens = 12}, g1, true);
  const Sample uncached = generate(loaded, "The film", {.max_new_tokens = 12}, g2, false);
  BOOST_TEST(cached.text == uncached.text);
  BOOST_TEST(cached.text.rfind("the film ", 0) == 0u, cached.text);
  BOOST_TEST(cached.new_tokens >= 1);
  BOOST_TEST(cached.new_tokens <= 12);
}

BOOST_AUTO_TEST_CASE(bad_input_gets_a_clear_error) {
  manual_seed(2);
  Generator g(1);
  const std::vector<Review> reviews = synthetic_reviews(10, g);
  const Config config = tiny_config();
  const Checkpoint checkpoint{config, build_vocabulary(reviews, config),
                              make_model(config, build_vocabulary(reviews, config).size())};
  std::string long_prompt;
  for (int i = 0; i < 15; ++i) long_prompt += "film ";
  expect_error<ValueError>(
      [&] { generate(checkpoint, long_prompt, {}, g); },
      "lm: the prompt has 15 tokens; the model reads at most 16 tokens at once, including the "
      "<eos> before the prompt and at least one new token");
  expect_error<ValueError>([&] { generate(checkpoint, "film", {.top_k = -1}, g); },
                           "sample: top_k must be >= 0, got -1");
  // A date model's folder is not a language model.
  TempDir dir;
  const dates::Config dc;
  const dates::Checkpoint other{dc, dates::make_model(dc)};
  other.save(dir.path);
  expect_error<Error>([&] { Checkpoint::load(dir.path); },
                      "checkpoint: " + (dir.path / "config.json").string() +
                          " is the configuration of a \"minigrad-dates\" model, not of a language model");
}

BOOST_AUTO_TEST_SUITE_END()
