#include "examples/sentiment/extras/extended_model.h"

#include <cmath>
#include <functional>
#include <sstream>

#include "examples/common/json_file.h"

namespace sentiment {

using namespace minigrad;

namespace {

// A short fingerprint of the n-grams with rows: the same n-grams in the same order give the same text.
std::string fingerprint(const NgramVocabulary& v) {
  size_t h = 0;
  for (const std::vector<int64_t>& ids : v.ngrams())
    for (int64_t id : ids) h = h * 1000003u ^ std::hash<int64_t>{}(id);
  std::ostringstream s;
  s << v.ngrams().size() << " n-grams, hash " << std::hex << h;
  return s.str();
}

}  // namespace

NgramTable::NgramTable(const Config& c, const ExtendedConfig& e, NgramVocabulary vocabulary)
    : max_n_(e.ngram_max),
      hashed_(!e.ngram_vocabulary),
      scale_(std::sqrt(static_cast<double>(c.num_hiddens))),
      vocabulary_(e.ngram_vocabulary ? std::move(vocabulary) : NgramVocabulary{}) {
  if (static_cast<int64_t>(vocabulary_.ngrams().size()) >= e.ngram_buckets) {
    throw ValueError("NgramTable", std::to_string(vocabulary_.ngrams().size()) +
                                       " n-grams do not fit a table of " + std::to_string(e.ngram_buckets) +
                                       " rows (row 0 is nobody's)");
  }
  table = register_module(
      "table", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{.num_embeddings = e.ngram_buckets,
                                                                    .embedding_dim = c.num_hiddens,
                                                                    .padding_idx = 0,
                                                                    .sparse = e.sparse_embeddings}));
  const Tensor& weight = table->weight.data();
  weight.copy_(Tensor::normal(weight.shape(), 0, c.embedding_std));
  weight.select(0, 0).zero_();
}

Variable NgramTable::forward(const Tensor& tokens, const Tensor& lengths) const {
  const Tensor rows = hashed_ ? ngram_rows(tokens, lengths, table->options.num_embeddings, max_n_)
                              : vocabulary_.rows(tokens, lengths, max_n_);  // (B, T, n-1)
  return sum((*table)(rows), {2}) * scale_;                                 // (B, T, n-1, d) -> (B, T, d)
}

std::string NgramTable::architecture() const {
  return " ngram_buckets=" + std::to_string(table->options.num_embeddings) +
         " ngram_max=" + std::to_string(max_n_) + (hashed_ ? "" : " ngram_vocabulary=1");
}

void NgramTable::save_beside(const Vocabulary& vocabulary, std::map<std::string, std::string>& metadata,
                             std::vector<FolderFile>& files) const {
  if (hashed_) return;  // the hash is fixed in ngram_rows: nothing to keep
  metadata["ngrams"] = fingerprint(vocabulary_);
  try {
    files.emplace_back("ngrams.json", vocabulary_.to_json(vocabulary).dump() + "\n");
  } catch (const nlohmann::json::exception& e) {
    throw Error("checkpoint", std::string("cannot save ngrams.json: ") + e.what());
  }
}

NbBranch::NbBranch(const Config& c, const ExtendedConfig& e, NbFeatures features)
    : max_n_(e.nb_max), lr_scale_(e.nb_lr > 0 ? e.nb_lr / c.lr : 1.0) {
  // Always row-sparse: a review has a few hundred of its million rows.
  table = register_module(
      "table", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{
                   .num_embeddings = e.nb_rows, .embedding_dim = 2, .padding_idx = 0, .sparse = true}));
  table->weight.data().zero_();  // the branch starts silent: the logits are the encoder's
  const bool given = !features.empty();
  if (given && (features.keys().numel() != e.nb_rows || features.max_n() != e.nb_max))
    throw ValueError("NbBranch", "the NB features do not have nb_rows rows of n-grams up to nb_max");
  keys_ = register_buffer("keys", given ? features.keys() : Tensor::zeros({e.nb_rows}, DType::Int64));
  ratios_ = register_buffer("ratios", given ? features.ratios() : Tensor::zeros({e.nb_rows}, DType::Float32));
  features_ = std::move(features);
}

