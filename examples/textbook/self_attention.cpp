// minigrad-self-attention: d2l's self-attention snippet, a picture of masked attention weights, and the
// chapter's complexity comparison made measurable (self-attention costs O(n²·d) in the length n).
//
//   minigrad-self-attention --out docs/images
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "examples/plot/plot.h"
#include "minigrad/minigrad.h"

using namespace minigrad;

namespace {

// Median seconds of one forward and backward pass of self-attention over a length-n sequence.
double time_self_attention(nn::MultiHeadAttention& attention, int64_t n, int64_t d, int repeats) {
  const Variable x(Tensor::normal({1, n, d}), /*requires_grad=*/true);
  std::vector<double> times;
  for (int r = 0; r < repeats + 1; ++r) {  // the first run warms up buffers and threads
    const auto start = std::chrono::steady_clock::now();
    Variable y = attention(x, x, x);
    sum(y).backward();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  times.erase(times.begin());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Self-attention: d2l's example, masked attention weights, and its cost against the sequence length."};
  std::string out = "out/textbook";
  int64_t max_length = 2048;
  app.add_option("--out", out, "Folder for the pictures")->capture_default_str();
  app.add_option("--max-length", max_length, "Longest sequence to time")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::filesystem::create_directories(out);
    manual_seed(0);

    // d2l: num_hiddens 100, 5 heads, dropout 0.5, in eval mode, on ones(2, 4, 100) with valid_lens [3, 2].
    nn::MultiHeadAttention attention(100, 5, 0.5);
    attention.eval();
    std::cout << attention << "\n";
    const Variable X(Tensor::ones({2, 4, 100}));
    const Variable Y = attention(X, X, X, {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
    std::cout << "output shape: " << Y.shape() << "\n\n";

    // A small example with masking: 8 queries over 8 keys, the second sequence only 5 long, with a causal
    // mask as well. Hidden keys get exactly zero weight.
    nn::MultiHeadAttention small(16, 2, 0.0);
    const Variable tokens(Tensor::normal({2, 8, 16}));
    small(tokens, tokens, tokens, {.valid_lens = Tensor::from_vector<int64_t>({8, 5}, {2}), .causal = true});
    const Tensor weights = small.attention_weights().select(0, 1).select(0, 0);  // sequence 1, head 0: (8, 8)
    const std::string weights_png = out + "/attention_weights_masked.png";
    plot::heatmap(weights_png, weights,
                  {.title = "Attention weights: causal mask, valid length 5 (head 0)",
                   .x_label = "Key position",
                   .y_label = "Query position",
                   .colorbar_label = "weight",
                   .rows_downward = true});
    std::cout << "attention weights of sequence 1, head 0 (keys 5-7 are padding; keys after the query are "
                 "hidden):\n"
              << weights << "\nwrote " << weights_png << "\n\n";

    // The cost of self-attention against the length n, at d = 64 with 4 heads.
    const int64_t d = 64;
    nn::MultiHeadAttention timed(d, 4, 0.0);
    std::printf("self-attention forward + backward, d = %lld, 4 heads, batch 1, %d threads\n",
                static_cast<long long>(d), num_threads());
    std::printf("%8s %14s %16s\n", "n", "seconds", "slope (log-log)");
    std::vector<double> ns, seconds;
    for (int64_t n = 64; n <= max_length; n *= 2) {
      const double t = time_self_attention(timed, n, d, n <= 512 ? 9 : 3);
      const double slope = seconds.empty() ? NAN : std::log(t / seconds.back()) / std::log(2.0);
      ns.push_back(static_cast<double>(n));
      seconds.push_back(t);
      std::printf("%8lld %14.6f %16.2f\n", static_cast<long long>(n), t, slope);
    }
    // A line of slope 2 through the longest measurement, for comparison.
    std::vector<double> reference;
    for (double n : ns) reference.push_back(seconds.back() * (n / ns.back()) * (n / ns.back()));
    const std::string cost_png = out + "/self_attention_cost.png";
    plot::line_plot(cost_png,
                    {{"self-attention (measured)", ns, seconds}, {"c · n² (slope 2)", ns, reference, true}},
                    {.title = "Self-attention forward + backward time against sequence length",
                     .x_label = "sequence length n",
                     .y_label = "seconds",
                     .log_x = true,
                     .log_y = true,
                     .legend_left = true});
    std::printf("wrote %s\n", cost_png.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
