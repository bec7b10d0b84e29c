// The function transforms: each records the function once and differentiates the recording with grad().
// vjp is one backward pass; jvp a backward pass through a backward pass (the header says why that gives
// J·v); jacobian a vjp per output element or a jvp per input element over one recording; hessian the
// Jacobian of the gradient; vhp and hvp the vjp and jvp of the gradient. hvp with Mode::Forward instead
// records f and its gradient once with the inputs carrying v as tangents (forward_ad): forward over
// reverse.
#include "minigrad/autograd/functional.h"

#include <string>
#include <utility>

#include "minigrad/autograd/forward_ad.h"
#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/grad.h"
#include "minigrad/autograd/grad_mode.h"

namespace minigrad::functional {

namespace {

// The inputs as the function sees them, each a value of its own (so that an input passed twice, or one
// computed from another, is differentiated on its own): with create_graph, an input that requires grad
// passes through reshape to its own shape, so that the results keep a graph to it (PyTorch's view_as);
// any other is a copy that requires grad (sharing its buffer), so that nothing reaches the caller's graph.
std::vector<Variable> differentiable_inputs(const char* op, const std::vector<Variable>& inputs,
                                            bool create_graph) {
  if (inputs.empty()) throw ValueError(op, "needs at least one input");
  const GradModeGuard record_them(true);  // even inside a NoGradGuard
  std::vector<Variable> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Variable& x = inputs[i];
    if (!x.defined()) throw ValueError(op, "input " + std::to_string(i) + " is undefined");
    if (!is_floating(x.dtype())) {
      throw DTypeError(op, "input " + std::to_string(i) + " is " + std::string(dtype_name(x.dtype())) +
                               ": derivatives need float32 or float64");
    }
    out.push_back(create_graph && x.requires_grad() ? reshape(x, x.shape()) : Variable(x.data(), true));
  }
  return out;
}

// f(inputs), recorded even under a NoGradGuard: the transforms differentiate it.
std::vector<Variable> call(const char* op, const Function& f, const std::vector<Variable>& inputs) {
  GradModeGuard record(true);
  std::vector<Variable> outputs = f(inputs);
  if (outputs.empty()) throw ValueError(op, "the function returned no outputs");
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].defined())
      throw ValueError(op, "the function's output " + std::to_string(k) + " is undefined");
  }
  return outputs;
}

// The directions v, one per `like` (the outputs for a vjp, the inputs for a jvp), each of its shape.
// Empty v means 1 for each, which only one-element `likes` allow.
std::vector<Variable> directions(const char* op, const std::vector<Variable>& v,
                                 const std::vector<Variable>& like, const char* what) {
  if (v.empty()) {
    std::vector<Variable> ones;
    for (size_t k = 0; k < like.size(); ++k) {
      if (like[k].numel() != 1) {
        throw ValueError(op, std::string("v is needed: ") + what + " " + std::to_string(k) + " has shape " +
                                 like[k].shape().str() + ", not one element");
      }
      ones.emplace_back(Tensor::ones(like[k].shape(), like[k].dtype()));
    }
    return ones;
  }
  if (v.size() != like.size()) {
    throw ValueError(
        op, std::to_string(v.size()) + " vectors v for " + std::to_string(like.size()) + " " + what + "s");
  }
  for (size_t k = 0; k < v.size(); ++k) {
    if (!v[k].defined()) throw ValueError(op, "v[" + std::to_string(k) + "] is undefined");
    if (v[k].shape() != like[k].shape()) {
      throw ShapeError(op, "v[" + std::to_string(k) + "] has shape " + v[k].shape().str() + " but " + what +
                               " " + std::to_string(k) + " has shape " + like[k].shape().str());
    }
  }
  return v;
}

// d(Σ_k seeds[k]·outputs[k]) / d inputs[i] over the outputs that depend on any input (the others take no
// part); undefined for an input that none of them reaches.
std::vector<Variable> reachable_gradients(const std::vector<Variable>& outputs,
                                          const std::vector<Variable>& inputs,
                                          const std::vector<Variable>& seeds, bool create_graph) {
  std::vector<Variable> connected, connected_seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].requires_grad()) {
      connected.push_back(outputs[k]);
      connected_seeds.push_back(seeds[k]);
    }
  }
  if (connected.empty()) return std::vector<Variable>(inputs.size());
  return grad(connected, inputs, connected_seeds,
              {.create_graph = create_graph, .retain_graph = true, .allow_unused = true});
}

