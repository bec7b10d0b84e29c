// Pooling over the time axis of (N, C, L): max and average pooling in windows, and the max or mean over each
// sequence's valid positions. All are compositions of differentiable ops (unfold1d, concat, max, sum,
// masked_fill), so their gradients come from those ops: a window's or a sequence's gradient goes to the
// position of its maximum, or is shared evenly by its valid positions.
#include <algorithm>
#include <limits>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// The windows a 1-d pooling reduces: (N, C, K, L_out), the input padded with `pad_value` on both sides.
Variable pool_windows(const char* op, const Variable& x, int64_t kernel, int64_t stride, int64_t padding,
                      int64_t dilation, double pad_value) {
  if (!x.defined() || x.rank() != 3) {
    throw ShapeError(op, "expects (N, C, L), got " + (x.defined() ? x.shape().str() : "undefined"));
  }
  if (kernel < 1 || stride < 1 || padding < 0 || dilation < 1 || 2 * padding > kernel) {
    throw ValueError(op,
                     "kernel_size, stride and dilation must be positive and padding at most half the "
                     "kernel, got kernel_size " +
                         std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " +
                         std::to_string(padding) + ", dilation " + std::to_string(dilation));
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], length = x.shape()[2];
  const int64_t span = dilation * (kernel - 1) + 1;
  if (span > length + 2 * padding) {
    throw ShapeError(op, "the window spans " + std::to_string(span) +
                             " positions, more than the padded input's " +
                             std::to_string(length + 2 * padding) + "; input " + x.shape().str());
  }
  Variable padded = x;
  if (padding > 0) {
    const Variable edge(Tensor::full({n, c, padding}, pad_value, x.dtype()));
    padded = concat({edge, x, edge}, 2);
  }
  const Conv1dGeometry g{.kernel = kernel, .stride = stride, .dilation = dilation};
  return reshape(unfold1d(padded, g), {n, c, kernel, g.out_length(padded.shape()[2])});  // (N, C, K, L_out)
}

}  // namespace

Variable max_pool1d(const Variable& x, const MaxPool1dOptions& options) {
  // Padding takes part in no maximum: -inf on both sides (as PyTorch).
  const Variable windows = pool_windows(
      "max_pool1d", x, options.kernel_size, options.stride > 0 ? options.stride : options.kernel_size,
      options.padding, options.dilation, -std::numeric_limits<double>::infinity());
  return max(windows, 2);  // (N, C, L_out)
}

Variable avg_pool1d(const Variable& x, const AvgPool1dOptions& options) {
  const int64_t kernel = options.kernel_size, stride = options.stride > 0 ? options.stride : kernel;
  const Variable windows = pool_windows("avg_pool1d", x, kernel, stride, options.padding, 1, 0.0);
  if (options.count_include_pad || options.padding == 0) return mean(windows, {2});  // (N, C, L_out)
  // Each window's sum over the input positions it covers, divided by how many those are.
  const int64_t out_length = windows.shape()[3], length = x.shape()[2];
  std::vector<double> counts(static_cast<size_t>(out_length));
  for (int64_t j = 0; j < out_length; ++j) {
    const int64_t start = j * stride - options.padding;
    counts[static_cast<size_t>(j)] =
        static_cast<double>(std::min(start + kernel, length) - std::max<int64_t>(start, 0));
  }
  return div(sum(windows, {2}), Variable(Tensor::from_values(counts, {out_length}, x.dtype())));
}

namespace {

// (N, 1, L) bool: true at the positions past each sequence's valid length.
Tensor past_the_end(std::string_view op, const Variable& x, const Tensor& valid_lens) {
  if (!x.defined() || x.rank() != 3) {
    throw ShapeError(op,
                     "expects (N, C, L), got " + (x.defined() ? x.shape().str() : std::string("undefined")));
  }
  check_dtype(op, "valid_lens", valid_lens, DType::Int64);
  const int64_t n = x.shape()[0], length = x.shape()[2];
  if (valid_lens.shape() != Shape{n}) {
    throw ShapeError(op, "valid_lens of shape " + valid_lens.shape().str() + " for an input of shape " +
                             x.shape().str() + " (expected [" + std::to_string(n) + "])");
  }
  const Tensor lens = valid_lens.contiguous();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = lens.data_ptr<const int64_t>()[i];
    if (len < 1 || len > length) {
      throw ValueError(op, "valid_lens[" + std::to_string(i) + "] = " + std::to_string(len) +
                               " is not in 1.." + std::to_string(length) + " for an input of shape " +
                               x.shape().str());
    }
  }
  // position >= valid length, broadcast (1, 1, L) against (N, 1, 1)
  return ge(Tensor::arange(length).reshape({1, 1, length}), lens.reshape({n, 1, 1}));
}

}  // namespace

Variable max_over_time(const Variable& x, const Tensor& valid_lens) {
  if (!valid_lens.defined()) return max(x, 2);
  const Tensor hidden = past_the_end("max_over_time", x, valid_lens);
  return max(masked_fill(x, hidden, -std::numeric_limits<double>::infinity()), 2);
}

Variable mean_over_time(const Variable& x, const Tensor& valid_lens) {
  if (!valid_lens.defined()) return mean(x, {2});
  const Tensor hidden = past_the_end("mean_over_time", x, valid_lens);
  const Variable counts(valid_lens.to(x.dtype()).reshape({x.shape()[0], 1}));  // (N, 1)
  return div(sum(masked_fill(x, hidden, 0.0), {2}), counts);
}

}  // namespace minigrad
