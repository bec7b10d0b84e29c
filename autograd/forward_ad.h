// Forward-mode automatic differentiation: a tangent carried beside each value through the forward pass,
// as PyTorch's torch.autograd.forward_ad.
//
//   forward_ad::DualLevel level;                          // tangents live while it does
//   Variable x = forward_ad::make_dual(primal, tangent);  // x = primal + ε·tangent, ε² = 0
//   Variable y = f(x);                                     // every op also carries the tangent
//   auto [value, jv] = forward_ad::unpack_dual(y);         // f(primal) and J·tangent
//
// A dual number a + ε·b, with ε² = 0, carries a derivative through arithmetic by itself:
// (a + εb)(c + εd) = ac + ε(ad + bc), the product rule. In general an op y = f(x₁, ..., xₙ) gives its
// output the tangent ẏ = Σᵢ (∂f/∂xᵢ)·ẋᵢ, one Jacobian-vector product per op, in the order the ops run.
// Forward mode needs nothing kept for a later pass, so J·v can cost a small multiple of the forward pass
// whatever the number of outputs. Reverse mode instead gives uᵀ·J, a row of J per pass.
//
// How minigrad computes each op's tangent: by the op's tangent rule, written beside its forward and its
// backward and handed to record() (autograd/graph.h) with them:
//
//   // (eˣ)˙ = ẋ·eˣ = ẋ·y
//   [](const Tangents& t) { return t[0] * t.output(); }
//
// record() calls it right after it records an op whose inputs carry tangents, with grad mode off (the
// rule's ops just compute). Every op of minigrad has one. An op without a rule (your own, say) gets its
// tangent from the derivative it already has, its backward function: backward maps u to uᵀJ, which is linear
// in u, and the gradient of ⟨uᵀJ, ẋ⟩ with respect to u is J·ẋ. record() calls that backward on u (zeros that
// require grad) and differentiates it along the inputs' tangents: two backward passes through one op where a
// rule is one pass. It is exact, and it covers every op, since every op's backward is differentiable
// (gradgradcheck checks each); forward_gradcheck counts the ops that took this route, and the gradient-check
// report shows the count.
//
// Differences from PyTorch, because record() computes tangents where it records (the route through the
// backward needs the recorded op):
//   - a dual requires grad, and so does everything computed from it: ops record (and keep what their
//     backward needs) as for a backward pass, so memory grows with the computation as in reverse mode;
//   - tangents need grad mode on: an op inside a NoGradGuard whose input carries a tangent is an error,
//     not a value without tangent (a backward pass, which runs with grad mode off, carries none).
//   - a level belongs to the thread that made it (PyTorch's are global to the process), and the tangents
//     sit on the values: two threads must not give tangents to the same Variables at once.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <vector>

#include "minigrad/autograd/variable.h"

namespace minigrad::forward_ad {

// While a DualLevel is alive on this thread, ops propagate tangents. Its end forgets every tangent set
// while it lived (the Variables stay, without tangents). One level at a time, as in PyTorch.
class DualLevel {
 public:
  DualLevel();
  ~DualLevel();
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
};

// primal + ε·tangent: the primal's values (shared, not copied), carrying `tangent` (same shape and
// dtype). Gradients flow back to `primal` if it requires grad.
Variable make_dual(const Variable& primal, const Variable& tangent);

struct UnpackedDual {
  Variable primal;
  Variable tangent;  // undefined when the value carries none
};
// The value and its tangent: for y = f(make_dual(x, v)), f(x) and J·v.
UnpackedDual unpack_dual(const Variable& dual);

}  // namespace minigrad::forward_ad

