#include "minigrad/viz/graph_view.h"

namespace minigrad {

namespace {

int add_vertex(GraphView& view, GraphView::Vertex vertex) {
  view.vertices.push_back(std::move(vertex));
  return static_cast<int>(view.vertices.size()) - 1;
}

GraphView::Vertex leaf_vertex(const std::shared_ptr<VariableImpl>& leaf) {
  const bool named = leaf->extras && !leaf->extras->name.empty();
  return {.kind = GraphView::Kind::Leaf,
          .name = named ? leaf->extras->name : "leaf",
          .shape = leaf->data.shape(),
          .dtype = leaf->data.dtype(),
          .leaf = leaf};
}

// The vertex of `leaf`, added the first time the walk meets it.
int leaf_vertex_id(GraphView& view, const std::shared_ptr<VariableImpl>& leaf) {
  const auto [it, added] = view.vertex_of_leaf.try_emplace(leaf.get(), 0);
  if (added) it->second = add_vertex(view, leaf_vertex(leaf));
  return it->second;
}

}  // namespace

GraphView view_graph(const Variable& root) {
  if (!root.defined()) throw ValueError("view_graph", "the Variable is undefined");
  GraphView view;
  if (root.is_leaf()) {
    if (root.requires_grad()) {
      leaf_vertex_id(view, root.impl());
    } else {
      add_vertex(view, {.kind = GraphView::Kind::Constant,
                        .name = "constant",
                        .shape = root.shape(),
                        .dtype = root.dtype()});
    }
    return view;
  }
  // The vertex of `node`, added (and pushed on the stack, to visit its inputs) the first time it is met.
  std::vector<const Node*> stack;
  auto op_vertex_id = [&](const Node& node) {
    const auto [it, added] = view.vertex_of_node.try_emplace(&node, 0);
    if (added) {
      it->second = add_vertex(view, {.kind = GraphView::Kind::Op,
                                     .name = node.op,
                                     .shape = node.output_shape,
                                     .dtype = node.output_dtype,
                                     .node = &node});
      stack.push_back(&node);
    }
    return it->second;
  };
  op_vertex_id(*root.grad_fn());
  while (!stack.empty()) {
    const Node& node = *stack.back();
    stack.pop_back();
    const int consumer = view.vertex_of_node.at(&node);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const Edge& edge = node.inputs[i];
      int from;
      if (edge.node) {
        from = op_vertex_id(*edge.node);
      } else if (edge.leaf) {
        from = leaf_vertex_id(view, edge.leaf);
      } else {
        from = add_vertex(view, {.kind = GraphView::Kind::Constant,
                                 .name = "constant",
                                 .shape = edge.shape,
                                 .dtype = edge.dtype});
      }
      view.edges.push_back({.from = from, .to = consumer, .input = i});
    }
  }
  return view;
}

}  // namespace minigrad
