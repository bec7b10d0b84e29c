#include "minigrad/autograd/gradcheck.h"

#include <cmath>
#include <cstdio>

#include "minigrad/autograd/forward_ad.h"
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// "[2,0]": the multi-index of row-major element i of `shape`.
std::string index_string(const Shape& shape, int64_t i) {
  Shape index = Shape::filled(shape.rank(), 0);
  for (int d = shape.rank() - 1; d >= 0; --d) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index.str();
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

class Checker {
 public:
  Checker(const GradcheckFunction& f, const std::vector<Variable>& inputs, const GradcheckOptions& options)
      : f_(f), options_(options) {
    if (inputs.empty()) throw ValueError("gradcheck", "needs at least one input");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Variable& x = inputs[i];
      if (!x.defined()) throw ValueError("gradcheck", "input " + std::to_string(i) + " is undefined");
      leaves_.push_back(x);
      saved_grads_.push_back(x.is_leaf() ? x.grad() : Tensor());
      if (!x.requires_grad()) continue;
      if (!x.is_leaf()) {
        throw ValueError("gradcheck", "input " + std::to_string(i) + " was computed by " + x.grad_fn()->op +
                                          "; pass leaves (detach() it)");
      }
      if (x.dtype() != DType::Float64) {
        throw DTypeError("gradcheck", "input " + std::to_string(i) + " is " +
                                          std::string(dtype_name(x.dtype())) +
                                          "; finite differences need float64 inputs");
      }
      for (int d = 0; d < x.rank(); ++d) {
        if (x.shape()[d] > 1 && x.data().strides()[d] == 0) {
          throw ValueError("gradcheck", "input " + std::to_string(i) +
                                            " overlaps itself in memory (an expand()ed "
                                            "view); pass a contiguous copy");
        }
      }
      differentiable_.push_back(i);
      offsets_.push_back(element_offsets(x.data()));
    }
    if (differentiable_.empty()) throw ValueError("gradcheck", "no input requires grad");
  }

  // The inputs' gradients as the caller left them.
  ~Checker() {
    for (size_t i = 0; i < leaves_.size(); ++i) {
      if (leaves_[i].is_leaf()) leaves_[i].set_grad(saved_grads_[i]);
    }
  }

  // Forward mode: J·v for a random tangent v of the inputs, against central differences along v, entry
  // by entry, and against reverse mode through the same Jacobian, ⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩ for a random u.
  GradcheckResult run_forward() {
    result_.check = "forward_gradcheck";
    Generator generator(options_.seed);
    std::vector<Tensor> tangents;  // per differentiable input
    for (size_t i : differentiable_) {
      tangents.push_back(Tensor::normal(leaves_[i].shape(), 0, 1, DType::Float64, &generator));
    }
    Tensor jv;
    {
      const forward_ad::DualLevel level;  // the inputs carry their tangents while it lives
      for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
        detail::set_tangent(leaves_[differentiable_[slot]], tangents[slot]);
      }
      const int64_t through_backward_before = detail::tangents_through_backward;
      output_ = evaluate_recorded();
      result_.tangents_through_backward = detail::tangents_through_backward - through_backward_before;
      const Variable t = forward_ad::unpack_dual(output_).tangent;
      jv = t.defined() ? t.data() : Tensor::zeros(output_.shape(), DType::Float64);
    }
    const Tensor u = Tensor::normal(output_.shape(), 0, 1, DType::Float64, &generator);
    const std::vector<std::vector<double>> uJ = analytic_vjp(u);
    double reverse = 0;
    for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
      reverse += dot(uJ[slot], tangents[slot].to_vector<double>());
    }
    const std::vector<double> forward = jv.to_vector<double>();
    const Shape out_shape = output_.shape();
    output_ = Variable();  // free the graph before the values it saved are perturbed

    std::vector<std::vector<double>> original(differentiable_.size()), direction(differentiable_.size());
    for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
      direction[slot] = tangents[slot].to_vector<double>();  // row-major, as offsets_ lists the elements
      for (int64_t offset : offsets_[slot]) original[slot].push_back(data_of(slot)[offset]);
    }
    const std::vector<double> directional = central_difference([&](double sign) {
      for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
        for (size_t j = 0; j < offsets_[slot].size(); ++j) {
          data_of(slot)[offsets_[slot][j]] += sign * options_.eps * direction[slot][j];
        }
      }
    });
    for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
      for (size_t j = 0; j < offsets_[slot].size(); ++j) data_of(slot)[offsets_[slot][j]] = original[slot][j];
    }
    for (size_t k = 0; k < forward.size(); ++k) {
      compare(forward[k], directional[k], [&] {
        return "J·v at output" + index_string(out_shape, static_cast<int64_t>(k)) + " (forward mode)";
      });
    }
    compare(dot(u.to_vector<double>(), forward), reverse,
            [] { return std::string("⟨u, J·v⟩ (forward mode) against ⟨Jᵀ·u, v⟩ (reverse mode)"); });
    return result_;
  }

  GradcheckResult run() {
    Generator generator(options_.seed);
    output_ = evaluate_recorded();
    const Tensor v = Tensor::normal(output_.shape(), 0, 1, DType::Float64, &generator);
    if (options_.fast_mode) {
      check_projections(v, generator);
    } else {
      check_full_jacobian(v);
    }
    return result_;
  }

 private:
  // d(vᵀ·output)/d input for each differentiable input, flattened, by one backward pass.
  std::vector<std::vector<double>> analytic_vjp(const Tensor& v) {
    for (const Variable& leaf : leaves_) leaf.zero_grad();
    if (output_.requires_grad()) output_.backward(v, BackwardOptions{.retain_graph = true});
    std::vector<std::vector<double>> grads;
    for (size_t i : differentiable_) {
      const Tensor& g = leaves_[i].grad();
      grads.push_back(g.defined() ? g.to_dense().to_vector<double>()
                                  : std::vector<double>(static_cast<size_t>(leaves_[i].numel()), 0.0));
    }
    return grads;
  }

  // f at the current values, recorded: the output must be float64.
  Variable evaluate_recorded() {
    Variable y = f_(leaves_);
    if (!y.defined() || y.dtype() != DType::Float64) {
      throw DTypeError("gradcheck", "the function must return a float64 Variable");
    }
    return y;
  }

  // f at the current values, without recording a graph.
  std::vector<double> evaluate() {
    NoGradGuard no_grad;
    return f_(leaves_).data().to_vector<double>();
  }

  // (f(x + eps·d) - f(x - eps·d)) / (2·eps) where `perturb(sign)` adds sign·eps·d to the inputs.
  template <typename Perturb>
  std::vector<double> central_difference(Perturb&& perturb) {
    perturb(+1.0);
    std::vector<double> plus = evaluate();
    perturb(-2.0);
    std::vector<double> minus = evaluate();
    perturb(+1.0);
    for (size_t k = 0; k < plus.size(); ++k) plus[k] = (plus[k] - minus[k]) / (2 * options_.eps);
    return plus;
  }

  // The start of a differentiable input's storage; element offsets are relative to it.
  double* data_of(size_t slot) const {
    return static_cast<double*>(leaves_[differentiable_[slot]].data().storage()->data());
  }

  template <typename Where>
  void compare(double analytic, double numeric, Where&& where) {
    const double diff = std::abs(analytic - numeric);
    const double ratio = diff / (options_.atol + options_.rtol * std::abs(numeric));
    const double scale = std::max(std::abs(analytic), std::abs(numeric));
    ++result_.comparisons;
    result_.max_abs_error = std::max(result_.max_abs_error, diff);
    if (scale > options_.atol) result_.max_rel_error = std::max(result_.max_rel_error, diff / scale);
    if (!(ratio <= 1)) result_.passed = false;  // also catches NaN
    if (!(ratio <= result_.worst_ratio) || result_.worst_where.empty()) {
      result_.worst_ratio = ratio;
      result_.worst_analytic = analytic;
      result_.worst_numeric = numeric;
      result_.worst_where = where();
    }
  }

  void check_full_jacobian(const Tensor& v) {
    const int64_t n_out = output_.numel();
    // Analytic Jacobian, one row per output element, and the product with the random v.
    std::vector<std::vector<std::vector<double>>> rows;  // [output k][input slot][element j]
    for (int64_t k = 0; k < n_out; ++k) {
      Tensor e = Tensor::zeros(output_.shape(), DType::Float64);
      e.data_ptr<double>()[k] = 1;
      rows.push_back(analytic_vjp(e));
    }
    const std::vector<std::vector<double>> vjp = analytic_vjp(v);
    const std::vector<double> vv = v.to_vector<double>();
    const Shape out_shape = output_.shape();
    output_ = Variable();  // free the graph before the values it saved are perturbed

    for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
      const size_t input = differentiable_[slot];
      const Shape in_shape = leaves_[input].shape();
      double* base = data_of(slot);
      const std::vector<int64_t>& offsets = offsets_[slot];
      for (size_t j = 0; j < offsets.size(); ++j) {
        double& x = base[offsets[j]];
        const double original = x;
        const std::vector<double> column = central_difference([&](double sign) { x += sign * options_.eps; });
        x = original;  // exactly, not by adding and subtracting eps
        for (int64_t k = 0; k < n_out; ++k) {
          compare(rows[k][slot][j], column[k], [&] {
            return "d output" + index_string(out_shape, k) + " / d input " + std::to_string(input) +
                   index_string(in_shape, static_cast<int64_t>(j));
          });
        }
        compare(vjp[slot][j], dot(vv, column), [&] {
          return "random upstream gradient, d input " + std::to_string(input) +
                 index_string(in_shape, static_cast<int64_t>(j));
        });
      }
    }
  }

  void check_projections(const Tensor& v, Generator& generator) {
    const std::vector<std::vector<double>> vjp = analytic_vjp(v);
    const std::vector<double> vv = v.to_vector<double>();
    output_ = Variable();
    for (size_t slot = 0; slot < differentiable_.size(); ++slot) {
      const size_t input = differentiable_[slot];
      const std::vector<double> u =
          Tensor::normal(leaves_[input].shape(), 0, 1, DType::Float64, &generator).to_vector<double>();
      double* base = data_of(slot);
      const std::vector<int64_t>& offsets = offsets_[slot];
      std::vector<double> original(offsets.size());
      for (size_t j = 0; j < offsets.size(); ++j) original[j] = base[offsets[j]];
      const std::vector<double> directional = central_difference([&](double sign) {
        for (size_t j = 0; j < offsets.size(); ++j) base[offsets[j]] += sign * options_.eps * u[j];
      });
      for (size_t j = 0; j < offsets.size(); ++j) base[offsets[j]] = original[j];
      compare(dot(vjp[slot], u), dot(vv, directional),
              [&] { return "projection vᵀ·J·u for input " + std::to_string(input); });
    }
  }

  const GradcheckFunction& f_;
  const GradcheckOptions& options_;
  std::vector<Variable> leaves_;
  std::vector<Tensor> saved_grads_;            // restored when the check ends
  std::vector<size_t> differentiable_;         // indices of the inputs that require grad
  std::vector<std::vector<int64_t>> offsets_;  // per differentiable input: its elements' offsets
  Variable output_;
  GradcheckResult result_;
};

}  // namespace

