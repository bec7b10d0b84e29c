// The graph behind a value, as Graphviz DOT, so a learner can see what backward() will walk:
//
//   Variable loss = ...;
//   write_dot(loss, "graph.dot");      // then: dot -Tpng graph.dot -o graph.png
//
// Boxes are recorded ops, labelled with the op and its output shape. Ellipses are leaves: filled and
// marked "requires_grad" for parameters, dashed for constants. Arrows point from inputs to the ops that
// consumed them, the direction of the forward pass; backward runs them in reverse.
#pragma once

#include <optional>
#include <string>

#include "minigrad/autograd/variable.h"

namespace minigrad {

std::string to_dot(const Variable& root);
// Writes to_dot(root) to `path` (through a temporary file, renamed into place).
void write_dot(const Variable& root, const std::string& path);

// Runs Graphviz's `dot -T<format>` on the DOT text `graph` and returns what it printed, or nothing if
// `dot` is not installed (Debian: graphviz) or fails. The program is started directly, with no shell.
std::optional<std::string> run_dot(const std::string& graph, const std::string& format);

}  // namespace minigrad
