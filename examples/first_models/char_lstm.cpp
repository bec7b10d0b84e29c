// A character-level language model: an LSTM memorises a short text, then writes it out again by sampling
// one character at a time. Shows a module of your own around nn::LSTM, passing the LSTM's state (h, c)
// from one call to the next (truncated backpropagation through time, and sampling), gradient clipping,
// and sampling from any model: softmax of logits / temperature, then multinomial.
// docs/first-models.md shows this program and what it prints.
//
//   minigrad-first-char-lstm
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

using namespace minigrad;

const std::string kText =
    "A gradient flows back through the graph,\n"
    "from the loss to every weight it touched.\n"
    "Each step the optimizer nudges them all\n"
    "a little way downhill, and the loss falls.\n"
    "Run it twice and it prints the same,\n"
    "for every seed was given a name.\n";

// Embedding -> LSTM -> Linear: the logits of the next character at every position.
class CharLSTM : public nn::Layer<CharLSTM> {
 public:
  CharLSTM(int64_t vocab_size, int64_t hidden_size)
      : embedding(register_module("embedding", std::make_shared<nn::Embedding>(vocab_size, 32))),
        lstm(
            register_module("lstm", std::make_shared<nn::LSTM>(nn::LSTMOptions{
                                        .input_size = 32, .hidden_size = hidden_size, .batch_first = true}))),
        head(register_module("head", std::make_shared<nn::Linear>(hidden_size, vocab_size))) {}

  struct Output {
    Variable logits;           // (B, T, vocab_size)
    nn::RecurrentState state;  // h and c after the last step, (1, B, hidden_size) each
  };
  // tokens (B, T) int64; state: where the LSTM starts, {} for zeros (PyTorch's lstm(x, (h0, c0))).
  Output forward(const Tensor& tokens, const nn::RecurrentState& state = {}) const {
    const nn::RecurrentOutput r = (*lstm)((*embedding)(tokens), state);  // output (B, T, H)
    return {(*head)(r.output), {r.h_n, r.c_n}};
  }
  std::string name() const override { return "CharLSTM"; }

  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> head;
};

// The characters of the text, sorted: a character's id is its place here.
std::string vocabulary(const std::string& text) {
  const std::set<char> chars(text.begin(), text.end());
  return std::string(chars.begin(), chars.end());
}

// The text as character ids, (1, T) int64: a batch of one sequence.
Tensor encode(const std::string& text, const std::string& vocab) {
  std::vector<int64_t> ids;
  for (char c : text) ids.push_back(static_cast<int64_t>(vocab.find(c)));
  return Tensor::from_vector(ids, {1, static_cast<int64_t>(ids.size())});
}

// Writes `length` characters after `prompt`, each drawn from softmax(logits / temperature).
std::string sample(const CharLSTM& model, const std::string& vocab, const std::string& prompt, int length,
                   double temperature, Generator& gen) {
  NoGradGuard no_grad;
  // The prompt in one call; then one character per call, each starting from the state the last one left.
  CharLSTM::Output out = model(encode(prompt, vocab));
  std::string text = prompt;
  for (int i = 0; i < length; ++i) {
    const Variable logits = out.logits.select(1, -1);                        // (1, V): the last position's
    const Tensor probs = softmax(logits.data() / temperature, -1);           // (1, V), each row sums to 1
    const Tensor next = multinomial(probs, 1, /*replacement=*/false, &gen);  // (1, 1) int64
    text += vocab[static_cast<size_t>(next.item())];
    out = model(next, out.state);
  }
  return text;
}

int main() {
  manual_seed(0);
  const std::string vocab = vocabulary(kText);
  const Tensor text = encode(kText, vocab);  // (1, n): one long sequence
  const int64_t n = text.size(1);
  std::cout << n << " characters, " << vocab.size() << " distinct\n";

  CharLSTM model(static_cast<int64_t>(vocab.size()), 128);
  // No weight decay (AdamW's default is 0.01): here the point is to memorise.
  optim::AdamW optimizer(model.named_parameters(), {.lr = 3e-3, .weight_decay = 0});

  // Truncated backpropagation through time: the text in windows of 32 characters, in order, each starting
  // from the state the last one ended with, detached so that the gradient stops at the window's start
  // (PyTorch: hidden = tuple(h.detach() for h in hidden)). Each pass over the text starts from zeros.
  const int64_t window = 32;
  std::cout << std::setprecision(3);
  for (int epoch = 1; epoch <= 60; ++epoch) {
    nn::RecurrentState state;  // zeros
    double total = 0;
    for (int64_t start = 0; start + 1 < n; start += window) {
      const int64_t end = std::min(start + window, n - 1);
      const Tensor inputs = text.slice(1, start, end);           // (1, T)
      const Tensor targets = text.slice(1, start + 1, end + 1);  // (1, T): each input's next character
      const CharLSTM::Output out = model(inputs, state);
      const Variable loss =
          cross_entropy(out.logits.reshape({-1, out.logits.size(2)}), targets.reshape({-1}));
      optimizer.zero_grad();
      loss.backward();
      optim::clip_grad_norm_(model.parameters(), 1.0);
      optimizer.step();
      state = {out.state.h.detach(), out.state.c.detach()};
      total += loss.item() * static_cast<double>(end - start);
    }
    if (epoch % 10 == 0)
      std::cout << "epoch " << epoch << "  loss " << total / static_cast<double>(n - 1) << "\n";
  }

  // Memorised? From zeros, the model reads the whole text in one call and predicts each next character.
  NoGradGuard no_grad;
  const Variable logits = model(text.slice(1, 0, n - 1)).logits;  // (1, n - 1, V)
  std::cout << std::fixed << std::setprecision(1) << "next-character accuracy "
            << 100 * accuracy(logits.reshape({n - 1, -1}), text.slice(1, 1, n).reshape({-1})) << "%\n";

  Generator gen(7);
  for (double temperature : {0.5, 1.0, 1.5}) {
    std::cout << "\n--- temperature " << temperature << " ---\n"
              << sample(model, vocab, "A gradient", static_cast<int>(n) - 10, temperature, gen) << "\n";
  }
}
