#include "tests/gradcheck/cases.h"

#include <algorithm>
#include <numeric>

namespace minigrad::checks {

namespace {

constexpr DType F64 = DType::Float64;

// A random size in [low, high].
int64_t size_in(Generator& g, int64_t low, int64_t high) {
  return low + static_cast<int64_t>(g.next_below(static_cast<uint64_t>(high - low + 1)));
}

// Values for an input, as a leaf that requires grad.
Variable normal(Generator& g, const Shape& shape) {
  return Variable(Tensor::normal(shape, 0, 1, F64, &g), true);
}
Variable positive(Generator& g, const Shape& shape) {
  return Variable(Tensor::uniform(shape, 0.5, 2.0, F64, &g), true);
}
// Values at least 0.2 from zero: finite differences must not straddle relu's kink or a pole of 1/x.
Variable away_from_zero(Generator& g, const Shape& shape) {
  Tensor magnitude = Tensor::uniform(shape, 0.2, 1.5, F64, &g);
  Tensor sign = where(Tensor::bernoulli(shape, 0.5, &g), Tensor::scalar(1, F64), Tensor::scalar(-1, F64));
  return Variable(mul(magnitude, sign), true);
}
// Distinct values at least 0.1 apart in random order, so that max has no ties within eps.
Variable distinct(Generator& g, const Shape& shape) {
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  std::iota(values.begin(), values.end(), 0.0);
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[g.next_below(i)]);
  for (double& v : values) v = 0.1 * v - 1 + 0.01 * g.next_double();
  return Variable(Tensor::from_values(values, shape, F64), true);
}
// A leaf whose data is a transposed (non-contiguous) view.
Variable transposed(Generator& g, int64_t rows, int64_t cols) {
  return Variable(Tensor::normal({cols, rows}, 0, 1, F64, &g).t(), true);
}

using Inputs = std::vector<Variable>;
using In = const std::vector<Variable>&;

// A layer converted to float64 for checking.
template <typename M>
std::shared_ptr<M> in_float64(std::shared_ptr<M> layer) {
  layer->to(F64);
  return layer;
}

// Replaces every parameter's values with N(0, 1) draws (in place), so that no parameter sits at a
// special value such as LayerNorm's initial ones and zeros.
void randomize(const nn::Module& layer, Generator& g) {
  for (const Variable& p : layer.parameters()) p.data().copy_(Tensor::normal(p.shape(), 0, 1, F64, &g));
}

// The layer's inputs followed by all its parameters.
Check layer_check(const std::shared_ptr<nn::Module>& layer, Inputs inputs, GradcheckFunction f) {
  const std::vector<Variable> parameters = layer->parameters();
  inputs.insert(inputs.end(), parameters.begin(), parameters.end());
  return Check{std::move(inputs), std::move(f), parameters.size()};
}

std::vector<GradcheckCase> build() {
  std::vector<GradcheckCase> cases;
  // An op: inputs drawn by `make`, checked through the fixed function `f`.
  auto add_case = [&](std::string name, std::function<Inputs(Generator&)> make, GradcheckFunction f) {
    cases.push_back({std::move(name), [make, f](Generator& g) { return Check{make(g), f}; }});
  };
  // A layer: `make` builds the layer, its inputs and the function together.
  auto add_layer = [&](std::string name, std::function<Check(Generator&)> make) {
    cases.push_back({std::move(name), std::move(make)});
  };

  // ---- arithmetic ----
  add_case(
      "add",
      [](Generator& g) {
        Shape s{size_in(g, 1, 4), size_in(g, 1, 4)};
        return Inputs{normal(g, s), normal(g, s)};
      },
      [](In x) { return x[0] + x[1]; });
  add_case(
      "add (broadcast [m,1] + [n])",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 1}), normal(g, {size_in(g, 2, 4)})};
      },
      [](In x) { return x[0] + x[1]; });
  add_case(
      "sub (broadcast [b,m,n] - [m,n])",
      [](Generator& g) {
        const int64_t m = size_in(g, 1, 3), n = size_in(g, 1, 3);
        return Inputs{normal(g, {2, m, n}), normal(g, {m, n})};
      },
      [](In x) { return x[0] - x[1]; });
  add_case(
      "mul (broadcast [b,1,n] * [m,1])",
      [](Generator& g) {
        const int64_t m = size_in(g, 2, 3), n = size_in(g, 2, 3);
        return Inputs{normal(g, {2, 1, n}), normal(g, {m, 1})};
      },
      [](In x) { return x[0] * x[1]; });
  add_case(
      "mul (input used twice)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return x[0] * x[0]; });
  add_case(
      "div (broadcast)",
      [](Generator& g) {
        const int64_t n = size_in(g, 2, 4);
        return Inputs{normal(g, {3, n}), away_from_zero(g, {n})};
      },
      [](In x) { return x[0] / x[1]; });
  add_case(
      "neg",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return -x[0]; });
  add_case(
      "scalar ops (x+2, 3x, x/4, 1-x)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return (1.0 - x[0]) * 3.0 + x[0] / 4.0 + 2.0; });
  add_case(
      "rdiv (2/x)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 5)})}; },
      [](In x) { return 2.0 / x[0]; });
  add_case(
      "pow (x^3)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return pow(x[0], 3); });
  add_case(
      "pow (x^-1.5)", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 5)})}; },
      [](In x) { return pow(x[0], -1.5); });

  // ---- elementwise functions ----
  add_case(
      "exp",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 4)})};
      },
      [](In x) { return exp(x[0]); });
  add_case(
      "exp (non-contiguous leaf)", [](Generator& g) { return Inputs{transposed(g, 3, size_in(g, 2, 4))}; },
      [](In x) { return exp(x[0]); });
  add_case(
      "log", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return log(x[0]); });
  add_case(
      "sqrt", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return sqrt(x[0]); });
  add_case(
      "tanh", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return tanh(x[0]); });
  add_case(
      "sigmoid", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return sigmoid(x[0]); });
  add_case(
      "relu", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return relu(x[0]); });
  add_case(
      "gelu", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return gelu(x[0]); });
  add_case(
      "log1p", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return log1p(x[0]); });
  add_case(
      "leaky_relu (0.2)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return leaky_relu(x[0], 0.2); });
  add_case(
      "silu", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return silu(x[0]); });
  add_case(
      "elu (1.5)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return elu(x[0], 1.5); });
  add_case(
      "softplus (beta 2, threshold 1.5: both parts)",
      // 21 to 27 distinct values from -1 to 1.7, each at least 0.04 from the switch at x = 0.75
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 7, 9), 3})};
      },
      [](In x) { return softplus(x[0], 2.0, 1.5); });
  add_case(
      "abs", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return abs(x[0]); });
  add_case(
      "tanh(x) * sigmoid(x) (two branches)",
      [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return tanh(x[0]) * sigmoid(x[0]); });

  // ---- matmul ----
  // ---- convolution ----
  add_case(
      "conv1d (stride 2, padding 1, bias)",
      [](Generator& g) {
        const int64_t c = size_in(g, 1, 3);
        return Inputs{normal(g, {2, c, size_in(g, 5, 8)}), normal(g, {3, c, 3}), normal(g, {3})};
      },
      [](In x) { return conv1d(x[0], x[1], x[2], {.stride = 2, .padding = 1}); });
  add_case(
      "conv1d (dilation 2, groups 2, no bias)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, size_in(g, 6, 9)}), normal(g, {6, 2, 2})};
      },
      [](In x) { return conv1d(x[0], x[1], Variable(), {.dilation = 2, .groups = 2}); });
  add_case(
      "conv1d (padding same, even kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 2, size_in(g, 3, 6)}), normal(g, {2, 2, 4}), normal(g, {2})};
      },
      [](In x) { return conv1d(x[0], x[1], x[2], {.padding_same = true}); });
  add_case(
      "conv2d (3x2 kernel, stride (2, 1), padding (1, 0), bias)",
      [](Generator& g) {
        const int64_t c = size_in(g, 1, 3);
        return Inputs{normal(g, {2, c, size_in(g, 4, 6), size_in(g, 3, 5)}), normal(g, {3, c, 3, 2}),
                      normal(g, {3})};
      },
      [](In x) {
        return conv2d(x[0], x[1], x[2], {.stride = {2, 1}, .padding = {1, 0}});
      });
  add_case(
      "conv2d (dilation 2, groups 2, no bias)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 4, size_in(g, 5, 7), 5}), normal(g, {4, 2, 2, 2})};
      },
      [](In x) { return conv2d(x[0], x[1], Variable(), {.dilation = 2, .groups = 2}); });
  add_case(
      "conv2d (padding same, even kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 2, size_in(g, 3, 5), 4}), normal(g, {2, 2, 2, 3}), normal(g, {2})};
      },
      [](In x) { return conv2d(x[0], x[1], x[2], {.padding_same = true}); });
  // conv2d's backward ops, each differentiated in both its operands: x 5×4 in 2 groups of 2 channels, a
  // 3×2 kernel, stride (2, 1), dilation (1, 2), padding (1, 0) -> 3×2 outputs.
  const Conv2dGeometry strided{.height = {.kernel = 3, .stride = 2, .pad_left = 1, .pad_right = 1},
                               .width = {.kernel = 2, .dilation = 2}};
  add_case(
      "conv2d_input_grad (stride, dilation, groups 2)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, 3, 2}), normal(g, {4, 2, 3, 2})};
      },
      [strided](In x) { return conv2d_input_grad(x[0], x[1], 5, 4, strided, 2); });
  add_case(
      "conv2d_weight_grad (stride, dilation, groups 2)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, 3, 2}), normal(g, {2, 4, 5, 4})};
      },
      [strided](In x) { return conv2d_weight_grad(x[0], x[1], strided, 2); });
  add_case(
      "max_pool1d (kernel 3, stride 2, padding 1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7)})};
      },
      [](In x) { return max_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}); });
  add_case(
      "avg_pool1d (kernel 3, stride 2, padding 1, with and without the padding counted)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7)})};
      },
      [](In x) {
        return avg_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}) +
               avg_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
      });
  add_case(
      "max_pool2d (kernel 3, stride 2, padding 1; kernel 2x3, dilation (2, 1); kernel 2, its own kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 5, 7), 6})};
      },
      [](In x) {
        return sum(max_pool2d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}), {2, 3}) +
               sum(max_pool2d(x[0], {.kernel_size = {2, 3}, .dilation = {2, 1}}), {2, 3}) +
               sum(max_pool2d(x[0], {.kernel_size = 2}), {2, 3});
      });
  add_case(
      "avg_pool2d (kernel 3x2, stride (2, 1), padding 1, with and without the padding counted)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7), 5})};
      },
      [](In x) {
        const AvgPool2dOptions counted{.kernel_size = {3, 2}, .stride = {2, 1}, .padding = 1};
        AvgPool2dOptions uncounted = counted;
        uncounted.count_include_pad = false;
        return avg_pool2d(x[0], counted) + avg_pool2d(x[0], uncounted);
      });
  add_case(
      "adaptive_avg_pool2d (to 2x1, to 3x2 in overlapping bins, and global)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, 4, size_in(g, 2, 5)})};
      },
      [](In x) {
        return sum(adaptive_avg_pool2d(x[0], {2, 1}), {2}) + sum(adaptive_avg_pool2d(x[0], {3, 2}), {2}) +
               reshape(adaptive_avg_pool2d(x[0], 1), {2, 3, 1});
      });
  add_case(
      "max_over_time and mean_over_time (valid lengths 3 and 5)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, 5})};
      },
      [](In x) {
        const Tensor lens = Tensor::from_vector<int64_t>({3, 5}, {2});
        return max_over_time(x[0], lens) + mean_over_time(x[0], lens);
      });
  add_case(
      "fold1d (col2im)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 6, 4})};  // C 2, K 3; L_out = (7 + 2 - 3) / 2 + 1
      },
      [](In x) {
        return fold1d(x[0], 7,
                      Conv1dGeometry{.kernel = 3, .stride = 2, .dilation = 1, .pad_left = 1, .pad_right = 1});
      });

  add_case(
      "fold2d (col2im over an image)",
      [](Generator& g) {
        // C 2, a 3x2 kernel; H 5, W 4 give 3x3 windows (stride 2 and 1, padding 1 and 0)
        return Inputs{normal(g, {1, 12, 9})};
      },
      [](In x) {
        return fold2d(x[0], 5, 4,
                      Conv2dGeometry{
                          .height = {.kernel = 3, .stride = 2, .dilation = 1, .pad_left = 1, .pad_right = 1},
                          .width = {.kernel = 2, .stride = 1, .dilation = 1, .pad_left = 0, .pad_right = 0}});
      });

  add_case(
      "matmul",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 4);
        return Inputs{normal(g, {size_in(g, 1, 4), k}), normal(g, {k, size_in(g, 1, 4)})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (transposed inputs)",
      [](Generator& g) {
        const int64_t k = size_in(g, 2, 4);
        return Inputs{transposed(g, 3, k), normal(g, {size_in(g, 2, 3), k})};
      },
      [](In x) { return matmul(x[0], transpose(x[1], 0, 1)); });
  add_case(
      "matmul (batched)",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, size_in(g, 1, 3), k}), normal(g, {2, k, size_in(g, 1, 3)})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (batch broadcast [2,1,m,k] @ [3,k,n])",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, 1, 2, k}), normal(g, {3, k, 2})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (batched @ 2-D weight)",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, size_in(g, 1, 3), k}), normal(g, {k, size_in(g, 1, 3)})};
      },
      [](In x) { return matmul(x[0], x[1]); });

  // ---- shape ----
  add_case(
      "reshape",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, size_in(g, 1, 3)})};
      },
      [](In x) {
        return reshape(x[0], {-1, 2}) * 2.0;
      });
  add_case(
      "transpose",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return transpose(x[0], 0, 2) * 2.0; });
  add_case(
      "permute",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) {
        return permute(x[0], {1, 2, 0}) * 2.0;
      });
  add_case(
      "slice (step 2, of a transposed view)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 3, 5), 4})};
      },
      [](In x) { return slice(transpose(x[0], 0, 1), 1, 1, 5, 2) * 2.0; });
  add_case(
      "select",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return select(x[0], 1, 2) * 2.0; });
  add_case(
      "unbind (steps used unevenly, twice, or not)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 1, 3), 2})};
      },
      [](In x) {
        const std::vector<Variable> steps = unbind(x[0], 0);  // 4 x (N, 2)
        return concat({steps[0] * steps[1], steps[3] * 3.0, steps[0]}, 1) + sum(x[0]);
      });
  add_case(
      "concat",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3)}), normal(g, {2, size_in(g, 1, 3)})};
      },
      [](In x) {
        return concat({x[0], x[1], x[0]}, 1);
      });
  add_case(
      "stack (the last dimension)",
      [](Generator& g) {
        const int64_t n = size_in(g, 1, 3);
        return Inputs{normal(g, {2, n}), normal(g, {2, n})};
      },
      [](In x) {
        return stack({x[0], x[1], x[0]}, -1);
      });
  add_case(
      "unsqueeze, squeeze",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return squeeze(unsqueeze(x[0], 1) * 2.0, 1); });

  // ---- reductions ----
  add_case(
      "sum (all)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return sum(x[0]); });
  add_case(
      "sum (dims 0 and 2, keepdim)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) {
        return sum(x[0], {0, 2}, true);
      });
  add_case(
      "mean (all)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return mean(x[0]); });
  add_case(
      "mean (dim -1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return mean(x[0], {-1}); });
  add_case(
      "max (dim 1)",
      [](Generator& g) {
        return Inputs{distinct(g, {2, size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0], 1); });
  add_case(
      "max (dim 0, keepdim)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0], 0, true); });
  add_case(
      "min (dim 1)",
      [](Generator& g) {
        return Inputs{distinct(g, {2, size_in(g, 2, 4), 3})};
      },
      [](In x) { return min(x[0], 1); });
  add_case(
      "max and min (whole tensor)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0]) * min(x[0]); });

  // ---- selection ----
  add_case(
      "clamp (-0.5, 0.5)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return clamp(x[0], -0.55, 0.55); });  // distinct values are 0.01 off multiples of 0.1
  add_case(
      "clamp_min and clamp_max", [](Generator& g) { return Inputs{distinct(g, {size_in(g, 3, 6)})}; },
      [](In x) { return clamp_min(x[0], -0.35) + clamp_max(x[0], 0.25); });
  add_case(
      "maximum and minimum (broadcast [m,1] and [n])",
      [](Generator& g) {
        const int64_t m = size_in(g, 2, 3), n = size_in(g, 2, 3);
        // Drawn together as distinct values, so that no two are within eps of a tie.
        const Tensor both = distinct(g, {m + n}).data();
        return Inputs{Variable(both.slice(0, 0, m).reshape({m, 1}).contiguous(), true),
                      Variable(both.slice(0, m, m + n).contiguous(), true)};
      },
      [](In x) { return maximum(x[0], x[1]) * 2.0 + minimum(x[0], x[1]); });
  add_case(
      "where (broadcast cond [n], a [m,n], b [1])",
      [](Generator& g) {
        const int64_t n = size_in(g, 2, 4);
        return Inputs{normal(g, {size_in(g, 1, 3), n}), normal(g, {1})};
      },
      [](In x) {
        const int64_t n = x[0].shape()[1];
        std::vector<bool> c(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) c[static_cast<size_t>(i)] = i % 2 == 0;
        return where(Tensor::from_vector<bool>(c, {n}), x[0], x[1]);
      });

  // ---- softmax and masking ----
  add_case(
      "softmax (last dim)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 2, 5)})};
      },
      [](In x) { return softmax(x[0], -1); });
  add_case(
      "softmax (dim 0)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return softmax(x[0], 0); });
  add_case(
      "softmax (non-contiguous leaf)",
      [](Generator& g) { return Inputs{transposed(g, 3, size_in(g, 2, 4))}; },
      [](In x) { return softmax(x[0], 1); });
  add_case(
      "log_softmax",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 2, 5)})};
      },
      [](In x) { return log_softmax(x[0], -1); });
  add_case(
      "masked_fill, then softmax",
      [](Generator& g) {
        return Inputs{normal(g, {3, size_in(g, 3, 5)})};
      },
      [](In x) {
        // Mask the last key of every row: those entries get no gradient.
        const int64_t n = x[0].shape()[1];
        const Tensor mask = ge(Tensor::arange(n, DType::Int64), Tensor::scalar(double(n - 1), DType::Int64));
        return softmax(masked_fill(x[0], mask, -1e6), -1);
      });

  // ---- neural-network functions ----
  // Without a padding index: the padding row's gradient is zero by design, not the true derivative (the
  // test suite checks that separately).
  add_case(
      "embedding (repeated ids)",
      [](Generator& g) {
        return Inputs{normal(g, {5, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor ids = Tensor::from_vector<int64_t>({0, 3, 3, 1, 4, 0}, {2, 3});
        return embedding(x[0], ids);
      });
  // Checked through its dense view: gradcheck reads the table's gradient with grad(), which turns the
  // row-sparse gradient dense; the second derivatives go through the dense fallback of create_graph.
  add_case(
      "embedding (sparse, repeated ids)",
      [](Generator& g) {
        return Inputs{normal(g, {6, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor ids = Tensor::from_vector<int64_t>({5, 3, 3, 1, 5, 0}, {3, 2});
        return embedding(x[0], ids, {.sparse = true});
      });
  // One table looked up twice sparsely and once densely: the row-sparse gradients are coalesced with each
  // other, then added into the dense one.
  add_case(
      "embedding (sparse twice, then dense, one table)",
      [](Generator& g) {
        return Inputs{normal(g, {5, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor first = Tensor::from_vector<int64_t>({4, 1, 4}, {3});
        const Tensor second = Tensor::from_vector<int64_t>({1, 2, 0}, {3});
        return embedding(x[0], first, {.sparse = true}) * embedding(x[0], second, {.sparse = true}) +
               embedding(x[0], Tensor::from_vector<int64_t>({3, 3, 1}, {3}));
      });
  add_case(
      "dropout (p = 0.3, fixed mask)",
      [](Generator& g) {
        return Inputs{normal(g, {3, size_in(g, 2, 5)})};
      },
      [](In x) {
        Generator mask_generator(7);  // the same mask at every evaluation
        return dropout(x[0], 0.3, /*training=*/true, &mask_generator);
      });
  add_case(
      "dropout2d (p = 0.5, fixed mask)",
      [](Generator& g) {
        return Inputs{normal(g, {3, 4, 2, size_in(g, 2, 4)})};
      },
      [](In x) {
        Generator mask_generator(5);  // the same channels dropped at every evaluation
        return dropout2d(x[0], 0.5, /*training=*/true, &mask_generator);
      });
  add_case(
      "batch_norm (training, images, affine, running statistics updated)",
      [](Generator& g) {
        return Inputs{normal(g, {3, 2, 2, size_in(g, 2, 3)}), normal(g, {2}), normal(g, {2})};
      },
      [](In x) {
        const Tensor running_mean = Tensor::zeros({2}, DType::Float64),
                     running_var = Tensor::ones({2}, DType::Float64);
        return batch_norm(x[0], running_mean, running_var, x[1], x[2], {.training = true});
      });
  add_case(
      "batch_norm (training, features, no affine)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 3, 5), 3})};
      },
      [](In x) { return batch_norm(x[0], Tensor(), Tensor(), Variable(), Variable(), {.training = true}); });
  add_case(
      "batch_norm (evaluation, running statistics)",
      [](Generator& g) {
        return Inputs{normal(g, {4, 3, 2}), normal(g, {3}), normal(g, {3})};
      },
      [](In x) {
        const Tensor running_mean = Tensor::from_values({0.5, -1, 2}, {3}, DType::Float64);
        const Tensor running_var = Tensor::from_values({0.25, 1, 4}, {3}, DType::Float64);
        return batch_norm(x[0], running_mean, running_var, x[1], x[2], {.training = false});
      });
  add_case(
      "layer_norm",
      [](Generator& g) {
        const int64_t d = size_in(g, 2, 5);
        return Inputs{normal(g, {3, d}), normal(g, {d}), normal(g, {d})};
      },
      [](In x) { return layer_norm(x[0], x[1], x[2]); });
  add_case(
      "layer_norm (3-D, no affine)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 2, 5)})};
      },
      [](In x) { return layer_norm(x[0], Variable(), Variable()); });
  add_case(
      "cross_entropy",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, 0, 1, 2}, {4}));
      });
  add_case(
      "cross_entropy (ignore_index)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}),
                             {.ignore_index = -100});
      });
  add_case(
      "cross_entropy (label_smoothing)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}),
                             {.ignore_index = -100, .label_smoothing = 0.2});
      });
  add_case(
      "binary_cross_entropy_with_logits",
      [](Generator& g) {
        const Shape s{size_in(g, 2, 5)};
        return Inputs{normal(g, s), Variable(Tensor::uniform(s, 0.1, 0.9, F64, &g), true)};
      },
      [](In x) { return binary_cross_entropy_with_logits(x[0], x[1]); });
  add_case(
      "mse_loss and l1_loss",
      [](Generator& g) {
        const Shape s{size_in(g, 1, 3), size_in(g, 2, 4)};
        return Inputs{normal(g, s), normal(g, s)};
      },
      [](In x) { return mse_loss(x[0], x[1]) + l1_loss(x[0], x[1], {.reduction = Reduction::Sum}); });
  add_case(
      "smooth_l1_loss (beta 0.35) and huber_loss (delta 0.45, none)",
      [](Generator& g) {
        // x drawn distinct and t zero: |x - t| stays 0.01 or more from both kinks.
        const Variable x = distinct(g, {size_in(g, 3, 5), 4});
        return Inputs{x, Variable(Tensor::zeros(x.shape(), F64), true)};
      },
      [](In x) {
        return smooth_l1_loss(x[0], x[1], {.beta = 0.35}) * 3.0 +
               huber_loss(x[0], x[1], {.reduction = Reduction::None, .delta = 0.45});
      });
  add_case(
      "nll_loss (ignore_index)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return nll_loss(log_softmax(x[0], 1), Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}));
      });
  add_case(
      "flatten (1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return flatten(x[0], 1); });

  // ---- attention: both kernels, every kind of mask at once, dropout with a fixed seed ----
  for (AttentionKernel kernel : {AttentionKernel::Fused, AttentionKernel::Composed}) {
    add_case(
        std::string("scaled_dot_product_attention (") +
            (kernel == AttentionKernel::Fused ? "fused" : "composed") +
            ", 2 heads, n_q 3 != n_k 4, valid_lens + key padding + causal, dropout 0.3)",
        [](Generator& g) {
          const int64_t d = size_in(g, 2, 3);
          return Inputs{normal(g, {2, 2, 3, d}), normal(g, {2, 2, 4, d}), normal(g, {2, 2, 4, 2})};
        },
        [kernel](In x) {
          const AttentionMask mask{
              .valid_lens = Tensor::from_vector<int64_t>({4, 3}, {2}),
              .key_padding_mask = Tensor::from_values({0, 1, 0, 0, 0, 0, 0, 0}, {2, 4}, DType::Bool),
              .causal = true};
          return scaled_dot_product_attention(x[0], x[1], x[2],
                                              {.mask = mask, .dropout = 0.3, .seed = 11, .kernel = kernel})
              .output;
        });
  }

  // ---- layers (nn/), each with respect to its inputs and all its parameters ----
  add_layer("nn::Linear (batched input)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Linear>(size_in(g, 2, 4), size_in(g, 1, 3)));
    return layer_check(layer, {normal(g, {2, 2, layer->options.in_features})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::Linear (no bias)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Linear>(3, size_in(g, 1, 3), /*bias=*/false));
    return layer_check(layer, {normal(g, {2, 3})}, [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::Sequential (Linear, Tanh, Linear, GELU)", [](Generator& g) {
    auto layer = in_float64(
        std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::Tanh>(),
                                         std::make_shared<nn::Linear>(4, 2), std::make_shared<nn::GELU>()));
    return layer_check(layer, {normal(g, {size_in(g, 1, 4), 3})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::Conv1d (padding 1, groups 2)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Conv1d>(
        nn::Conv1dOptions{.in_channels = 4, .out_channels = 2, .kernel_size = 3, .padding = 1, .groups = 2}));
    return layer_check(layer, {normal(g, {2, 4, size_in(g, 3, 6)})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::Conv2d (3x3, padding 1, groups 2)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Conv2d>(
        nn::Conv2dOptions{.in_channels = 4, .out_channels = 2, .kernel_size = 3, .padding = 1, .groups = 2}));
    return layer_check(layer, {normal(g, {2, 4, size_in(g, 3, 5), 4})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  // Recurrent layers: the output and the final states in one vector; inputs x, h0 (and c0), then the
  // parameters. Lengths 4 and 2 of 4 steps: the second sequence's state must stop after its second step,
  // and its reverse direction start there.
  enum class Recurrent { RNN, GRU, LSTM };
  auto recurrent_case = [&](std::string name, Recurrent kind, nn::RNNOptions options, bool lengths) {
    add_layer(std::move(name), [kind, options, lengths](Generator& g) {
      std::shared_ptr<nn::RecurrentBase> layer;
      if (kind == Recurrent::RNN) layer = in_float64(std::make_shared<nn::RNN>(options));
      if (kind == Recurrent::GRU) layer = in_float64(std::make_shared<nn::GRU>(options));
      if (kind == Recurrent::LSTM) layer = in_float64(std::make_shared<nn::LSTM>(options));
      const bool lstm = kind == Recurrent::LSTM;
      const int64_t steps = 4, n = 2, states = options.num_layers * (options.bidirectional ? 2 : 1);
      const Shape x_shape =
          options.batch_first ? Shape{n, steps, options.input_size} : Shape{steps, n, options.input_size};
      Inputs inputs{normal(g, x_shape), normal(g, {states, n, options.hidden_size})};
      if (lstm) inputs.push_back(normal(g, {states, n, options.hidden_size}));
      const Tensor lens = lengths ? Tensor::from_vector<int64_t>({4, 2}, {2}) : Tensor();
      return layer_check(layer, inputs, [layer, lstm, lens](In x) {
        const nn::RecurrentOutput r = layer->forward(x[0], {x[1], lstm ? x[2] : Variable()}, lens);
        std::vector<Variable> parts{reshape(r.output, {-1}), reshape(r.h_n, {-1})};
        if (lstm) parts.push_back(reshape(r.c_n, {-1}));
        return concat(parts, 0);
      });
    });
  };
  recurrent_case("nn::RNN (tanh, initial state)", Recurrent::RNN, {.input_size = 3, .hidden_size = 2}, false);
  recurrent_case(
      "nn::RNN (relu, bidirectional, lengths 4 and 2)", Recurrent::RNN,
      {.input_size = 2, .hidden_size = 3, .nonlinearity = nn::Nonlinearity::ReLU, .bidirectional = true},
      true);
  recurrent_case("nn::GRU (2 layers, bidirectional, lengths 4 and 2)", Recurrent::GRU,
                 {.input_size = 2, .hidden_size = 2, .num_layers = 2, .bidirectional = true}, true);
  recurrent_case(
      "nn::LSTM (2 layers, both ways, batch_first, lengths)", Recurrent::LSTM,
      {.input_size = 2, .hidden_size = 2, .num_layers = 2, .batch_first = true, .bidirectional = true}, true);
  add_layer("nn::Embedding", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Embedding>(5, size_in(g, 2, 3)));
    return layer_check(layer, {}, [layer](In) {
      return layer->forward(Tensor::from_vector<int64_t>({4, 0, 4, 2}, {2, 2}));
    });
  });
  add_layer("nn::Embedding (sparse)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Embedding>(
        nn::EmbeddingOptions{.num_embeddings = 6, .embedding_dim = size_in(g, 2, 3), .sparse = true}));
    return layer_check(layer, {}, [layer](In) {
      return layer->forward(Tensor::from_vector<int64_t>({4, 0, 4, 2, 5, 4}, {3, 2}));
    });
  });
  add_layer("nn::LayerNorm", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::LayerNorm>(size_in(g, 2, 5)));
    randomize(*layer, g);  // away from the ones/zeros initialisation, which hides mistakes
    return layer_check(layer, {normal(g, {2, 3, layer->normalized_size})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::BatchNorm2d (training)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = 3}));
    randomize(*layer, g);
    return layer_check(layer, {normal(g, {2, 3, 2, size_in(g, 2, 3)})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::BatchNorm1d (evaluation)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::BatchNorm1d>(nn::BatchNormOptions{.num_features = 2}));
    randomize(*layer, g);
    layer->eval();
    return layer_check(layer, {normal(g, {3, 2, size_in(g, 2, 4)})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::PositionalEncoding (sinusoidal)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::PositionalEncoding>(4, 0.0, 10));
    return layer_check(layer, {normal(g, {2, size_in(g, 1, 5), 4})},
                       [layer](In x) { return layer->forward(x[0]); });
  });
  add_layer("nn::PositionalEncoding (learnable)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::PositionalEncoding>(
        nn::PositionalEncodingOptions{.num_hiddens = 4, .dropout = 0, .max_len = 4, .learnable = true}));
    return layer_check(layer, {normal(g, {2, 3, 4})}, [layer](In x) { return layer->forward(x[0]); });
  });
  const std::vector<std::pair<std::string, nn::AttentionMask>> masks = {
      {"no mask", {}},
      {"valid_lens per sequence", {.valid_lens = Tensor::from_vector<int64_t>({2, 3}, {2})}},
      {"valid_lens per query", {.valid_lens = Tensor::from_vector<int64_t>({1, 2, 3, 3, 1, 2}, {2, 3})}},
      {"key padding mask",
       {.key_padding_mask = Tensor::from_values({0, 0, 1, 0, 1, 1}, {2, 3}, DType::Bool)}},
      {"causal", {.causal = true}},
  };
  for (const auto& [mask_name, mask] : masks) {
    add_layer("nn::DotProductAttention (" + mask_name + ")", [mask](Generator& g) {
      auto layer = in_float64(std::make_shared<nn::DotProductAttention>(0.5));
      layer->eval();
      const int64_t d = size_in(g, 2, 3);
      return layer_check(layer, {normal(g, {2, 3, d}), normal(g, {2, 3, d}), normal(g, {2, 3, 2})},
                         [layer, mask](In x) { return layer->forward(x[0], x[1], x[2], mask); });
    });
  }
  add_layer("nn::MultiHeadAttention (self, valid_lens, 2 heads)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::MultiHeadAttention>(4, 2, 0.0, /*bias=*/true));
    const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})};
    return layer_check(layer, {normal(g, {2, 3, 4})},
                       [layer, mask](In x) { return layer->forward(x[0], x[0], x[0], mask); });
  });
  add_layer("nn::MultiHeadAttention (cross, sizes 5/4/6, causal)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{
        .num_hiddens = 4, .num_heads = 2, .query_size = 5, .key_size = 4, .value_size = 6}));
    // Queries from one sequence (3 steps), keys and values from another (3 steps, other widths).
    return layer_check(layer, {normal(g, {2, 3, 5}), normal(g, {2, 3, 4}), normal(g, {2, 3, 6})},
                       [layer](In x) { return layer->forward(x[0], x[1], x[2], {.causal = true}); });
  });
  for (nn::Activation activation : {nn::Activation::ReLU, nn::Activation::GELU}) {
    add_layer(
        std::string("nn::PositionWiseFFN (") + (activation == nn::Activation::ReLU ? "ReLU" : "GELU") + ")",
        [activation](Generator& g) {
          auto layer = in_float64(std::make_shared<nn::PositionWiseFFN>(3, size_in(g, 2, 5), activation));
          return layer_check(layer, {normal(g, {2, 2, 3})}, [layer](In x) { return layer->forward(x[0]); });
        });
  }
  add_layer("nn::AddNorm", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::AddNorm>(4, 0.0));
    randomize(*layer, g);
    return layer_check(layer, {normal(g, {2, 3, 4}), normal(g, {2, 3, 4})},
                       [layer](In x) { return layer->forward(x[0], x[1]); });
  });
  for (bool norm_first : {false, true}) {
    add_layer(std::string("nn::EncoderLayer (") + (norm_first ? "pre-norm" : "post-norm") + ", valid_lens)",
              [norm_first](Generator& g) {
                auto layer = in_float64(
                    std::make_shared<nn::EncoderLayer>(nn::EncoderLayerOptions{.num_hiddens = 4,
                                                                               .ffn_num_hiddens = 6,
                                                                               .num_heads = 2,
                                                                               .dropout = 0.0,
                                                                               .norm_first = norm_first}));
                randomize(*layer, g);
                const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})};
                return layer_check(layer, {normal(g, {2, 3, 4})},
                                   [layer, mask](In x) { return layer->forward(x[0], mask); });
              });
  }
  add_layer("nn::MultiheadAttention (PyTorch's; sequence first, key padding mask, 2 heads)",
            [](Generator& g) {
              auto layer = in_float64(std::make_shared<nn::MultiheadAttention>(
                  nn::MultiheadAttentionOptions{.embed_dim = 4, .num_heads = 2}));
              randomize(*layer, g);
              const nn::AttentionMask mask{.key_padding_mask =
                                               Tensor::from_values({0, 0, 0, 0, 0, 1}, {2, 3}, DType::Bool)};
              // query (3, 2, 4), key and value (3, 2, 4): (n, B, E)
              return layer_check(layer, {normal(g, {3, 2, 4}), normal(g, {3, 2, 4}), normal(g, {3, 2, 4})},
                                 [layer, mask](In x) { return layer->forward(x[0], x[1], x[2], mask); });
            });
  for (bool norm_first : {false, true}) {
    add_layer(std::string("nn::TransformerEncoderLayer (PyTorch's; ") +
                  (norm_first ? "pre-norm, GELU" : "post-norm, ReLU") + ", batch first, causal)",
              [norm_first](Generator& g) {
                auto layer = in_float64(
                    std::make_shared<nn::TransformerEncoderLayer>(nn::TransformerEncoderLayerOptions{
                        .d_model = 4,
                        .nhead = 2,
                        .dim_feedforward = 6,
                        .dropout = 0.0,
                        .activation = norm_first ? nn::Activation::GELU : nn::Activation::ReLU,
                        .batch_first = true,
                        .norm_first = norm_first}));
                randomize(*layer, g);
                return layer_check(layer, {normal(g, {2, 3, 4})},
                                   [layer](In x) { return layer->forward(x[0], {.causal = true}); });
              });
  }
  for (bool norm_first : {false, true}) {
    // Target 3 steps, source 4 (different lengths), both padded: the second target has 2 valid steps, the
    // second source 2.
    add_layer(std::string("nn::DecoderLayer (") + (norm_first ? "pre-norm" : "post-norm") +
                  ", causal, target and source padding)",
              [norm_first](Generator& g) {
                auto layer = in_float64(
                    std::make_shared<nn::DecoderLayer>(nn::DecoderLayerOptions{.num_hiddens = 4,
                                                                               .ffn_num_hiddens = 6,
                                                                               .num_heads = 2,
                                                                               .dropout = 0.0,
                                                                               .norm_first = norm_first}));
                randomize(*layer, g);
                const nn::DecoderMasks masks{.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}),
                                             .source_valid_lens = Tensor::from_vector<int64_t>({4, 2}, {2})};
                return layer_check(layer, {normal(g, {2, 3, 4}), normal(g, {2, 4, 4})},
                                   [layer, masks](In x) { return layer->forward(x[0], x[1], masks); });
              });
  }
  add_layer("nn::TransformerDecoder (decoder-only, tied weights, parameters)", [](Generator& g) {
    auto layer = in_float64(
        std::make_shared<nn::TransformerDecoder>(nn::TransformerDecoderOptions{.vocab_size = 5,
                                                                               .num_hiddens = 4,
                                                                               .ffn_num_hiddens = 4,
                                                                               .num_heads = 2,
                                                                               .num_layers = 2,
                                                                               .max_len = 8,
                                                                               .norm_first = true,
                                                                               .cross_attention = false,
                                                                               .tie_weights = true}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return layer->forward(Tensor::from_vector<int64_t>({1, 4, 2, 0, 3, 3}, {2, 3}), Variable(),
                            {.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
    });
  });
  add_layer("nn::Transformer (encoder-decoder, parameters)", [](Generator& g) {
    auto layer = in_float64(std::make_shared<nn::Transformer>(nn::TransformerOptions{.source_vocab_size = 6,
                                                                                     .target_vocab_size = 5,
                                                                                     .num_hiddens = 4,
                                                                                     .ffn_num_hiddens = 4,
                                                                                     .num_heads = 2,
                                                                                     .max_source_len = 8,
                                                                                     .max_target_len = 8}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return layer->forward(Tensor::from_vector<int64_t>({1, 5, 2, 4, 0, 3, 3, 1}, {2, 4}),
                            Tensor::from_vector<int64_t>({0, 4, 2, 0, 3, 3}, {2, 3}),
                            {.target_valid_lens = Tensor::from_vector<int64_t>({3, 1}, {2}),
                             .source_valid_lens = Tensor::from_vector<int64_t>({4, 2}, {2})});
    });
  });
  add_layer("nn::TransformerEncoder (2 layers, parameters)", [](Generator& g) {
    auto layer = in_float64(
        std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{.vocab_size = 6,
                                                                               .num_hiddens = 4,
                                                                               .ffn_num_hiddens = 4,
                                                                               .num_heads = 2,
                                                                               .num_layers = 2,
                                                                               .max_len = 8}));
    randomize(*layer, g);
    return layer_check(layer, {}, [layer](In) {
      return layer->forward(Tensor::from_vector<int64_t>({1, 5, 2, 0, 3, 3}, {2, 3}),
                            {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
    });
  });
  add_layer("nn::masked_mean", [](Generator& g) {
    return Check{{normal(g, {3, 4, 2})}, [](In x) {
                   return nn::masked_mean(x[0], Tensor::from_vector<int64_t>({4, 1, 2}, {3}));
                 }};
  });
  add_layer("nn::masked_max", [](Generator& g) {
    return Check{{distinct(g, {3, 4, 2})}, [](In x) {
                   return nn::masked_max(x[0], Tensor::from_vector<int64_t>({4, 1, 2}, {3}));
                 }};
  });
  return cases;
}

}  // namespace

const std::vector<GradcheckCase>& gradcheck_cases() {
  static const std::vector<GradcheckCase> cases = build();
  return cases;
}

std::string shapes_of(const Check& check) {
  std::string s;
  for (size_t i = 0; i + check.parameters < check.inputs.size(); ++i) {
    if (!s.empty()) s += ' ';
    s += check.inputs[i].shape().str();
  }
  if (check.parameters > 0) s += (s.empty() ? "" : " + ") + std::to_string(check.parameters) + " params";
  return s;
}

}  // namespace minigrad::checks
