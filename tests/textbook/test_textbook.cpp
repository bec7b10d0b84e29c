// The textbook numbers the example programs print, and the pictures they write.
#include <filesystem>

#include "examples/plot/plot.h"
#include "examples/textbook/positional_facts.h"
#include "examples/textbook/sequence_facts.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using textbook::SequenceLayerKind;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(textbook_numbers)

BOOST_AUTO_TEST_CASE(positions_2_and_10_at_d_model_512) {
  const Tensor standard = nn::PositionalEncoding::sinusoids(11, 512, DType::Float64);
  const Tensor book = textbook::book_positional_encoding(11, 512);
  // The book prints 0.8600013; the published formula gives 0.7225.
  BOOST_TEST(std::abs(textbook::cosine_similarity(book.select(0, 2), book.select(0, 10)) - 0.8600013) < 5e-8);
  BOOST_TEST(std::abs(textbook::cosine_similarity(standard.select(0, 2), standard.select(0, 10)) -
                      0.72252008) < 1e-8);
  // Both agree on the first pair of columns (j = 0) and part company after.
  BOOST_TEST(book.at({2, 0}) == std::sin(2.0));
  BOOST_TEST(standard.at({2, 0}) == std::sin(2.0));
  BOOST_TEST(std::abs(standard.at({2, 2}) - std::sin(2 / std::pow(10000.0, 2.0 / 512))) < 1e-15);
  BOOST_TEST(std::abs(book.at({2, 2}) - std::sin(2 / std::pow(10000.0, 4.0 / 512))) < 1e-15);
}

BOOST_AUTO_TEST_CASE(binary_codes_and_the_rotation_property) {
  const std::vector<std::string> codes = {"000", "001", "010", "011", "100", "101", "110", "111"};
  for (int64_t i = 0; i < 8; ++i) BOOST_TEST(textbook::binary(i, 3) == codes[static_cast<size_t>(i)]);
  const Tensor P = nn::PositionalEncoding::sinusoids(200, 32, DType::Float64);
  for (int64_t delta : {1, 2, 5, 10, 50, 100}) BOOST_TEST(textbook::max_rotation_error(P, delta) < 1e-5);
  expect_error<ShapeError>([] { textbook::cosine_similarity(Tensor::ones({2}), Tensor::ones({3})); },
                           "cosine_similarity: shapes [2] and [3] differ");
}

BOOST_AUTO_TEST_CASE(the_self_attention_snippet_has_the_chapter_shape) {
  nn::MultiHeadAttention attention(100, 5, 0.5);
  attention.eval();
  const Variable X(Tensor::ones({2, 4, 100}));
  BOOST_TEST(attention(X, X, X, {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})}).shape() ==
             (Shape{2, 4, 100}));
}

// d2l's comparison of CNNs, RNNs and self-attention: the structural columns, exactly, in float64.

BOOST_AUTO_TEST_CASE(graph_depth_is_the_longest_path_walked_without_recursion) {
  const Variable x(Tensor::ones({3}, DType::Float64), true);
  const Variable y = x * 2.0;
  BOOST_TEST(textbook::graph_depth(y + tanh(tanh(y)), x) == 4);  // mul tanh tanh add, not mul add
  BOOST_TEST((textbook::longest_path(y + tanh(tanh(y)), x) ==
              std::vector<std::string>{"mul_scalar", "tanh", "tanh", "add"}));
  // The input read directly and through a longer path, in either order: the longer one counts.
  BOOST_TEST(textbook::graph_depth(x + tanh(tanh(x)), x) == 3);
  BOOST_TEST(textbook::graph_depth(tanh(tanh(x)) + x, x) == 3);
  BOOST_TEST(textbook::graph_depth(x, x) == 0);
  // A chain this long would overflow the C++ stack if walked recursively.
  Variable chain = x;
  for (int i = 0; i < 100000; ++i) chain = chain * 1.00001;
  BOOST_TEST(textbook::graph_depth(chain, x) == 100000);
  const Variable other(Tensor::ones({3}, DType::Float64), true);
  expect_error<ValueError>([&] { textbook::graph_depth(y, other); },
                           "longest_path: the output does not depend on the input");
  expect_error<ValueError>([&] { textbook::graph_depth(y, y); },
                           "longest_path: the input must be a leaf that requires grad");
}

