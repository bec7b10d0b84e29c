// The sentiment model's configuration: everything that defines a trained model and how it was trained,
// saved as config.json beside the weights. Each field is a member of Config (its default, and what it
// does) and a row of kConfigFields (its JSON key, its `train` flag and help, its range), which drives
// to_json, from_json, check and the flags (examples/common/config_fields.h). How each default was chosen,
// on the validation split: docs/sentiment.md, "How the options were chosen".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <tuple>

#include "examples/common/config_fields.h"

namespace sentiment {

// Everything that defines a trained model and how it was trained. Saved as config.json beside the
// checkpoint; the defaults are the configuration the README's numbers come from.
struct Config {
  // data
  // The largest vocabulary, <pad> and <unk> included: the most frequent training tokens seen at least
  // min_freq times each; every other token reads as <unk>. A small one leaves out the rarer tokens, mostly
  // names and words of one film, which a model would learn by heart and the test films do not share.
  int64_t vocab_size = 5000;
  int64_t min_freq = 2;
  int64_t max_len = 1024;  // tokens per review; longer ones keep their first and last max_len/2
  // Training reviews held out (half of each label, drawn with validation_seed) to choose options on and
  // to report per epoch; the model trains on the rest. 0: train on all of them, no validation.
  int64_t validation = 2500;
  uint64_t validation_seed = 0;
  // model
  int64_t num_hiddens = 64;  // the width of the embeddings and of the encoder layer
  // Attention heads, which share num_hiddens: one head of 64 dimensions by default.
  int64_t num_heads = 1;
  int64_t ffn_num_hiddens = 128;  // the width of the encoder layer's feed-forward block
  int64_t num_layers = 1;         // encoder layers
  double dropout = 0.2;           // in training: after the positions, after each sublayer, before the head
  // Dropout on the attention weights, in training; its masks are (batch, heads, length, length).
  double attention_dropout = 0;
  // Token dropout: in training, each token of a review becomes <unk> with this probability (the n-grams
  // through it change with it), so the model cannot lean on any one word or phrase.
  double token_dropout = 0;
  // Label smoothing of the training loss (cross_entropy's option); validation and test losses are plain.
  // The loss then no longer pays the model to grow ever surer of reviews it knows by heart.
  double label_smoothing = 0.1;
  // The token embedding starts N(0, embedding_std²); 1 is PyTorch's default.
  double embedding_std = 1.0;
  bool learnable_positions = false;  // learned position embeddings instead of sinusoids
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
  // training
  int64_t batch_size = 64;  // reviews per step
  // Passes over the training reviews. With the NB branch the model fits them within one; the encoder alone
  // wants 2 (train it with --nb-max 0 --epochs 2).
  int64_t epochs = 1;
  double lr = 2e-3;            // AdamW's peak learning rate (and SparseAdam's, for the tables)
  double weight_decay = 0.01;  // AdamW's; the sparse tables have none
  double warmup = 0.1;         // fraction of the steps, warming up linearly before the cosine decay
  double clip = 1.0;           // the largest gradient norm; a larger one is scaled down to it
  // > 0: keep an exponential moving average of the weights with this decay (optim/averaging.h); the
  // validation after each epoch and the saved model use the averages. 0: the last weights.
  double ema_decay = 0;
  // Masked-token pretraining (BERT's, on the training reviews' own text) before the classifier is
  // trained: epochs of it (0: none), its peak learning rate, and the share of tokens it predicts.
  int64_t pretrain_epochs = 0;
  double pretrain_lr = 2e-3;
  double mask_prob = 0.15;
  uint64_t seed = 0;  // initialisation, dropout and batch order

