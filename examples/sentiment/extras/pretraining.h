// Masked-token pretraining of the classifier's encoder, before it is trained on the labels (off by
// default: docs/history/sentiment.md); and token dropout, the other change of a batch's tokens.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/training.h"

namespace sentiment {

// Masked-token pretraining (the masked language model of BERT, Devlin et al., 2019): positions chosen at
// random; the model reads the review with them hidden and predicts the token that was there.
struct MaskedTokens {
  minigrad::Tensor inputs;     // (B, T) int64: the tokens, with the chosen ones replaced
  minigrad::Tensor positions;  // (M) int64: the chosen positions, flattened (row·T + column)
  minigrad::Tensor targets;    // (M) int64: the tokens that were there
};
// Chooses each valid token (not the padding) with probability p, and one at random in a review that
// got none. A chosen token becomes <unk> (our mask token) 80% of the time, a random token other than
// <pad> and <unk> 10%, and stays 10%, as BERT: the model cannot tell which visible tokens it will be
// asked about.
MaskedTokens mask_tokens(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, double p,
                         int64_t vocab_size, minigrad::Generator& generator);

// Token dropout: each valid token of the batch (not the padding) becomes <unk> with probability p, drawn
// from `generator`. Returns new tokens; the batch's are left as they are.
minigrad::Tensor drop_tokens(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, double p,
                             minigrad::Generator& generator);

struct PretrainingLog {
  double seconds = 0;
  int64_t steps = 0;
  std::vector<double> epoch_loss;      // mean cross-entropy of the predicted tokens, per epoch
  std::vector<double> epoch_accuracy;  // share of them predicted right
};

// pretrain_epochs (extended_config.h) of masked-token pretraining of the checkpoint's model on the
// examples' text (their labels are not used): AdamW at pretrain_lr with warm-up and cosine decay, clipping,
// dropout. The predictions come from the encoder's output times the token embedding's table (tied
// weights, as BERT) plus a bias that is dropped afterwards, so the model keeps its shape. Uses
// options.interactive, max_steps and ranks; it keeps no checkpoints (--resume continues the
// classifier's training, which starts after it).
PretrainingLog pretrain(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                        const TrainOptions& options = {});

}  // namespace sentiment
