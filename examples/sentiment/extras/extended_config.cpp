#include "examples/sentiment/extras/extended_config.h"

#include "minigrad/tensor/error.h"

namespace sentiment {

using namespace minigrad;

ExtendedConfig ExtendedConfig::of(const Config& config) {
  const auto e = examples::fields_from_json<ExtendedConfig>(config.extensions, kExtendedFields, "config",
                                                            "the extensions' options");
  e.check("config");
  return e;
}

void ExtendedConfig::store_in(Config& config) const {
  config.extensions = examples::fields_to_json(*this, kExtendedFields);
}

void ExtendedConfig::check(const std::string& op) const {
  examples::check_fields(*this, kExtendedFields, op);
  if (ngram_buckets == 1) throw ValueError(op, "ngram_buckets must be 0 (none) or at least 2");
  if (sparse_embeddings && pretrain_epochs > 0) {
    // Pretraining predicts tokens through the token table (tied weights), which gives it a dense
    // gradient, and SparseAdam takes row-sparse ones only.
    throw ValueError(op,
                     "sparse_embeddings does not go with pretrain_epochs > 0 (train with "
                     "--dense-embeddings): the pretraining's tied output layer gives the token table a dense "
                     "gradient");
  }
}

}  // namespace sentiment