namespace minigrad {

// The sum of the defined terms; undefined if none is.
Variable sum_of_terms(std::initializer_list<Variable> terms);

// What an op's tangent rule reads: the tangents of the op's inputs, in record()'s order, and the op's
// output y, for rules written with it ((eˣ)˙ = ẋ·y). A rule of several inputs writes its tangent as a sum
// of one term per input, and leaves out the term of an input that carries no tangent (a constant
// operand, say), which is zero:
//   // (a·b)˙ = ȧ·b + a·ḃ
//   [&](const Tangents& t) {
//     return t.sum({t.has(0) ? t[0] * b : Variable(), t.has(1) ? a * t[1] : Variable()});
//   }
class Tangents {
 public:
  Tangents(std::span<const Variable> inputs, std::vector<Variable> tangents, const Variable& output)
      : inputs_(inputs), tangents_(std::move(tangents)), output_(output) {
    for (const Variable& t : tangents_) carries_.push_back(t.defined());
  }
  // Whether input i carries a tangent.
  bool has(size_t input) const { return carries_[input]; }
  // Input i's tangent, its shape; zeros where it carries none.
  const Variable& operator[](size_t input) const;
  // Every input's tangent, zeros where one carries none.
  std::vector<Variable> all() const;
  const Variable& output() const { return output_; }
  // The sum of the defined terms (sum_of_terms), as the output's shape (a term may broadcast to it); zeros
  // if none is defined.
  Variable sum(std::initializer_list<Variable> terms) const;

 private:
  std::span<const Variable> inputs_;
  mutable std::vector<Variable> tangents_;  // zeros filled in when first asked for
  std::vector<bool> carries_;
  const Variable& output_;
};

}  // namespace minigrad

namespace minigrad::detail {

// True while a DualLevel is alive on this thread: record() then computes tangents. One load per recorded
// op when false.
extern constinit thread_local bool dual_level_active;
// record()'s part in forward mode: gives `output`, just recorded by its node, the tangent of its inputs'
// tangents (none if no input has one), by the op's rule, or without one through its backward function.
using TangentRule = std::function<Variable(const Tangents&)>;
void add_tangent(Variable& output, std::span<const Variable> inputs, const TangentRule& rule);
void add_tangent_through_backward(Variable& output, std::span<const Variable> inputs);
// record()'s default when an op gives no tangent rule: the tangent comes through its backward.
struct NoTangentRule {};
inline void add_tangent(Variable& output, std::span<const Variable> inputs, NoTangentRule) {
  add_tangent_through_backward(output, inputs);
}
// How many ops have taken their tangent through their backward on this thread (forward_gradcheck reports
// the count for the function it checks).
extern constinit thread_local int64_t tangents_through_backward;
// unbind's part: gives `piece`, the slice at `index` along `dim` of `whole`, that slice of whole's tangent.
void add_part_tangent(const Variable& piece, const Variable& whole, int dim, int64_t index);
// record()'s check where it records nothing (grad mode off): an input with a tangent is an error.
void check_no_tangents(const char* op, std::span<const Variable> inputs);
// While alive and `pause` is true, ops compute no tangents: a backward pass that records nothing (grad mode
// off) differentiates, it does not carry tangents. With create_graph the backward's ops record, and carry
// the tangents of what they read: the tangent of a gradient.
class TangentsPaused {
 public:
  explicit TangentsPaused(bool pause) : paused_(pause && dual_level_active) {
    if (paused_) dual_level_active = false;
  }
  ~TangentsPaused() {
    if (paused_) dual_level_active = true;
  }
  TangentsPaused(const TangentsPaused&) = delete;
  TangentsPaused& operator=(const TangentsPaused&) = delete;

 private:
  bool paused_;
};
// The tangent a value carries, undefined if none.
Variable tangent_of(const Variable& v);
// Gives `v` the tangent `t` (registering it with the level, which forgets it at its end).
void set_tangent(const Variable& v, const Variable& t);
// Gives `y`, the output of `node` made again by SavedTensor::output_variable() for a backward function
// under create_graph, the tangent the output had: the tangent of a gradient that reads y needs it. The
// level keeps each node's output tangent while the node lives (a thread's own: a graph recorded on one
// thread and differentiated on another has none there).
void add_output_tangent(const Variable& y, const Node& node);

}  // namespace minigrad::detail
