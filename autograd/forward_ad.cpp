// Forward mode: the level that owns the tangents, dual values, and the one computation of an op's
// tangent from its backward function (the header says why that gives J·ẋ).
#include "minigrad/autograd/forward_ad.h"

#include <memory>
#include <string>
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
}  // namespace

Variable tangent_of(const Variable& v) {
  const VariableImpl::Extras* extras = v.impl()->extras.get();
  return extras && extras->tangent ? Variable(extras->tangent) : Variable();
}

void set_tangent(const Variable& v, const Variable& t) {
  v.impl()->extras_to_write().tangent = t.impl();
  values_with_tangents.push_back(v.impl());
}

void add_part_tangent(const Variable& piece, const Variable& whole, int dim, int64_t index) {
  if (const Variable t = tangent_of(whole); t.defined()) set_tangent(piece, t.data().select(dim, index));
}

void check_no_tangents(const char* op, std::span<const Variable> inputs) {
  for (const Variable& x : inputs) {
    if (tangent_of(x).defined()) {
      throw Error(op,
                  "an input carries a tangent, but the op records nothing (grad mode is off?): forward "
                  "mode computes tangents through the ops' recorded derivatives, so it needs grad mode");
    }
  }
}

void add_tangent(Variable& output, std::span<const Variable> inputs) {
  std::vector<Variable> tangents;
  bool any = false;
  for (const Variable& x : inputs) {
    tangents.push_back(tangent_of(x));
    any |= tangents.back().defined();
  }
  if (!any) return;
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
