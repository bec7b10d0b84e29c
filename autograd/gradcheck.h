// Gradient checking: compare the gradients backward() computes with finite differences, in float64,
// the way torch.autograd.gradcheck does.
//
//   auto f = [](const std::vector<Variable>& in) { return matmul(in[0], in[1]); };
//   Variable a(Tensor::normal({3, 4}, 0, 1, DType::Float64), true), b(Tensor::normal({4, 2}, 0, 1,
//   DType::Float64), true); GradcheckResult r = gradcheck(f, {a, b}); if (!r.passed) std::cerr << r.report()
//   << "\n";
//
// Full mode (the default) compares the whole Jacobian J = d output / d input, entry by entry:
//   numeric column j:  (f(x + eps·e_j) - f(x - eps·e_j)) / (2·eps)     (central differences)
//   analytic row k:    backward() with the one-hot upstream gradient e_k
// and then the vector-Jacobian product for a random upstream gradient v: backward(v) against vᵀ·J.
// An entry passes when |analytic - numeric| <= atol + rtol·|numeric| (PyTorch's allclose).
//
// Fast mode compares, per input, one random projection vᵀ·J·u instead: one backward pass and two forward
// passes per input, for inputs too big for the full Jacobian (PyTorch's fast_mode).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/autograd/variable.h"

namespace minigrad {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // absolute tolerance
  double rtol = 1e-3;  // relative tolerance
  bool fast_mode = false;
  uint64_t seed = 0;  // for the random upstream gradient and the projections
  // gradcheck also checks forward mode (forward_gradcheck), as PyTorch's check_forward_ad.
  bool check_forward_ad = false;
};

struct GradcheckResult {
  // Which check: "gradcheck", or for gradgradcheck the stage that decided the result ("gradgradcheck",
  // "gradgradcheck (first derivatives)", ...).
  std::string check = "gradcheck";
  bool passed = true;
  int64_t comparisons = 0;
  double max_abs_error = 0;  // max |analytic - numeric|
  // max |analytic - numeric| / max(|analytic|, |numeric|) over the entries larger than atol (below it a
  // relative error says nothing: 1e-13 against 0 is "100%")
  double max_rel_error = 0;
  // The comparison closest to failing (or the worst failure): where, and both values.
  std::string worst_where;
  double worst_analytic = 0, worst_numeric = 0;
  double worst_ratio = 0;  // |analytic - numeric| / (atol + rtol·|numeric|); above 1 fails
  // forward_gradcheck: how many of the function's ops had no tangent rule and took their tangent through
  // their backward (autograd/forward_ad.h). 0 when every op has a rule.
  int64_t tangents_through_backward = 0;

  // One line saying whether it passed; on failure, the worst entry with both values.
  std::string report() const;
};

using GradcheckFunction = std::function<Variable(const std::vector<Variable>&)>;

// Checks the gradients of f with respect to every input that requires grad. Those inputs must be float64
// leaves that do not overlap themselves in memory (no expand()ed inputs). f may use them through other
// handles too, so a layer's parameters can be checked through the layer:
//   gradcheck([&](const std::vector<Variable>& in) { return linear(in[0]); },
//             {x, linear.weight, linear.bias});
// gradcheck restores every value it perturbs and every input's .grad.
GradcheckResult gradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                          const GradcheckOptions& options = {});

// Checks forward mode (autograd/forward_ad.h): J·v, for a random tangent v of the inputs that require
// grad, against central differences along v, (f(x + eps·v) - f(x - eps·v)) / (2·eps), entry by entry, and
// against reverse mode through the same Jacobian, ⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩ for a random u. The inputs carry
// the tangents themselves (no dual copies), so a layer's parameters are checked through the layer, as
// gradcheck does. The same inputs and options as gradcheck.
GradcheckResult forward_gradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                                  const GradcheckOptions& options = {});

// Checks first and second derivatives. First gradcheck(f) itself (a second derivative of a wrong first
// derivative proves nothing); then that an ordinary backward and one with create_graph give the same
// gradients; then, as torch.autograd.gradgradcheck, gradcheck (same options) of the function
//   (inputs, v) -> the gradients grad(f(inputs), inputs, v, create_graph), flattened and concatenated,
// where v is a random upstream gradient that is itself an input. With check_forward_ad, forward_gradcheck
// of f and of that function too: the tangents of the gradient's own ops (forward over reverse, as
// PyTorch's check_fwd_over_rev). The result's `check` and report() say which stage decided it.
GradcheckResult gradgradcheck(const GradcheckFunction& f, const std::vector<Variable>& inputs,
                              const GradcheckOptions& options = {});

}  // namespace minigrad
