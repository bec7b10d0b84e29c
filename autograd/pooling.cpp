// Pooling over the time axis of (N, C, L): max and average pooling in windows, and the max or mean over each
// sequence's valid positions (of (N, L, C) too); and over images (N, C, H, W): max and average pooling in
// windows. All are compositions of differentiable ops (unfold1d and unfold2d, slice, concat, max, sum, mean,
// masked_fill, and for max_pool2d a lookup at the maxima that tensor/pooling.h finds), so their gradients
// come from those ops: a window's or a sequence's gradient goes to the position of its maximum, or is shared
// evenly by its valid positions.
#include <algorithm>
#include <limits>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// One axis of a pooling window over `length` positions: throws unless the window's size, stride,
// padding and dilation are valid and the window fits the padded axis. Returns its geometry, unpadded (the
// caller pads with its own value).
Conv1dGeometry pool_axis(const char* op, const Variable& x, int64_t length, int64_t kernel, int64_t stride,
                         int64_t padding, int64_t dilation) {
  if (kernel < 1 || stride < 1 || padding < 0 || dilation < 1 || 2 * padding > kernel) {
    throw ValueError(op,
                     "kernel_size, stride and dilation must be positive and padding at most half the "
                     "kernel, got kernel_size " +
                         std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " +
                         std::to_string(padding) + ", dilation " + std::to_string(dilation));
  }
  const int64_t span = dilation * (kernel - 1) + 1;
  if (span > length + 2 * padding) {
    throw ShapeError(op, "the window spans " + std::to_string(span) +
                             " positions, more than the padded input's " +
                             std::to_string(length + 2 * padding) + "; input " + x.shape().str());
  }
  return {.kernel = kernel, .stride = stride, .dilation = dilation};
}

// x with `padding` positions of `pad_value` on both sides of dimension `dim`.
Variable pad_both_sides(const Variable& x, int dim, int64_t padding, double pad_value) {
  if (padding == 0) return x;
  Shape edge_shape = x.shape();
  edge_shape[dim] = padding;
  const Variable edge(Tensor::full(edge_shape, pad_value, x.dtype()));
  return concat({edge, x, edge}, dim);
}

void check_rank(const char* op, const Variable& x, int rank, const char* layout) {
  if (!x.defined() || x.rank() != rank) {
    throw ShapeError(op, std::string("expects ") + layout + ", got " +
                             (x.defined() ? x.shape().str() : std::string("undefined")));
  }
}

// The windows a 1-d pooling reduces: (N, C, K, L_out), the input padded with `pad_value` on both sides.
Variable pool_windows(const char* op, const Variable& x, int64_t kernel, int64_t stride, int64_t padding,
                      int64_t dilation, double pad_value) {
  check_rank(op, x, 3, "(N, C, L)");
  const Conv1dGeometry g = pool_axis(op, x, x.shape()[2], kernel, stride, padding, dilation);
  const Variable padded = pad_both_sides(x, 2, padding, pad_value);
  // (N, C, K, L_out)
  return reshape(unfold1d(padded, g), {x.shape()[0], x.shape()[1], kernel, g.out_length(padded.shape()[2])});
}

// The windows a 2-d pooling reduces: (N, C, KH·KW, H_out, W_out), the input padded with `pad_value`.
Variable pool_windows2d(const char* op, const Variable& x, Size2d kernel, Size2d stride, Size2d padding,
                        Size2d dilation, double pad_value) {
  check_rank(op, x, 4, "(N, C, H, W)");
  const Conv2dGeometry g{.height = pool_axis(op, x, x.shape()[2], kernel.h, stride.h, padding.h, dilation.h),
                         .width = pool_axis(op, x, x.shape()[3], kernel.w, stride.w, padding.w, dilation.w)};
  const Variable padded = pad_both_sides(pad_both_sides(x, 2, padding.h, pad_value), 3, padding.w, pad_value);
  return reshape(unfold2d(padded, g),
                 {x.shape()[0], x.shape()[1], kernel.h * kernel.w, g.height.out_length(padded.shape()[2]),
                  g.width.out_length(padded.shape()[3])});
}

// How many input positions each window along an axis covers, when padding is not counted: window j
// starts at j·stride - padding.
std::vector<double> covered_counts(int64_t windows, int64_t length, int64_t kernel, int64_t stride,
                                   int64_t padding) {
  std::vector<double> counts(static_cast<size_t>(windows));
  for (int64_t j = 0; j < windows; ++j) {
    const int64_t start = j * stride - padding;
    counts[static_cast<size_t>(j)] =
        static_cast<double>(std::min(start + kernel, length) - std::max<int64_t>(start, 0));
  }
  return counts;
}

}  // namespace

