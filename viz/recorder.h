// Recording a forward pass for the backward page (viz/page.h): what each recorded op computed and what its
// backward function saved, which the graph itself does not keep (an edge to a node holds no tensor, and a
// backward function's captures cannot be listed).
//
//   RecordGraph recording;  // this thread's ops are recorded while it lives
//   Variable loss = mean(relu(matmul(x, w)));
//   write_html(loss, "backward.html", {.recording = &recording});
//
// It keeps summaries (tensor/summary.h: a small tensor in full, a large one's mean, min, max and first
// entries), not the tensors. It is a ForwardObserver (autograd/observer.h): with no observer alive, an op
// costs one test of a thread-local pointer.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "minigrad/autograd/observer.h"
#include "minigrad/tensor/summary.h"

namespace minigrad {

class RecordGraph : private ForwardObserver {
 public:
  RecordGraph() : watch_(*this) {}

  // One recorded op.
  struct Op {
    // Keeps the node's memory (make_shared allocates node and count together), so that no node recorded
    // later can get its address while this entry lives.
    std::weak_ptr<const Node> node;
    TensorSummary output;
    std::vector<TensorSummary> saved;  // the tensors its backward function saved, in the order it saved them
    // Per input: its value if it is a constant (an input that needs no gradient, whose edge holds nothing).
    std::vector<std::optional<TensorSummary>> constants;
  };
  // What was recorded for `node`, or null if this recording did not see it.
  const Op* find(const Node& node) const;

 private:
  void on_saved(const Tensor& tensor) override;
  void on_recorded(const std::shared_ptr<Node>& node, const Tensor& output,
                   std::span<const Variable> inputs) override;
  void on_not_recorded() override;

  std::unordered_map<const Node*, Op> ops_;
  std::vector<TensorSummary> saved_;  // saved since the last op: the next op's
  ObserveForward watch_;              // set last, after the rest exists; unset first
};

}  // namespace minigrad
