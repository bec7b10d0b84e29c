// One-dimensional convolution, as one matrix product over the input's windows (im2col).
//
// For x (N, C_in, L), weight (C_out, C_in/G, K) and G groups, output position t of channel o in group g
// sees the window x[n, c, t·stride + k·dilation - pad_left] for c in g's input channels and k < K
// (0 outside the sequence):
//   y[n, o, t] = bias[o] + Σ_c Σ_k weight[o, c, k] · x[n, g·C_in/G + c, t·stride + k·dilation - pad_left]
// unfold1d lays every window out as a column, cols (N, C_in·K, L_out), so that each group is one product
// weight_g (C_out/G, C_in/G·K) · cols_g (C_in/G·K, L_out). Its backward, fold1d, adds each column's
// gradient back onto the positions it was read from (col2im); the two are each other's adjoints, so
// derivatives of any order exist. The product, the reshapes and the bias are ordinary ops.
#include <algorithm>
#include <string>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

int64_t Conv1dGeometry::out_length(int64_t length) const {
  return (length + pad_left + pad_right - dilation * (kernel - 1) - 1) / stride + 1;
}

namespace {

void check_geometry(std::string_view op, const Conv1dGeometry& g) {
  if (g.kernel < 1 || g.stride < 1 || g.dilation < 1 || g.pad_left < 0 || g.pad_right < 0) {
    throw ValueError(op,
                     "kernel, stride and dilation must be positive and padding non-negative, got kernel " +
                         std::to_string(g.kernel) + ", stride " + std::to_string(g.stride) + ", dilation " +
                         std::to_string(g.dilation) + ", padding " + std::to_string(g.pad_left) + " and " +
                         std::to_string(g.pad_right));
  }
}

// Calls visit(column row r = c·K + k, output position t, input position p) for every window element
// that falls inside the sequence [0, length).
template <typename Visit>
void for_each_window_element(int64_t channels, int64_t length, int64_t out_length, const Conv1dGeometry& g,
                             Visit visit) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k = 0; k < g.kernel; ++k) {
      const int64_t r = c * g.kernel + k, shift = k * g.dilation - g.pad_left;
      for (int64_t t = 0; t < out_length; ++t) {
        const int64_t p = t * g.stride + shift;
        if (p >= 0 && p < length) visit(r, t, c, p);
      }
    }
  }
}

}  // namespace

Tensor unfold1d(const Tensor& x, const Conv1dGeometry& g) {
  check_geometry("unfold1d", g);
  if (x.rank() != 3) throw ShapeError("unfold1d", "expects (N, C, L), got " + x.shape().str());
  const Tensor xc = x.contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[1], l = x.shape()[2], lo = g.out_length(l);
  Tensor cols = Tensor::zeros({n, c * g.kernel, std::max<int64_t>(lo, 0)}, x.dtype());
  if (lo <= 0) return cols;
  dispatch_float(x.dtype(), "unfold1d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    T* pc = cols.data_ptr<T>();
    parallel_for(n, c * g.kernel * lo, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* xb = px + b * c * l;        // (C, L)
        T* cb = pc + b * c * g.kernel * lo;  // (C·K, L_out)
        for_each_window_element(c, l, lo, g, [&](int64_t r, int64_t t, int64_t ch, int64_t p) {
          cb[r * lo + t] = xb[ch * l + p];
        });
      }
    });
  });
  return cols;
}

Tensor fold1d(const Tensor& cols, int64_t length, const Conv1dGeometry& g) {
  check_geometry("fold1d", g);
  if (cols.rank() != 3 || cols.shape()[1] % g.kernel != 0) {
    throw ShapeError("fold1d",
                     "expects (N, C·" + std::to_string(g.kernel) + ", L_out), got " + cols.shape().str());
  }
  const Tensor cc = cols.contiguous();
  const int64_t n = cols.shape()[0], c = cols.shape()[1] / g.kernel, lo = cols.shape()[2];
  if (lo != std::max<int64_t>(g.out_length(length), 0)) {
    throw ShapeError("fold1d", "columns of shape " + cols.shape().str() +
                                   " do not fit a sequence of length " + std::to_string(length));
  }
  Tensor x = Tensor::zeros({n, c, length}, cols.dtype());
  dispatch_float(cols.dtype(), "fold1d", [&]<typename T>() {
    const T* pc = cc.data_ptr<const T>();
    T* px = x.data_ptr<T>();
    parallel_for(n, c * g.kernel * lo, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* cb = pc + b * c * g.kernel * lo;
        T* xb = px + b * c * length;
        for_each_window_element(c, length, lo, g, [&](int64_t r, int64_t t, int64_t ch, int64_t p) {
          xb[ch * length + p] += cb[r * lo + t];
        });
      }
    });
  });
  return x;
}

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