// Each undefined derivative as zeros shaped like like[i] or, with strict, an error from `op` saying
// `missing` and i.
std::vector<Variable> zeros_where_undefined(std::vector<Variable> derivatives,
                                            const std::vector<Variable>& like, bool strict, const char* op,
                                            const char* missing) {
  for (size_t i = 0; i < derivatives.size(); ++i) {
    if (derivatives[i].defined()) continue;
    if (strict) throw ValueError(op, missing + std::to_string(i) + " (strict)");
    derivatives[i] = Variable(Tensor::zeros(like[i].shape(), like[i].dtype()));
  }
  return derivatives;
}

// d(Σ_k seeds[k]·outputs[k]) / d inputs[i], a zero tensor where an input does not reach any output (with
// strict, an error, as for an output that depends on no input).
std::vector<Variable> gradients(const char* op, const std::vector<Variable>& outputs,
                                const std::vector<Variable>& inputs, const std::vector<Variable>& seeds,
                                bool create_graph, bool strict) {
  for (size_t k = 0; strict && k < outputs.size(); ++k) {
    if (!outputs[k].requires_grad()) {
      throw ValueError(op, "output " + std::to_string(k) + " does not depend on the inputs (strict)");
    }
  }
  return zeros_where_undefined(reachable_gradients(outputs, inputs, seeds, create_graph), inputs, strict, op,
                               "no output depends on input ");
}

// The results as the caller gets them: with their graph for create_graph, detached otherwise.
std::vector<Variable> results(std::vector<Variable> values, bool create_graph) {
  if (!create_graph) {
    for (Variable& v : values) v = v.detach();
  }
  return values;
}

// A recording's Jacobian-vector products. u ↦ uᵀJ (one backward pass, recorded) is linear in u, so its
// gradient with respect to u along v, a second backward pass, is J·v; the first pass is kept for every v.
class Linearization {
 public:
  Linearization(const char* op, const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                bool strict)
      : op_(op), outputs_(outputs), strict_(strict) {
    for (const Variable& y : outputs) us_.emplace_back(Tensor::zeros(y.shape(), y.dtype()), true);
    uJ_ = gradients(op, outputs, inputs, us_, /*create_graph=*/true, strict);
  }

  // J·v for v[i] shaped like input i: one product per output.
  std::vector<Variable> jvp(const std::vector<Variable>& v, bool create_graph) const {
    return zeros_where_undefined(reachable_gradients(uJ_, us_, v, create_graph), outputs_, strict_, op_,
                                 "no input reaches output ");
  }

 private:
  const char* op_;
  std::vector<Variable> outputs_;
  bool strict_;
  std::vector<Variable> us_;  // u, one per output: zeros that require grad
  std::vector<Variable> uJ_;  // uᵀJ, one per input, recorded
};

// output.shape + input.shape, the shape of a Jacobian block.
Shape block_shape(const char* op, const Shape& output, const Shape& input) {
  if (output.rank() + input.rank() > Shape::kMaxRank) {
    throw ShapeError(op, "a block of output shape " + output.str() + " by input shape " + input.str() +
                             " would have " + std::to_string(output.rank() + input.rank()) +
                             " dimensions; tensors have at most " + std::to_string(Shape::kMaxRank));
  }
  Shape shape = output;
  for (int64_t d : input) shape.push_back(d);
  return shape;
}

// Element `index` of a tensor of `shape`, 1, and the rest 0.
Variable one_hot(const Shape& shape, DType dtype, int64_t index) {
  const Tensor t = Tensor::zeros({shape.numel()}, dtype);
  t.select(0, index).fill_(1);
  return Variable(t.reshape(shape));
}

// A Jacobian block from its rows (flattened gradients of each output element, along dim 0) or its
// columns (flattened derivatives along each input element, along dim 1).
Variable assemble(const char* op, const std::vector<Variable>& pieces, int64_t dim, const Shape& output,
                  const Shape& input, DType dtype) {
  const Shape shape = block_shape(op, output, input);
  if (pieces.empty()) return Variable(Tensor::zeros(shape, dtype));  // an empty output or input
  return reshape(stack(pieces, dim), shape);
}

