#include "minigrad/viz/recorder.h"

namespace minigrad {

const RecordGraph::Op* RecordGraph::find(const Node& node) const {
  const auto it = ops_.find(&node);
  return it == ops_.end() ? nullptr : &it->second;
}

void RecordGraph::on_saved(const Tensor& tensor) {
  saved_.push_back(summarize(tensor));
}

void RecordGraph::on_recorded(const std::shared_ptr<Node>& node, const Tensor& output,
                              std::span<const Variable> inputs) {
  Op op{.node = node, .output = summarize(output), .saved = std::move(saved_), .constants = {}};
  saved_.clear();
  for (const Variable& input : inputs) {
    op.constants.push_back(input.requires_grad() ? std::nullopt : std::optional(summarize(input.data())));
  }
  ops_.insert_or_assign(node.get(), std::move(op));
}

void RecordGraph::on_not_recorded() {
  saved_.clear();
}

}  // namespace minigrad