Variable max_pool1d(const Variable& x, const MaxPool1dOptions& options) {
  // Padding takes part in no maximum: -inf on both sides (as PyTorch).
  const Variable windows = pool_windows(
      "max_pool1d", x, options.kernel_size, options.stride != 0 ? options.stride : options.kernel_size,
      options.padding, options.dilation, -std::numeric_limits<double>::infinity());
  return max(windows, 2);  // (N, C, L_out)
}

Variable avg_pool1d(const Variable& x, const AvgPool1dOptions& options) {
  const int64_t kernel = options.kernel_size, stride = options.stride != 0 ? options.stride : kernel;
  const Variable windows = pool_windows("avg_pool1d", x, kernel, stride, options.padding, 1, 0.0);
  if (options.count_include_pad || options.padding == 0) return mean(windows, {2});  // (N, C, L_out)
  // Each window's sum over the input positions it covers, divided by how many those are.
  const int64_t out_length = windows.shape()[3];
  const std::vector<double> counts =
      covered_counts(out_length, x.shape()[2], kernel, stride, options.padding);
  return div(sum(windows, {2}), Variable(Tensor::from_values(counts, {out_length}, x.dtype())));
}

Variable max_pool2d(const Variable& x, const MaxPool2dOptions& options) {
  const Size2d k = options.kernel_size, p = options.padding;
  const Size2d stride{options.stride.h != 0 ? options.stride.h : k.h,
                      options.stride.w != 0 ? options.stride.w : k.w};
  check_rank("max_pool2d", x, 4, "(N, C, H, W)");
  Conv2dGeometry g{.height = pool_axis("max_pool2d", x, x.shape()[2], k.h, stride.h, p.h, options.dilation.h),
                   .width = pool_axis("max_pool2d", x, x.shape()[3], k.w, stride.w, p.w, options.dilation.w)};
  g.height.pad_left = g.height.pad_right = p.h;  // padding takes part in no maximum (as PyTorch's -inf)
  g.width.pad_left = g.width.pad_right = p.w;
  // Where each window's maximum is, then those elements picked by a lookup: x as a table of one-value
  // rows. The lookup's gradient adds each output's gradient back onto its maximum.
  const Tensor argmax = max_pool2d_argmax(x.data(), g);  // (N, C, H_out, W_out) flat indices into x
  return reshape(embedding(reshape(x, {x.numel(), 1}), argmax), argmax.shape());
}

Variable avg_pool2d(const Variable& x, const AvgPool2dOptions& options) {
  const Size2d k = options.kernel_size, p = options.padding;
  const Size2d stride{options.stride.h != 0 ? options.stride.h : k.h,
                      options.stride.w != 0 ? options.stride.w : k.w};
  const Variable windows = pool_windows2d("avg_pool2d", x, k, stride, p, 1, 0.0);
  if (options.count_include_pad || p == Size2d(0)) return mean(windows, {2});  // (N, C, H_out, W_out)
  // Each window's sum over the pixels of the input it covers: rows covered × columns covered.
  const int64_t out_h = windows.shape()[3], out_w = windows.shape()[4];
  const Tensor rows =
      Tensor::from_values(covered_counts(out_h, x.shape()[2], k.h, stride.h, p.h), {out_h, 1}, x.dtype());
  const Tensor cols =
      Tensor::from_values(covered_counts(out_w, x.shape()[3], k.w, stride.w, p.w), {1, out_w}, x.dtype());
  return div(sum(windows, {2}), Variable(rows * cols));
}

namespace {

// The means of PyTorch's adaptive bins along one axis of x: bin i covers [⌊i·n/out⌋, ⌈(i+1)·n/out⌉) of
// the axis's n positions. Each bin is a slice and its mean, so a NaN reaches only the bins that hold it.
Variable adaptive_means(const Variable& x, int64_t dim, int64_t out) {
  const int64_t n = x.shape()[dim];
  std::vector<Variable> bins;
  bins.reserve(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * n / out, end = ((i + 1) * n + out - 1) / out;
    bins.push_back(mean(slice(x, dim, start, end), {dim}, /*keepdim=*/true));
  }
  return concat(bins, dim);
}

}  // namespace

