#include "examples/textbook/positional_facts.h"

#include <cmath>

namespace textbook {

using minigrad::Tensor;

Tensor book_positional_encoding(int64_t positions, int64_t d) {
  Tensor P = Tensor::zeros({positions, d}, minigrad::DType::Float64);
  double* p = P.data_ptr<double>();
  for (int64_t pos = 0; pos < positions; ++pos) {
    for (int64_t i = 0; i + 1 < d; i += 2) {
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(d));
      p[pos * d + i] = std::sin(angle);
      p[pos * d + i + 1] = std::cos(angle);
    }
  }
  return P;
}

double cosine_similarity(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  if (x.size() != y.size()) {
    throw minigrad::ShapeError("cosine_similarity",
                               "shapes " + a.shape().str() + " and " + b.shape().str() + " differ");
  }
  double dot = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  return dot / std::sqrt(xx * yy);
}

std::string binary(int64_t value, int bits) {
  std::string s(static_cast<size_t>(bits), '0');
  for (int b = 0; b < bits; ++b) s[static_cast<size_t>(bits - 1 - b)] = ((value >> b) & 1) ? '1' : '0';
  return s;
}

double max_rotation_error(const Tensor& P, int64_t delta) {
  const int64_t n = P.shape()[0], d = P.shape()[1];
  const Tensor table = P.to(minigrad::DType::Float64).contiguous();
  const double* p = table.data_ptr<const double>();
  double worst = 0;
  for (int64_t j = 0; 2 * j + 1 < d; ++j) {
    const double omega = 1 / std::pow(10000.0, 2.0 * static_cast<double>(j) / static_cast<double>(d));
    const double c = std::cos(static_cast<double>(delta) * omega),
                 s = std::sin(static_cast<double>(delta) * omega);
    for (int64_t i = 0; i + delta < n; ++i) {
      // [sin(a + b); cos(a + b)] = [[cos b, sin b], [-sin b, cos b]] · [sin a; cos a]
      const double x = p[i * d + 2 * j], y = p[i * d + 2 * j + 1];
      worst = std::max(worst, std::abs(c * x + s * y - p[(i + delta) * d + 2 * j]));
      worst = std::max(worst, std::abs(-s * x + c * y - p[(i + delta) * d + 2 * j + 1]));
    }
  }
  return worst;
}

}  // namespace textbook
