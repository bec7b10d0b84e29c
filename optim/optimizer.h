// Optimizers, in order of complexity: SGD (with momentum), Adam, AdamW, and SparseAdam for row-sparse
// gradients. Each follows PyTorch's update rule exactly, so results can be compared step by step.
//
//   optim::AdamW optimizer(model.named_parameters(), {.lr = 1e-3});  // or a list of Variables
//   for (...) {
//     optimizer.zero_grad();
//     loss.backward();
//     optim::clip_grad_norm_(model.parameters(), 1.0);
//     optimizer.step();
//   }
//
// A parameter whose gradient is undefined (it took no part in the loss) is skipped by step(): its value
// and its state stay as they are.
//
// Row-sparse gradients (an nn::Embedding with sparse = true; tensor/row_sparse.h), as in PyTorch: SGD
// without momentum or weight decay steps the rows present; SparseAdam takes them only; Adam and AdamW
// refuse them (they would have to step every row). An optimizer that refuses a gradient throws before it
// changes anything, naming the parameter. A table with a row-sparse gradient and the rest of the model
// take two optimizers:
//
//   optim::SparseAdam table_optimizer(table.named_parameters(), {.lr = 1e-3});
//   optim::Adam optimizer(rest.named_parameters(), {.lr = 1e-3});
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/autograd/grad_mode.h"
#include "minigrad/autograd/variable.h"

namespace minigrad::optim {

// The parameters an optimizer updates, and the names its saved state goes by: a module's
// named_parameters() gives "layers.0.attention.W_q.weight.exp_avg", which says whose state it is and
// survives a change in parameter order; a plain list gives "param3.exp_avg" (position 3), as PyTorch's
// state_dict does.
struct ParameterList {
  ParameterList(std::vector<Variable> parameters);  // NOLINT: implicit, so that a plain list still works
  ParameterList(std::initializer_list<Variable> parameters)
      : ParameterList(std::vector<Variable>(parameters)) {}
  ParameterList(const std::vector<std::pair<std::string, Variable>>& named_parameters);  // NOLINT: implicit
  std::vector<Variable> variables;
  std::vector<std::string> names;
};

class Optimizer {
 public:
  Optimizer(ParameterList parameters, double lr);
  virtual ~Optimizer() = default;

  virtual void step() = 0;
  // Forgets every parameter's gradient, or zeroes it in place (Variable::zero_grad).
  void zero_grad(bool set_to_none = true);

  // The learning rate, the one a schedule changes: options().lr reads it too.
  double learning_rate() const { return lr_; }
  void set_learning_rate(double lr);
  const std::vector<Variable>& parameters() const { return parameters_; }

  // "SGD", "Adam", "AdamW": saved with the state so that one optimizer's state is not loaded into another.
  virtual std::string name() const = 0;

  // Everything the next step() depends on besides the parameters and hyperparameters, as named tensors:
  // "<parameter name>.exp_avg", "<parameter name>.step", ... (see ParameterList for the names).
  std::vector<std::pair<std::string, Tensor>> state_tensors() const;
  // Restores state_tensors() output. Every name must belong to this optimizer and every tensor must fit
  // its parameter; otherwise throws, naming the tensor, and changes nothing.
  void load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors);

 protected:
  // The state this optimizer keeps per parameter, e.g. {"step", "exp_avg", "exp_avg_sq"}.
  virtual std::vector<std::string> state_keys() const = 0;
  // Per-parameter state by key; empty until the parameter's first step.
  std::vector<std::map<std::string, Tensor>> state_;
  std::vector<Variable> parameters_;
  std::vector<std::string> names_;  // parameters_[i]'s name in the saved state
  double lr_;
  // A subclass's options as step() uses them: those it was made with, and the learning rate as it is now.
  template <typename Options>
  Options with_learning_rate(Options options) const {
    options.lr = lr_;
    return options;
  }
};

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// Stochastic gradient descent, PyTorch's formulation:
//   g = grad + weight_decay·p
//   b = g on the first step, else momentum·b + (1 - dampening)·g      (when momentum > 0)
//   g = g + momentum·b  (Nesterov)   or   g = b
//   p = p - lr·g
// A row-sparse gradient steps its rows only, p = p - lr·grad, which is what the dense step does with the
// zeros of the other rows. With momentum or weight decay every row would move, so it is refused (PyTorch
// refuses weight decay; its momentum buffer turns sparse and decays only the rows seen so far, which
// minigrad does not copy).
class SGD : public Optimizer {
 public:
  SGD(ParameterList parameters, const SGDOptions& options);
  void step() override;
  std::string name() const override { return "SGD"; }
  SGDOptions options() const { return with_learning_rate(options_); }

 protected:
  std::vector<std::string> state_keys() const override { return {"momentum_buffer"}; }

 private:
  SGDOptions options_;  // its lr is learning_rate()'s first value; step() reads learning_rate()
};

// One of Adam's betas in the last release's spelling (.beta1 = 0.9): giving one warns, naming .betas.
// Only giving one warns: a program that names neither constructs it by default, silently.
struct LegacyBeta {
  LegacyBeta() = default;
  // Implicit, as the old field was a double.
  [[deprecated("use .betas = {beta1, beta2}")]] LegacyBeta(double beta) : value(beta) {}  // NOLINT
  std::optional<double> value;
};

