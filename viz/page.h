// A backward pass to step through in a browser: one self-contained HTML file (its script, style and
// layout inline; it loads nothing) showing the graph behind a loss. Each box is an op with its output
// shape; selecting one shows its values, what its backward function saved, and which function that is.
// The step control replays the backward pass in the engine's own order with the engine's own values:
// the node that runs, the gradient it sends along each edge, two gradients meeting at a node or a leaf
// (g1 + g2 = total), and the leaves' .grad filling in.
//
//   RecordGraph recording;  // optional: keeps what the forward computed (viz/recorder.h)
//   Variable loss = mean(relu(matmul(x, w)));
//   write_html(loss, "backward.html", {.recording = &recording});  // runs loss.backward()
//
// The layout is Graphviz's (`dot`, run if it is on PATH: viz/dot.h) or the page's own layered one; the
// page says which. A large graph (a Transformer's) stays readable in groups, one box per module call until
// clicked: nn's module calls can make them, or any caller can (GraphGroup).
#pragma once

#include <string>
#include <vector>

#include "minigrad/viz/recorder.h"

namespace minigrad {

// A part of the graph shown as one box until expanded: the nodes reachable from `output`'s node without
// passing through the nodes that computed `inputs` (with the leaves only they use). Groups nest when
// one's nodes contain another's: "encoder" around "encoder.layers.0 (TransformerEncoderLayer)".
struct GraphGroup {
  std::string label;
  std::vector<Variable> inputs;
  Variable output;
};

struct HtmlPageOptions {
  // What the forward pass computed and saved. Without it the page shows the values of leaves and
  // constants only, and the shapes of the rest (and says so).
  const RecordGraph* recording = nullptr;
  std::vector<GraphGroup> groups = {};
  std::string title = "minigrad: a backward pass";
  bool graphviz = true;  // false: the page's own layout even where `dot` is installed
};

// Runs loss.backward() (it fills the leaves' .grad, as loss.backward() does, and frees the graph) while
// watching it (autograd/observer.h), and returns the page.
std::string backward_page(const Variable& loss, const HtmlPageOptions& options = {});
// Writes backward_page(loss, options) to `path` (through a temporary file, renamed into place).
void write_html(const Variable& loss, const std::string& path, const HtmlPageOptions& options = {});

}  // namespace minigrad
