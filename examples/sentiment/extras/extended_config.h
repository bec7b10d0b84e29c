// The options of what extras/ adds to the classifier and its training: the n-gram table and the NB
// branch (extended_model.h), the row-sparse tables, token dropout, weight averages and pretraining. They
// travel in Config::extensions, and so in the same config.json as the classifier's own options, each
// under its own key. How each default was chosen, on the validation split: docs/sentiment.md.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "examples/common/config_fields.h"
#include "examples/sentiment/config.h"

namespace sentiment {

// Its defaults are the main job's.
struct ExtendedConfig {
  // Token dropout: in training, each token of a review becomes <unk> with this probability (the n-grams
  // through it change with it), so the model cannot lean on any one word or phrase.
  double token_dropout = 0;
  // Rows of the n-gram table (row 0 is padding and "no row"), whose vector is added to the embedding of
  // the token that ends the n-gram; 0: no n-grams.
  int64_t ngram_buckets = 65536;
  int64_t ngram_max = 2;  // the longest n-gram: 2 bigrams, 3 bigrams and trigrams
  // true: the ngram_buckets - 1 n-grams found in the most training reviews get a row each and the rest
  // none (NgramVocabulary); false: every n-gram is hashed into a row, colliding (fastText's way), so
  // that a row is shared by several n-grams.
  bool ngram_vocabulary = true;
  // true: the token and n-gram tables get row-sparse gradients (nn::Embedding's sparse), stepped by
  // optim::SparseAdam, which moves only the rows a batch looked up and has no weight decay; the rest of
  // the model keeps AdamW. false: one AdamW steps every row of both tables at every step. A row that a
  // batch does not look up then keeps its weights, where AdamW keeps moving it by its old moments and
  // decays it.
  bool sparse_embeddings = true;
  // The NB-weighted n-gram branch (nb_features.h): 0, none; n, a linear layer over the review's n-grams
  // of 1 .. n words, weighted by their Naive Bayes log-count ratios, whose two logits are added to the
  // head's. nb_rows rows (with the padding row) go to the n-grams in the most training reviews, each in
  // at least nb_min_reviews of them. Its table is row-sparse and stepped by its own SparseAdam at
  // nb_lr (0: lr), on the same schedule.
  int64_t nb_max = 3;
  int64_t nb_rows = 1 << 20;
  int64_t nb_min_reviews = 2;
  double nb_lr = 0;
  // > 0: keep an exponential moving average of the weights with this decay (optim/averaging.h); the
  // validation after each epoch and the saved model use the averages. 0: the last weights.
  double ema_decay = 0;
  // Masked-token pretraining (BERT's, on the training reviews' own text) before the classifier is
  // trained: epochs of it (0: none), its peak learning rate, and the share of tokens it predicts.
  int64_t pretrain_epochs = 0;
  double pretrain_lr = 2e-3;
  double mask_prob = 0.15;

  // The options `config` carries (a config.json without them: a model with none of the extensions, as
  // models were before them). Throws naming config.json's key if one is of the wrong type or out of range.
  static ExtendedConfig of(const Config& config);
  // Puts these options into config.extensions.
  void store_in(Config& config) const;
  // Throws an Error from `op` naming the first field outside its range, or fields that do not go together.
  void check(const std::string& op) const;
};

// ExtendedConfig's table, as kConfigFields (config.h): each field's key, `train` flag, range and help, and
// how a config.json from before the field existed reads it. Models saved before the n-gram and NB fields
// had no n-gram table (or a hashed one), dense tables stepped by AdamW, and no NB branch.
// A table, a row a field:
// clang-format off
inline constexpr std::tuple kExtendedFields{
    examples::Field{.key = "token_dropout", .member = &ExtendedConfig::token_dropout,
                    .flag = "--token-dropout", .low = 0, .high = 0.9, .optional = true,
                    .help = "Probability that a training token is replaced by <unk>"},
    examples::Field{.key = "ema_decay", .member = &ExtendedConfig::ema_decay,
                    .flag = "--ema-decay", .low = 0, .high = 0.99999, .optional = true,
                    .help = "Keep a moving average of the weights with this decay and save it; 0: the "
                            "last weights"},
    examples::Field{.key = "pretrain_epochs", .member = &ExtendedConfig::pretrain_epochs,
                    .flag = "--pretrain-epochs", .low = 0, .high = 1000, .optional = true,
                    .help = "Epochs of masked-token pretraining on the training reviews before training; "
                            "0: none"},
    examples::Field{.key = "pretrain_lr", .member = &ExtendedConfig::pretrain_lr,
                    .flag = "--pretrain-lr", .low = 1e-7, .high = 10, .optional = true,
                    .help = "Peak learning rate of the pretraining"},
    examples::Field{.key = "mask_prob", .member = &ExtendedConfig::mask_prob,
                    .flag = "--mask-prob", .low = 0.01, .high = 0.9, .optional = true,
                    .help = "Share of the tokens that pretraining predicts"},
    examples::Field{.key = "ngram_buckets", .member = &ExtendedConfig::ngram_buckets,
                    .flag = "--ngram-buckets", .low = 0, .high = 1e8, .before = 0,
                    .help = "Rows of the n-gram embedding table added to the token embeddings; 0: none"},
    examples::Field{.key = "ngram_max", .member = &ExtendedConfig::ngram_max,
                    .flag = "--ngram-max", .low = 2, .high = 5, .optional = true,
                    .help = "Longest n-gram (2: bigrams, 3: and trigrams)"},
    examples::Field{.key = "ngram_vocabulary", .member = &ExtendedConfig::ngram_vocabulary,
                    .flag = "!--hashed-ngrams", .before = false,
                    .help = "Hash every n-gram into the table's rows (fastText's way) instead of giving the "
                            "most common ones a row each"},
    examples::Field{.key = "sparse_embeddings", .member = &ExtendedConfig::sparse_embeddings,
                    .flag = "!--dense-embeddings", .before = false,
                    .help = "Dense gradients for the token and n-gram tables, stepped with the rest by "
                            "AdamW, instead of row-sparse ones stepped by SparseAdam (only the rows a batch "
                            "looked up move)"},
    examples::Field{.key = "nb_max", .member = &ExtendedConfig::nb_max,
                    .flag = "--nb-max", .low = 0, .high = 5, .before = 0,
                    .help = "The NB-weighted n-gram branch: n-grams of 1 to this many words; 0: no branch"},
    examples::Field{.key = "nb_rows", .member = &ExtendedConfig::nb_rows,
                    .flag = "--nb-rows", .low = 2, .high = 1e8, .optional = true,
                    .help = "Rows of the NB branch's table (with the padding row)"},
    examples::Field{.key = "nb_min_reviews", .member = &ExtendedConfig::nb_min_reviews,
                    .flag = "--nb-min-reviews", .low = 1, .high = 1e7, .optional = true,
                    .help = "Training reviews an n-gram must be in to get a row"},
    examples::Field{.key = "nb_lr", .member = &ExtendedConfig::nb_lr,
                    .flag = "--nb-lr", .low = 0, .high = 10, .optional = true,
                    .help = "Peak learning rate of the NB branch; 0: --lr"}};
// clang-format on
static_assert(examples::member_count<ExtendedConfig>() == std::tuple_size_v<decltype(kExtendedFields)>,
              "every field of ExtendedConfig has a row in kExtendedFields");

}  // namespace sentiment