BOOST_AUTO_TEST_CASE(sequential_operations_flat_for_cnn_and_attention_growing_for_the_rnn) {
  Generator generator(1);
  const textbook::SequenceLayerOptions options{
      .d = 4, .heads = 2, .dtype = DType::Float64, .generator = &generator};
  auto depth = [&](SequenceLayerKind kind, int64_t n) {
    const Variable x(Tensor::normal({1, n, 4}, 0, 1, DType::Float64, &generator), true);
    return textbook::graph_depth(textbook::make_layer(kind, options)(x), x);
  };
  const int64_t rnn_step = depth(SequenceLayerKind::Recurrent, 3) - depth(SequenceLayerKind::Recurrent, 2);
  BOOST_TEST(rnn_step > 0);  // the ops of one step: matmul, add, tanh
  for (int64_t n = 2; n <= 9; ++n) {
    BOOST_TEST(depth(SequenceLayerKind::Convolution, n + 1) == depth(SequenceLayerKind::Convolution, n));
    BOOST_TEST(depth(SequenceLayerKind::SelfAttention, n + 1) == depth(SequenceLayerKind::SelfAttention, n));
    BOOST_TEST(
        depth(SequenceLayerKind::Recurrent, n + 1) - depth(SequenceLayerKind::Recurrent, n) == rnn_step,
        "n = " << n);
  }
  BOOST_TEST(depth(SequenceLayerKind::Recurrent, 64) - depth(SequenceLayerKind::Recurrent, 2) ==
             62 * rnn_step);
}

BOOST_AUTO_TEST_CASE(maximum_path_length_in_layers_and_recurrent_steps) {
  Generator generator(2);
  for (int64_t k : {3, 5}) {
    const textbook::SequenceLayerOptions options{
        .d = 4, .kernel_size = k, .heads = 2, .dtype = DType::Float64, .generator = &generator};
    for (int64_t n : {2, 3, 4, 5, 7, 8, 10, 13}) {
      // A causal layer reaches k − 1 positions back, a centred one (k − 1)/2: ⌈(n − 1)/reach⌉ layers.
      const int64_t causal = (n - 1 + k - 2) / (k - 1), centred = (n - 1 + k / 2 - 1) / (k / 2);
      BOOST_TEST(textbook::layers_to_connect(SequenceLayerKind::CausalConvolution, n, options, n) == causal,
                 "k = " << k << ", n = " << n);
      BOOST_TEST(textbook::layers_to_connect(SequenceLayerKind::Convolution, n, options, n) == centred,
                 "k = " << k << ", n = " << n);
      BOOST_TEST(textbook::layers_to_connect(SequenceLayerKind::SelfAttention, n, options, n) == 1);
      BOOST_TEST(textbook::layers_to_connect(SequenceLayerKind::Recurrent, n, options, n) == 1);
    }
  }
  const textbook::SequenceLayerOptions options{
      .d = 4, .heads = 2, .dtype = DType::Float64, .generator = &generator};
  BOOST_TEST(textbook::layers_to_connect(SequenceLayerKind::CausalConvolution, 10, options, 4) ==
             0);  // needs 5
  // One RNN layer connects every pair, but through n − 1 recurrent steps.
  for (int64_t n = 1; n <= 9; ++n) BOOST_TEST(textbook::recurrent_steps_to_connect(n, options) == n - 1);
}

