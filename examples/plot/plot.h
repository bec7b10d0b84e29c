// Pictures for the examples, drawn with PLplot (Debian: libplplot-dev, plplot-driver-cairo) to PNG through
// its headless "pngcairo" device. Each figure has a white background, a title, labelled axes, and a
// legend (line plots) or a colour scale (heatmaps). Files are written to a temporary name and renamed
// into place. PLplot keeps global state: draw one figure at a time.
#pragma once

#include <string>
#include <vector>

#include "minigrad/tensor/tensor.h"

namespace plot {

struct Series {
  std::string label{};
  std::vector<double> x{}, y{};
  bool dashed = false;
};

struct LinePlotOptions {
  std::string title{}, x_label{}, y_label{};
  bool log_x = false, log_y = false;  // log10 axes
  bool legend_left = false;           // the legend in the top left corner instead of the top right
  int width = 900, height = 600;
};

void line_plot(const std::string& path, const std::vector<Series>& series, const LinePlotOptions& options);

struct HeatmapOptions {
  std::string title{}, x_label{}, y_label{}, colorbar_label{};
  // Labels for the columns (x) and rows (y), e.g. tokens; empty: numeric axes from 0.
  std::vector<std::string> x_ticks{}, y_ticks{};
  // Row 0 at the top, as a matrix is written (attention maps), instead of at the bottom.
  bool rows_downward = false;
  int width = 900, height = 700;
};

// values: (rows, columns), rows along y and columns along x.
void heatmap(const std::string& path, const minigrad::Tensor& values, const HeatmapOptions& options);

// The same picture rendered into memory: options.height rows of options.width RGB pixels (3 bytes each),
// top row first. For tests that check what a picture shows.
std::vector<unsigned char> heatmap_pixels(const minigrad::Tensor& values, const HeatmapOptions& options);

// Width and height from a PNG file's header; throws if it is not a PNG.
std::pair<int, int> png_size(const std::string& path);

}  // namespace plot
