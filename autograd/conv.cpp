// Convolution in one and two dimensions, as one matrix product over the input's windows (im2col).
//
// For x (N, C_in, L), weight (C_out, C_in/G, K) and G groups, output position t of channel o in group g
// sees the window x[n, c, t·stride + k·dilation - pad_left] for c in g's input channels and k < K
// (0 outside the sequence):
//   y[n, o, t] = bias[o] + Σ_c Σ_k weight[o, c, k] · x[n, g·C_in/G + c, t·stride + k·dilation - pad_left]
// unfold1d lays every window out as a column, cols (N, C_in·K, L_out), so that each group is one product
// weight_g (C_out/G, C_in/G·K) · cols_g (C_in/G·K, L_out). Its backward, fold1d, adds each column's
// gradient back onto the positions it was read from (col2im); the two are each other's adjoints, so
// derivatives of any order exist (the kernels: tensor/unfold.h). The product, the reshapes and the bias
// are ordinary ops. conv2d is the same product over an image's windows (KH×KW of every channel), made
// by kernels that unfold a few images at a time (tensor/conv2d.h), recorded as three ops below.
#include <algorithm>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/conv2d.h"
#include "minigrad/tensor/ops.h"
#include "minigrad/tensor/unfold.h"

namespace minigrad {

Variable unfold1d(const Variable& x, const Conv1dGeometry& g) {
  // Linear in x; its adjoint is fold1d.
  return record(
      "unfold1d", unfold1d(x.data(), g), {x},
      [g, length = x.shape()[2]](const Variable& gc, NeedsGrad) -> VariableGrads {
        return {fold1d(gc, length, g)};
      },
      [&](const Tangents& t) { return unfold1d(t[0], g); });  // linear: the op of ẋ
}

Variable fold1d(const Variable& cols, int64_t length, const Conv1dGeometry& g) {
  // Linear in cols; its adjoint is unfold1d.
  return record(
      "fold1d", fold1d(cols.data(), length, g), {cols},
      [g](const Variable& gx, NeedsGrad) -> VariableGrads { return {unfold1d(gx, g)}; },
      [&](const Tangents& t) { return fold1d(t[0], length, g); });
}

namespace {

// What conv1d and conv2d check alike: the ranks (`dims` spatial dimensions), the groups and the bias.
// Returns the operands' shapes, for the messages.
std::string check_operands(const char* op, const Variable& x, const Variable& weight, const Variable& bias,
                           int64_t groups, int dims, const std::string& expected) {
  if (!x.defined() || !weight.defined()) throw ValueError(op, "an operand is undefined");
  const std::string shapes = "input " + x.shape().str() + ", weight " + weight.shape().str() +
                             (bias.defined() ? ", bias " + bias.shape().str() : std::string());
  if (x.rank() != 2 + dims || weight.rank() != 2 + dims)
    throw ShapeError(op, "expects " + expected + ", got " + shapes);
  const int64_t c_in = x.shape()[1], c_out = weight.shape()[0];
  if (groups < 1 || c_in % groups != 0 || c_out % groups != 0 || weight.shape()[1] * groups != c_in) {
    throw ShapeError(op, "with " + std::to_string(groups) + " group(s) the input channels (" +
                             std::to_string(c_in) + ") and output channels (" + std::to_string(c_out) +
                             ") must divide into the groups and weight.shape[1] must be C_in/groups; got " +
                             shapes);
  }
  if (bias.defined() && bias.shape() != Shape{c_out}) {
    throw ShapeError(op, "the bias must be (C_out) = [" + std::to_string(c_out) + "], got " + shapes);
  }
  return shapes;
}

// One spatial axis's windows: `length` positions, a kernel of `kernel`, the axis's stride, padding (or
// 'same') and dilation. Throws unless they fit.
Conv1dGeometry axis_geometry(const char* op, int64_t length, int64_t kernel, int64_t stride, int64_t padding,
                             bool padding_same, int64_t dilation, const std::string& shapes) {
  if (stride < 1 || dilation < 1 || padding < 0) {
    throw ValueError(op, "stride and dilation must be positive and padding non-negative, got stride " +
                             std::to_string(stride) + ", dilation " + std::to_string(dilation) +
                             ", padding " + std::to_string(padding));
  }
  if (padding_same && padding != 0) {
    throw ValueError(op,
                     "padding 'same' replaces the padding, got padding " + std::to_string(padding) + " too");
  }
  if (padding_same && stride != 1) {
    throw ValueError(op, "padding 'same' needs stride 1, got stride " + std::to_string(stride));
  }
  Conv1dGeometry g{.kernel = kernel, .stride = stride, .dilation = dilation};
  if (padding_same) {  // as PyTorch: the extra position, when the total is odd, goes on the right
    const int64_t total = dilation * (kernel - 1);
    g.pad_left = total / 2;
    g.pad_right = total - total / 2;
  } else {
    g.pad_left = g.pad_right = padding;
  }
  const int64_t span = dilation * (kernel - 1) + 1, padded = length + g.pad_left + g.pad_right;
  if (span > padded) {
    throw ShapeError(op, "the kernel spans " + std::to_string(span) +
                             " positions, more than the padded input's " + std::to_string(padded) + "; got " +
                             shapes);
  }
  return g;
}

}  // namespace

Variable conv1d(const Variable& x, const Variable& weight, const Variable& bias,
                const Conv1dFuncOptions& options) {
  const std::string shapes = check_operands("conv1d", x, weight, bias, options.groups, 1,
                                            "input (N, C_in, L) and weight (C_out, C_in/groups, K)");
  const int64_t n = x.shape()[0], c_in = x.shape()[1], length = x.shape()[2];
  const int64_t c_out = weight.shape()[0], kernel = weight.shape()[2], groups = options.groups;
  const Conv1dGeometry g = axis_geometry("conv1d", length, kernel, options.stride, options.padding,
                                         options.padding_same, options.dilation, shapes);
  const int64_t out_length = g.out_length(length), cin_k = c_in / groups * kernel;
  // cols (N, G, C_in/G·K, L_out), weight (1, G, C_out/G, C_in/G·K): one product per group, batched.
  const Variable cols = reshape(unfold1d(x, g), {n, groups, cin_k, out_length});
  const Variable w = reshape(weight, {1, groups, c_out / groups, cin_k});
  Variable y = reshape(matmul(w, cols), {n, c_out, out_length});  // (N, C_out, L_out)
  if (bias.defined()) y = add(y, reshape(bias, {c_out, 1}));
  return y;
}

// ---- two dimensions: the same product over an image's windows ----

Variable unfold2d(const Variable& x, const Conv2dGeometry& g) {
  // Linear in x; its adjoint is fold2d.
  return record(
      "unfold2d", unfold2d(x.data(), g), {x},
      [g, h = x.shape()[2], w = x.shape()[3]](const Variable& gc, NeedsGrad) -> VariableGrads {
        return {fold2d(gc, h, w, g)};
      },
      [&](const Tangents& t) { return unfold2d(t[0], g); });
}

Variable fold2d(const Variable& cols, int64_t height, int64_t width, const Conv2dGeometry& g) {
  // Linear in cols; its adjoint is unfold2d.
  return record(
      "fold2d", fold2d(cols.data(), height, width, g), {cols},
      [g](const Variable& gx, NeedsGrad) -> VariableGrads { return {unfold2d(gx, g)}; },
      [&](const Tangents& t) { return fold2d(t[0], height, width, g); });
}

// conv2d's product and its two gradients are three ops (the kernels: tensor/conv2d.h), and each is
// bilinear: y = conv(x, W), gx = input_grad(gy, W) (the transposed convolution), gW = weight_grad(gy, x).
// They are one another's adjoints,
//   ⟨conv(x, W), gy⟩ = ⟨x, input_grad(gy, W)⟩ = ⟨W, weight_grad(gy, x)⟩,
// so the derivative of each is made of the three, and derivatives of any order exist (PyTorch's
// convolution_backward has the same closure).

Variable conv2d_input_grad(const Variable& gy, const Variable& weight, int64_t height, int64_t width,
                           const Conv2dGeometry& g, int64_t groups);
Variable conv2d_weight_grad(const Variable& gy, const Variable& x, const Conv2dGeometry& g, int64_t groups);

namespace {

// conv(x, W) without a bias, on a geometry conv2d has checked.
Variable convolve2d(const Variable& x, const Variable& weight, const Conv2dGeometry& g, int64_t groups) {
  return record(
      "conv2d", conv2d_forward(x.data(), weight.data(), g, groups), {x, weight},
      [sx = save_if(x, weight.requires_grad()), sw = save_if(weight, x.requires_grad()), g, groups,
       h = x.shape()[2], w = x.shape()[3]](const Variable& gy, NeedsGrad needs) -> VariableGrads {
        Variable gx, gw;
        if (needs[0]) gx = conv2d_input_grad(gy, sw.variable(), h, w, g, groups);
        if (needs[1]) gw = conv2d_weight_grad(gy, sx.variable(), g, groups);
        return {gx, gw};
      },
      [&](const Tangents& t) {  // bilinear: conv(ẋ, W) + conv(x, Ẇ)
        return t.sum({t.has(0) ? convolve2d(t[0], weight, g, groups) : Variable(),
                      t.has(1) ? convolve2d(x, t[1], g, groups) : Variable()});
      });
}

}  // namespace

Variable conv2d_input_grad(const Variable& gy, const Variable& weight, int64_t height, int64_t width,
                           const Conv2dGeometry& g, int64_t groups) {
  // ⟨input_grad(gy, W), u⟩ = ⟨gy, conv(u, W)⟩ = ⟨W, weight_grad(gy, u)⟩
  return record(
      "conv2d_input_grad", conv2d_input_grad(gy.data(), weight.data(), height, width, g, groups),
      {gy, weight},
      [sgy = save_if(gy, weight.requires_grad()), sw = save_if(weight, gy.requires_grad()), g, groups](
          const Variable& u, NeedsGrad needs) -> VariableGrads {
        Variable ggy, gw;
        if (needs[0]) ggy = convolve2d(u, sw.variable(), g, groups);
        if (needs[1]) gw = conv2d_weight_grad(sgy.variable(), u, g, groups);
        return {ggy, gw};
      },
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? conv2d_input_grad(t[0], weight, height, width, g, groups) : Variable(),
                      t.has(1) ? conv2d_input_grad(gy, t[1], height, width, g, groups) : Variable()});
      });
}

