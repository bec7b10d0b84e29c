#include "examples/plot/plot.h"

#include <plplot/plplot.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "minigrad/tensor/error.h"
#include "minigrad/tensor/file_io.h"

namespace plot {

namespace {

// A colour-blind-safe palette (Okabe and Ito) for lines; index 0 is the background, 1 the axes and text.
const int kPalette[][3] = {{255, 255, 255}, {0, 0, 0},     {0, 114, 178},  {213, 94, 0},   {0, 158, 115},
                           {204, 121, 167}, {230, 159, 0}, {86, 180, 233}, {240, 228, 66}, {100, 100, 100}};
constexpr int kColours = sizeof(kPalette) / sizeof(kPalette[0]);

// Opens a figure on a new PLplot stream: a PNG file (finish() closes it and moves the file into place),
// or, with an empty path, an RGB buffer in memory.
class Figure {
 public:
  Figure(const std::string& path, int width, int height)
      : path_(path), temporary_(path + ".tmp-" + std::to_string(::getpid()) + ".png") {
    // PLplot exits the process when it cannot open its file: find that out first, as an exception.
    if (!path.empty()) minigrad::check_file_writable("plot", path);
    plgstrm(&previous_);
    plmkstrm(&stream_);
    if (path.empty()) {
      pixels_.assign(static_cast<size_t>(width) * static_cast<size_t>(height) * 3, 255);
      plsdev("memcairo");
      plsmem(width, height, pixels_.data());
    } else {
      plsdev("pngcairo");
      plsfnam(temporary_.c_str());
    }
    plspage(0, 0, width, height, 0, 0);
    plscmap0n(kColours);
    for (int i = 0; i < kColours; ++i) plscol0(i, kPalette[i][0], kPalette[i][1], kPalette[i][2]);
    plinit();
    pladv(0);
    plschr(0, 1.1);
  }
  ~Figure() {
    if (!finished_) {
      plend1();
      if (!path_.empty()) std::remove(temporary_.c_str());
    }
    plsstrm(previous_);
  }
  void finish() {
    plend1();
    finished_ = true;
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::rename(temporary_, path_, ec);
    if (ec) throw minigrad::Error("plot", "cannot write " + path_ + ": " + ec.message());
  }
  std::vector<unsigned char>& pixels() { return pixels_; }

 private:
  std::string path_, temporary_;
  std::vector<unsigned char> pixels_;
  PLINT previous_ = 0, stream_ = 0;
  bool finished_ = false;
};

// A viridis-like map from dark blue through green to yellow, for heatmaps.
void use_viridis() {
  PLFLT position[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  PLFLT r[] = {0.267, 0.231, 0.128, 0.369, 0.993};
  PLFLT g[] = {0.005, 0.322, 0.567, 0.789, 0.906};
  PLFLT b[] = {0.329, 0.546, 0.551, 0.383, 0.144};
  plscmap1n(256);
  plscmap1l(1, 5, position, r, g, b, nullptr);
}

// At most ~40 labels along an axis: with more they would overlap, so every k-th is shown.
size_t label_stride(size_t n) {
  return std::max<size_t>(1, (n + 39) / 40);
}

}  // namespace

void line_plot(const std::string& path, const std::vector<Series>& series, const LinePlotOptions& o) {
  if (series.empty()) throw minigrad::ValueError("line_plot", "no series to draw");
  auto tx = [&](double v) { return o.log_x ? std::log10(v) : v; };
  auto ty = [&](double v) { return o.log_y ? std::log10(v) : v; };
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size() || s.x.empty()) {
      throw minigrad::ValueError("line_plot",
                                 "series '" + s.label + "' needs as many x as y values, at least one");
    }
    for (size_t i = 0; i < s.x.size(); ++i) {
      if ((o.log_x && s.x[i] <= 0) || (o.log_y && s.y[i] <= 0)) {
        throw minigrad::ValueError("line_plot",
                                   "series '" + s.label + "' has a non-positive value on a log axis");
      }
      x0 = std::min(x0, tx(s.x[i])), x1 = std::max(x1, tx(s.x[i]));
      y0 = std::min(y0, ty(s.y[i])), y1 = std::max(y1, ty(s.y[i]));
    }
  }
  if (x1 == x0) x1 = x0 + 1;
  const double pad = (y1 - y0) * 0.08 + (y1 == y0 ? 1 : 0);
  Figure figure(path, o.width, o.height);
  plvpor(0.1, 0.95, 0.12, 0.9);
  plwind(x0, x1, y0 - pad, y1 + pad);
  plcol0(1);
  plbox(o.log_x ? "bcnstl" : "bcnst", 0, 0, o.log_y ? "bcnstvl" : "bcnstv", 0, 0);
  pllab(o.x_label.c_str(), o.y_label.c_str(), o.title.c_str());

