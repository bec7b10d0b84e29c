#include "examples/textbook/sequence_facts.h"

#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "minigrad/minigrad.h"

namespace textbook {

using namespace minigrad;

namespace {

void check_length(const char* op, int64_t n, const SequenceLayerOptions& options) {
  if (n < 1 || options.d < 1) {
    throw ValueError(op, "needs n and d of at least 1, got n = " + std::to_string(n) +
                             ", d = " + std::to_string(options.d));
  }
}

}  // namespace

SequenceLayer make_layer(SequenceLayerKind kind, const SequenceLayerOptions& options) {
  const int64_t d = options.d, k = options.kernel_size;
  switch (kind) {
    case SequenceLayerKind::Convolution:
    case SequenceLayerKind::CausalConvolution: {
      const bool causal = kind == SequenceLayerKind::CausalConvolution;
      auto conv = std::make_shared<nn::Conv1d>(nn::Conv1dOptions{.in_channels = d,
                                                                 .out_channels = d,
                                                                 .kernel_size = k,
                                                                 .padding = causal ? k - 1 : 0,
                                                                 .padding_same = !causal,
                                                                 .generator = options.generator});
      conv->to(options.dtype);
      return [conv, causal](const Variable& x) {
        const int64_t n = x.shape()[1];
        // (N, d, n), or (N, d, n + k − 1) when causal: output i saw the padded positions i … i + k − 1,
        // which are the inputs i − k + 1 … i, so the first n outputs never see the future.
        Variable y = (*conv)(transpose(x, 1, 2));
        if (causal) y = slice(y, 2, 0, n);
        return transpose(y, 1, 2);
      };
    }
    case SequenceLayerKind::Recurrent: {
      auto rnn = std::make_shared<nn::RNN>(nn::RNNOptions{
          .input_size = d, .hidden_size = d, .batch_first = true, .generator = options.generator});
      rnn->to(options.dtype);
      return [rnn](const Variable& x) { return (*rnn)(x).output; };
    }
    case SequenceLayerKind::SelfAttention: {
      auto attention = std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{
          .num_hiddens = d, .num_heads = options.heads, .generator = options.generator});
      attention->to(options.dtype);
      return [attention](const Variable& x) { return (*attention)(x, x, x); };
    }
  }
  throw ValueError("make_layer", "unknown layer kind " + std::to_string(static_cast<int>(kind)));
}

std::vector<std::string> longest_path(const Variable& output, const Variable& input) {
  if (!input.defined() || !input.is_leaf() || !input.requires_grad()) {
    throw ValueError("longest_path", "the input must be a leaf that requires grad");
  }
  if (output.is_same(input)) return {};
  const Node* root = output.grad_fn().get();
  // Post-order with an explicit stack: a node is finished once every node it reads from is. For each
  // finished node, depth is the longest path from the input to the node's output, in ops (0: the input
  // does not reach it), and via the node before it on that path (nullptr: the input itself).
  struct Frame {
    const Node* node;
    size_t next_input = 0;
  };
  struct Longest {
    int64_t depth = 0;
    const Node* via = nullptr;
  };
  std::unordered_map<const Node*, Longest> longest;
  std::unordered_set<const Node*> entered;
  std::vector<Frame> stack;
  if (root) {
    entered.insert(root);
    stack.push_back({root});
  }
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next_input < top.node->inputs.size()) {
      const Node* producer = top.node->inputs[top.next_input++].node.get();
      if (producer && entered.insert(producer).second) stack.push_back({producer});  // `top` dangles now
      continue;
    }
    Longest best;
    for (const Edge& edge : top.node->inputs) {
      if (edge.leaf == input.impl() && best.depth < 1) best = {1, nullptr};
      const Node* producer = edge.node.get();
      if (producer && longest.at(producer).depth > 0 && longest.at(producer).depth + 1 > best.depth) {
        best = {longest.at(producer).depth + 1, producer};
      }
    }
    longest[top.node] = best;
    stack.pop_back();
  }
  if (!root || longest.at(root).depth == 0) {
    throw ValueError("longest_path", "the output does not depend on the input");
  }
  std::vector<std::string> ops;
  for (const Node* node = root; node; node = longest.at(node).via) ops.push_back(node->op);
  return {ops.rbegin(), ops.rend()};
}

int64_t graph_depth(const Variable& output, const Variable& input) {
  return static_cast<int64_t>(longest_path(output, input).size());
}

std::vector<double> last_output_gradient(const Variable& y, const Variable& x, const Tensor& u) {
  if (x.rank() != 3 || x.size(0) != 1 || y.rank() != 3 || y.size(0) != 1 || u.shape() != Shape{y.size(2)}) {
    throw ShapeError("last_output_gradient", "expects y (1, m, d), x (1, n, d') and u (d), got " +
                                                 y.shape().str() + ", " + x.shape().str() + " and " +
                                                 u.shape().str());
  }
  const Variable last = select(y, 1, y.size(1) - 1);  // (1, d): the last position of y
  const Variable upstream(u.reshape({1, y.size(2)}).to(y.dtype()));
  const Tensor g = grad({last}, {x}, {upstream}, {.retain_graph = true})[0].data();  // (1, n, d')
  const int64_t n = x.size(1), width = x.size(2);
  const std::vector<double> values = g.to_vector<double>();
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0;
    for (int64_t c = 0; c < width; ++c)
      sum += values[static_cast<size_t>(j * width + c)] * values[static_cast<size_t>(j * width + c)];
    norms[static_cast<size_t>(j)] = std::sqrt(sum);
  }
  return norms;
}

int64_t layers_to_connect(SequenceLayerKind kind, int64_t n, const SequenceLayerOptions& options,
                          int64_t max_layers) {
  check_length("layers_to_connect", n, options);
  const Variable x(Tensor::normal({1, n, options.d}, 0, 1, options.dtype, options.generator), true);
  const Tensor u = Tensor::normal({options.d}, 0, 1, options.dtype, options.generator);
  std::vector<SequenceLayer> stack;
  Variable y = x;
  for (int64_t layers = 1; layers <= max_layers; ++layers) {  // one more layer on top each time
    stack.push_back(make_layer(kind, options));
    y = stack.back()(y);
    if (last_output_gradient(y, x, u)[0] != 0) return layers;
  }
  return 0;
}

int64_t recurrent_steps_to_connect(int64_t n, const SequenceLayerOptions& options) {
  check_length("recurrent_steps_to_connect", n, options);
  const int64_t d = options.d;
  nn::RNN rnn({.input_size = d, .hidden_size = d, .batch_first = true, .generator = options.generator});
  rnn.to(options.dtype);
  const Variable x(Tensor::normal({1, n, d}, 0, 1, options.dtype, options.generator), true);
  const Tensor u = Tensor::normal({d}, 0, 1, options.dtype, options.generator);
  for (int64_t window = 0; window < n; ++window) {
    // Step t reads x_t and the state h (1, 1, d) after step t − 1; only the hand-offs into the last
    // `window` steps (t ≥ n − window) pass gradient back.
    Variable h, y;  // h undefined: zeros
    for (int64_t t = 0; t < n; ++t) {
      const Variable state = (h.defined() && t < n - window) ? h.detach() : h;
      const nn::RecurrentOutput step = rnn(slice(x, 1, t, t + 1), nn::RecurrentState(state));
      h = step.h_n;
      y = step.output;  // (1, 1, d)
    }
    if (last_output_gradient(y, x, u)[0] != 0) return window;
  }
  throw ValueError("recurrent_steps_to_connect", "the last output never depends on the first input");
}

}  // namespace textbook
