#include "examples/sentiment/model.h"

namespace sentiment {

using namespace minigrad;

SentimentModel::SentimentModel(const Config& c, int64_t vocab_size, const Extensions& extensions) {
  encoder = register_module("encoder", std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{
                                           .layer = {.num_hiddens = c.num_hiddens,
                                                     .ffn_num_hiddens = c.ffn_num_hiddens,
                                                     .num_heads = c.num_heads,
                                                     .dropout = c.dropout,
                                                     .attention_dropout = c.attention_dropout},
                                           .num_layers = c.num_layers,
                                           .tokens = {.vocab_size = vocab_size,
                                                      .max_len = c.max_len,
                                                      .learnable_positions = c.learnable_positions,
                                                      .padding_idx = Vocabulary::kPad}}));
  if (c.embedding_std != 1.0) {  // re-draw the table at the configured scale, keeping the padding row at 0
    const Tensor& table = encoder->embedding->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, c.embedding_std));
    table.select(0, Vocabulary::kPad).zero_();
  }
  if (extensions.token_features)
    token_features = register_module("token_features", extensions.token_features());
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(c.dropout));
  head = register_module("head", std::make_shared<nn::Linear>(2 * c.num_hiddens, 2));
  if (extensions.review_logits) review_logits = register_module("review_logits", extensions.review_logits());
  architecture_ = c.architecture() + (token_features ? token_features->architecture() : "") +
                  (review_logits ? review_logits->architecture() : "");
}

Variable SentimentModel::encode(const Tensor& tokens, const Tensor& lengths) const {
  Variable x = encoder->embed(tokens);  // (B, T, d), scaled by √d
  if (token_features) x = x + (*token_features)(tokens, lengths);
  return encoder->encode(x, {.valid_lens = lengths});  // (B, T, d)
}

Variable SentimentModel::forward(const Batch& batch) const {
  const Variable h = encode(batch.tokens, batch.lengths);  // (B, T, d)
  // Mean pooling sees the whole review; max pooling lets one strong phrase ("waste of time") speak.
  const Variable pooled =
      concat({mean_over_time(h, batch.lengths, /*dim=*/1), max_over_time(h, batch.lengths, /*dim=*/1)},
             1);                                        // (B, 2d)
  const Variable logits = (*head)((*dropout)(pooled));  // (B, 2)
  return review_logits ? logits + (*review_logits)(batch) : logits;
}

Featurizer SentimentModel::featurizer() const {
  if (!review_logits) return {};
  return [logits = review_logits](const std::vector<std::string>& tokens) { return logits->bag(tokens); };
}

}  // namespace sentiment
