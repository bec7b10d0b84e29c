// One-dimensional convolution, as one matrix product over the input's windows (im2col).
//
// For x (N, C_in, L), weight (C_out, C_in/G, K) and G groups, output position t of channel o in group g
// sees the window x[n, c, t·stride + k·dilation - pad_left] for c in g's input channels and k < K
// (0 outside the sequence):
//   y[n, o, t] = bias[o] + Σ_c Σ_k weight[o, c, k] · x[n, g·C_in/G + c, t·stride + k·dilation - pad_left]
// unfold1d lays every window out as a column, cols (N, C_in·K, L_out), so that each group is one product
// weight_g (C_out/G, C_in/G·K) · cols_g (C_in/G·K, L_out). Its backward, fold1d, adds each column's
// gradient back onto the positions it was read from (col2im); the two are each other's adjoints, so
// derivatives of any order exist (the kernels: tensor/unfold.h). The product, the reshapes and the bias
// are ordinary ops.
#include <algorithm>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"
#include "minigrad/tensor/unfold.h"

namespace minigrad {

Variable unfold1d(const Variable& x, const Conv1dGeometry& g) {
  // Linear in x; its adjoint is fold1d.
  return record("unfold1d", unfold1d(x.data(), g), {x},
                [g, length = x.shape()[2]](const Variable& gc, NeedsGrad) -> VariableGrads {
                  return {fold1d(gc, length, g)};
                });
}

Variable fold1d(const Variable& cols, int64_t length, const Conv1dGeometry& g) {
  // Linear in cols; its adjoint is unfold1d.
  return record("fold1d", fold1d(cols.data(), length, g), {cols},
                [g](const Variable& gx, NeedsGrad) -> VariableGrads { return {unfold1d(gx, g)}; });
}

Variable conv1d(const Variable& x, const Variable& weight, const Variable& bias,
                const Conv1dFuncOptions& options) {
  if (!x.defined() || !weight.defined()) throw ValueError("conv1d", "an operand is undefined");
  const std::string shapes = "input " + x.shape().str() + ", weight " + weight.shape().str() +
                             (bias.defined() ? ", bias " + bias.shape().str() : std::string());
  if (x.rank() != 3 || weight.rank() != 3) {
    throw ShapeError("conv1d",
                     "expects input (N, C_in, L) and weight (C_out, C_in/groups, K), got " + shapes);
  }
  const int64_t n = x.shape()[0], c_in = x.shape()[1], length = x.shape()[2];
  const int64_t c_out = weight.shape()[0], kernel = weight.shape()[2], groups = options.groups;
  if (groups < 1 || c_in % groups != 0 || c_out % groups != 0 || weight.shape()[1] * groups != c_in) {
    throw ShapeError(
        "conv1d", "with " + std::to_string(groups) + " group(s) the input channels (" + std::to_string(c_in) +
                      ") and output channels (" + std::to_string(c_out) +
                      ") must divide into the groups and weight.shape[1] must be C_in/groups; got " + shapes);
  }
  if (bias.defined() && bias.shape() != Shape{c_out}) {
    throw ShapeError("conv1d", "the bias must be (C_out) = [" + std::to_string(c_out) + "], got " + shapes);
  }
  if (options.stride < 1 || options.dilation < 1 || options.padding < 0) {
    throw ValueError("conv1d", "stride and dilation must be positive and padding non-negative, got stride " +
                                   std::to_string(options.stride) + ", dilation " +
                                   std::to_string(options.dilation) + ", padding " +
                                   std::to_string(options.padding));
  }
  if (options.padding_same && options.stride != 1) {
    throw ValueError("conv1d", "padding 'same' needs stride 1, got stride " + std::to_string(options.stride));
  }
  Conv1dGeometry g{.kernel = kernel, .stride = options.stride, .dilation = options.dilation};
  if (options.padding_same) {  // as PyTorch: the extra position, when the total is odd, goes on the right
    const int64_t total = options.dilation * (kernel - 1);
    g.pad_left = total / 2;
    g.pad_right = total - total / 2;
  } else {
    g.pad_left = g.pad_right = options.padding;
  }
  const int64_t span = options.dilation * (kernel - 1) + 1, padded = length + g.pad_left + g.pad_right;
  if (span > padded) {
    throw ShapeError("conv1d", "the kernel spans " + std::to_string(span) +
                                   " positions, more than the padded input's " + std::to_string(padded) +
                                   "; got " + shapes);
  }
  const int64_t out_length = g.out_length(length), cin_k = c_in / groups * kernel;
  // cols (N, G, C_in/G·K, L_out), weight (1, G, C_out/G, C_in/G·K): one product per group, batched.
  const Variable cols = reshape(unfold1d(x, g), {n, groups, cin_k, out_length});
  const Variable w = reshape(weight, {1, groups, c_out / groups, cin_k});
  Variable y = reshape(matmul(w, cols), {n, c_out, out_length});  // (N, C_out, L_out)
  if (bias.defined()) y = add(y, reshape(bias, {c_out, 1}));
  return y;
}

}  // namespace minigrad