  nlohmann::json to_json() const;
  // Throws naming `source` if a field is missing, of the wrong type or out of range.
  static Config from_json(const nlohmann::json& j, const std::string& source);
  // Throws an Error from `op` naming the first field outside its range (the ranges `train --help` lists),
  // or fields that do not go together.
  void check(const std::string& op) const;
  // The fields that shape the model's tensors, as text: two checkpoints load into each other's models
  // exactly when these agree.
  std::string architecture() const;
};

// Config's table (examples/common/config_fields.h): each field's key in config.json, its `train` flag, range
// and help, and how a config.json from before the field existed reads it; in the order of `train --help`.
// Models saved before the n-gram, NB and validation fields had no validation split, no label smoothing, no
// n-gram table (or a hashed one), dense tables stepped by AdamW, and no NB branch.
// A table, a row a field:
// clang-format off
inline constexpr auto kConfigFields = std::tuple_cat(
    std::tuple{
        examples::Field{.key = "epochs", .member = &Config::epochs,
                        .flag = "--epochs", .low = 1, .high = 1000, .help = "Passes over the training data"},
        examples::Field{.key = "batch_size", .member = &Config::batch_size,
                        .flag = "--batch-size", .low = 1, .high = 100000, .help = "Reviews per step"}},
    examples::training_fields<Config>(),  // lr, weight_decay, warmup, clip, dropout, num_hiddens, ...
    std::tuple{
        examples::Field{.key = "attention_dropout", .member = &Config::attention_dropout,
                        .flag = "--attention-dropout", .low = 0, .high = 0.9,
                        .help = "Dropout on the attention weights"},
        examples::Field{.key = "token_dropout", .member = &Config::token_dropout,
                        .flag = "--token-dropout", .low = 0, .high = 0.9, .optional = true,
                        .help = "Probability that a training token is replaced by <unk>"},
        examples::Field{.key = "label_smoothing", .member = &Config::label_smoothing,
                        .flag = "--label-smoothing", .low = 0, .high = 1, .before = 0,
                        .help = "Label smoothing of the training loss"},
        examples::Field{.key = "ema_decay", .member = &Config::ema_decay,
                        .flag = "--ema-decay", .low = 0, .high = 0.99999, .optional = true,
                        .help = "Keep a moving average of the weights with this decay and save it; 0: the "
                                "last weights"},
        examples::Field{.key = "pretrain_epochs", .member = &Config::pretrain_epochs,
                        .flag = "--pretrain-epochs", .low = 0, .high = 1000, .optional = true,
                        .help = "Epochs of masked-token pretraining on the training reviews before "
                                "training; 0: none"},
        examples::Field{.key = "pretrain_lr", .member = &Config::pretrain_lr,
                        .flag = "--pretrain-lr", .low = 1e-7, .high = 10, .optional = true,
                        .help = "Peak learning rate of the pretraining"},
        examples::Field{.key = "mask_prob", .member = &Config::mask_prob,
                        .flag = "--mask-prob", .low = 0.01, .high = 0.9, .optional = true,
                        .help = "Share of the tokens that pretraining predicts"},
        examples::Field{.key = "max_len", .member = &Config::max_len,
                        .flag = "--max-len", .low = 2, .high = 100000,
                        .help = "Tokens kept per review (head and tail)"},
        examples::Field{.key = "vocab_size", .member = &Config::vocab_size,
                        .flag = "--vocab-size", .low = 2, .high = 1e7, .help = "Largest vocabulary"},
        examples::Field{.key = "min_freq", .member = &Config::min_freq,
                        .flag = "--min-freq", .low = 1, .high = 1e6,
                        .help = "Least count for a token to get its own id"},
        examples::Field{.key = "validation", .member = &Config::validation,
                        .flag = "--validation", .low = 0, .high = 1e7, .before = 0,
                        .help = "Training reviews held out for validation (half of each label); 0: none"},
        examples::Field{.key = "validation_seed", .member = &Config::validation_seed,
                        .flag = "--validation-seed", .optional = true,
                        .help = "Seed that picks the validation reviews"},
        examples::Field{.key = "ngram_buckets", .member = &Config::ngram_buckets,
                        .flag = "--ngram-buckets", .low = 0, .high = 1e8, .before = 0,
                        .help = "Rows of the n-gram embedding table added to the token embeddings; 0: none"},
        examples::Field{.key = "ngram_max", .member = &Config::ngram_max,
                        .flag = "--ngram-max", .low = 2, .high = 5, .optional = true,
                        .help = "Longest n-gram (2: bigrams, 3: and trigrams)"},
        examples::Field{.key = "ngram_vocabulary", .member = &Config::ngram_vocabulary,
                        .flag = "!--hashed-ngrams", .before = false,
                        .help = "Hash every n-gram into the table's rows (fastText's way) instead of giving"
                                " the most common ones a row each"},
        examples::Field{.key = "sparse_embeddings", .member = &Config::sparse_embeddings,
                        .flag = "!--dense-embeddings", .before = false,
                        .help = "Dense gradients for the token and n-gram tables, stepped with the rest by "
                                "AdamW, instead of row-sparse ones stepped by SparseAdam (only the rows a "
                                "batch looked up move)"},
        examples::Field{.key = "nb_max", .member = &Config::nb_max,
                        .flag = "--nb-max", .low = 0, .high = 5, .before = 0,
                        .help = "The NB-weighted n-gram branch: n-grams of 1 to this many words; 0: no "
                                "branch"},
        examples::Field{.key = "nb_rows", .member = &Config::nb_rows,
                        .flag = "--nb-rows", .low = 2, .high = 1e8, .optional = true,
                        .help = "Rows of the NB branch's table (with the padding row)"},
        examples::Field{.key = "nb_min_reviews", .member = &Config::nb_min_reviews,
                        .flag = "--nb-min-reviews", .low = 1, .high = 1e7, .optional = true,
                        .help = "Training reviews an n-gram must be in to get a row"},
        examples::Field{.key = "nb_lr", .member = &Config::nb_lr,
                        .flag = "--nb-lr", .low = 0, .high = 10, .optional = true,
                        .help = "Peak learning rate of the NB branch; 0: --lr"},
        examples::Field{.key = "num_layers", .member = &Config::num_layers,
                        .flag = "--layers", .low = 1, .high = 64, .help = "Encoder layers"},
        examples::Field{.key = "embedding_std", .member = &Config::embedding_std,
                        .flag = "--embedding-std", .low = 1e-6, .high = 100,
                        .help = "Initial scale of the token embedding"},
        examples::Field{.key = "learnable_positions", .member = &Config::learnable_positions,
                        .flag = "--learnable-positions",
                        .help = "Learn position embeddings instead of sinusoids"},
        examples::Field{.key = "seed", .member = &Config::seed,
                        .flag = "--seed", .help = "Seed for initialisation, dropout and batch order"}});
// clang-format on
static_assert(examples::member_count<Config>() == std::tuple_size_v<decltype(kConfigFields)>,
              "every field of Config has a row in kConfigFields");

}  // namespace sentiment
