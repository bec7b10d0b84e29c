// The n-grams of a review's token ids and the rows they get in the model's n-gram table.
//
// The n-gram embeddings (optional, on by default) are fastText's (Joulin et al., 2017): each bigram (and
// trigram) of token ids has a row of a second table, and its vector is added to the embedding of the
// token that ends it. "not good" then gets a vector of its own, which the word vectors of "not" and
// "good" and one layer of attention find hard to build. By default the rows go to the n-grams in the most
// training reviews (NgramVocabulary) and the rest get none; fastText hashes every n-gram into a row.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/config.h"
#include "minigrad/minigrad.h"

namespace sentiment {

// The n-grams of each review's token ids, as rows of a table of `buckets` rows: (B, T, max_n - 1) int64,
// column n - 2 the row of the n-gram that ends at position t (tokens t-n+1 .. t), for n = 2 .. max_n. An
// n-gram that would start before the review or end in its padding gets row 0, the padding row. The hash
// (of the ids, not of the text) is fixed here, so a saved model reads the same rows on any machine.
minigrad::Tensor ngram_rows(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, int64_t buckets,
                            int64_t max_n);

// The n-grams of token ids that get rows of their own in the n-gram table: the `rows - 1` found in the
// most documents (counted once per document; ties in order of their ids, so the same data gives the same
// list), n = 2 .. max_n ranked together. ngrams()[i] has row i + 1; an n-gram not in the list has none
// (row 0, the padding row, whose vector stays zero).
class NgramVocabulary {
 public:
  static NgramVocabulary build(const std::vector<std::span<const int64_t>>& documents, int64_t max_n,
                               int64_t rows);
  NgramVocabulary() = default;
  // ngrams[i] (2 to 5 ids, none negative) gets row i + 1; throws if one is malformed or repeated.
  explicit NgramVocabulary(std::vector<std::vector<int64_t>> ngrams);

  // The row of the n-gram ids[0 .. n), 0 if it has none.
  int64_t row(const int64_t* ids, int64_t n) const;
  const std::vector<std::vector<int64_t>>& ngrams() const { return ngrams_; }

  // As rows of the table, in ngram_rows's layout: (B, T, max_n - 1) int64, column n - 2 the row of the
  // n-gram ending at position t, 0 where it has none or would reach outside the review.
  minigrad::Tensor rows(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, int64_t max_n) const;

  // Each n-gram as its tokens joined by spaces ("not good"), in row order: what ngrams.json holds. Tokens
  // never contain an ASCII space (tokenize splits on it), so the text reads back exactly.
  nlohmann::json to_json(const Vocabulary& vocabulary) const;
  // Throws naming `source` if an entry is not a string of known tokens.
  static NgramVocabulary from_json(const nlohmann::json& j, const Vocabulary& vocabulary,
                                   const std::string& source);

 private:
  static constexpr int64_t kMaxN = 5;
  // A slot of the lookup table: an n-gram's hash and its row, or row 0 where the slot is empty.
  struct Slot {
    uint64_t hash = 0;
    int64_t row = 0;
  };
  // The row of the n-gram ids[0 .. n) whose hash is `hash` (ngram_hash_step's), 0 if it has none.
  int64_t find_row(uint64_t hash, const int64_t* ids, int64_t n) const;

  std::vector<std::vector<int64_t>> ngrams_;
  // The lookup table: open addressing, a power of two of slots at most half full, each n-gram in the first
  // free slot from its hash's low bits on (linear probing). A lookup most often reads one slot and the
  // ids of the row it finds there (docs/performance.md, "The n-gram lookups").
  std::vector<Slot> slots_;
  std::vector<int64_t> padded_ids_;  // row r's ids at [(r - 1)·kMaxN, r·kMaxN), -1 past the n-gram's end
};

// The n-grams that get rows of their own when ngram_vocabulary is set (extended_config.h), counted in the
// training examples alone (as the words are, after truncation); empty when the model hashes its n-grams or
// has none.
NgramVocabulary build_ngram_vocabulary(const Config& config, const std::vector<Example>& examples);

}  // namespace sentiment