std::string GradcheckResult::report() const {
  char numbers[256];
  if (passed) {
    std::snprintf(numbers, sizeof numbers,
                  " passed: %lld comparisons, max abs error %.3g, max rel error %.3g",
                  static_cast<long long>(comparisons), max_abs_error, max_rel_error);
    return check + numbers;
  }
  std::snprintf(numbers, sizeof numbers,
                ": analytic %.10g, numeric %.10g, |difference| %.3g is %.3g times atol + rtol·|numeric|",
                worst_analytic, worst_numeric, std::abs(worst_analytic - worst_numeric), worst_ratio);
  return check + " failed at " + worst_where + numbers;
}

GradcheckResult gradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                          const GradcheckOptions& options) {
  GradcheckResult reverse = Checker(f, inputs, options).run();
  if (!options.check_forward_ad || !reverse.passed) return reverse;
  const GradcheckResult forward = forward_gradcheck(f, inputs, options);
  if (!forward.passed) return forward;
  reverse.check = "gradcheck and forward_gradcheck";
  reverse.comparisons += forward.comparisons;
  reverse.max_abs_error = std::max(reverse.max_abs_error, forward.max_abs_error);
  reverse.max_rel_error = std::max(reverse.max_rel_error, forward.max_rel_error);
  reverse.tangents_through_backward = forward.tangents_through_backward;
  return reverse;
}

