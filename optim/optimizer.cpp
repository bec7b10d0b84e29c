#include "minigrad/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "minigrad/tensor/ops.h"

namespace minigrad::optim {

namespace {

void check_hyperparameter(std::string_view op, std::string_view what, double value, double low, double high) {
  if (!(value >= low && value <= high)) {
    throw ValueError(op, std::string(what) + " must be in [" + std::to_string(low) + ", " +
                             std::to_string(high) + "], got " + std::to_string(value));
  }
}

// The gradient a parameter's update reads: contiguous and of the parameter's dtype and shape.
Tensor gradient_of(const Variable& p) {
  return p.grad().contiguous();
}

// Throws, naming the parameter, if an optimizer that updates every row is given a row-sparse gradient:
// before any parameter has moved, so that a refused step changes nothing.
void refuse_row_sparse(std::string_view optimizer, const std::vector<Variable>& parameters,
                       const std::vector<std::string>& names, std::string_view why) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].grad().is_row_sparse()) {
      throw ValueError(
          optimizer, "parameter " + names[i] +
                         " has a row-sparse gradient (an embedding with sparse = true): " + std::string(why));
    }
  }
}

// Adam's and SparseAdam's per-parameter state, created at the parameter's first step: the step count
// and the two moments, of the parameter's shape. Counts one more step and returns 1 - β1^t and 1 - β2^t.
std::pair<double, double> count_adam_step(std::map<std::string, Tensor>& state, const Variable& param,
                                          double b1, double b2) {
  if (!state.count("step")) {
    state["step"] = Tensor::zeros({}, DType::Int64);
    state["exp_avg"] = Tensor::zeros(param.shape(), param.dtype());
    state["exp_avg_sq"] = Tensor::zeros(param.shape(), param.dtype());
  }
  const int64_t t = ++*state["step"].data_ptr<int64_t>();
  return {1 - std::pow(b1, static_cast<double>(t)), 1 - std::pow(b2, static_cast<double>(t))};
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Optimizer

ParameterList::ParameterList(std::vector<Variable> parameters) : variables(std::move(parameters)) {
  for (size_t i = 0; i < variables.size(); ++i) names.push_back("param" + std::to_string(i));
}

ParameterList::ParameterList(const std::vector<std::pair<std::string, Variable>>& named_parameters) {
  for (const auto& [name, p] : named_parameters) {
    names.push_back(name);
    variables.push_back(p);
  }
}

Optimizer::Optimizer(ParameterList parameters, double lr)
    : parameters_(std::move(parameters.variables)), names_(std::move(parameters.names)), lr_(lr) {
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& p = parameters_[i];
    if (!p.defined() || !p.requires_grad() || !p.is_leaf()) {
      throw ValueError("optimizer", "parameter " + names_[i] + " is not a leaf that requires grad");
    }
    if (!p.data().is_contiguous())
      throw ValueError("optimizer", "parameter " + names_[i] + " is not contiguous");
    if (!seen.insert(names_[i]).second)
      throw ValueError("optimizer", "two parameters are named " + names_[i]);
  }
  set_learning_rate(lr);
  state_.resize(parameters_.size());
}

void Optimizer::zero_grad(bool set_to_none) {
  for (const Variable& p : parameters_) p.zero_grad(set_to_none);
}

void Optimizer::set_learning_rate(double lr) {
  check_hyperparameter("optimizer", "lr", lr, 0, INFINITY);
  lr_ = lr;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < state_.size(); ++i) {
    for (const auto& [key, t] : state_[i]) out.emplace_back(names_[i] + "." + key, t);
  }
  return out;
}

