// minigrad-sequence-layers: d2l's table comparing CNNs, RNNs and self-attention ("Self-Attention and
// Positional Encoding"), with minigrad's measurement beside each O(·):
//   computational cost      forward + backward seconds against n and against d, and their log-log slopes
//   sequential operations   the depth of the autograd graph from input to output, against n
//   maximum path length     the fewest layers (or recurrent steps) for which ∂y_n/∂x_1 ≠ 0
//
//   minigrad-sequence-layers --out docs/images
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "examples/plot/plot.h"
#include "examples/textbook/sequence_facts.h"
#include "minigrad/minigrad.h"

using namespace minigrad;
using textbook::SequenceLayerKind;

namespace {

constexpr int64_t kernel_size = 3, heads = 4;
// The timed sweeps: n at this width, then d at this length.
constexpr int64_t timed_width = 64, timed_length = 256;

struct Layer {
  SequenceLayerKind kind;
  std::string name;
};
// The chapter's three, in its order.
const std::vector<Layer> layers = {{SequenceLayerKind::Convolution, "CNN (k = 3)"},
                                   {SequenceLayerKind::Recurrent, "RNN (tanh)"},
                                   {SequenceLayerKind::SelfAttention, "self-attention"}};

std::vector<double> as_doubles(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}

// `text` padded with spaces to `width` characters, on the right (or, `right_aligned`, on the left).
// Counts characters, not bytes, for ², ⌈ and →.
std::string pad(const std::string& text, size_t width, bool right_aligned = false) {
  size_t characters = 0;
  for (unsigned char c : text) characters += (c & 0xC0) != 0x80;  // not a UTF-8 continuation byte
  const std::string fill(width > characters ? width - characters : 0, ' ');
  return right_aligned ? fill + text : text + fill;
}

std::string format(const char* spec, double value) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

// ---- Computational cost ----

// Seconds per forward and backward pass of a float32 layer on x (1, n, d): the median of 5 batches.
double seconds_per_pass(SequenceLayerKind kind, int64_t n, int64_t d) {
  const textbook::SequenceLayer layer =
      textbook::make_layer(kind, {.d = d, .kernel_size = kernel_size, .heads = heads});
  const Variable x(Tensor::normal({1, n, d}), /*requires_grad=*/true);
  return bench::seconds_per_call([&] { sum(layer(x)).backward(); }, 0.05, 5);
}

// The exponent p of y ≈ c·x^p: the least-squares slope of log y against log x, over the points from
// index `first` on.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y, size_t first) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(x.size() - first);
  for (size_t i = first; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

// The n from which `slow` takes longer than `fast` at every longer length measured: where the curves
// cross, interpolated on log-log axes. 0 if slow is slower from the first length; NAN if not at the last.
double crossover(const std::vector<double>& n, const std::vector<double>& slow,
                 const std::vector<double>& fast) {
  size_t i = n.size();
  while (i > 0 && slow[i - 1] > fast[i - 1]) --i;
  if (i == n.size()) return NAN;
  if (i == 0) return 0;
  const double before = std::log(slow[i - 1] / fast[i - 1]), after = std::log(slow[i] / fast[i]);
  return std::exp(std::log(n[i - 1]) + (std::log(n[i]) - std::log(n[i - 1])) * before / (before - after));
}

std::string describe_crossover(double n, const std::vector<double>& lengths) {
  if (std::isnan(n)) return format("at no n up to %.0f", lengths.back());
  if (n == 0) return format("at every n measured (from %.0f)", lengths.front());
  return format("from n ≈ %.0f", n);
}

// Seconds of each layer at each point (n, d) of a sweep, printed as they come; slopes in the swept size.
struct CostSweep {
  std::vector<double> sizes;                 // the swept n or d
  std::vector<std::vector<double>> seconds;  // [layer][point]
  std::vector<double> slopes;                // [layer]: over the upper half, past the fixed costs of a call
};

CostSweep time_sweep(const std::vector<int64_t>& ns, const std::vector<int64_t>& ds, bool sweep_n) {
  std::printf("%8s %6s", "n", "d");
  for (const Layer& layer : layers) std::printf(" %15s", layer.name.c_str());
  std::printf("\n");
  CostSweep sweep{as_doubles(sweep_n ? ns : ds), std::vector<std::vector<double>>(layers.size()), {}};
  for (size_t p = 0; p < ns.size(); ++p) {
    std::printf("%8lld %6lld", static_cast<long long>(ns[p]), static_cast<long long>(ds[p]));
    for (size_t l = 0; l < layers.size(); ++l) {
      sweep.seconds[l].push_back(seconds_per_pass(layers[l].kind, ns[p], ds[p]));
      std::printf(" %15.6f", sweep.seconds[l].back());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  for (size_t l = 0; l < layers.size(); ++l)
    sweep.slopes.push_back(loglog_slope(sweep.sizes, sweep.seconds[l], sweep.sizes.size() / 2));
  return sweep;
}

// The measured curves, and dashed lines c·size^exponent through the last point of layer `anchor`, for
// each (exponent, anchor) of `references`: the slopes the book predicts.
void plot_cost(const std::string& path, const std::string& title, const std::string& x_label,
               const CostSweep& sweep, const std::vector<std::pair<int, size_t>>& references) {
  std::vector<plot::Series> series;
  for (size_t l = 0; l < layers.size(); ++l)
    series.push_back({layers[l].name, sweep.sizes, sweep.seconds[l]});
  for (const auto& [exponent, anchor] : references) {
    plot::Series line{"slope " + std::to_string(exponent), sweep.sizes, {}, true};
    for (double size : sweep.sizes)
      line.y.push_back(sweep.seconds[anchor].back() * std::pow(size / sweep.sizes.back(), exponent));
    series.push_back(std::move(line));
  }
  plot::line_plot(path, series,
                  {.title = title,
                   .x_label = x_label,
                   .y_label = "seconds",
                   .log_x = true,
                   .log_y = true,
                   .legend_left = true});
  std::printf("wrote %s\n", path.c_str());
}

struct Costs {
  CostSweep against_n, against_d;
};

Costs measure_cost(const std::string& out, int64_t max_length) {
  std::printf(
      "1. Computational cost: seconds per forward + backward pass, float32, batch 1, threads: %d.\n"
      "   CNN: Conv1d(d, d, kernel %lld, padding same); RNN: nn::RNN (tanh, hidden d);\n"
      "   self-attention: MultiHeadAttention(d, %lld heads) with queries = keys = values.\n\n",
      num_threads(), static_cast<long long>(kernel_size), static_cast<long long>(heads));
  std::vector<int64_t> lengths, widths;
  for (int64_t n = 32; n <= max_length; n *= 2) lengths.push_back(n);
  for (int64_t d = 16; d <= 512; d *= 2) widths.push_back(d);
  Costs costs;
  costs.against_n = time_sweep(lengths, std::vector<int64_t>(lengths.size(), timed_width), true);
  std::printf("\n");
  costs.against_d = time_sweep(std::vector<int64_t>(widths.size(), timed_length), widths, false);

  const CostSweep &by_n = costs.against_n, &by_d = costs.against_d;
  std::printf("\nlog-log slopes (least squares over n from %.0f and d from %.0f):\n",
              by_n.sizes[by_n.sizes.size() / 2], by_d.sizes[by_d.sizes.size() / 2]);
  for (size_t l = 0; l < layers.size(); ++l)
    std::printf("  %-15s in n %.2f, in d %.2f\n", layers[l].name.c_str(), by_n.slopes[l], by_d.slopes[l]);
  std::printf(
      "at d = %lld, self-attention is slower than the CNN %s, and slower than the RNN %s\n",
      static_cast<long long>(timed_width),
      describe_crossover(crossover(by_n.sizes, by_n.seconds[2], by_n.seconds[0]), by_n.sizes).c_str(),
      describe_crossover(crossover(by_n.sizes, by_n.seconds[2], by_n.seconds[1]), by_n.sizes).c_str());
  std::printf(
      "(slower than the CNN throughout: its four d×d projections alone, 4nd² multiply-adds, outweigh the "
      "convolution's knd² = 3nd²)\n");
  plot_cost(out + "/sequence_layers_cost_n.png",
            "Forward + backward time against sequence length (d = " + std::to_string(timed_width) + ")",
            "sequence length n", by_n, {{1, 1}, {2, 2}});
  plot_cost(out + "/sequence_layers_cost_d.png",
            "Forward + backward time against width (n = " + std::to_string(timed_length) + ")", "width d",
            by_d, {{2, 0}, {1, 2}});
  return costs;
}

// ---- Sequential operations ----

struct Depths {
  std::vector<double> lengths;
  std::vector<std::vector<double>> depths;  // [layer][length]
};

Depths measure_depth(const std::string& out, const textbook::SequenceLayerOptions& structure) {
  std::printf(
      "\n2. Sequential operations: recorded ops on the longest path from input to output of the autograd "
      "graph\n   (float64, d = %lld)\n\n%8s",
      static_cast<long long>(structure.d), "n");
  for (const Layer& layer : layers) std::printf(" %15s", layer.name.c_str());
  std::printf("\n");
  Depths result{{}, std::vector<std::vector<double>>(layers.size())};
  for (int64_t n = 4; n <= 1024; n *= 2) {
    result.lengths.push_back(static_cast<double>(n));
    std::printf("%8lld", static_cast<long long>(n));
    for (size_t l = 0; l < layers.size(); ++l) {
      const Variable x(Tensor::normal({1, n, structure.d}, 0, 1, structure.dtype, structure.generator), true);
      const int64_t depth = textbook::graph_depth(textbook::make_layer(layers[l].kind, structure)(x), x);
      result.depths[l].push_back(static_cast<double>(depth));
      std::printf(" %15lld", static_cast<long long>(depth));
    }
    std::printf("\n");
  }
  std::printf("the longest path at n = 3, input side first:\n");
  for (const Layer& layer : layers) {
    const Variable x(Tensor::normal({1, 3, structure.d}, 0, 1, structure.dtype, structure.generator), true);
    std::string ops;
    for (const std::string& op : textbook::longest_path(textbook::make_layer(layer.kind, structure)(x), x))
      ops += (ops.empty() ? "" : " ") + op;
    std::printf("  %s%s\n", pad(layer.name, 16).c_str(), ops.c_str());
  }
  std::vector<plot::Series> series;
  for (size_t l = 0; l < layers.size(); ++l)  // CNN and attention are equally deep: attention dashed over it
    series.push_back({layers[l].name, result.lengths, result.depths[l], l == 2});
  const std::string path = out + "/sequence_layers_depth.png";
  plot::line_plot(path, series,
                  {.title = "Sequential operations: depth of the autograd graph",
                   .x_label = "sequence length n",
                   .y_label = "ops on the longest input-to-output path",
                   .log_x = true,
                   .log_y = true,
                   .legend_left = true});
  std::printf("wrote %s\n", path.c_str());
  return result;
}

// ---- Maximum path length ----

struct PathLengths {
  int64_t n = 0;  // the longest sequence measured
  double causal = 0, centred = 0, attention = 0, recurrent_steps = 0;
};

PathLengths measure_path_length(const std::string& out, const textbook::SequenceLayerOptions& structure) {
  std::printf(
      "\n3. Maximum path length: the fewest stacked layers, or recurrent steps, for which ∂y_n/∂x_1 ≠ 0\n"
      "   (one backward pass from y_n per height; float64, d = %lld, k = %lld)\n\n",
      static_cast<long long>(structure.d), static_cast<long long>(kernel_size));
  const std::vector<std::string> header = {"n",           "CNN causal",    "⌈(n−1)/(k−1)⌉",
                                           "CNN centred", "⌈(n−1)/⌊k/2⌋⌉", "self-attention",
                                           "RNN steps",   "n − 1"};
  const std::vector<size_t> widths = {4, 12, 16, 13, 16, 16, 11, 7};
  for (size_t c = 0; c < header.size(); ++c) std::printf("%s", pad(header[c], widths[c], true).c_str());
  std::printf("\n");
  const std::vector<int64_t> lengths = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  std::vector<double> causal, centred, attention, steps;
  for (int64_t n : lengths) {
    causal.push_back(static_cast<double>(
        textbook::layers_to_connect(SequenceLayerKind::CausalConvolution, n, structure, n)));
    centred.push_back(
        static_cast<double>(textbook::layers_to_connect(SequenceLayerKind::Convolution, n, structure, n)));
    attention.push_back(
        static_cast<double>(textbook::layers_to_connect(SequenceLayerKind::SelfAttention, n, structure, n)));
    steps.push_back(static_cast<double>(textbook::recurrent_steps_to_connect(n, structure)));
    const int64_t back = kernel_size - 1, side = kernel_size / 2;  // positions one layer reaches back
    const std::vector<double> row = {static_cast<double>(n),
                                     causal.back(),
                                     static_cast<double>((n - 1 + back - 1) / back),
                                     centred.back(),
                                     static_cast<double>((n - 1 + side - 1) / side),
                                     attention.back(),
                                     steps.back(),
                                     static_cast<double>(n - 1)};
    for (size_t c = 0; c < row.size(); ++c)
      std::printf("%s", pad(format("%.0f", row[c]), widths[c], true).c_str());
    std::printf("\n");
  }
  const std::vector<double> x = as_doubles(lengths);
  const std::string path = out + "/sequence_layers_path.png";
  plot::line_plot(path,
                  {{"CNN (k = 3, causal): layers", x, causal},
                   {"CNN (k = 3, centred): layers", x, centred},
                   {"RNN: recurrent steps", x, steps, true},
                   {"self-attention: layers", x, attention}},
                  {.title = "Maximum path length: layers or steps until y_n depends on x_1",
                   .x_label = "sequence length n",
                   .y_label = "layers (steps for the RNN)",
                   .legend_left = true});
  std::printf("wrote %s\n", path.c_str());
  return {lengths.back(), causal.back(), centred.back(), attention.back(), steps.back()};
}

// How strongly y_n depends on each x_j: zero outside the convolution's window (one layer, and eight
// stacked, which see eight times as far), fading with the distance through the RNN's steps, everywhere
// through attention. Drawn as log10 of the gradient's norm, one row per layer.
void draw_gradient_profiles(const std::string& out, const textbook::SequenceLayerOptions& structure) {
  const int64_t n = 32, stacked = 8;
  const Variable x(Tensor::normal({1, n, structure.d}, 0, 1, structure.dtype, structure.generator), true);
  const Tensor u = Tensor::normal({structure.d}, 0, 1, structure.dtype, structure.generator);
  std::vector<std::string> names;
  std::vector<std::vector<double>> profiles;
  for (const Layer& layer : layers) {
    names.push_back(layer.name);
    profiles.push_back(textbook::last_output_gradient(textbook::make_layer(layer.kind, structure)(x), x, u));
  }
  Variable y = x;
  std::vector<textbook::SequenceLayer> stack;
  for (int64_t l = 0; l < stacked; ++l) {
    stack.push_back(textbook::make_layer(SequenceLayerKind::Convolution, structure));
    y = stack.back()(y);
  }
  names.insert(names.begin() + 1, std::to_string(stacked) + " CNN layers");
  profiles.insert(profiles.begin() + 1, textbook::last_output_gradient(y, x, u));

  std::printf("\n|∂y_n/∂x_j| for n = %lld (random upstream gradient):\n%s", static_cast<long long>(n),
              pad("j", 16).c_str());
  const std::vector<int64_t> shown = {1, 2, n / 2, n - 8, n - 2, n - 1, n};
  for (int64_t j : shown) std::printf(" %9lld", static_cast<long long>(j));
  std::printf("\n");
  double smallest = 1;  // the smallest non-zero norm
  for (size_t r = 0; r < profiles.size(); ++r) {
    std::printf("%s", pad(names[r], 16).c_str());
    for (int64_t j : shown) std::printf(" %9.2e", profiles[r][static_cast<size_t>(j - 1)]);
    std::printf("\n");
    for (double g : profiles[r])
      if (g > 0) smallest = std::min(smallest, g);
  }
  // Exact zeros (no dependence) one decade below the smallest non-zero value, at the bottom of the scale.
  const double floor = std::floor(std::log10(smallest)) - 1;
  Tensor image = Tensor::zeros({static_cast<int64_t>(profiles.size()), n}, DType::Float64);  // (rows, n)
  double* pixels = image.data_ptr<double>();
  for (size_t r = 0; r < profiles.size(); ++r)
    for (size_t j = 0; j < profiles[r].size(); ++j)
      pixels[r * static_cast<size_t>(n) + j] = profiles[r][j] > 0 ? std::log10(profiles[r][j]) : floor;
  std::vector<std::string> positions;
  for (int64_t j = 1; j <= n; ++j) positions.push_back(std::to_string(j));
  const std::string path = out + "/sequence_layers_gradient_profile.png";
  plot::heatmap(path, image,
                {.title = "How y_n depends on x_j (n = 32): log10 |∂y_n/∂x_j|",
                 .x_label = "input position j",
                 .y_label = "",
                 .colorbar_label = "log10 norm (exact 0: " + format("%.0f", floor) + ")",
                 .x_ticks = positions,
                 .y_ticks = names,
                 .rows_downward = true,
                 .height = 420});
  std::printf("wrote %s\n", path.c_str());
}

// ---- The chapter's table, with the measurements beside it ----

void print_table(const Costs& costs, const Depths& depths, const PathLengths& paths) {
  const char* book[3][3] = {
      {"O(knd²)", "O(1)", "O(n/k)"}, {"O(nd²)", "O(n)", "O(n)"}, {"O(n²d)", "O(1)", "O(1)"}};
  const std::string path[3] = {
      format("%.0f layers causal, ", paths.causal) + format("%.0f centred", paths.centred),
      format("%.0f recurrent steps", paths.recurrent_steps), format("%.0f layer", paths.attention)};
  std::printf(
      "\nd2l's table, measured:\n"
      "  computational cost: time ∝ n^a at d = %lld and ∝ d^b at n = %lld, the exponents fitted\n"
      "  sequential operations: ops on the longest path of the autograd graph, at n = %.0f → %.0f\n"
      "  maximum path length: layers (or recurrent steps) until y_n depends on x_1, at n = %lld\n\n",
      static_cast<long long>(timed_width), static_cast<long long>(timed_length), depths.lengths.front(),
      depths.lengths.back(), static_cast<long long>(paths.n));
  std::printf("%s%s%s%s\n", pad("", 16).c_str(), pad("computational cost", 25).c_str(),
              pad("sequential operations", 25).c_str(), "maximum path length");
  std::printf("%s%s%s%s%s%s%s\n", pad("", 16).c_str(), pad("book", 9).c_str(), pad("measured", 16).c_str(),
              pad("book", 6).c_str(), pad("measured", 19).c_str(), pad("book", 8).c_str(), "measured");
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string cost =
        format("n^%.2f ", costs.against_n.slopes[l]) + format("d^%.2f", costs.against_d.slopes[l]);
    const std::string depth =
        format("%.0f → ", depths.depths[l].front()) + format("%.0f", depths.depths[l].back());
    std::printf("%s%s%s%s%s%s%s\n", pad(layers[l].name, 16).c_str(), pad(book[l][0], 9).c_str(),
                pad(cost, 16).c_str(), pad(book[l][1], 6).c_str(), pad(depth, 19).c_str(),
                pad(book[l][2], 8).c_str(), path[l].c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "d2l's comparison of CNNs, RNNs and self-attention, measured: cost, sequential operations and maximum "
      "path length."};
  std::string out = "out/textbook";
  int64_t max_length = 2048;
  // One thread by default: the curves then show the work each layer does, not how well a thread pool
  // splits it (which improves with size and would flatten the slopes).
  int threads = 1;
  app.add_option("--out", out, "Folder for the pictures")->capture_default_str();
  app.add_option("--threads", threads, "Threads for the timed passes")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--max-length", max_length, "Longest sequence to time")
      ->check(CLI::Range(256, 16384))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::filesystem::create_directories(out);
    set_num_threads(threads);
    const Costs costs = measure_cost(out, max_length);
    // The structure does not depend on the width or the precision; float64 on narrow layers keeps a
    // gradient's exact zeros apart from values that merely underflow in float32.
    Generator generator(0);
    const textbook::SequenceLayerOptions structure{
        .d = 8, .kernel_size = kernel_size, .heads = 2, .dtype = DType::Float64, .generator = &generator};
    const Depths depths = measure_depth(out, structure);
    const PathLengths paths = measure_path_length(out, structure);
    draw_gradient_profiles(out, structure);
    print_table(costs, depths, paths);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