std::vector<std::vector<Variable>> jacobian_of_recording(const char* op, const std::vector<Variable>& outputs,
                                                         const std::vector<Variable>& inputs,
                                                         const Options& options) {
  const GradModeGuard assemble_with_graph(options.create_graph);  // the blocks' stack and reshape
  std::vector<std::vector<Variable>> blocks(outputs.size(), std::vector<Variable>(inputs.size()));
  if (options.mode == Mode::Reverse) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::vector<std::vector<Variable>> rows(inputs.size());  // rows[i]: d output_k[e] / d input_i, flat
      for (int64_t e = 0; e < outputs[k].numel(); ++e) {
        const std::vector<Variable> g =
            gradients(op, {outputs[k]}, inputs, {one_hot(outputs[k].shape(), outputs[k].dtype(), e)},
                      options.create_graph, options.strict);
        for (size_t i = 0; i < inputs.size(); ++i) rows[i].push_back(reshape(g[i], {-1}));
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        blocks[k][i] = assemble(op, rows[i], 0, outputs[k].shape(), inputs[i].shape(), inputs[i].dtype());
      }
    }
    return blocks;
  }
  if (options.strict) throw ValueError(op, "strict is not supported with Mode::Forward (as in PyTorch)");
  const Linearization linear(op, outputs, inputs, options.strict);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::vector<Variable>> columns(outputs.size());  // columns[k]: d output_k / d input_i[e]
    for (int64_t e = 0; e < inputs[i].numel(); ++e) {
      std::vector<Variable> v;
      for (size_t j = 0; j < inputs.size(); ++j) {
        v.push_back(j == i ? one_hot(inputs[j].shape(), inputs[j].dtype(), e)
                           : Variable(Tensor::zeros(inputs[j].shape(), inputs[j].dtype())));
      }
      const std::vector<Variable> jv = linear.jvp(v, options.create_graph);
      for (size_t k = 0; k < outputs.size(); ++k) columns[k].push_back(reshape(jv[k], {-1}));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      blocks[k][i] = assemble(op, columns[k], 1, outputs[k].shape(), inputs[i].shape(), outputs[k].dtype());
    }
  }
  return blocks;
}

// f's one output of one element, and its gradient with respect to each input, recorded so that it can be
// differentiated again.
struct ValueAndGradient {
  Variable value;
  std::vector<Variable> gradient;
};
ValueAndGradient value_and_gradient(const char* op, const Function& f, const std::vector<Variable>& inputs,
                                    bool strict) {
  const std::vector<Variable> outputs = call(op, f, inputs);
  if (outputs.size() != 1 || outputs[0].numel() != 1) {
    throw ValueError(op, "the function must return one output of one element, not " +
                             std::to_string(outputs.size()) + " of shape " + outputs[0].shape().str() +
                             (outputs.size() > 1 ? ", ..." : ""));
  }
  return {outputs[0],
          gradients(op, outputs, inputs, {Variable(Tensor::ones(outputs[0].shape(), outputs[0].dtype()))},
                    /*create_graph=*/true, strict)};
}

// Which side of H the vector multiplies: vᵀ·H (vhp, the vjp of f's recorded gradient along v) or H·v
// (hvp, its jvp).
enum class Side { Left, Right };
Products hessian_product(const char* op, Side side, const Function& f, const std::vector<Variable>& inputs,
                         const std::vector<Variable>& v, const Options& options) {
  const std::vector<Variable> xs = differentiable_inputs(op, inputs, options.create_graph);
  const std::vector<Variable> along = directions(op, v, xs, "input");
  const ValueAndGradient g = value_and_gradient(op, f, xs, options.strict);
  std::vector<Variable> products =
      side == Side::Left ? gradients(op, g.gradient, xs, along, options.create_graph, options.strict)
                         : Linearization(op, g.gradient, xs, options.strict).jvp(along, options.create_graph);
  return {results({g.value}, options.create_graph), results(std::move(products), options.create_graph)};
}

Function as_function(const UnaryFunction& f) {
  return [f](const std::vector<Variable>& inputs) { return std::vector<Variable>{f(inputs[0])}; };
}

Product first(Products p) {
  return {std::move(p.outputs[0]), std::move(p.products[0])};
}

std::vector<Variable> one_or_none(const Variable& v) {
  return v.defined() ? std::vector<Variable>{v} : std::vector<Variable>{};
}

}  // namespace

