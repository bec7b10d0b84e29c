// Derivatives of a C++ function, as PyTorch's torch.autograd.functional gives them: vector-Jacobian and
// Jacobian-vector products, whole Jacobians and Hessians, and Hessian-vector products.
//
//   auto f = [](const Variable& x) { return sum(x * x * x); };  // R^n -> R
//   Variable H = functional::hessian(f, x);                      // (n, n): diag(6x)
//   auto [y, Hv] = functional::hvp(f, x, v);                     // f(x) and H·v, without forming H
//
// Each transform calls the function on its inputs once (jacobian and hessian too) and differentiates
// what it recorded with grad() (autograd/grad.h). A Jacobian-vector product J·v is the derivative of the
// vector-Jacobian product uᵀJ with respect to u, along v: uᵀJ is linear in u, so a second backward pass
// through the first one gives J·v. That is PyTorch's "double-backward trick": it needs every op's
// backward to be differentiable, which gradcheck's second order checks (tests/gradcheck/).
//
// As in PyTorch:
//   - the inputs are used by value: the function sees copies that require grad, and the results do not
//     reach the caller's graph, unless create_graph, where they keep a graph to the inputs (to
//     differentiate the results again) and the function's outputs do too;
//   - an output that does not depend on an input has a zero derivative with respect to it, or, with
//     strict, an error naming both;
//   - jacobian's block for output i and input j has the shape output_i.shape + input_j.shape; hessian's
//     block for inputs i and j has input_i.shape + input_j.shape.
#pragma once

#include <functional>
#include <vector>

#include "minigrad/autograd/variable.h"

namespace minigrad::functional {

// A function of several tensors with several results, and of one tensor with one result.
using Function = std::function<std::vector<Variable>(const std::vector<Variable>& inputs)>;
using UnaryFunction = std::function<Variable(const Variable& input)>;

// How jacobian() and hessian() build their matrix: a row at a time (one vjp per output element;
// PyTorch's default) or a column at a time (one jvp per input element). Few outputs favour rows, few
// inputs columns. How hvp() takes H·v: the jvp of the recorded gradient by a second backward pass
// (reverse over reverse, as PyTorch's torch.autograd.functional.hvp), or forward over reverse, the
// inputs carrying v as tangents through f and its gradient (forward_ad; as torch.func's).
enum class Mode { Reverse, Forward };

struct Options {
  // The results keep a graph to the inputs, so they can be differentiated again.
  bool create_graph = false;
  // An output that does not depend on an input is an error rather than a zero derivative.
  bool strict = false;
  // jacobian(), hessian() and hvp() only (above). Mode::Forward takes neither strict nor, for hvp,
  // create_graph (forward mode's tangents carry no graph); hvp's opens a forward_ad::DualLevel, so it
  // cannot run inside one.
  Mode mode = Mode::Reverse;
};

// The function's outputs at the inputs (for vhp and hvp, its one output), and the products: one per
// input for vjp, vhp and hvp, one per output for jvp. Read as auto [outputs, products] = vjp(...).
struct Products {
  std::vector<Variable> outputs;
  std::vector<Variable> products;
};
struct Product {
  Variable output;
  Variable product;
};

// vᵀ·J: the gradient of Σ_k v[k]·f(x)[k] with respect to each input; v[k] has output k's shape. v may be
// empty when every output has one element (then it is 1).
Products vjp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v = {},
             Options options = {});
Product vjp(const UnaryFunction& f, const Variable& input, const Variable& v = {}, Options options = {});

// J·v: the derivative of each output along the direction v (v[i] has input i's shape). v may be empty
// when every input has one element.
Products jvp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v = {},
             Options options = {});
Product jvp(const UnaryFunction& f, const Variable& input, const Variable& v = {}, Options options = {});

// d output_i / d input_j, at [i][j].
std::vector<std::vector<Variable>> jacobian(const Function& f, const std::vector<Variable>& inputs,
                                            Options options = {});
Variable jacobian(const UnaryFunction& f, const Variable& input, Options options = {});

// d² f / d input_i d input_j, at [i][j], for a function with one result of one element. `options.mode`
// is how the Jacobian of the gradient is built.
std::vector<std::vector<Variable>> hessian(const Function& f, const std::vector<Variable>& inputs,
                                           Options options = {});
Variable hessian(const UnaryFunction& f, const Variable& input, Options options = {});

// vᵀ·H and H·v for a function with one result of one element, without forming H: the vjp and the jvp
// of its gradient. For the twice continuously differentiable functions, H is symmetric and they agree.
Products vhp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options = {});
Product vhp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options = {});
Products hvp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options = {});
Product hvp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options = {});

}  // namespace minigrad::functional
