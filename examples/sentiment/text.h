// Text for the sentiment model: tokenizing reviews, the vocabulary, and loading the IMDB data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sentiment {

// Splits a review into tokens (after examples::valid_utf8, examples/common/utf8.h):
//   - ASCII letters are lowercased; "<br />" (IMDB's line breaks) counts as a space;
//   - words are runs of letters, digits and non-ASCII characters (so UTF-8 letters stay inside words,
//     and so does U+FFFD, which stands for a byte that was not UTF-8), with apostrophes inside a word
//     kept: "didn't";
//   - every other ASCII punctuation character is a token of its own: "great!!" -> "great", "!", "!".
//   tokenize("Not bad.<br />I LOVED it!") == {"not", "bad", ".", "i", "loved", "it", "!"}
std::vector<std::string> tokenize(std::string_view text);

// Token ids: 0 is <pad>, 1 is <unk> (any token not in the vocabulary), then the kept tokens from the most
// to the least frequent (ties in alphabetical order, so the same data gives the same vocabulary).
class Vocabulary {
 public:
  static constexpr int64_t kPad = 0;
  static constexpr int64_t kUnk = 1;

  // Keeps tokens seen at least min_freq times, at most max_size ids in all (with <pad> and <unk>).
  static Vocabulary build(const std::vector<std::vector<std::string>>& documents, int64_t max_size,
                          int64_t min_freq);
  explicit Vocabulary(std::vector<std::string> tokens);  // tokens[i] has id i; tokens[0..1] are <pad>, <unk>

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t id(const std::string& token) const;
  const std::string& token(int64_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
};

struct Review {
  std::string text;
  int64_t label = 0;  // 1 positive, 0 negative
  // The number in aclImdb's file name (<number>_<rating>.txt), -1 if none. aclImdb numbers each label's
  // reviews film by film, so reviews with nearby numbers are mostly about the same film.
  int64_t number = -1;
};

struct LoadReport {
  std::vector<Review> reviews;
  int64_t skipped = 0;                        // unreadable or empty files (or malformed lines)
  std::vector<std::string> skipped_examples;  // the first few, for the warning
  void skip(const std::string& what);         // counts one skipped, keeping `what` if among the first few
};

// One split of the official layout: <root>/<split>/{pos,neg}/<id>_<rating>.txt, in a fixed order
// (negatives then positives, each sorted by file name). Throws with a clear message if the folders are
// missing.
LoadReport load_imdb_split(const std::filesystem::path& root, const std::string& split);

}  // namespace sentiment
