#include "examples/sentiment/config.h"

#include <sstream>
#include <type_traits>

#include "minigrad/tensor/error.h"

namespace sentiment {

using namespace minigrad;
using json = nlohmann::json;

json Config::to_json() const {
  return {{"vocab_size", vocab_size},
          {"min_freq", min_freq},
          {"max_len", max_len},
          {"validation", validation},
          {"validation_seed", validation_seed},
          {"num_hiddens", num_hiddens},
          {"num_heads", num_heads},
          {"ffn_num_hiddens", ffn_num_hiddens},
          {"num_layers", num_layers},
          {"dropout", dropout},
          {"attention_dropout", attention_dropout},
          {"token_dropout", token_dropout},
          {"label_smoothing", label_smoothing},
          {"embedding_std", embedding_std},
          {"learnable_positions", learnable_positions},
          {"ngram_buckets", ngram_buckets},
          {"ngram_max", ngram_max},
          {"ngram_vocabulary", ngram_vocabulary},
          {"sparse_embeddings", sparse_embeddings},
          {"nb_max", nb_max},
          {"nb_rows", nb_rows},
          {"nb_min_reviews", nb_min_reviews},
          {"nb_lr", nb_lr},
          {"batch_size", batch_size},
          {"epochs", epochs},
          {"lr", lr},
          {"weight_decay", weight_decay},
          {"warmup", warmup},
          {"clip", clip},
          {"ema_decay", ema_decay},
          {"pretrain_epochs", pretrain_epochs},
          {"pretrain_lr", pretrain_lr},
          {"mask_prob", mask_prob},
          {"seed", seed}};
}

Config Config::from_json(const json& j, const std::string& source) {
  Config c;
  // Fields added later are optional, with the value that means "as before": older checkpoints still load.
  auto read = [&](const char* key, auto& field, bool optional = false) {
    if (!j.contains(key)) {
      if (optional) return;
      throw Error("config", source + ": missing '" + key + "'");
    }
    // JSON numbers all convert to each other; an integer field must not take 2.7 as 2.
    using Field = std::decay_t<decltype(field)>;
    const json& value = j.at(key);
    const bool fits = std::is_same_v<Field, bool>   ? value.is_boolean()
                      : std::is_integral_v<Field>   ? value.is_number_integer()
                      : std::is_arithmetic_v<Field> ? value.is_number()
                                                    : true;
    const char* wanted = std::is_same_v<Field, bool>   ? "true or false"
                         : std::is_integral_v<Field>   ? "a whole number"
                         : std::is_arithmetic_v<Field> ? "a number"
                                                       : "of another type";
    if (!fits) throw Error("config", source + ": '" + key + "' must be " + wanted + ", got " + value.dump());
    try {
      value.get_to(field);
    } catch (const json::exception&) {
      throw Error("config", source + ": '" + key + "' has the wrong type");
    }
  };
  if (!j.is_object()) throw Error("config", source + ": not a JSON object");
  read("vocab_size", c.vocab_size);
  read("min_freq", c.min_freq);
  read("max_len", c.max_len);
  c.validation = 0;
  c.label_smoothing = 0;
  c.ngram_buckets = 0;
  c.ngram_vocabulary = false;   // models from before it hashed their n-grams
  c.sparse_embeddings = false;  // and stepped every row with AdamW
  c.nb_max = 0;                 // and had no NB branch
  read("validation", c.validation, true);
  read("validation_seed", c.validation_seed, true);
  read("ngram_buckets", c.ngram_buckets, true);
  read("ngram_max", c.ngram_max, true);
  read("ngram_vocabulary", c.ngram_vocabulary, true);
  read("sparse_embeddings", c.sparse_embeddings, true);
  read("nb_max", c.nb_max, true);
  read("nb_rows", c.nb_rows, true);
  read("nb_min_reviews", c.nb_min_reviews, true);
  read("nb_lr", c.nb_lr, true);
  read("num_hiddens", c.num_hiddens);
  read("num_heads", c.num_heads);
  read("ffn_num_hiddens", c.ffn_num_hiddens);
  read("num_layers", c.num_layers);
  read("dropout", c.dropout);
  read("attention_dropout", c.attention_dropout);
  read("token_dropout", c.token_dropout, true);
  read("label_smoothing", c.label_smoothing, true);
  read("embedding_std", c.embedding_std);
  read("learnable_positions", c.learnable_positions);
  read("batch_size", c.batch_size);
  read("epochs", c.epochs);
  read("lr", c.lr);
  read("weight_decay", c.weight_decay);
  read("warmup", c.warmup);
  read("clip", c.clip);
  read("ema_decay", c.ema_decay, true);
  read("pretrain_epochs", c.pretrain_epochs, true);
  read("pretrain_lr", c.pretrain_lr, true);
  read("mask_prob", c.mask_prob, true);
  read("seed", c.seed);
  c.check("config: " + source);
  return c;
}

void Config::check(const std::string& op) const {
  auto in = [&](const char* name, double value, double low, double high) {
    if (!(value >= low && value <= high)) {
      std::ostringstream s;
      s << name << " is " << value << ", outside [" << low << ", " << high << "]";
      throw ValueError(op, s.str());
    }
  };
  in("vocab_size", double(vocab_size), 2, 1e7);
  in("min_freq", double(min_freq), 1, 1e6);
  in("max_len", double(max_len), 2, 100000);
  in("validation", double(validation), 0, 1e7);
  in("ngram_buckets", double(ngram_buckets), 0, 1e8);
  in("ngram_max", double(ngram_max), 2, 5);
  if (ngram_buckets == 1) throw ValueError(op, "ngram_buckets must be 0 (none) or at least 2");
  in("nb_max", double(nb_max), 0, 5);
  in("nb_rows", double(nb_rows), 2, 1e8);
  in("nb_min_reviews", double(nb_min_reviews), 1, 1e7);
  in("nb_lr", nb_lr, 0, 10);
  in("num_hiddens", double(num_hiddens), 2, 4096);
  in("num_heads", double(num_heads), 1, 256);
  in("ffn_num_hiddens", double(ffn_num_hiddens), 1, 65536);
  in("num_layers", double(num_layers), 1, 64);
  in("dropout", dropout, 0, 0.9);
  in("attention_dropout", attention_dropout, 0, 0.9);
  in("token_dropout", token_dropout, 0, 0.9);
  in("label_smoothing", label_smoothing, 0, 1);
  in("embedding_std", embedding_std, 1e-6, 100);
  in("batch_size", double(batch_size), 1, 100000);
  in("epochs", double(epochs), 1, 1000);
  in("lr", lr, 1e-7, 10);
  in("weight_decay", weight_decay, 0, 1);
  in("warmup", warmup, 0, 0.9);
  in("clip", clip, 1e-6, 1e6);
  in("ema_decay", ema_decay, 0, 0.99999);
  in("pretrain_epochs", double(pretrain_epochs), 0, 1000);
  in("pretrain_lr", pretrain_lr, 1e-7, 10);
  in("mask_prob", mask_prob, 0.01, 0.9);
  if (sparse_embeddings && pretrain_epochs > 0) {
    // Pretraining predicts tokens through the token table (tied weights), which gives it a dense
    // gradient, and SparseAdam takes row-sparse ones only.
    throw ValueError(op,
                     "sparse_embeddings does not go with pretrain_epochs > 0 (train with "
                     "--dense-embeddings): the pretraining's tied "
                     "output layer gives the token table a dense gradient");
  }
  if (num_hiddens % num_heads != 0) {
    throw ValueError(op, "num_heads (" + std::to_string(num_heads) + ") must divide num_hiddens (" +
                             std::to_string(num_hiddens) + ")");
  }
}

std::string Config::architecture() const {
  std::ostringstream s;
  s << "max_len=" << max_len << " num_hiddens=" << num_hiddens << " num_heads=" << num_heads
    << " ffn_num_hiddens=" << ffn_num_hiddens << " num_layers=" << num_layers
    << " learnable_positions=" << learnable_positions;
  if (ngram_buckets > 0) s << " ngram_buckets=" << ngram_buckets << " ngram_max=" << ngram_max;
  // The same table read two ways: a hashed model's weights mean nothing to a model with a vocabulary.
  if (ngram_buckets > 0 && ngram_vocabulary) s << " ngram_vocabulary=1";
  if (nb_max > 0) s << " nb_max=" << nb_max << " nb_rows=" << nb_rows;
  return s.str();
}

}  // namespace sentiment