GradcheckResult forward_gradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                                  const GradcheckOptions& options) {
  return Checker(f, inputs, options).run_forward();
}

namespace {

// The first-order gradients against the create_graph ones, entry by entry, within atol + rtol·|first|.
GradcheckResult compare_backward_paths(const Variable& y, const std::vector<Variable>& inputs,
                                       const Variable& v, const GradcheckOptions& options) {
  GradcheckResult result;
  const std::vector<Variable> fast = grad({y}, inputs, {v}, {.retain_graph = true, .allow_unused = true});
  const std::vector<Variable> slow = grad({y}, inputs, {v}, {.create_graph = true, .allow_unused = true});
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!fast[i].defined() && !slow[i].defined()) continue;
    const Tensor zeros = Tensor::zeros(inputs[i].shape(), DType::Float64);
    const std::vector<double> a =
        (fast[i].defined() ? fast[i].data() : zeros).to_dense().contiguous().to_vector<double>();
    const std::vector<double> b =
        (slow[i].defined() ? slow[i].data() : zeros).to_dense().contiguous().to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k) {
      ++result.comparisons;
      const double error = std::abs(a[k] - b[k]),
                   ratio = error / (options.atol + options.rtol * std::abs(a[k]));
      result.max_abs_error = std::max(result.max_abs_error, error);
      if (ratio >= result.worst_ratio) {
        result.worst_ratio = ratio;
        result.worst_where = "input " + std::to_string(i) + " at " +
                             index_string(inputs[i].shape(), static_cast<int64_t>(k)) +
                             " (ordinary backward vs create_graph)";
        result.worst_numeric = a[k];  // the first-order value is the reference here
        result.worst_analytic = b[k];
      }
      if (ratio > 1) result.passed = false;
    }
  }
  return result;
}

}  // namespace

