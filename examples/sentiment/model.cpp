#include "examples/sentiment/model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <type_traits>

#include "examples/common/checkpoint_folder.h"
#include "examples/common/json_file.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

using namespace minigrad;
using examples::parse_json;
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

SentimentModel::SentimentModel(const Config& c, int64_t vocab_size, NgramVocabulary ngram_vocabulary,
                               NbFeatures nb_features)
    : ngram_max_(c.ngram_max),
      nb_max_(c.nb_max),
      hashed_ngrams_(!c.ngram_vocabulary),
      ngram_vocabulary_(c.ngram_vocabulary ? std::move(ngram_vocabulary) : NgramVocabulary{}) {
  if (c.ngram_buckets > 0 && static_cast<int64_t>(ngram_vocabulary_.ngrams().size()) >= c.ngram_buckets) {
    throw ValueError("SentimentModel", std::to_string(ngram_vocabulary_.ngrams().size()) +
                                           " n-grams do not fit a table of " +
                                           std::to_string(c.ngram_buckets) + " rows (row 0 is nobody's)");
  }
  encoder = register_module("encoder", std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{
                                           .layer = {.num_hiddens = c.num_hiddens,
                                                     .ffn_num_hiddens = c.ffn_num_hiddens,
                                                     .num_heads = c.num_heads,
                                                     .dropout = c.dropout,
                                                     .attention_dropout = c.attention_dropout},
                                           .num_layers = c.num_layers,
                                           .vocab_size = vocab_size,
                                           .max_len = c.max_len,
                                           .learnable_positions = c.learnable_positions,
                                           .padding_idx = Vocabulary::kPad}));
  if (c.embedding_std != 1.0) {  // re-draw the table at the configured scale, keeping the padding row at 0
    const Tensor& table = encoder->embedding->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, c.embedding_std));
    table.select(0, Vocabulary::kPad).zero_();
  }
  encoder->embedding->options.sparse = c.sparse_embeddings;
  if (c.ngram_buckets > 0) {
    ngrams = register_module(
        "ngrams", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{.num_embeddings = c.ngram_buckets,
                                                                       .embedding_dim = c.num_hiddens,
                                                                       .padding_idx = 0,
                                                                       .sparse = c.sparse_embeddings}));
    const Tensor& table = ngrams->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, c.embedding_std));
    table.select(0, 0).zero_();
  }
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(c.dropout));
  head = register_module("head", std::make_shared<nn::Linear>(2 * c.num_hiddens, 2));
  if (c.nb_max > 0) {
    // Always row-sparse: a review has a few hundred of its million rows.
    nb = register_module(
        "nb", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{
                  .num_embeddings = c.nb_rows, .embedding_dim = 2, .padding_idx = 0, .sparse = true}));
    nb->weight.data().zero_();  // the branch starts silent: the logits are the encoder's
    const bool given = !nb_features.empty();
    if (given && (nb_features.keys().numel() != c.nb_rows || nb_features.max_n() != c.nb_max))
      throw ValueError("SentimentModel", "the NB features do not have nb_rows rows of n-grams up to nb_max");
    nb_keys_ =
        register_buffer("nb_keys", given ? nb_features.keys() : Tensor::zeros({c.nb_rows}, DType::Int64));
    nb_ratios_ = register_buffer("nb_ratios",
                                 given ? nb_features.ratios() : Tensor::zeros({c.nb_rows}, DType::Float32));
    nb_features_ = std::move(nb_features);
  }
}

void SentimentModel::read_nb_features() {
  if (nb) nb_features_ = NbFeatures(nb_keys_.data().clone(), nb_ratios_.data().clone(), nb_max_);
}

void check_tokens(const std::string& op, const Tensor& tokens, const Tensor& lengths) {
  if (tokens.rank() != 2 || tokens.dtype() != DType::Int64 || lengths.dtype() != DType::Int64 ||
      lengths.shape() != Shape{tokens.shape()[0]}) {
    throw ShapeError(op, "expects int64 tokens (B, T) and lengths (B), got tokens " + tokens.shape().str() +
                             " and lengths " + lengths.shape().str());
  }
}

