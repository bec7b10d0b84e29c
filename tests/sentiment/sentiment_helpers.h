// What the sentiment example's tests share: files written on the fly, reviews a bag of words can learn,
// and a small model with data it learns from.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/extras/extended_model.h"

namespace sentiment::testing {

namespace fs = std::filesystem;

inline void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

// Reviews whose label a bag of words can learn: "great"/"awful" among neutral filler.
inline std::vector<Review> synthetic_reviews(int64_t n, minigrad::Generator& g) {
  const std::vector<std::string> filler = {"the", "movie", "plot", "actor", "scene",
                                           "was", "a",     "and",  "it",    "story"};
  std::vector<Review> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 2;
    std::string text;
    for (int w = 0; w < 12; ++w) text += filler[g.next_below(filler.size())] + " ";
    text += label ? "great great" : "awful awful";
    for (int w = 0; w < 6; ++w) text += " " + filler[g.next_below(filler.size())];
    out.push_back({text, label});
  }
  return out;
}

inline std::vector<Review> synthetic(int64_t n, uint64_t seed) {
  minigrad::Generator g(seed);
  return synthetic_reviews(n, g);
}

// A small model and data it can learn.
struct SmallRun {
  Config config;
  ExtendedConfig extended;  // the extensions' options (extras/extended_config.h), the main job's but these
  std::vector<Review> reviews;
  Vocabulary vocabulary{{"<pad>", "<unk>"}};
  std::vector<Example> examples;

  explicit SmallRun(std::vector<Review> texts, int64_t max_len = 32) : reviews(std::move(texts)) {
    config.num_hiddens = 16;
    config.num_heads = 2;
    config.ffn_num_hiddens = 32;
    config.max_len = max_len;
    config.batch_size = 16;
    config.epochs = 1;
    extended.ngram_buckets = 64;  // the n-gram table too: resuming must restore it exactly as well
    extended.nb_max = 0;          // no NB branch (a test of its own has one)
    std::vector<std::vector<std::string>> tokens;
    for (const Review& r : reviews) tokens.push_back(tokenize(r.text));
    vocabulary = Vocabulary::build(tokens, 100, 1);
    examples = encode(reviews, vocabulary, config.max_len);
  }
  // config with `extended` in its extensions.
  Config full() const {
    Config c = config;
    extended.store_in(c);
    return c;
  }
  Checkpoint make() const {
    const Config c = full();
    return Checkpoint{c, vocabulary,
                      make_extended_model(c, vocabulary.size(), build_ngram_vocabulary(c, examples))};
  }
};

}  // namespace sentiment::testing
