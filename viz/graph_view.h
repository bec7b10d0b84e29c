// The graph behind a value as plain data, read in one walk: what the DOT writer (viz/dot.h) and the
// backward page (viz/page.h) draw. A vertex is an op (a recorded node), a leaf that requires grad, or a
// constant input (one vertex per use: a constant's edge holds no value to tell two uses apart); an edge
// goes from an input to the op that consumed it, the direction of the forward pass.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "minigrad/autograd/graph.h"

namespace minigrad {

struct GraphView {
  enum class Kind { Op, Leaf, Constant };
  struct Vertex {
    Kind kind = Kind::Op;
    std::string name = {};  // the op's, the leaf's (set_name, or "leaf"), or "constant"
    Shape shape = {};       // the value's
    DType dtype = DType::Float32;
    const Node* node = nullptr;                    // an op's node
    std::shared_ptr<VariableImpl> leaf = nullptr;  // a leaf: its .grad can be read after a backward pass
  };
  struct Edge {
    int from = 0;      // the input's vertex
    int to = 0;        // the op vertex that consumed it
    size_t input = 0;  // which of the op's inputs it is: the node's inputs[input]
  };
  std::vector<Vertex> vertices;  // the root's first, then in the order the walk met them
  std::vector<Edge> edges;
  std::unordered_map<const Node*, int> vertex_of_node;
  std::unordered_map<const VariableImpl*, int> vertex_of_leaf;
};

// Walks the graph from `root` down, iteratively (a chain of 100,000 ops needs no deeper stack): every
// op, leaf and constant input, and the edges between them. A root that is a leaf is the one vertex.
GraphView view_graph(const Variable& root);

}  // namespace minigrad