Products vjp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options) {
  const std::vector<Variable> xs = differentiable_inputs("vjp", inputs, options.create_graph);
  const std::vector<Variable> ys = call("vjp", f, xs);
  const std::vector<Variable> seeds = directions("vjp", v, ys, "output");
  std::vector<Variable> products = gradients("vjp", ys, xs, seeds, options.create_graph, options.strict);
  return {results(ys, options.create_graph), results(std::move(products), options.create_graph)};
}

Products jvp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options) {
  const std::vector<Variable> xs = differentiable_inputs("jvp", inputs, options.create_graph);
  const std::vector<Variable> tangents = directions("jvp", v, xs, "input");
  const std::vector<Variable> ys = call("jvp", f, xs);
  std::vector<Variable> products =
      Linearization("jvp", ys, xs, options.strict).jvp(tangents, options.create_graph);
  return {results(ys, options.create_graph), results(std::move(products), options.create_graph)};
}

std::vector<std::vector<Variable>> jacobian(const Function& f, const std::vector<Variable>& inputs,
                                            Options options) {
  const std::vector<Variable> xs = differentiable_inputs("jacobian", inputs, options.create_graph);
  const std::vector<Variable> ys = call("jacobian", f, xs);
  std::vector<std::vector<Variable>> blocks = jacobian_of_recording("jacobian", ys, xs, options);
  for (std::vector<Variable>& row : blocks) row = results(std::move(row), options.create_graph);
  return blocks;
}

std::vector<std::vector<Variable>> hessian(const Function& f, const std::vector<Variable>& inputs,
                                           Options options) {
  const std::vector<Variable> xs = differentiable_inputs("hessian", inputs, options.create_graph);
  const std::vector<Variable> gradient = value_and_gradient("hessian", f, xs, options.strict).gradient;
  std::vector<std::vector<Variable>> blocks = jacobian_of_recording("hessian", gradient, xs, options);
  for (std::vector<Variable>& row : blocks) row = results(std::move(row), options.create_graph);
  return blocks;
}

Products vhp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options) {
  return hessian_product("vhp", Side::Left, f, inputs, v, options);
}

Products hvp(const Function& f, const std::vector<Variable>& inputs, const std::vector<Variable>& v,
             Options options) {
  if (options.mode == Mode::Reverse) return hessian_product("hvp", Side::Right, f, inputs, v, options);
  // Forward over reverse: the inputs carry v as tangents, and so, through its recorded ops, does f's
  // gradient; its tangent is H·v.
  constexpr const char* op = "hvp";
  if (options.strict) throw ValueError(op, "strict is not supported with Mode::Forward (as in PyTorch)");
  if (options.create_graph) {
    throw ValueError(op,
                     "create_graph is not supported with Mode::Forward: forward mode's tangents carry no "
                     "graph");
  }
  const std::vector<Variable> xs = differentiable_inputs(op, inputs, /*create_graph=*/false);
  const std::vector<Variable> along = directions(op, v, xs, "input");
  const forward_ad::DualLevel level;
  std::vector<Variable> duals;
  for (size_t i = 0; i < xs.size(); ++i) duals.push_back(forward_ad::make_dual(xs[i], along[i]));
  const ValueAndGradient g = value_and_gradient(op, f, duals, /*strict=*/false);
  std::vector<Variable> products;
  for (size_t i = 0; i < g.gradient.size(); ++i) {
    const Variable t = g.gradient[i].defined() ? forward_ad::unpack_dual(g.gradient[i]).tangent : Variable();
    products.push_back(t.defined() ? t : Variable(Tensor::zeros(xs[i].shape(), xs[i].dtype())));
  }
  return {results({g.value}, false), results(std::move(products), false)};
}

Product vjp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options) {
  return first(vjp(as_function(f), {input}, one_or_none(v), options));
}

Product jvp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options) {
  return first(jvp(as_function(f), {input}, one_or_none(v), options));
}

Variable jacobian(const UnaryFunction& f, const Variable& input, Options options) {
  return jacobian(as_function(f), {input}, options)[0][0];
}

Variable hessian(const UnaryFunction& f, const Variable& input, Options options) {
  return hessian(as_function(f), {input}, options)[0][0];
}

Product vhp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options) {
  return first(vhp(as_function(f), {input}, {v}, options));
}

Product hvp(const UnaryFunction& f, const Variable& input, const Variable& v, Options options) {
  return first(hvp(as_function(f), {input}, {v}, options));
}

}  // namespace minigrad::functional