struct AdamOptions {
  double lr = 1e-3;
  // The last release's spelling of betas, kept for this one (before betas, where a program of that
  // release names them): given, each replaces its half of betas, and the compiler says to use betas.
  LegacyBeta beta1{};
  LegacyBeta beta2{};
  std::pair<double, double> betas{0.9, 0.999};  // β1, β2: PyTorch's betas=(0.9, 0.999), both required
  double eps = 1e-8;
  double weight_decay = 0;
};

// Adam (Kingma and Ba, 2015), PyTorch's formulation, with t the parameter's step count:
//   g = grad + weight_decay·p                       (L2 penalty folded into the gradient)
//   m = β1·m + (1 - β1)·g,   v = β2·v + (1 - β2)·g²
//   p = p - (lr / (1 - β1^t)) · m / (√v / √(1 - β2^t) + eps)
// eps is added after the bias-corrected square root, as in PyTorch.
class Adam : public Optimizer {
 public:
  Adam(ParameterList parameters, const AdamOptions& options);
  void step() override;
  std::string name() const override { return "Adam"; }
  AdamOptions options() const { return with_learning_rate(options_); }

 protected:
  // AdamW shares the update and differs only in how weight decay enters.
  Adam(ParameterList parameters, const AdamOptions& options, bool decoupled_weight_decay);
  std::vector<std::string> state_keys() const override { return {"step", "exp_avg", "exp_avg_sq"}; }

 private:
  AdamOptions options_;  // its lr is learning_rate()'s first value; step() reads learning_rate()
  bool decoupled_;
};

struct AdamWOptions {
  double lr = 1e-3;
  // The last release's spelling of betas, kept for this one (before betas, where a program of that
  // release names them): given, each replaces its half of betas, and the compiler says to use betas.
  LegacyBeta beta1{};
  LegacyBeta beta2{};
  std::pair<double, double> betas{0.9, 0.999};  // β1, β2: PyTorch's betas=(0.9, 0.999), both required
  double eps = 1e-8;
  double weight_decay = 1e-2;
};

// AdamW (Loshchilov and Hutter, 2019): weight decay decoupled from the gradient,
//   p = p·(1 - lr·weight_decay), then the Adam update without the L2 term.
class AdamW : public Adam {
 public:
  AdamW(ParameterList parameters, const AdamWOptions& options);
  std::string name() const override { return "AdamW"; }
};

struct SparseAdamOptions {
  double lr = 1e-3;
  // The last release's spelling of betas, kept for this one (before betas, where a program of that
  // release names them): given, each replaces its half of betas, and the compiler says to use betas.
  LegacyBeta beta1{};
  LegacyBeta beta2{};
  std::pair<double, double> betas{0.9, 0.999};  // β1, β2: PyTorch's betas=(0.9, 0.999), both required
  double eps = 1e-8;
};

// PyTorch's SparseAdam, for row-sparse gradients only (a dense one is refused: use Adam). A row's moments
// and weights change only when the row is in the gradient; one step count t per parameter counts the
// steps that gave it a gradient. For each row present, with g its gradient:
//   m = m + (1 - β1)·(g - m),   v = v + (1 - β2)·(g² - v)
//   p = p - lr·√(1 - β2^t) / (1 - β1^t) · m / (√v + eps)
// Unlike Adam, the rows absent from a step keep their m and v (Adam decays them, since their g is 0) and
// their weights (Adam still moves them by m/√v); eps is added to √v before the bias correction, which
// is folded into the step size; and there is no weight decay.
class SparseAdam : public Optimizer {
 public:
  SparseAdam(ParameterList parameters, const SparseAdamOptions& options);
  void step() override;
  std::string name() const override { return "SparseAdam"; }
  SparseAdamOptions options() const { return with_learning_rate(options_); }

 protected:
  std::vector<std::string> state_keys() const override { return {"step", "exp_avg", "exp_avg_sq"}; }

 private:
  SparseAdamOptions options_;  // its lr is learning_rate()'s first value; step() reads learning_rate()
};

// Scales all gradients together so that their joint L2 norm is at most max_norm, as PyTorch's
// clip_grad_norm_: scale = max_norm / (norm + 1e-6), applied only when below 1. Returns the norm before
// clipping. Parameters without a gradient are ignored. A non-finite norm (an inf or NaN gradient) leaves
// the gradients as they are and is returned, so that the caller must look at it before stepping, or,
// with error_if_nonfinite, throws (PyTorch's option of the same name). A row-sparse gradient counts its
// rows present (the others are zero) and has those rows scaled.
struct ClipGradNormOptions {
  bool error_if_nonfinite = false;
};
double clip_grad_norm_(const std::vector<Variable>& parameters, double max_norm,
                       ClipGradNormOptions options = {});

// The name of the last release, kept for this one.
[[deprecated("use optim::clip_grad_norm_, PyTorch's name")]] inline double clip_grad_norm(
    const std::vector<Variable>& parameters, double max_norm, ClipGradNormOptions options = {}) {
  return clip_grad_norm_(parameters, max_norm, options);
}

}  // namespace minigrad::optim
