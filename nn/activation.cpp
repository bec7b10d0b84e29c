#include "minigrad/nn/activation.h"

#include <cstdio>
#include <string>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

namespace {
// A parameter as the shortest decimal that reads back as itself (%g): 0.01, 1, 20.
std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

Variable ReLU::forward(const Variable& x) const {
  return relu(x);
}
Variable Tanh::forward(const Variable& x) const {
  return tanh(x);
}
Variable Sigmoid::forward(const Variable& x) const {
  return sigmoid(x);
}
Variable GELU::forward(const Variable& x) const {
  return gelu(x);
}

Variable LeakyReLU::forward(const Variable& x) const {
  return leaky_relu(x, negative_slope);
}
std::string LeakyReLU::extra_repr() const {
  return "negative_slope=" + format_number(negative_slope);
}

Variable SiLU::forward(const Variable& x) const {
  return silu(x);
}

Variable ELU::forward(const Variable& x) const {
  return elu(x, alpha);
}
std::string ELU::extra_repr() const {
  return "alpha=" + format_number(alpha);
}

Variable Softplus::forward(const Variable& x) const {
  return softplus(x, beta, threshold);
}
std::string Softplus::extra_repr() const {
  return "beta=" + format_number(beta) + ", threshold=" + format_number(threshold);
}

Variable Softmax::forward(const Variable& x) const {
  return softmax(x, dim);
}
std::string Softmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Variable LogSoftmax::forward(const Variable& x) const {
  return log_softmax(x, dim);
}
std::string LogSoftmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Variable Flatten::forward(const Variable& x) const {
  return flatten(x, start_dim, end_dim);
}
std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

}  // namespace minigrad::nn