BOOST_AUTO_TEST_CASE(the_last_output_depends_on_exactly_the_inputs_a_layer_sees) {
  Generator generator(3);
  const textbook::SequenceLayerOptions options{
      .d = 4, .heads = 2, .dtype = DType::Float64, .generator = &generator};
  const int64_t n = 7;
  const Variable x(Tensor::normal({1, n, 4}, 0, 1, DType::Float64, &generator), true);
  const Tensor u = Tensor::normal({4}, 0, 1, DType::Float64, &generator);
  auto seen = [&](SequenceLayerKind kind) {  // the positions j with ∂y_n/∂x_j ≠ 0
    const std::vector<double> g =
        textbook::last_output_gradient(textbook::make_layer(kind, options)(x), x, u);
    std::vector<int64_t> positions;
    for (size_t j = 0; j < g.size(); ++j)
      if (g[j] != 0) positions.push_back(static_cast<int64_t>(j));
    return positions;
  };
  BOOST_TEST((seen(SequenceLayerKind::Convolution) == std::vector<int64_t>{5, 6}));  // n − 2, n − 1 (0-based)
  BOOST_TEST((seen(SequenceLayerKind::CausalConvolution) == std::vector<int64_t>{4, 5, 6}));
  BOOST_TEST((seen(SequenceLayerKind::Recurrent) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  BOOST_TEST((seen(SequenceLayerKind::SelfAttention) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  expect_error<ShapeError>([&] { textbook::last_output_gradient(x, x, Tensor::ones({3}, DType::Float64)); },
                           "last_output_gradient: expects y (1, m, d), x (1, n, d') and u (d), got [1,7,4], "
                           "[1,7,4] and [3]");
}

BOOST_AUTO_TEST_CASE(pictures_are_valid_pngs_of_the_requested_size) {
  const fs::path dir = fs::temp_directory_path() / "minigrad_plot_test";
  fs::create_directories(dir);
  const std::string lines = (dir / "lines.png").string(), heat = (dir / "heat.png").string();
  plot::line_plot(lines, {{"Col 6", {0, 1, 2}, {0, 0.5, 1}}, {"Col 7", {0, 1, 2}, {1, 0.5, 0}, true}},
                  {.title = "t", .x_label = "Row (position)", .y_label = "y", .width = 640, .height = 480});
  BOOST_TEST(plot::png_size(lines).first == 640);
  BOOST_TEST(plot::png_size(lines).second == 480);
  plot::heatmap(heat, nn::PositionalEncoding::sinusoids(10, 8),
                {.title = "P",
                 .x_label = "Column",
                 .y_label = "Row",
                 .colorbar_label = "value",
                 .width = 500,
                 .height = 400});
  BOOST_TEST(plot::png_size(heat).first == 500);
  BOOST_TEST(plot::png_size(heat).second == 400);
  BOOST_TEST(fs::file_size(heat) > 2000u);     // an image, not an empty canvas
  BOOST_TEST(!fs::exists(heat + ".tmp.png"));  // written through a temporary name
  expect_error<Error>([&] { plot::png_size((dir / "missing.png").string()); },
                      "png_size: " + (dir / "missing.png").string() + " is not a PNG file");
  expect_error<ValueError>([&] { plot::heatmap(heat, Tensor::ones({3}), {}); },
                           "heatmap: needs a non-empty 2-D tensor, got shape [3]");
  expect_error<ValueError>(
      [&] {
        plot::line_plot(lines, {{"x", {1, 2}, {0, 1}}}, {.log_y = true});
      },
      "line_plot: series 'x' has a non-positive value on a log axis");
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(each_heatmap_cell_shows_its_own_value) {
  // One hot cell, (row 0, column 0) of 3x3. A bug once let PLplot stretch the first cells over 1.5 cell
  // widths and drop the last row and column; count the bright pixels along the plot's top and left.
  Tensor t = Tensor::zeros({3, 3});
  t.data_ptr<float>()[0] = 1;
  for (bool downward : {true, false}) {
    const plot::HeatmapOptions options{
        .title = "one cell", .rows_downward = downward, .width = 600, .height = 500};
    const std::vector<unsigned char> rgb = plot::heatmap_pixels(t, options);
    BOOST_REQUIRE(rgb.size() == 600u * 500u * 3u);
    auto bright = [&](int x, int y) {  // the top of the colour map: yellow
      const unsigned char* p = &rgb[(static_cast<size_t>(y) * 600 + static_cast<size_t>(x)) * 3];
      return p[0] > 200 && p[1] > 200 && p[2] < 100;
    };
    // The hot cell's extent: bright pixels left of the colour bar (x < 450).
    int x0 = 600, x1 = -1, y0 = 500, y1 = -1;
    for (int y = 0; y < 500; ++y)
      for (int x = 0; x < 450; ++x)
        if (bright(x, y))
          x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    BOOST_REQUIRE(x1 > x0);
    // The plot spans the viewport: 0.13·600 to 0.82·600 wide; the cell is a third of it.
    const double plot_width = (0.82 - 0.13) * 600;
    BOOST_TEST(std::abs((x1 - x0 + 1) - plot_width / 3) < 4, "cell width " << x1 - x0 + 1);
    BOOST_TEST(std::abs(x0 - 0.13 * 600) < 3);
    const double plot_height = (0.9 - 0.13) * 500;
    BOOST_TEST(std::abs((y1 - y0 + 1) - plot_height / 3) < 4, "cell height " << y1 - y0 + 1);
    // Row 0 at the top when rows run downward, at the bottom otherwise.
    BOOST_TEST(std::abs((downward ? y0 - 0.1 * 500 : (0.87 * 500) - y1)) < 3, "y0 " << y0 << " y1 " << y1);
  }
}

BOOST_AUTO_TEST_SUITE_END()