Tensor ngram_rows(const Tensor& tokens, const Tensor& lengths, int64_t buckets, int64_t max_n) {
  check_tokens("ngram_rows", tokens, lengths);
  if (buckets < 2 || max_n < 2) throw ValueError("ngram_rows", "needs at least 2 buckets and max_n >= 2");
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1], k = max_n - 1;
  Tensor rows = Tensor::zeros({b, t, k}, DType::Int64);
  const Tensor ids = tokens.contiguous();
  const int64_t* id = ids.data_ptr<const int64_t>();
  int64_t* row = rows.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t length = std::min(lengths.at({i}) >= 0 ? static_cast<int64_t>(lengths.at({i})) : 0, t);
    for (int64_t end = 0; end < length; ++end) {
      // The ids from `end` backwards, each combined into h (boost's hash_combine) and mixed by splitmix64's
      // finaliser: the hash after n ids is the n-gram's, so one pass gives every n.
      uint64_t h = 0x9E3779B97F4A7C15ull;
      for (int64_t n = 1; n <= max_n && end - n + 1 >= 0; ++n) {
        h ^= static_cast<uint64_t>(id[i * t + end - n + 1]) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
        h ^= h >> 31;
        if (n >= 2) row[(i * t + end) * k + (n - 2)] = 1 + static_cast<int64_t>(h % uint64_t(buckets - 1));
      }
    }
  }
  return rows;
}

namespace {

std::string_view bytes_of(const int64_t* ids, int64_t n) {
  return {reinterpret_cast<const char*>(ids), static_cast<size_t>(n) * sizeof(int64_t)};
}

}  // namespace

NgramVocabulary NgramVocabulary::build(const std::vector<std::span<const int64_t>>& documents, int64_t max_n,
                                       int64_t rows) {
  if (max_n < 2 || max_n > 5 || rows < 1)
    throw ValueError("NgramVocabulary", "needs 2 <= max_n <= 5 and at least 1 row");
  // Documents in which each n-gram occurs (its bytes -> count), and the last document that counted it,
  // so that an n-gram repeated in one review counts once.
  struct Seen {
    int64_t documents = 0;
    size_t last = SIZE_MAX;
  };
  std::unordered_map<std::string, Seen, BytesHash, std::equal_to<>> seen;
  for (size_t d = 0; d < documents.size(); ++d) {
    const std::span<const int64_t> ids = documents[d];
    for (size_t end = 1; end < ids.size(); ++end) {
      for (int64_t n = 2; n <= max_n && static_cast<int64_t>(end) + 1 >= n; ++n) {
        const std::string_view key = bytes_of(ids.data() + end + 1 - static_cast<size_t>(n), n);
        auto it = seen.find(key);
        if (it == seen.end()) it = seen.emplace(std::string(key), Seen{}).first;
        if (it->second.last != d) {
          it->second.last = d;
          ++it->second.documents;
        }
      }
    }
  }
  std::vector<std::pair<int64_t, std::vector<int64_t>>> ranked;  // (-documents, ids): sorts as wanted
  ranked.reserve(seen.size());
  for (const auto& [key, s] : seen) {
    std::vector<int64_t> ids(key.size() / sizeof(int64_t));
    std::memcpy(ids.data(), key.data(), key.size());
    ranked.emplace_back(-s.documents, std::move(ids));
  }
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(rows - 1));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
  std::vector<std::vector<int64_t>> ngrams;
  for (size_t i = 0; i < keep; ++i) ngrams.push_back(std::move(ranked[i].second));
  return NgramVocabulary(std::move(ngrams));
}

NgramVocabulary::NgramVocabulary(std::vector<std::vector<int64_t>> ngrams) : ngrams_(std::move(ngrams)) {
  for (size_t i = 0; i < ngrams_.size(); ++i) {
    const std::vector<int64_t>& ids = ngrams_[i];
    if (ids.size() < 2 || ids.size() > 5 ||
        std::any_of(ids.begin(), ids.end(), [](int64_t id) { return id < 0; }))
      throw ValueError("NgramVocabulary", "n-gram " + std::to_string(i) + " is not 2 to 5 token ids");
    if (!row_of_
             .emplace(std::string(bytes_of(ids.data(), static_cast<int64_t>(ids.size()))),
                      static_cast<int64_t>(i) + 1)
             .second)
      throw ValueError("NgramVocabulary", "n-gram " + std::to_string(i) + " is listed twice");
  }
}

int64_t NgramVocabulary::row(const int64_t* ids, int64_t n) const {
  auto it = row_of_.find(bytes_of(ids, n));
  return it == row_of_.end() ? 0 : it->second;
}

Tensor NgramVocabulary::rows(const Tensor& tokens, const Tensor& lengths, int64_t max_n) const {
  check_tokens("NgramVocabulary::rows", tokens, lengths);
  if (max_n < 2) throw ValueError("NgramVocabulary::rows", "needs max_n >= 2");
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1], k = max_n - 1;
  Tensor out = Tensor::zeros({b, t, k}, DType::Int64);
  const Tensor ids = tokens.contiguous();
  const int64_t* id = ids.data_ptr<const int64_t>();
  int64_t* row_out = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t length = std::min(lengths.at({i}) >= 0 ? static_cast<int64_t>(lengths.at({i})) : 0, t);
    for (int64_t end = 1; end < length; ++end) {
      for (int64_t n = 2; n <= max_n && end - n + 1 >= 0; ++n) {
        row_out[(i * t + end) * k + (n - 2)] = row(id + i * t + end - n + 1, n);
      }
    }
  }
  return out;
}