Variable conv2d_weight_grad(const Variable& gy, const Variable& x, const Conv2dGeometry& g, int64_t groups) {
  // ⟨weight_grad(gy, x), V⟩ = ⟨gy, conv(x, V)⟩ = ⟨x, input_grad(gy, V)⟩
  return record(
      "conv2d_weight_grad", conv2d_weight_grad(gy.data(), x.data(), g, groups), {gy, x},
      [sgy = save_if(gy, x.requires_grad()), sx = save_if(x, gy.requires_grad()), g, groups, h = x.shape()[2],
       w = x.shape()[3]](const Variable& v, NeedsGrad needs) -> VariableGrads {
        Variable ggy, gx;
        if (needs[0]) ggy = convolve2d(sx.variable(), v, g, groups);
        if (needs[1]) gx = conv2d_input_grad(sgy.variable(), v, h, w, g, groups);
        return {ggy, gx};
      },
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? conv2d_weight_grad(t[0], x, g, groups) : Variable(),
                      t.has(1) ? conv2d_weight_grad(gy, t[1], g, groups) : Variable()});
      });
}

Variable conv2d(const Variable& x, const Variable& weight, const Variable& bias,
                const Conv2dFuncOptions& options) {
  const std::string shapes = check_operands("conv2d", x, weight, bias, options.groups, 2,
                                            "input (N, C_in, H, W) and weight (C_out, C_in/groups, KH, KW)");
  const int64_t h = x.shape()[2], w = x.shape()[3], c_out = weight.shape()[0];
  const Conv2dGeometry g{
      .height = axis_geometry("conv2d", h, weight.shape()[2], options.stride.h, options.padding.h,
                              options.padding_same, options.dilation.h, shapes),
      .width = axis_geometry("conv2d", w, weight.shape()[3], options.stride.w, options.padding.w,
                             options.padding_same, options.dilation.w, shapes)};
  Variable y = convolve2d(x, weight, g, options.groups);  // (N, C_out, H_out, W_out)
  if (bias.defined()) y = add(y, reshape(bias, {c_out, 1, 1}));
  return y;
}

}  // namespace minigrad