GradcheckResult gradgradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                              const GradcheckOptions& options) {
  std::vector<Variable> differentiable;
  for (const Variable& x : inputs) {
    if (x.defined() && x.requires_grad()) differentiable.push_back(x);
  }
  if (differentiable.empty()) throw ValueError("gradgradcheck", "no input requires grad");
  const Variable y = f(inputs);
  if (!y.defined()) throw ValueError("gradgradcheck", "f returned an undefined Variable");
  Generator generator(options.seed + 1);  // not the stream gradcheck's own upstream gradient comes from
  const Variable v(Tensor::normal(y.shape(), 0, 1, DType::Float64, &generator), /*requires_grad=*/true);

  // The first derivatives themselves: their own derivatives say nothing if they are wrong.
  // (with grad mode on: gradcheck evaluates f without recording, and an f that takes gradients itself,
  // as a check of third derivatives does, needs its graph)
  auto recording = [&f](const std::vector<Variable>& in) {
    GradModeGuard grad_mode(true);
    return f(in);
  };
  GradcheckResult first = gradcheck(recording, inputs, options);
  if (!first.passed) {
    first.check = "gradgradcheck (first derivatives)";
    return first;
  }
  // An ordinary backward and one with create_graph must give the same values.
  GradcheckResult agreement = compare_backward_paths(y, differentiable, v, options);
  if (!agreement.passed) {
    agreement.check = "gradgradcheck (backward without and with create_graph)";
    return agreement;
  }

  std::vector<Variable> with_v = inputs;
  with_v.push_back(v);
  const size_t n = inputs.size();
  auto first_derivatives = [&f, n, &differentiable](const std::vector<Variable>& in) {
    GradModeGuard grad_mode(true);  // gradcheck evaluates f without recording; the gradients need a graph
    const std::vector<Variable> args(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    const Variable out = f(args);
    const std::vector<Variable> grads =
        grad({out}, differentiable, {in[n]}, {.create_graph = true, .allow_unused = true});
    std::vector<Variable> flat;
    for (size_t i = 0; i < grads.size(); ++i) {
      // An input f does not use has a zero gradient, whose own gradient is zero too.
      flat.push_back(grads[i].defined()
                         ? reshape(grads[i], {-1})
                         : Variable(Tensor::zeros({differentiable[i].numel()}, DType::Float64)));
    }
    return concat(flat, 0);
  };
  GradcheckResult second = gradcheck(first_derivatives, with_v, options);
  // With check_forward_ad, the gradient's tangents too: forward over reverse.
  second.check = second.check == "forward_gradcheck" ? "gradgradcheck (forward over reverse)"
                 : second.check == "gradcheck and forward_gradcheck"
                     ? "gradgradcheck and forward over reverse"
                     : "gradgradcheck";
  return second;
}

}  // namespace minigrad