json NgramVocabulary::to_json(const Vocabulary& vocabulary) const {
  json out = json::array();
  for (const std::vector<int64_t>& ids : ngrams_) {
    std::string text;
    for (int64_t id : ids) text += (text.empty() ? "" : " ") + vocabulary.token(id);
    out.push_back(std::move(text));
  }
  return out;
}

NgramVocabulary NgramVocabulary::from_json(const json& j, const Vocabulary& vocabulary,
                                           const std::string& source) {
  if (!j.is_array()) throw Error("checkpoint", source + " is not a list of n-grams");
  std::vector<std::vector<int64_t>> ngrams;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw Error("checkpoint", source + ": entry " + std::to_string(i) + " is not a string");
    const std::string& text = j[i].get_ref<const std::string&>();
    std::vector<int64_t> ids;
    for (size_t start = 0; start <= text.size();) {
      const size_t space = std::min(text.find(' ', start), text.size());
      const std::string token = text.substr(start, space - start);
      const int64_t id = vocabulary.id(token);
      if (id == Vocabulary::kUnk && token != vocabulary.token(Vocabulary::kUnk)) {
        throw Error("checkpoint", source + ": entry " + std::to_string(i) + " (\"" + text + "\") has \"" +
                                      token + "\", which is not in the vocabulary");
      }
      ids.push_back(id);
      start = space + 1;
    }
    if (ids.size() < 2 || ids.size() > 5)
      throw Error("checkpoint", source + ": entry " + std::to_string(i) + " is not 2 to 5 tokens");
    ngrams.push_back(std::move(ids));
  }
  try {
    return NgramVocabulary(std::move(ngrams));
  } catch (const ValueError& e) {
    throw Error("checkpoint", source + ": " + e.detail());
  }
}

Variable SentimentModel::encode(const Tensor& tokens, const Tensor& lengths) {
  Variable x = encoder->embed(tokens);  // (B, T, d), scaled by √d
  if (ngrams) {
    const Tensor rows = hashed_ngrams_
                            ? ngram_rows(tokens, lengths, ngrams->options.num_embeddings, ngram_max_)
                            : ngram_vocabulary_.rows(tokens, lengths, ngram_max_);
    // Each position's n-gram vectors, summed (B, T, n-1, d) -> (B, T, d), at the token embedding's scale.
    x = x +
        sum(ngrams->forward(rows), {2}) * std::sqrt(static_cast<double>(encoder->options.layer.num_hiddens));
  }
  return encoder->encode(x, {.valid_lens = lengths});  // (B, T, d)
}

Variable SentimentModel::forward(const Tensor& tokens, const Tensor& lengths, const Tensor& nb_rows,
                                 const Tensor& nb_ratios) {
  const Variable h = encode(tokens, lengths);  // (B, T, d)
  // Mean pooling sees the whole review; max pooling lets one strong phrase ("waste of time") speak.
  const Variable pooled =
      concat({mean_over_time(h, lengths, /*dim=*/1), max_over_time(h, lengths, /*dim=*/1)}, 1);  // (B, 2d)
  const Variable logits = head->forward(dropout->forward(pooled));                               // (B, 2)
  if (!nb) return logits;
  if (!nb_rows.defined() || nb_rows.rank() != 2 || nb_rows.dtype() != DType::Int64 ||
      nb_ratios.shape() != nb_rows.shape() || nb_rows.shape()[0] != tokens.shape()[0]) {
    throw ShapeError("SentimentModel",
                     "the NB branch expects nb_rows (B, K) int64 and nb_ratios (B, K) for " +
                         std::to_string(tokens.shape()[0]) + " reviews, got nb_rows " +
                         (nb_rows.defined() ? nb_rows.shape().str() : "none") + " and nb_ratios " +
                         (nb_ratios.defined() ? nb_ratios.shape().str() : "none"));
  }
  // Σ_f r_f · W[f] over each review's n-grams: (B, K, 2) · (B, K, 1) summed over K -> (B, 2).
  const Variable r(reshape(nb_ratios.to(nb->weight.dtype()), {nb_rows.shape()[0], nb_rows.shape()[1], 1}));
  return logits + sum(nb->forward(nb_rows) * r, {1});
}

