#include "minigrad/autograd/graphviz.h"

#include <sstream>
#include <unordered_map>

#include "minigrad/tensor/file_io.h"

namespace minigrad {

std::string to_dot(const Variable& root) {
  if (!root.defined()) throw ValueError("to_dot", "the Variable is undefined");
  std::ostringstream out;
  out << "digraph minigrad {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::unordered_map<const void*, std::string> ids;  // node or leaf -> DOT id
  auto leaf_id = [&](const VariableImpl& leaf) {
    auto [it, added] = ids.try_emplace(&leaf, "leaf" + std::to_string(ids.size()));
    if (added) {
      out << "  " << it->second << " [shape=ellipse, style=filled, fillcolor=\"#cfe2ff\", label=\""
          << (leaf.extras && !leaf.extras->name.empty() ? leaf.extras->name : "leaf") << "\\n"
          << describe(leaf.data.shape(), leaf.data.dtype()) << "\\nrequires_grad\"];\n";
    }
    return it->second;
  };

  if (root.is_leaf()) {
    if (root.requires_grad()) {
      leaf_id(*root.impl());
    } else {
      out << "  const0 [shape=ellipse, style=dashed, label=\"constant\\n"
          << describe(root.shape(), root.dtype()) << "\"];\n";
    }
    out << "}\n";
    return out.str();
  }

  // Iterative walk over the op nodes, from the root down.
  std::vector<const Node*> stack{root.grad_fn().get()};
  ids[stack.back()] = "op0";
  int constants = 0;
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    const std::string& id = ids.at(node);
    out << "  " << id << " [shape=box, style=rounded, label=\"" << node->op << "\\n"
        << describe(node->output_shape, node->output_dtype) << (node->released() ? "\\n(freed)" : "")
        << "\"];\n";
    for (const Edge& edge : node->inputs) {
      std::string from;
      if (edge.node) {
        auto [it, added] = ids.try_emplace(edge.node.get(), "op" + std::to_string(ids.size()));
        if (added) stack.push_back(edge.node.get());
        from = it->second;
      } else if (edge.leaf) {
        from = leaf_id(*edge.leaf);
      } else {
        from = "const" + std::to_string(constants++);
        out << "  " << from << " [shape=ellipse, style=dashed, label=\"constant\\n"
            << describe(edge.shape, edge.dtype) << "\"];\n";
      }
      out << "  " << from << " -> " << id << ";\n";
    }
  }
  out << "}\n";
  return out.str();
}

void write_dot(const Variable& root, const std::string& path) {
  write_file_atomically(path, to_dot(root));
}

}  // namespace minigrad
