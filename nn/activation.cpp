#include "nn/activation.h"

#include "autograd/functions.h"

namespace minigrad::nn {

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

}  // namespace minigrad::nn