void Optimizer::load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  const std::vector<std::string> keys = state_keys();
  std::map<std::string, size_t, std::less<>> index_of;
  for (size_t i = 0; i < names_.size(); ++i) index_of.emplace(names_[i], i);
  std::vector<std::map<std::string, Tensor>> loaded(parameters_.size());
  for (const auto& [name, t] : tensors) {
    // "<parameter name>.<key>": parameter names may hold dots, keys do not
    const size_t dot = name.rfind('.');
    const auto found = dot == std::string::npos ? index_of.end() : index_of.find(name.substr(0, dot));
    const std::string key = dot == std::string::npos ? "" : name.substr(dot + 1);
    if (found == index_of.end() || std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw ValueError("load_state", "'" + name + "' is not part of the state of " + this->name() + " with " +
                                         std::to_string(parameters_.size()) + " parameters");
    }
    const size_t index = found->second;
    const Variable& p = parameters_[index];
    const bool scalar_step = key == "step";
    const bool fits = scalar_step ? (t.dtype() == DType::Int64 && t.numel() == 1)
                                  : (t.shape() == p.shape() && t.dtype() == p.dtype());
    if (!fits) {
      throw ShapeError("load_state",
                       "'" + name + "' is " + std::string(dtype_name(t.dtype())) + " " + t.shape().str() +
                           " but parameter " + names_[index] + " needs " +
                           (scalar_step ? std::string("an int64 scalar")
                                        : std::string(dtype_name(p.dtype())) + " " + p.shape().str()));
    }
    loaded[index][key] = t.clone();
  }
  state_ = std::move(loaded);
}

// ---------------------------------------------------------------------------------------------------
// SGD

SGD::SGD(ParameterList parameters, const SGDOptions& opts)
    : Optimizer(std::move(parameters), opts.lr), options_(opts) {
  check_hyperparameter("SGD", "momentum", opts.momentum, 0, INFINITY);
  check_hyperparameter("SGD", "dampening", opts.dampening, 0, 1);
  check_hyperparameter("SGD", "weight_decay", opts.weight_decay, 0, INFINITY);
  if (opts.nesterov && (opts.momentum <= 0 || opts.dampening != 0)) {
    throw ValueError("SGD", "Nesterov momentum requires momentum > 0 and dampening = 0");
  }
}

namespace {

// p[r] = p[r] - lr·g[r] for the rows r of a row-sparse gradient: the dense step without the rows whose
// gradient is zero, which it would leave as they are.
void sgd_step_rows(const Variable& param, const Tensor& grad, double lr) {
  const int64_t width = grad.shape()[1];
  const int64_t* rows = grad.row_indices().data_ptr<const int64_t>();  // (K), each row once
  dispatch_float(param.dtype(), "SGD", [&]<typename T>() {
    T* p = param.data().data_ptr<T>();                   // (V, D)
    const T* g = grad.row_values().data_ptr<const T>();  // (K, D)
    const T step = T(lr);
    parallel_for(grad.row_indices().numel(), width, [=](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        T* pk = p + rows[k] * width;  // the table's row rows[k]
        const T* gk = g + k * width;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j) pk[j] -= step * gk[j];
      }
    });
  });
}

}  // namespace

void SGD::step() {
  NoGradGuard no_grad;
  const double lr = lr_, momentum = options_.momentum, dampening = options_.dampening,
               wd = options_.weight_decay;
  if (momentum != 0 || wd != 0) {
    refuse_row_sparse("SGD", parameters_, names_,
                      "SGD takes one only without momentum and weight decay, which would move every row "
                      "(use SparseAdam, or SGD with momentum = 0 and weight_decay = 0)");
  }
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& param = parameters_[i];
    if (param.grad().is_row_sparse()) {
      sgd_step_rows(param, param.grad(), lr);
      param.data().bump_version();
      continue;
    }
    if (!param.grad().defined()) continue;
    const Tensor grad = gradient_of(param);
    auto& state = state_[i];
    const bool first = !state.count("momentum_buffer");
    if (momentum != 0 && first) state["momentum_buffer"] = Tensor::empty(param.shape(), param.dtype());
    dispatch_float(param.dtype(), "SGD", [&]<typename T>() {
      T* p = param.data().data_ptr<T>();
      const T* g = grad.data_ptr<const T>();
      T* b = momentum != 0 ? state["momentum_buffer"].data_ptr<T>() : nullptr;
      parallel_for(param.numel(), 4, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          T d = g[k] + T(wd) * p[k];
          if (b) {
            b[k] = first ? d : T(momentum) * b[k] + T(1 - dampening) * d;
            d = options_.nesterov ? d + T(momentum) * b[k] : b[k];
          }
          p[k] -= T(lr) * d;
        }
      });
    });
    param.data().bump_version();
  }
}

// ---------------------------------------------------------------------------------------------------
// Adam and AdamW

namespace {

// The options with the last release's beta1 and beta2, where a program still gives them, moved into betas.
template <typename Options>
Options with_betas_resolved(Options o) {
  o.betas = {o.beta1.value.value_or(o.betas.first), o.beta2.value.value_or(o.betas.second)};
  o.beta1 = {};
  o.beta2 = {};
  return o;
}

}  // namespace

