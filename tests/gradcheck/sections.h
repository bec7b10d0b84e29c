// The gradient-check catalogue's sections, one file each, in the order of autograd/functions.h, and what
// they share: random sizes and inputs, and the helpers that check a layer with respect to its parameters.
// cases.cpp joins the sections into gradcheck_cases().
#pragma once

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tests/gradcheck/cases.h"

namespace minigrad::checks {

inline constexpr DType F64 = DType::Float64;

// A random size in [low, high].
inline int64_t size_in(Generator& g, int64_t low, int64_t high) {
  return low + static_cast<int64_t>(g.next_below(static_cast<uint64_t>(high - low + 1)));
}

// Values for an input, as a leaf that requires grad.
inline Variable normal(Generator& g, const Shape& shape) {
  return Variable(Tensor::normal(shape, 0, 1, F64, &g), true);
}
// An input gradcheck does not differentiate (requires_grad false): for the weight of a case that needs
// many channels to take its path (Winograd's 32), whose 11,520 entries would make the second-order check's
// Jacobians about 0.9 GB; the weight's gradient is checked in smaller cases.
inline Variable constant(Generator& g, const Shape& shape) {
  return Variable(Tensor::normal(shape, 0, 1, F64, &g), false);
}
inline Variable positive(Generator& g, const Shape& shape) {
  return Variable(Tensor::uniform(shape, 0.5, 2.0, F64, &g), true);
}
// Values at least 0.2 from zero: finite differences must not straddle relu's kink or a pole of 1/x.
inline Variable away_from_zero(Generator& g, const Shape& shape) {
  Tensor magnitude = Tensor::uniform(shape, 0.2, 1.5, F64, &g);
  Tensor sign = where(Tensor::bernoulli(shape, 0.5, &g), Tensor::scalar(1, F64), Tensor::scalar(-1, F64));
  return Variable(mul(magnitude, sign), true);
}
// Distinct values at least 0.1 apart in random order, so that max has no ties within eps.
inline Variable distinct(Generator& g, const Shape& shape) {
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  std::iota(values.begin(), values.end(), 0.0);
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[g.next_below(i)]);
  for (double& v : values) v = 0.1 * v - 1 + 0.01 * g.next_double();
  return Variable(Tensor::from_values(values, shape, F64), true);
}
// A leaf whose data is a transposed (non-contiguous) view.
inline Variable transposed(Generator& g, int64_t rows, int64_t cols) {
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
inline void randomize(const nn::Module& layer, Generator& g) {
  for (const Variable& p : layer.parameters()) p.data().copy_(Tensor::normal(p.shape(), 0, 1, F64, &g));
}

// The layer's inputs followed by all its parameters.
inline Check layer_check(const std::shared_ptr<nn::Module>& layer, Inputs inputs, GradcheckFunction f) {
  const std::vector<Variable> parameters = layer->parameters();
  inputs.insert(inputs.end(), parameters.begin(), parameters.end());
  return Check{std::move(inputs), std::move(f), parameters.size()};
}

// An op: inputs drawn by `make`, checked through the fixed function `f`.
using AddCase =
    std::function<void(std::string name, std::function<Inputs(Generator&)> make, GradcheckFunction f)>;
// A layer: `make` builds the layer, its inputs and the function together.
using AddLayer = std::function<void(std::string name, std::function<Check(Generator&)> make)>;

void add_elementwise_cases(const AddCase& add_case);                // arithmetic and elementwise functions
void add_conv_pooling_matmul_cases(const AddCase& add_case);        // convolution, pooling, fold, matmul
void add_shape_reduction_selection_cases(const AddCase& add_case);  // shape, reductions, selection, softmax
void add_nn_function_cases(const AddCase& add_case);                // losses, dropout, norms, attention
void add_layer_cases(const AddLayer& add_layer);                    // the layers of nn/

}  // namespace minigrad::checks
