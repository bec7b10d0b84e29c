// minigrad-lstm-step: the time of an LSTM layer's forward and backward, the figure that bench/lstm_step.py
// measures for PyTorch's nn.LSTM on the same shapes and bench/lstm-vs-pytorch.sh compares.
//
//   x (L, N, input) -> nn::LSTM (hidden, layers, directions) -> output (L, N, directions·hidden)
//   loss = Σ output ⊙ v, with v a fixed random upstream gradient; backward to x and every parameter.
//
// One call is zero_grad + forward + backward, with x and v drawn once from a fixed seed. The run prints
// one line:  result impl=minigrad config=small threads=1 ... ms=...
#include <cstdio>
#include <map>
#include <string>

#include "bench/step_args.h"
#include "bench/timing.h"
#include "minigrad/minigrad.h"

using namespace minigrad;

namespace {

// bench/lstm_step.py has the same table.
struct Config {
  int64_t seq, batch, input, hidden, layers;
  bool bidirectional;
};
const std::map<std::string, Config> kConfigs = {
    // a small model: short sequences, where the time per op counts
    {"small", {.seq = 32, .batch = 16, .input = 32, .hidden = 32, .layers = 1, .bidirectional = false}},
    // one layer of d2l's BiRNN for IMDB: 500 tokens, batch 64, 100-wide embeddings and states
    {"d2l", {.seq = 500, .batch = 64, .input = 100, .hidden = 100, .layers = 1, .bidirectional = true}},
};

const char* const kTitle = "Time an LSTM layer's forward and backward (see bench/lstm-vs-pytorch.sh).";

}  // namespace

int main(int argc, char** argv) {
  const auto [name, c, seconds] = bench::parse_step_args(argc, argv, kTitle, kConfigs, "small");
  nn::LSTM lstm({.input_size = c.input,
                 .hidden_size = c.hidden,
                 .num_layers = c.layers,
                 .bidirectional = c.bidirectional});
  const Variable x(Tensor::normal({c.seq, c.batch, c.input}, 0, 1), true);
  const int64_t directions = c.bidirectional ? 2 : 1;
  const Variable v(Tensor::normal({c.seq, c.batch, directions * c.hidden}, 0, 1));
  auto step = [&] {
    lstm.zero_grad();
    x.zero_grad();
    sum(lstm(x).output * v).backward();
  };
  const double s = bench::seconds_per_call(step, seconds / 5, 5);
  std::printf(
      "result impl=minigrad config=%s threads=%d seq=%lld batch=%lld input=%lld hidden=%lld "
      "layers=%lld directions=%lld ms=%.3f\n",
      name.c_str(), num_threads(), static_cast<long long>(c.seq), static_cast<long long>(c.batch),
      static_cast<long long>(c.input), static_cast<long long>(c.hidden), static_cast<long long>(c.layers),
      static_cast<long long>(directions), s * 1e3);
  return 0;
}
