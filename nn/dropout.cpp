#include "minigrad/nn/dropout.h"

#include <cstdio>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

Dropout::Dropout(double p_, Generator* generator_) : p(p_), generator(generator_) {
  if (!(p >= 0 && p <= 1)) throw ValueError("Dropout", "p must be in [0, 1], got " + std::to_string(p));
}

Variable Dropout::forward(const Variable& x) const {
  return dropout(x, p, is_training(), generator);
}

std::string Dropout::extra_repr() const {
  char text[32];
  std::snprintf(text, sizeof text, "p=%g", p);
  return text;
}

Dropout2d::Dropout2d(double p_, Generator* generator_) : p(p_), generator(generator_) {
  if (!(p >= 0 && p <= 1)) throw ValueError("Dropout2d", "p must be in [0, 1], got " + std::to_string(p));
}

Variable Dropout2d::forward(const Variable& x) const {
  return dropout2d(x, p, is_training(), generator);
}

std::string Dropout2d::extra_repr() const {
  char text[32];
  std::snprintf(text, sizeof text, "p=%g", p);
  return text;
}

}  // namespace minigrad::nn
