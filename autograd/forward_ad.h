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
// How minigrad computes each op's tangent: from the derivative the op already has, its backward function.
// backward maps u to uᵀJ, which is linear in u; the gradient of ⟨uᵀJ, ẋ⟩ with respect to u is J·ẋ. So
// record() (autograd/graph.h), right after it records an op whose inputs carry tangents, calls the op's
// backward on u (zeros that require grad) and differentiates that along the inputs' tangents: two
// backward passes through one op, where a tangent rule of its own would be one pass. It is exact, and it
// covers every op, since every op's backward is differentiable (gradgradcheck checks each).
//
// Differences from PyTorch, because tangents come through the recorded backward:
//   - a dual requires grad, and so does everything computed from it: ops record (and keep what their
//     backward needs) as for a backward pass, so memory grows with the computation as in reverse mode;
//   - tangents need grad mode on: an op inside a NoGradGuard whose input carries a tangent is an error,
//     not a value without tangent (a backward pass, which runs with grad mode off, carries none).
//   - a level belongs to the thread that made it (PyTorch's are global to the process), and the tangents
//     sit on the values: two threads must not give tangents to the same Variables at once.
#pragma once

#include <span>

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

namespace minigrad::detail {

// True while a DualLevel is alive on this thread: record() then computes tangents. One load per recorded
// op when false.
extern constinit thread_local bool dual_level_active;
// record()'s part in forward mode: gives `output`, just recorded by its node, the tangent of its inputs'
// tangents (none if no input has one).
void add_tangent(Variable& output, std::span<const Variable> inputs);
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

}  // namespace minigrad::detail