  std::vector<PLINT> opts, colours, styles, text_colours;
  std::vector<PLFLT> widths;
  std::vector<const char*> labels;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const PLINT colour = 2 + static_cast<PLINT>(k % (kColours - 2));
    std::vector<PLFLT> x(s.x.size()), y(s.y.size());
    std::transform(s.x.begin(), s.x.end(), x.begin(), tx);
    std::transform(s.y.begin(), s.y.end(), y.begin(), ty);
    plcol0(colour);
    pllsty(s.dashed ? 2 : 1);
    plwidth(2);
    plline(static_cast<PLINT>(x.size()), x.data(), y.data());
    opts.push_back(PL_LEGEND_LINE);
    colours.push_back(colour);
    styles.push_back(s.dashed ? 2 : 1);
    text_colours.push_back(1);
    widths.push_back(2);
    labels.push_back(s.label.c_str());
  }
  pllsty(1);
  plwidth(1);
  PLFLT legend_width, legend_height;
  pllegend(&legend_width, &legend_height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_TOP | (o.legend_left ? PL_POSITION_LEFT : PL_POSITION_RIGHT) | PL_POSITION_INSIDE,
           0.02, 0.02, 0.08, 0, 1, 1, 0, 0, static_cast<PLINT>(series.size()), opts.data(), 1.0, 1.0, 2.0,
           1.0, text_colours.data(), labels.data(), nullptr, nullptr, nullptr, nullptr, colours.data(),
           styles.data(), widths.data(), nullptr, nullptr, nullptr, nullptr);
  figure.finish();
}

namespace {

// Draws the heatmap into `figure`'s stream.
void draw_heatmap(Figure& figure, const minigrad::Tensor& values, const HeatmapOptions& o);

}  // namespace

void heatmap(const std::string& path, const minigrad::Tensor& values, const HeatmapOptions& o) {
  if (path.empty()) throw minigrad::ValueError("heatmap", "the path is empty");
  Figure figure(path, o.width, o.height);
  draw_heatmap(figure, values, o);
  figure.finish();
}

std::vector<unsigned char> heatmap_pixels(const minigrad::Tensor& values, const HeatmapOptions& o) {
  Figure figure("", o.width, o.height);
  draw_heatmap(figure, values, o);
  figure.finish();
  return std::move(figure.pixels());
}