Adam::Adam(ParameterList parameters, const AdamOptions& opts) : Adam(std::move(parameters), opts, false) {}

Adam::Adam(ParameterList parameters, const AdamOptions& opts, bool decoupled)
    : Optimizer(std::move(parameters), opts.lr), options_(with_betas_resolved(opts)), decoupled_(decoupled) {
  const char* op = decoupled ? "AdamW" : "Adam";  // name() is not yet AdamW's while this constructor runs
  check_hyperparameter(op, "betas[0]", options_.betas.first, 0, 1 - 1e-12);
  check_hyperparameter(op, "betas[1]", options_.betas.second, 0, 1 - 1e-12);
  check_hyperparameter(op, "eps", opts.eps, 0, INFINITY);
  check_hyperparameter(op, "weight_decay", opts.weight_decay, 0, INFINITY);
}

void Adam::step() {
  NoGradGuard no_grad;
  refuse_row_sparse(name(), parameters_, names_,
                    name() + " does not take one, since it moves every row; use SparseAdam for it");
  const double lr = lr_, b1 = options_.betas.first, b2 = options_.betas.second, eps = options_.eps,
               wd = options_.weight_decay;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& param = parameters_[i];
    if (!param.grad().defined()) continue;
    const Tensor grad = gradient_of(param);
    auto& state = state_[i];
    const auto [bias_correction1, bias_correction2] = count_adam_step(state, param, b1, b2);
    const double step_size = lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    dispatch_float(param.dtype(), name(), [&]<typename T>() {
      T* p = param.data().data_ptr<T>();
      const T* g = grad.data_ptr<const T>();
      T* m = state["exp_avg"].data_ptr<T>();
      T* v = state["exp_avg_sq"].data_ptr<T>();
      const bool decoupled = decoupled_;
      const T shrink = T(1 - lr * wd), l2 = T(wd), c1 = T(b1), d1 = T(1 - b1), c2 = T(b2), d2 = T(1 - b2),
              step = T(step_size), root2 = T(bias_correction2_sqrt), epsilon = T(eps);
      // Captured by value: the constants are then the body's own, which no store through p, m or v can
      // change, so the compiler keeps them in registers and vectorizes the loop. (By reference, each was
      // reloaded for every element: one element at a time.)
      parallel_for(param.numel(), 8, [=](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          // AdamW shrinks the weight directly; Adam adds the L2 penalty to the gradient.
          const T pk = decoupled ? p[k] * shrink : p[k];
          const T gk = decoupled ? g[k] : g[k] + l2 * pk;
          m[k] = c1 * m[k] + d1 * gk;
          v[k] = c2 * v[k] + d2 * gk * gk;
          p[k] = pk - step * m[k] / (std::sqrt(v[k]) / root2 + epsilon);
        }
      });
    });
    param.data().bump_version();
  }
}

AdamW::AdamW(ParameterList parameters, const AdamWOptions& o)
    : Adam(std::move(parameters),
           AdamOptions{.lr = o.lr,
                       .betas = with_betas_resolved(o).betas,
                       .eps = o.eps,
                       .weight_decay = o.weight_decay},
           true) {}

// ---------------------------------------------------------------------------------------------------
// SparseAdam

SparseAdam::SparseAdam(ParameterList parameters, const SparseAdamOptions& opts)
    : Optimizer(std::move(parameters), opts.lr), options_(with_betas_resolved(opts)) {
  check_hyperparameter("SparseAdam", "betas[0]", options_.betas.first, 0, 1 - 1e-12);
  check_hyperparameter("SparseAdam", "betas[1]", options_.betas.second, 0, 1 - 1e-12);
  check_hyperparameter("SparseAdam", "eps", opts.eps, 0, INFINITY);
}

