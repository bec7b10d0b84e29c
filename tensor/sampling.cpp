#include "minigrad/tensor/sampling.h"

#include <cmath>
#include <string>
#include <vector>

namespace minigrad {

Tensor multinomial(const Tensor& weights, int64_t num_samples, bool replacement, Generator* generator) {
  constexpr std::string_view op = "multinomial";
  if (!weights.defined()) throw ValueError(op, "the weights are undefined");
  check_dense(op, weights);
  if (!is_floating(weights.dtype())) {
    throw DTypeError(
        op, "the weights must be float32 or float64, got " + std::string(dtype_name(weights.dtype())));
  }
  if (weights.rank() != 1 && weights.rank() != 2) {
    throw ShapeError(op, "expects weights (K) or (N, K), got " + weights.shape().str());
  }
  const int64_t rows = weights.rank() == 1 ? 1 : weights.shape()[0], k = weights.shape().back();
  if (num_samples < 1)
    throw ValueError(op, "num_samples must be positive, got " + std::to_string(num_samples));
  Generator& g = generator ? *generator : default_generator();
  const std::vector<double> all = weights.to_vector<double>();
  std::vector<int64_t> drawn;
  drawn.reserve(static_cast<size_t>(rows * num_samples));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> w(all.begin() + r * k, all.begin() + (r + 1) * k);
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double v = w[static_cast<size_t>(j)];
      if (!std::isfinite(v) || v < 0) {
        throw ValueError(op, "the weights must be finite and non-negative, got " + std::to_string(v) +
                                 " at row " + std::to_string(r) + ", category " + std::to_string(j));
      }
      total += v;
      nonzero += v > 0;
    }
    if (total <= 0) throw ValueError(op, "row " + std::to_string(r) + "'s weights sum to 0");
    if (!replacement && num_samples > nonzero) {
      throw ValueError(op, "cannot draw " + std::to_string(num_samples) +
                               " samples without replacement from " + std::to_string(nonzero) +
                               " categories of nonzero weight (row " + std::to_string(r) + ")");
    }
    for (int64_t s = 0; s < num_samples; ++s) {
      // The first category whose running sum passes u; the last nonzero one if rounding leaves u above all.
      const double u = g.next_double() * total;
      double running = 0;
      int64_t pick = -1;
      for (int64_t j = 0; j < k; ++j) {
        const double v = w[static_cast<size_t>(j)];
        if (v <= 0) continue;
        pick = j;
        running += v;
        if (u < running) break;
      }
      drawn.push_back(pick);
      if (!replacement) {
        total -= w[static_cast<size_t>(pick)];
        w[static_cast<size_t>(pick)] = 0;
      }
    }
  }
  return Tensor::from_vector(drawn, weights.rank() == 1 ? Shape{num_samples} : Shape{rows, num_samples});
}

}  // namespace minigrad