namespace {

void draw_heatmap(Figure& figure, const minigrad::Tensor& values, const HeatmapOptions& o) {
  if (values.rank() != 2 || values.numel() == 0) {
    throw minigrad::ValueError("heatmap", "needs a non-empty 2-D tensor, got shape " + values.shape().str());
  }
  const int64_t rows = values.shape()[0], cols = values.shape()[1];
  if ((!o.x_ticks.empty() && static_cast<int64_t>(o.x_ticks.size()) != cols) ||
      (!o.y_ticks.empty() && static_cast<int64_t>(o.y_ticks.size()) != rows)) {
    throw minigrad::ValueError("heatmap", "tick labels do not match the shape " + values.shape().str());
  }
  const std::vector<double> v = values.to_vector<double>();
  double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  if (hi == lo) hi = lo + 1;
  // plimagefr treats its n values along an axis as points of a grid from min to max and colours each
  // quad between neighbouring points by its lower corner: n values make n - 1 quads. So it gets one more
  // point each way (repeating the last row and column), and quad [c, c + 1] x [r, r + 1] is exactly
  // cell (r, c). Data go column by column: idata[x][y].
  std::vector<std::vector<PLFLT>> columns(static_cast<size_t>(cols + 1),
                                          std::vector<PLFLT>(static_cast<size_t>(rows + 1)));
  for (int64_t r = 0; r <= rows; ++r) {
    for (int64_t c = 0; c <= cols; ++c) {
      columns[c][r] = v[static_cast<size_t>(std::min(r, rows - 1) * cols + std::min(c, cols - 1))];
    }
  }
  std::vector<const PLFLT*> pointers;
  for (const auto& column : columns) pointers.push_back(column.data());

  // Room for the longest tick label beside each axis (in character heights at the 0.8 scale used).
  auto longest = [](const std::vector<std::string>& ticks) {
    size_t n = 0;
    for (const std::string& t : ticks) n = std::max(n, t.size());
    return static_cast<double>(n);
  };
  const double x_room = o.x_ticks.empty() ? 0 : 0.65 * longest(o.x_ticks) + 1;
  const double y_room = o.y_ticks.empty() ? 0 : 0.65 * longest(o.y_ticks) + 1;

  (void)figure;  // the stream is open; everything below draws on it
  // Viewport margins grow with the labels: about 1.4% of the page per character height.
  plvpor(0.13 + 0.012 * y_room, 0.82, 0.13 + 0.014 * x_room, 0.9);
  // Rows downward: a reversed y window puts row 0 at the top, numbers on the axis included.
  plwind(0, static_cast<PLFLT>(cols), o.rows_downward ? static_cast<PLFLT>(rows) : 0,
         o.rows_downward ? 0 : static_cast<PLFLT>(rows));
  use_viridis();
  plimagefr(const_cast<PLFLT_MATRIX>(pointers.data()), static_cast<PLINT>(cols + 1),
            static_cast<PLINT>(rows + 1), 0, static_cast<PLFLT>(cols), 0, static_cast<PLFLT>(rows), lo, hi,
            lo, hi, nullptr, nullptr);
  plcol0(1);
  plbox(o.x_ticks.empty() ? "bcnst" : "bc", 0, 0, o.y_ticks.empty() ? "bcnstv" : "bc", 0, 0);
  plschr(0, 0.8);
  const size_t xs = label_stride(o.x_ticks.size()), ys = label_stride(o.y_ticks.size());
  for (size_t c = 0; c < o.x_ticks.size(); c += xs) {  // vertical labels under each column
    plmtex("bv", 0.5, (static_cast<double>(c) + 0.5) / static_cast<double>(cols), 1.0, o.x_ticks[c].c_str());
  }
  for (size_t r = 0; r < o.y_ticks.size(); r += ys) {
    // plmtex positions run from the bottom of the viewport.
    const double centre = (static_cast<double>(r) + 0.5) / static_cast<double>(rows);
    plmtex("lv", 0.5, o.rows_downward ? 1 - centre : centre, 1.0, o.y_ticks[r].c_str());
  }
  plschr(0, 1.1);
  pllab("", "", o.title.c_str());
  // The axis names, clear of the tick labels (numbers take about four character heights).
  plmtex("b", (o.x_ticks.empty() ? 3.2 : x_room * 0.8 + 1.5), 0.5, 0.5, o.x_label.c_str());
  plmtex("l", (o.y_ticks.empty() ? 4.0 : y_room * 0.8 + 1.0), 0.5, 0.5, o.y_label.c_str());

  // The colour scale, with its label.
  const char* axis_opts[] = {"bcvtm"};
  const char* labels[] = {o.colorbar_label.c_str()};
  PLINT label_opts[] = {PL_COLORBAR_LABEL_RIGHT};
  PLFLT ticks[] = {0.0};
  PLINT sub_ticks[] = {0};
  PLINT n_values[] = {2};
  PLFLT range[] = {lo, hi};
  const PLFLT* value_rows[] = {range};
  PLFLT bar_width, bar_height;
  plcolorbar(&bar_width, &bar_height, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.03, 0,
             0.04, 0.8, 0, 1, 1, 0, 0, 0, 0, 1, label_opts, labels, 1, axis_opts, ticks, sub_ticks, n_values,
             const_cast<PLFLT_MATRIX>(value_rows));
}

}  // namespace

std::pair<int, int> png_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[24] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!in || !std::equal(kSignature, kSignature + 8, header) ||
      std::string(header + 12, header + 16) != "IHDR") {
    throw minigrad::Error("png_size", path + " is not a PNG file");
  }
  auto be32 = [&](int at) {
    return (header[at] << 24) | (header[at + 1] << 16) | (header[at + 2] << 8) | header[at + 3];
  };
  return {be32(16), be32(20)};
}

}  // namespace plot
