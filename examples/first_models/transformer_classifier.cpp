// A small Transformer classifier on sequences of different lengths: each batch is padded to its longest
// sequence, and the valid lengths tell attention which keys are padding (AttentionMask) and the pooling
// which positions to average. Shows nn::TransformerEncoder inside a module of your own, pad_sequences,
// AdamW's options, dropout switched off by eval(), and a held-out test set.
// docs/first-models.md shows this program and what it prints.
//
//   minigrad-first-transformer-classifier
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <vector>

#include "minigrad/minigrad.h"

using namespace minigrad;

constexpr int64_t kPad = 0;         // the padding id; the tokens are 1..9
constexpr int64_t kVocabSize = 10;  // padding and nine tokens
constexpr int64_t kMaxLen = 16;

// n sequences of 4 to 16 random tokens. The tokens fall in three groups, 1-3, 4-6 and 7-9, and the label
// is the group with the most tokens in the sequence (a tie is drawn again): every token counts, wherever
// it stands, and a padding token must not.
struct Dataset {
  std::vector<std::vector<int64_t>> sequences;
  std::vector<int64_t> labels;
};
Dataset make_dataset(int64_t n, Generator& gen) {
  Dataset data;
  while (static_cast<int64_t>(data.labels.size()) < n) {
    const auto length = static_cast<int64_t>(4 + gen.next_below(kMaxLen - 3));
    std::vector<int64_t> tokens, group_counts(3, 0);
    for (int64_t i = 0; i < length; ++i) {
      tokens.push_back(static_cast<int64_t>(1 + gen.next_below(9)));
      group_counts[static_cast<size_t>((tokens.back() - 1) / 3)] += 1;
    }
    const int64_t most = *std::max_element(group_counts.begin(), group_counts.end());
    if (std::count(group_counts.begin(), group_counts.end(), most) > 1) continue;
    data.sequences.push_back(tokens);
    data.labels.push_back(std::find(group_counts.begin(), group_counts.end(), most) - group_counts.begin());
  }
  return data;
}

// TransformerEncoder -> the mean over each sequence's valid positions -> Linear: three logits per sequence.
class Classifier : public nn::Layer<Classifier> {
 public:
  Classifier()
      : encoder(register_module(
            "encoder",
            std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{
                .layer = {.num_hiddens = 32, .ffn_num_hiddens = 64, .num_heads = 4, .dropout = 0.1},
                .num_layers = 2,
                .tokens = {.vocab_size = kVocabSize, .max_len = kMaxLen, .padding_idx = kPad}}))),
        head(register_module("head", std::make_shared<nn::Linear>(32, 3))) {}

  // tokens (B, T) int64, padded after each sequence; valid_lens (B) int64 -> logits (B, 3)
  Variable forward(const Tensor& tokens, const Tensor& valid_lens) const {
    // Keys at positions >= valid_lens[b] are hidden from every query of sequence b.
    const Variable x = (*encoder)(tokens, {.valid_lens = valid_lens});  // (B, T, 32)
    return (*head)(mean_over_time(x, valid_lens, /*dim=*/1));           // (B, 32) -> (B, 3)
  }
  std::string name() const override { return "Classifier"; }

  std::shared_ptr<nn::TransformerEncoder> encoder;
  std::shared_ptr<nn::Linear> head;
};

int main() {
  manual_seed(0);
  Generator data_gen(1), batch_gen(2);
  const Dataset train = make_dataset(2000, data_gen);
  const Dataset test = make_dataset(500, data_gen);  // held out: never trained on

  Classifier model;
  // PyTorch: AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98)); weight_decay keeps its default, 0.01.
  optim::AdamW optimizer(model.named_parameters(), {.lr = 1e-3, .betas = {0.9, 0.98}});

  std::cout << std::setprecision(3);
  for (int epoch = 1; epoch <= 6; ++epoch) {
    model.train();  // dropout on
    double total = 0;
    for (const Tensor& batch : index_batches(2000, {.batch_size = 64, .generator = &batch_gen})) {
      std::vector<std::vector<int64_t>> sequences;
      std::vector<int64_t> labels;
      for (int64_t i : batch.to_vector<int64_t>()) {
        sequences.push_back(train.sequences[static_cast<size_t>(i)]);
        labels.push_back(train.labels[static_cast<size_t>(i)]);
      }
      // tokens (B, T), T the longest sequence in this batch; valid_lens (B); B = 64, 16 in the last batch
      const auto [tokens, valid_lens] = pad_sequences(sequences, {.padding = kPad});
      const Tensor targets = Tensor::from_vector(labels, {batch.numel()});  // (B)
      const Variable loss = cross_entropy(model(tokens, valid_lens), targets);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item() * static_cast<double>(batch.numel());
    }
    if (epoch % 2 == 0) std::cout << "epoch " << epoch << "  loss " << total / 2000 << "\n";
  }

  model.eval();  // dropout off
  NoGradGuard no_grad;
  const auto [tokens, valid_lens] = pad_sequences(test.sequences, {.padding = kPad});  // (500, 16), (500)
  const Variable logits = model(tokens, valid_lens);                                   // (500, 3)
  std::cout << std::fixed << std::setprecision(1);
  std::cout << "test accuracy " << 100 * accuracy(logits, Tensor::from_vector(test.labels, {500})) << "%\n";

  // The mask at work: the shortest test sequence gets the same logits alone (T = its length) as padded
  // to T = 16 in the batch.
  size_t shortest = 0;
  for (size_t i = 1; i < test.sequences.size(); ++i)
    if (test.sequences[i].size() < test.sequences[shortest].size()) shortest = i;
  const std::vector<int64_t>& sequence = test.sequences[shortest];
  const auto length = static_cast<int64_t>(sequence.size());
  const Variable alone = model(Tensor::from_vector(sequence, {1, length}),
                               Tensor::from_vector(std::vector<int64_t>{length}, {1}));  // (1, 3)
  const auto row = static_cast<int64_t>(shortest);
  const Tensor padded = logits.data().slice(0, row, row + 1);  // (1, 3)
  std::cout << std::boolalpha << "test sequence " << shortest << " (" << length
            << " tokens) alone and padded to " << tokens.size(1) << ": same logits "
            << allclose(alone.data(), padded, {.rtol = 1e-4, .atol = 1e-5}) << "\n";
}
