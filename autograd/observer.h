// Watching autograd at work, for a page, a test or a teaching tool: the forward pass as ops record it
// (ForwardObserver: what each op saved and computed), and the backward pass as the engine runs it
// (BackwardObserver: which node runs, the gradient it receives and the one it sends along each edge, and
// what reaches each leaf). The backward page (viz/page.h) uses both. One implements an observer and sets
// it for a scope:
//
//   struct Printer : BackwardObserver {
//     void on_node(const Node& node, const Variable& g) override { std::cout << node.op << "\n"; }
//   } printer;
//   {
//     ObserveBackward watch(printer);
//     loss.backward();  // prints mean, relu, matmul
//   }
//
// The values are the engine's own, as it computes them; with no observer set, a pass costs one test of a
// pointer (autograd/engine.cpp). A backward from a leaf itself runs no node and reports nothing. The engine
// may later add another consumer's share into a gradient it sent, in place: an observer that wants the
// value as sent keeps a handle on it (a Variable or Tensor copy, which makes the engine sum out of place)
// or copies what it needs at once.
//
// A ForwardObserver hears, for each op run while it is set, the tensors its backward function saved, then
// whether the op was recorded (its node, its output and inputs) or not (grad mode off, or no input requires
// grad: what it saved is dropped). With none set, an op costs one test of a thread-local pointer
// (autograd/graph.h); RecordGraph (viz/recorder.h) is the one the page uses.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "minigrad/autograd/graph.h"

namespace minigrad {

class BackwardObserver {
 public:
  virtual ~BackwardObserver() = default;
  // `node` is about to run its backward function on `grad_output`: the sum of what its consumers sent
  // (after any hooks on the Variable it computed).
  virtual void on_node(const Node& /*node*/, const Variable& /*grad_output*/) {}
  // `node` sent `grad` along its input edge `input` (node.inputs[input]): to the node that computed that
  // input, where it is added to what other consumers sent, or to a leaf.
  virtual void on_edge(const Node& /*node*/, size_t /*input*/, const Variable& /*grad*/) {}
  // `grad` reached `leaf` (after the leaf's hooks) and is about to be added into its gradient (or, for
  // grad(), handed to the caller). A leaf used twice gets two calls; its gradient is their sum.
  virtual void on_leaf(const VariableImpl& /*leaf*/, const Variable& /*grad*/) {}
};

// Makes `observer` watch this thread's backward passes while the guard lives; the previous one (if any)
// watches again after.
class ObserveBackward {
 public:
  explicit ObserveBackward(BackwardObserver& observer);
  ~ObserveBackward();
  ObserveBackward(const ObserveBackward&) = delete;
  ObserveBackward& operator=(const ObserveBackward&) = delete;

 private:
  BackwardObserver* previous_;
};

class ForwardObserver {
 public:
  virtual ~ForwardObserver() = default;
  // The op about to be recorded (or not) saved `tensor` for its backward function.
  virtual void on_saved(const Tensor& /*tensor*/) {}
  // The op was recorded as `node`: it computed `output` from `inputs`.
  virtual void on_recorded(const std::shared_ptr<Node>& /*node*/, const Tensor& /*output*/,
                           std::span<const Variable> /*inputs*/) {}
  // The op ran but was not recorded; the tensors it saved are dropped with its backward function.
  virtual void on_not_recorded() {}
};

// Makes `observer` watch this thread's forward passes while the guard lives; the previous one (if any)
// watches again after.
class ObserveForward {
 public:
  explicit ObserveForward(ForwardObserver& observer);
  ~ObserveForward();
  ObserveForward(const ObserveForward&) = delete;
  ObserveForward& operator=(const ObserveForward&) = delete;

 private:
  ForwardObserver* previous_;
};

namespace detail {
// This thread's backward observer, or null.
BackwardObserver* backward_observer();
}  // namespace detail

}  // namespace minigrad
