// Forward mode: the level that owns the tangents, dual values, an op's tangent by its rule, and, for an
// op without one, its tangent from its backward function (the header says why that gives J·ẋ).
#include "minigrad/autograd/forward_ad.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/grad.h"
#include "minigrad/autograd/graph.h"

namespace minigrad {

namespace detail {

constinit thread_local bool dual_level_active = false;

namespace {
// The values given a tangent while this thread's level lives: its end takes their tangents away.
thread_local std::vector<std::weak_ptr<VariableImpl>> values_with_tangents;
// The tangents of the nodes' whole outputs, by node, for add_output_tangent; an entry counts while its
// node lives. Entries of nodes that died are dropped whenever the map has doubled, so that a long level
// holds about what its live graph needs.
struct OutputTangent {
  std::weak_ptr<Node> node;
  std::shared_ptr<VariableImpl> tangent;
};
thread_local std::unordered_map<const Node*, OutputTangent> output_tangents;
thread_local size_t output_tangents_pruned_at = 64;

void remember_output_tangent(const std::shared_ptr<Node>& node, const Variable& t) {
  if (output_tangents.size() >= 2 * output_tangents_pruned_at) {
    std::erase_if(output_tangents, [](const auto& entry) { return entry.second.node.expired(); });
    output_tangents_pruned_at = std::max<size_t>(64, output_tangents.size());
  }
  output_tangents[node.get()] = {node, t.impl()};
}
}  // namespace

Variable tangent_of(const Variable& v) {
  const VariableImpl::Extras* extras = v.impl()->extras.get();
  return extras && extras->tangent ? Variable(extras->tangent) : Variable();
}

void set_tangent(const Variable& v, const Variable& t) {
  v.impl()->extras_to_write().tangent = t.impl();
  values_with_tangents.push_back(v.impl());
  if (const std::shared_ptr<Node>& node = v.impl()->grad_fn; node && v.impl()->part.whole())
    remember_output_tangent(node, t);
}

void add_output_tangent(const Variable& y, const Node& node) {
  const auto found = output_tangents.find(&node);
  if (found != output_tangents.end() && found->second.node.lock().get() == &node)
    set_tangent(y, Variable(found->second.tangent));
}

void add_part_tangent(const Variable& piece, const Variable& whole, int dim, int64_t index) {
  if (const Variable t = tangent_of(whole); t.defined()) set_tangent(piece, t.data().select(dim, index));
}

void check_no_tangents(const char* op, std::span<const Variable> inputs) {
  for (const Variable& x : inputs) {
    if (tangent_of(x).defined()) {
      throw Error(op,
                  "an input carries a tangent, but the op records nothing (grad mode is off?): forward "
                  "mode computes tangents where the ops record, so it needs grad mode");
    }
  }
}

namespace {
// The inputs' tangents, undefined where an input carries none; empty if none carries one.
std::vector<Variable> tangents_of(std::span<const Variable> inputs) {
  std::vector<Variable> tangents;
  bool any = false;
  for (const Variable& x : inputs) {
    tangents.push_back(tangent_of(x));
    any |= tangents.back().defined();
  }
  if (!any) tangents.clear();
  return tangents;
}
}  // namespace

void add_tangent(Variable& output, std::span<const Variable> inputs, const TangentRule& rule) {
  std::vector<Variable> tangents = tangents_of(inputs);
  if (tangents.empty()) return;
  // The rule's ops just compute: grad mode off, and no tangents of their own.
  dual_level_active = false;
  struct Resume {
    ~Resume() { dual_level_active = true; }
  } resume;
  const NoGradGuard just_compute;
  const Variable tangent = rule(Tangents(inputs, std::move(tangents), output));
  if (!tangent.defined())
    throw Error(output.grad_fn()->op, "its tangent rule returned an undefined Variable");
  if (tangent.shape() != output.shape() || tangent.dtype() != output.dtype()) {
    throw Error(output.grad_fn()->op, "its tangent rule gave a " + std::string(dtype_name(tangent.dtype())) +
                                          " tangent of shape " + tangent.shape().str() + " for a " +
                                          std::string(dtype_name(output.dtype())) + " output of shape " +
                                          output.shape().str());
  }
  set_tangent(output, tangent);
}

constinit thread_local int64_t tangents_through_backward = 0;

void add_tangent_through_backward(Variable& output, std::span<const Variable> inputs) {
  const std::vector<Variable> tangents = tangents_of(inputs);
  if (tangents.empty()) return;
  ++tangents_through_backward;
  // The op's backward on u, recorded: uᵀJᵢ for each input i, linear in u. Its gradient with respect to u
  // along the inputs' tangents is Σᵢ Jᵢ·ẋᵢ. The ops of these two passes carry no tangents of their own.
  // The backward's saved values are constants here: its recording reaches u alone, not the forward graph.
  dual_level_active = false;
  saved_values_as_constants = true;
  struct Resume {
    ~Resume() {
      dual_level_active = true;
      saved_values_as_constants = false;
    }
  } resume;
  const GradModeGuard record_it(true);
  const Node& node = *output.grad_fn();
  const Variable u(Tensor::zeros(output.shape(), output.dtype()), true);
  const VariableGrads uJ = node.backward(u, NeedsGrad(node));
  std::vector<Variable> reached, along;
  for (size_t i = 0; i < uJ.size(); ++i) {
    if (uJ[i].defined() && uJ[i].requires_grad() && tangents[i].defined()) {
      reached.push_back(uJ[i]);
      along.push_back(tangents[i]);
    }
  }
  Variable tangent;
  if (!reached.empty()) tangent = grad(reached, {u}, along, {.retain_graph = true, .allow_unused = true})[0];
  if (!tangent.defined()) tangent = Variable(Tensor::zeros(output.shape(), output.dtype()));
  set_tangent(output, tangent.detach());
}

}  // namespace detail

const Variable& Tangents::operator[](size_t input) const {
  Variable& t = tangents_[input];
  if (!t.defined()) t = Variable(Tensor::zeros(inputs_[input].shape(), inputs_[input].dtype()));
  return t;
}

std::vector<Variable> Tangents::all() const {
  std::vector<Variable> every;
  for (size_t i = 0; i < tangents_.size(); ++i) every.push_back((*this)[i]);
  return every;
}

Variable sum_of_terms(std::initializer_list<Variable> terms) {
  Variable total;
  for (const Variable& term : terms) {
    if (term.defined()) total = total.defined() ? total + term : term;
  }
  return total;
}

Variable Tangents::sum(std::initializer_list<Variable> terms) const {
  const Variable total = sum_of_terms(terms);
  if (!total.defined()) return Variable(Tensor::zeros(output_.shape(), output_.dtype()));
  return total.shape() == output_.shape() ? total : expand(total, output_.shape());
}

namespace forward_ad {

DualLevel::DualLevel() {
  if (detail::dual_level_active) {
    throw Error("forward_ad::DualLevel", "a level is already alive on this thread: one at a time");
  }
  detail::dual_level_active = true;
}

DualLevel::~DualLevel() {
  for (const std::weak_ptr<VariableImpl>& value : detail::values_with_tangents) {
    const std::shared_ptr<VariableImpl> impl = value.lock();
    if (impl && impl->extras) impl->extras->tangent.reset();
  }
  detail::values_with_tangents.clear();
  detail::output_tangents.clear();
  detail::output_tangents_pruned_at = 64;
  detail::dual_level_active = false;
}

Variable make_dual(const Variable& primal, const Variable& tangent) {
  if (!detail::dual_level_active) {
    throw Error("make_dual", "needs a forward_ad::DualLevel alive on this thread");
  }
  if (!primal.defined() || !tangent.defined())
    throw ValueError("make_dual", "the primal or the tangent is undefined");
  if (!is_floating(primal.dtype())) {
    throw DTypeError("make_dual", "the primal is " + std::string(dtype_name(primal.dtype())) +
                                      ": tangents need float32 or float64");
  }
  if (primal.dtype() != tangent.dtype()) {
    throw DTypeError("make_dual", "the tangent is " + std::string(dtype_name(tangent.dtype())) +
                                      " but the primal is " + std::string(dtype_name(primal.dtype())));
  }
  if (primal.shape() != tangent.shape()) {
    throw ShapeError("make_dual", "the tangent has shape " + tangent.shape().str() + " but the primal " +
                                      primal.shape().str());
  }
  // A value of its own, so that the tangent is this dual's and not the primal's: reshape to its own
  // shape (an identity op) when the primal requires grad, so that gradients flow back to it, else a leaf
  // that requires grad. Recorded even inside a NoGradGuard: a dual requires grad.
  const GradModeGuard record_it(true);
  const Variable dual =
      primal.requires_grad() ? reshape(primal, primal.shape()) : Variable(primal.data(), true);
  detail::set_tangent(dual, tangent.detach());
  return dual;
}

UnpackedDual unpack_dual(const Variable& dual) {
  if (!dual.defined()) throw ValueError("unpack_dual", "the Variable is undefined");
  return {dual, detail::tangent_of(dual)};
}

}  // namespace forward_ad

}  // namespace minigrad
