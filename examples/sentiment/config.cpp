#include "examples/sentiment/config.h"

#include <sstream>

#include "minigrad/tensor/error.h"

namespace sentiment {

using namespace minigrad;
using json = nlohmann::json;

json Config::to_json() const {
  return examples::fields_to_json(*this, kConfigFields);
}

Config Config::from_json(const json& j, const std::string& source) {
  // Fields added later are optional, with the value that means "as before": older checkpoints still load.
  const Config c = examples::fields_from_json<Config>(j, kConfigFields, "config", source);
  c.check("config: " + source);
  return c;
}

void Config::check(const std::string& op) const {
  examples::check_fields(*this, kConfigFields, op);
  if (ngram_buckets == 1) throw ValueError(op, "ngram_buckets must be 0 (none) or at least 2");
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