namespace {

// A short fingerprint of the vocabulary: the same tokens in the same order give the same text.
std::string fingerprint(const Vocabulary& v) {
  size_t h = 0;
  for (const std::string& t : v.tokens()) h = h * 1000003u ^ std::hash<std::string>{}(t);
  std::ostringstream s;
  s << v.size() << " tokens, hash " << std::hex << h;
  return s.str();
}

// The same for the n-grams with rows of their own.
std::string fingerprint(const NgramVocabulary& v) {
  size_t h = 0;
  for (const std::vector<int64_t>& ids : v.ngrams())
    for (int64_t id : ids) h = h * 1000003u ^ std::hash<int64_t>{}(id);
  std::ostringstream s;
  s << v.ngrams().size() << " n-grams, hash " << std::hex << h;
  return s.str();
}

bool has_ngram_vocabulary(const Config& c) {
  return c.ngram_buckets > 0 && c.ngram_vocabulary;
}

}  // namespace

void Checkpoint::save(const std::filesystem::path& dir, const std::vector<FolderFile>& extra) const {
  std::map<std::string, std::string> metadata = {{"architecture", config.architecture()},
                                                 {"vocabulary", fingerprint(vocabulary)}};
  std::vector<FolderFile> files = extra;
  if (has_ngram_vocabulary(config)) {
    metadata["ngrams"] = fingerprint(model->ngram_vocabulary());
    try {
      files.emplace_back("ngrams.json", model->ngram_vocabulary().to_json(vocabulary).dump() + "\n");
    } catch (const json::exception& e) {
      throw Error("checkpoint", "cannot save " + dir.string() + ": " + e.what());
    }
  }
  examples::save_checkpoint_folder(dir, config.to_json(), vocabulary.tokens(), *model, metadata, files);
}

Checkpoint Checkpoint::load(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error("checkpoint", dir.string() + " is not a folder (train a model first, or pass --model DIR)");
  }
  const Config config = Config::from_json(parse_json(dir / "config.json"), (dir / "config.json").string());
  const std::string vocab_file = (dir / "vocab.json").string();
  const json tokens = parse_json(vocab_file);
  if (!tokens.is_array()) throw Error("checkpoint", vocab_file + " is not a list of tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) {
      throw Error("checkpoint",
                  vocab_file + ": token " + std::to_string(i) + " is " + tokens[i].dump() + ", not a string");
    }
  }
  Vocabulary vocabulary = [&] {
    try {
      return Vocabulary(tokens.get<std::vector<std::string>>());
    } catch (const Error& e) {  // a duplicate token, an empty one
      throw Error("checkpoint", vocab_file + ": " + e.detail());
    }
  }();

  const std::string weights = (dir / "model.safetensors").string();
  const SafetensorsFile file = load_safetensors(weights);
  auto recorded = [&](const std::string& key) {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string("(not recorded)") : it->second;
  };
  if (recorded("architecture") != config.architecture()) {
    throw Error("checkpoint", weights + " was trained with " + recorded("architecture") +
                                  ", but config.json says " + config.architecture());
  }
  if (recorded("vocabulary") != fingerprint(vocabulary)) {
    throw Error("checkpoint", weights + " was trained with a vocabulary of " + recorded("vocabulary") +
                                  ", but vocab.json has " + fingerprint(vocabulary));
  }
  NgramVocabulary ngrams;
  if (has_ngram_vocabulary(config)) {
    const std::string source = (dir / "ngrams.json").string();
    ngrams = NgramVocabulary::from_json(parse_json(dir / "ngrams.json"), vocabulary, source);
    if (recorded("ngrams") != fingerprint(ngrams)) {
      throw Error("checkpoint", weights + " was trained with " + recorded("ngrams") + ", but " + source +
                                    " has " + fingerprint(ngrams));
    }
  }
  auto model = std::make_shared<SentimentModel>(config, vocabulary.size(), std::move(ngrams));
  optim::load_weights(*model, file, weights);
  try {
    model->read_nb_features();
  } catch (const Error& e) {
    throw Error("checkpoint", weights + ": " + e.detail());
  }
  // A model whose weights hold a NaN or an infinity (saved from a diverged run, or damaged) would predict
  // NaN for every review: refuse it here, naming the tensor.
  for (const auto& [name, p] : model->named_parameters()) {
    if (!std::isfinite(minigrad::sum(p.data()).item())) {
      throw Error("checkpoint",
                  weights + ": " + name + " holds a NaN or an infinity; the model cannot be used");
    }
  }
  model->eval();
  return Checkpoint{config, std::move(vocabulary), std::move(model)};
}

}  // namespace sentiment
