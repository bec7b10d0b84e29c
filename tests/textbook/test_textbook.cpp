// The textbook numbers the example programs print, and the pictures they write.
#include <filesystem>

#include "examples/plot/plot.h"
#include "examples/textbook/positional_facts.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
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
  BOOST_TEST(attention.forward(X, X, X, {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})}).shape() ==
             (Shape{2, 4, 100}));
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