void SparseAdam::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {  // before any parameter moves
    const Variable& p = parameters_[i];
    if (p.grad().defined() && !p.grad().is_row_sparse()) {
      throw ValueError("SparseAdam", "parameter " + names_[i] +
                                         " has a dense gradient; SparseAdam takes row-sparse ones only (an "
                                         "embedding with sparse = true): use Adam for it");
    }
  }
  const double lr = lr_, b1 = options_.betas.first, b2 = options_.betas.second, eps = options_.eps;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& param = parameters_[i];
    const Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    auto& state = state_[i];
    // Dense moments, as PyTorch's: a row keeps its own across the steps that do not touch it.
    const auto [bias_correction1, bias_correction2] = count_adam_step(state, param, b1, b2);
    const double step_size = lr * std::sqrt(bias_correction2) / bias_correction1;
    const int64_t width = grad.shape()[1];
    const int64_t* rows = grad.row_indices().data_ptr<const int64_t>();  // (K), each row once
    dispatch_float(param.dtype(), name(), [&]<typename T>() {
      T* p = param.data().data_ptr<T>();  // (V, D), and so are m and v
      T* m = state["exp_avg"].data_ptr<T>();
      T* v = state["exp_avg_sq"].data_ptr<T>();
      const T* g = grad.row_values().data_ptr<const T>();  // (K, D)
      const T d1 = T(1 - b1), d2 = T(1 - b2), epsilon = T(eps), minus_step = T(-step_size);
      // Each row is present once, so threads that take different k never write the same element. Within
      // a row, p, m, v and g are four separate buffers: simd lets the compiler vectorize the row without
      // checking them for overlap (measured: docs/history/performance.md, "Figures from code comments").
      parallel_for(grad.row_indices().numel(), 8 * width, [=](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t at = rows[k] * width;  // the table's row rows[k] in p, m and v
          T *pk = p + at, *mk = m + at, *vk = v + at;
          const T* gk = g + k * width;
#pragma omp simd
          for (int64_t j = 0; j < width; ++j) {
            // PyTorch's operations in its order: the updates of m and v first, then added to the old ones.
            const T m_update = (gk[j] - mk[j]) * d1, v_update = (gk[j] * gk[j] - vk[j]) * d2;
            const T numer = m_update + mk[j], denom = std::sqrt(v_update + vk[j]) + epsilon;
            mk[j] = numer;
            vk[j] += v_update;
            pk[j] += minus_step * (numer / denom);
          }
        }
      });
    });
    param.data().bump_version();
  }
}

// ---------------------------------------------------------------------------------------------------
// Gradient clipping

namespace {

// The sum of the squares of q[0..n), in double. Partial sums over fixed blocks (in parallel) are added in
// block order, so the result does not depend on the thread count; within a block the simd reduction
// lets the compiler keep several sums at once (one running sum waits on each addition in turn).
template <typename T>
double sum_of_squares(const T* q, int64_t n) {
  constexpr int64_t kBlock = 16384;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<size_t>(blocks));
  parallel_for(blocks, kBlock, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      const T* x = q + b * kBlock;
      const int64_t length = std::min(n - b * kBlock, kBlock);
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t k = 0; k < length; ++k) s += static_cast<double>(x[k]) * static_cast<double>(x[k]);
      partial[static_cast<size_t>(b)] = s;
    }
  });
  double total = 0;
  for (double s : partial) total += s;
  return total;
}

}  // namespace

double clip_grad_norm_(const std::vector<Variable>& parameters, double max_norm,
                       ClipGradNormOptions options) {
  if (!(max_norm > 0))
    throw ValueError("clip_grad_norm_", "max_norm must be positive, got " + std::to_string(max_norm));
  double squares = 0;
  for (const Variable& p : parameters) {
    if (!p.grad().defined()) continue;
    // A row-sparse gradient's rows present are all its non-zeros.
    const Tensor g = p.grad().is_row_sparse() ? p.grad().row_values() : p.grad().contiguous();
    dispatch_float(g.dtype(), "clip_grad_norm_",
                   [&]<typename T>() { squares += sum_of_squares(g.data_ptr<const T>(), g.numel()); });
  }
  const double norm = std::sqrt(squares);
  if (options.error_if_nonfinite && !std::isfinite(norm)) {
    throw ValueError("clip_grad_norm_", "the total norm of the gradients is " + std::to_string(norm) +
                                            ": a gradient holds an inf or a NaN");
  }
  const double scale = max_norm / (norm + 1e-6);
  if (std::isfinite(norm) && scale < 1) {
    for (const Variable& p : parameters) {
      if (p.grad().defined()) p.grad().mul_(scale);  // a row-sparse one scales its rows
    }
  }
  return norm;
}

}  // namespace minigrad::optim
