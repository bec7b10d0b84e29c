#include "minigrad/autograd/graph_recorder.h"

namespace minigrad {

constinit thread_local RecordGraph* detail::graph_recording = nullptr;

RecordGraph::RecordGraph() : previous_(detail::graph_recording) {
  detail::graph_recording = this;
}

RecordGraph::~RecordGraph() {
  detail::graph_recording = previous_;
}

const RecordGraph::Op* RecordGraph::find(const Node& node) const {
  const auto it = ops_.find(&node);
  return it == ops_.end() ? nullptr : &it->second;
}

namespace detail {

void record_saved(const SavedTensor& saved) {
  graph_recording->saved_.push_back(summarize(saved.get()));
}

void record_op(const std::shared_ptr<Node>& node, const Tensor& output, std::span<const Variable> inputs) {
  RecordGraph& recording = *graph_recording;
  RecordGraph::Op op{
      .node = node, .output = summarize(output), .saved = std::move(recording.saved_), .constants = {}};
  recording.saved_.clear();
  for (const Variable& input : inputs) {
    op.constants.push_back(input.requires_grad() ? std::nullopt : std::optional(summarize(input.data())));
  }
  recording.ops_.insert_or_assign(node.get(), std::move(op));
}

void drop_saved() {
  graph_recording->saved_.clear();
}

}  // namespace detail

}  // namespace minigrad