Variable adaptive_avg_pool2d(const Variable& x, Size2d output_size) {
  check_rank("adaptive_avg_pool2d", x, 4, "(N, C, H, W)");
  if (output_size.h < 1 || output_size.w < 1) {
    throw ValueError("adaptive_avg_pool2d", "the output size must be positive, got " +
                                                std::to_string(output_size.h) + "×" +
                                                std::to_string(output_size.w));
  }
  const int64_t height = x.shape()[2], width = x.shape()[3];
  if (height == 0 || width == 0) {
    throw ShapeError("adaptive_avg_pool2d", "has no pixels to average in an input of shape " +
                                                x.shape().str() + " (expected H and W of at least 1)");
  }
  if (output_size == Size2d(1)) return mean(x, {2, 3}, /*keepdim=*/true);  // global average pooling
  // Equal tiles when the output size divides the input's: an average pool with the tile as its window.
  if (height % output_size.h == 0 && width % output_size.w == 0) {
    const Size2d tile{height / output_size.h, width / output_size.w};
    return avg_pool2d(x, {.kernel_size = tile});
  }
  // Otherwise bins of two sizes that may overlap: a bin is a rectangle, so its mean is the mean over its
  // rows of the means over its columns.
  return adaptive_means(adaptive_means(x, 2, output_size.h), 3, output_size.w);  // (N, C, out_h, out_w)
}

namespace {

void check_time_axis(std::string_view op, const Variable& x, int64_t dim) {
  if (dim != 1 && dim != 2) {
    throw ValueError(
        op, "dim is the time axis, 1 for x (N, L, C) or 2 for x (N, C, L), got " + std::to_string(dim));
  }
  if (!x.defined() || x.rank() != 3) {
    throw ShapeError(op, std::string("expects ") + (dim == 2 ? "(N, C, L)" : "(N, L, C)") + " with dim " +
                             std::to_string(dim) + ", got " +
                             (x.defined() ? x.shape().str() : std::string("undefined")));
  }
}

struct Padding {
  Tensor past_the_end;  // (N, 1, L) or (N, L, 1) bool: true at the positions past each sequence's length
  Tensor empty;         // (N, 1) bool: true for the sequences of length 0; undefined if there are none
};

// Checks valid_lens (N) int64, each in 0..L, against x with its time axis at `dim`.
Padding padding_of(std::string_view op, const Variable& x, const Tensor& valid_lens, int64_t dim) {
  check_time_axis(op, x, dim);
  check_dtype(op, "valid_lens", valid_lens, DType::Int64);
  const int64_t n = x.shape()[0], length = x.shape()[dim];
  if (valid_lens.shape() != Shape{n}) {
    throw ShapeError(op, "valid_lens of shape " + valid_lens.shape().str() + " for an input of shape " +
                             x.shape().str() + " (expected [" + std::to_string(n) + "])");
  }
  const Tensor lens = valid_lens.contiguous();
  bool any_empty = false;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = lens.data_ptr<const int64_t>()[i];
    if (len < 0 || len > length) {
      throw ValueError(op, "valid_lens[" + std::to_string(i) + "] = " + std::to_string(len) +
                               " is not in 0.." + std::to_string(length) + " for an input of shape " +
                               x.shape().str());
    }
    any_empty = any_empty || len == 0;
  }
  // position >= valid length: the positions (1, 1, L) or (1, L, 1) against the lengths (N, 1, 1)
  Shape positions{1, 1, 1};
  positions[dim] = length;
  return {ge(Tensor::arange(length).reshape(positions), lens.reshape({n, 1, 1})),
          any_empty ? eq(lens, Tensor::scalar(0, DType::Int64)).reshape({n, 1}) : Tensor()};
}

}  // namespace

Variable max_over_time(const Variable& x, const Tensor& valid_lens, int64_t dim) {
  if (!valid_lens.defined()) {
    check_time_axis("max_over_time", x, dim);
    return max(x, dim);
  }
  const Padding padding = padding_of("max_over_time", x, valid_lens, dim);
  const Variable pooled =
      max(masked_fill(x, padding.past_the_end, -std::numeric_limits<double>::infinity()), dim);
  // An empty sequence's maximum is -inf: it pools to 0 instead, and passes back no gradient.
  return padding.empty.defined() ? masked_fill(pooled, padding.empty, 0.0) : pooled;
}

Variable mean_over_time(const Variable& x, const Tensor& valid_lens, int64_t dim) {
  if (!valid_lens.defined()) {
    check_time_axis("mean_over_time", x, dim);
    return mean(x, {dim});
  }
  const Padding padding = padding_of("mean_over_time", x, valid_lens, dim);
  // Divided by max(length, 1): an empty sequence's sum is 0, and so is its mean.
  const Variable counts(
      maximum(valid_lens.to(x.dtype()), Tensor::scalar(1, x.dtype())).reshape({x.shape()[0], 1}));
  return div(sum(masked_fill(x, padding.past_the_end, 0.0), {dim}), counts);  // (N, C)
}

}  // namespace minigrad
