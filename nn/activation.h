// Activation functions as modules, for Sequential: each forward is the function of the same name in
// autograd/functions.h, and each prints as PyTorch's does ("ReLU()", "LeakyReLU(negative_slope=0.01)");
// and Identity and Flatten.
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

class ReLU : public Layer<ReLU> {
 public:
  Variable forward(const Variable& x) const;  // max(x, 0)
  std::string name() const override { return "ReLU"; }
};

class Tanh : public Layer<Tanh> {
 public:
  Variable forward(const Variable& x) const;
  std::string name() const override { return "Tanh"; }
};

class Sigmoid : public Layer<Sigmoid> {
 public:
  Variable forward(const Variable& x) const;  // 1 / (1 + e^-x)
  std::string name() const override { return "Sigmoid"; }
};

class GELU : public Layer<GELU> {
 public:
  Variable forward(const Variable& x) const;  // x·Φ(x), exact
  std::string name() const override { return "GELU"; }
};

class LeakyReLU : public Layer<LeakyReLU> {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : negative_slope(negative_slope) {}
  Variable forward(const Variable& x) const;  // x where x > 0, else negative_slope·x
  std::string name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override;
  double negative_slope;
};

class SiLU : public Layer<SiLU> {
 public:
  Variable forward(const Variable& x) const;  // x·σ(x)
  std::string name() const override { return "SiLU"; }
};

class ELU : public Layer<ELU> {
 public:
  explicit ELU(double alpha = 1.0) : alpha(alpha) {}
  Variable forward(const Variable& x) const;  // x where x > 0, else alpha·(e^x - 1)
  std::string name() const override { return "ELU"; }
  std::string extra_repr() const override;
  double alpha;
};

class Softplus : public Layer<Softplus> {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0) : beta(beta), threshold(threshold) {}
  Variable forward(const Variable& x) const;  // log(1 + e^(beta·x)) / beta; x where beta·x > threshold
  std::string name() const override { return "Softplus"; }
  std::string extra_repr() const override;
  double beta, threshold;
};

// softmax and log_softmax along `dim` (PyTorch's modules take the dim too; there is no default here).
class Softmax : public Layer<Softmax> {
 public:
  explicit Softmax(int64_t dim) : dim(dim) {}
  Variable forward(const Variable& x) const;
  std::string name() const override { return "Softmax"; }
  std::string extra_repr() const override;
  int64_t dim;
};

class LogSoftmax : public Layer<LogSoftmax> {
 public:
  explicit LogSoftmax(int64_t dim) : dim(dim) {}
  Variable forward(const Variable& x) const;
  std::string name() const override { return "LogSoftmax"; }
  std::string extra_repr() const override;
  int64_t dim;
};

// ---- shape modules for Sequential ----

// Its input, unchanged: a placeholder where a model may or may not have a layer.
class Identity : public Layer<Identity> {
 public:
  Variable forward(const Variable& x) const { return x; }
  std::string name() const override { return "Identity"; }
};

// Dimensions start_dim..end_dim merged into one (flatten in autograd/functions.h); PyTorch's default keeps
// the batch dimension: (N, C, L) -> (N, C·L).
class Flatten : public Layer<Flatten> {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim(start_dim), end_dim(end_dim) {}
  Variable forward(const Variable& x) const;
  std::string name() const override { return "Flatten"; }
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};

}  // namespace minigrad::nn
