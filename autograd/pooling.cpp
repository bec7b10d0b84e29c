// Pooling over the time axis of (N, C, L): max pooling in windows, and the max or mean over each
// sequence's valid positions. All are compositions of differentiable ops (unfold1d, concat, max, sum,
// masked_fill), so their gradients come from those ops: a window's or a sequence's gradient goes to the
// position of its maximum, or is shared evenly by its valid positions.
#include <limits>
#include <string>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable max_pool1d(const Variable& x, const MaxPool1dOptions& options) {
  if (!x.defined() || x.rank() != 3) {
    throw ShapeError("max_pool1d", "expects (N, C, L), got " + (x.defined() ? x.shape().str() : "undefined"));
  }
  const int64_t kernel = options.kernel_size, stride = options.stride > 0 ? options.stride : kernel;
  if (kernel < 1 || options.padding < 0 || options.dilation < 1 || 2 * options.padding > kernel) {
    throw ValueError("max_pool1d",
                     "kernel_size and dilation must be positive and padding at most half the "
                     "kernel, got kernel_size " +
                         std::to_string(kernel) + ", padding " + std::to_string(options.padding) +
                         ", dilation " + std::to_string(options.dilation));
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], length = x.shape()[2];
  const int64_t span = options.dilation * (kernel - 1) + 1;
  if (span > length + 2 * options.padding) {
    throw ShapeError("max_pool1d", "the window spans " + std::to_string(span) +
                                       " positions, more than the padded input's " +
                                       std::to_string(length + 2 * options.padding) + "; input " +
                                       x.shape().str());
  }
  // Padding takes part in no maximum: -inf on both sides (as PyTorch), then windows of the padded input.
  Variable padded = x;
  if (options.padding > 0) {
    const Variable edge(
        Tensor::full({n, c, options.padding}, -std::numeric_limits<double>::infinity(), x.dtype()));
    padded = concat({edge, x, edge}, 2);
  }
  const Conv1dGeometry g{.kernel = kernel, .stride = stride, .dilation = options.dilation};
  const int64_t out_length = g.out_length(padded.shape()[2]);
  const Variable windows = reshape(unfold1d(padded, g), {n, c, kernel, out_length});  // (N, C, K, L_out)
  return max(windows, 2);                                                             // (N, C, L_out)
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