std::string NbBranch::architecture() const {
  return " nb_max=" + std::to_string(max_n_) + " nb_rows=" + std::to_string(table->options.num_embeddings);
}

void NbBranch::weights_loaded() {
  features_ = NbFeatures(keys_.data().clone(), ratios_.data().clone(), max_n_);
}

Variable NbBranch::forward(const Batch& batch) const {
  const Tensor& rows = batch.bag_rows;
  const Tensor& ratios = batch.bag_weights;
  const int64_t reviews = batch.tokens.defined() ? batch.tokens.shape()[0] : -1;
  if (!rows.defined() || rows.rank() != 2 || rows.dtype() != DType::Int64 || !ratios.defined() ||
      ratios.shape() != rows.shape() || rows.shape()[0] != reviews) {
    throw ShapeError("NbBranch", "expects the batch's bag_rows (B, K) int64 and bag_weights (B, K) for " +
                                     std::to_string(reviews) + " reviews, got bag_rows " +
                                     (rows.defined() ? rows.shape().str() : "none") + " and bag_weights " +
                                     (ratios.defined() ? ratios.shape().str() : "none"));
  }
  // (B, K, 2) · (B, K, 1) summed over K -> (B, 2)
  const Variable r(reshape(ratios.to(table->weight.dtype()), {rows.shape()[0], rows.shape()[1], 1}));
  return sum((*table)(rows)*r, {1});
}

std::shared_ptr<SentimentModel> make_extended_model(const Config& config, int64_t vocab_size,
                                                    NgramVocabulary ngrams, NbFeatures nb) {
  const ExtendedConfig e = ExtendedConfig::of(config);
  Extensions extensions;
  if (e.ngram_buckets > 0)
    extensions.token_features = [&] { return std::make_shared<NgramTable>(config, e, std::move(ngrams)); };
  if (e.nb_max > 0)
    extensions.review_logits = [&] { return std::make_shared<NbBranch>(config, e, std::move(nb)); };
  auto model = std::make_shared<SentimentModel>(config, vocab_size, extensions);
  model->encoder->embedding->options.sparse = e.sparse_embeddings;
  return model;
}

std::shared_ptr<SentimentModel> build_extended_model(const Config& config, const Vocabulary& vocabulary,
                                                     const std::filesystem::path& dir,
                                                     const SafetensorsFile& weights) {
  const ExtendedConfig e = [&] {
    try {
      return ExtendedConfig::of(config);
    } catch (const Error& error) {
      throw Error("checkpoint", (dir / "config.json").string() + ": " + error.detail());
    }
  }();
  NgramVocabulary ngrams;
  if (e.ngram_buckets > 0 && e.ngram_vocabulary) {
    const std::string source = (dir / "ngrams.json").string();
    ngrams = NgramVocabulary::from_json(examples::parse_json(dir / "ngrams.json"), vocabulary, source);
    const auto recorded = weights.metadata.find("ngrams");
    const std::string saved = recorded == weights.metadata.end() ? "(not recorded)" : recorded->second;
    if (saved != fingerprint(ngrams)) {
      throw Error("checkpoint", weights.source + " was trained with " + saved + ", but " + source + " has " +
                                    fingerprint(ngrams));
    }
  }
  return make_extended_model(config, vocabulary.size(), std::move(ngrams));
}

Checkpoint load_extended_checkpoint(const std::filesystem::path& dir) {
  return Checkpoint::load(dir, build_extended_model);
}

const NgramTable* ngram_table(const SentimentModel& model) {
  return dynamic_cast<const NgramTable*>(model.token_features.get());
}

const NbBranch* nb_branch(const SentimentModel& model) {
  return dynamic_cast<const NbBranch*>(model.review_logits.get());
}

}  // namespace sentiment
