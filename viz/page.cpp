// The backward page in three parts: the graph as plain data (vertices for ops, leaves and constants;
// edges from an input to the op that consumed it; groups), the pass as the engine reports it (a step per
// node run), and a layout. They go into page.html's script as JSON; the page draws them.
#include "minigrad/viz/page.h"

#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <typeinfo>
#include <unordered_set>

#include "minigrad/autograd/observer.h"
#include "minigrad/tensor/file_io.h"
#include "minigrad/viz/dot.h"
#include "minigrad/viz/graph_view.h"

// A summary as JSON, as nlohmann's documentation says to convert a type of another library: a
// TensorSummary converts to a json wherever one is wanted. NaN and the infinities become strings (JSON has
// no such numbers).
template <>
struct nlohmann::adl_serializer<minigrad::TensorSummary> {
  static json number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return v;
  }
  static void to_json(json& out, const minigrad::TensorSummary& s) {
    json values = json::array();
    for (double v : s.values) values.push_back(number(v));
    out = {{"shape", std::vector<int64_t>(s.shape.begin(), s.shape.end())},
           {"dtype", minigrad::dtype_name(s.dtype)},
           {"complete", s.complete},
           {"values", values},
           {"mean", number(s.mean)},
           {"min", number(s.min)},
           {"max", number(s.max)}};
  }
};

namespace minigrad {

namespace detail {
extern const std::string_view html_page_template;  // page.html, compiled in (viz/CMakeLists.txt)
}  // namespace detail

namespace {

using nlohmann::json;

json to_json(const Variable& g) {
  return summarize(g.data());  // adl_serializer<TensorSummary>, above
}

// Which function defined a node's backward: for record()'s nodes, the op function around the lambda
// ("relu(Variable const&)"), read from the lambda's type name; for a Node class of one's own, the class.
std::string backward_function_name(const Node& node) {
  const char* mangled = typeid(node).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  const std::string node_with = "minigrad::detail::NodeWith<";
  if (name.starts_with(node_with)) {
    name = name.substr(node_with.size(), name.size() - node_with.size() - 1);
    if (const size_t lambda = name.find("::{lambda"); lambda != std::string::npos) {
      name = "the lambda in " + name.substr(0, lambda);
    }
  }
  for (size_t at; (at = name.find("minigrad::")) != std::string::npos;) name.erase(at, 10);
  return name;
}

// ---- the graph as the page's data ----

// The graph's one walk (viz/graph_view.h), with what the page adds: each vertex as JSON (its values from
// the recording), each edge's index by (consumer node, input), and each vertex's neighbours.
struct Graph {
  GraphView view;
  json vertices = json::array();
  json edges = json::array();
  std::map<std::pair<const Node*, size_t>, int> edge_of = {};  // (consumer, input) -> edge
  std::vector<std::vector<int>> consumers = {};                // by vertex: the op vertices that use it
  std::vector<std::vector<int>> inputs = {};                   // by op vertex: the vertices it consumed
};

json vertex_json(const GraphView::Vertex& vertex, const RecordGraph* recording) {
  json out = {{"name", vertex.name}, {"shape", describe(vertex.shape, vertex.dtype)}};
  switch (vertex.kind) {
    case GraphView::Kind::Op:
      out["kind"] = "op";
      out["backward"] = backward_function_name(*vertex.node);
      if (const RecordGraph::Op* op = recording ? recording->find(*vertex.node) : nullptr) {
        out["value"] = op->output;
        json saved = json::array();
        for (const TensorSummary& s : op->saved) saved.push_back(s);
        out["saved"] = saved;
      }
      break;
    case GraphView::Kind::Leaf:
      out["kind"] = "leaf";
      out["value"] = summarize(vertex.leaf->data);
      if (vertex.leaf->extras && vertex.leaf->extras->grad) {
        out["grad_before"] = summarize(vertex.leaf->extras->grad->data);
      }
      break;
    case GraphView::Kind::Constant:
      out["kind"] = "constant";
      break;
  }
  return out;
}

Graph read_graph(const Variable& loss, const RecordGraph* recording) {
  if (loss.is_leaf() && !loss.requires_grad()) return {};  // nothing for backward to walk
  Graph graph{.view = view_graph(loss)};
  const GraphView& view = graph.view;
  for (size_t v = 0; v < view.vertices.size(); ++v) {
    json vertex = vertex_json(view.vertices[v], recording);
    vertex["id"] = v;
    graph.vertices.push_back(std::move(vertex));
  }
  graph.consumers.resize(view.vertices.size());
  graph.inputs.resize(view.vertices.size());
  for (const GraphView::Edge& edge : view.edges) {
    const Node& consumer = *view.vertices[static_cast<size_t>(edge.to)].node;
    // A constant's value is what the consumer's op recorded for that input.
    const RecordGraph::Op* op = recording ? recording->find(consumer) : nullptr;
    const bool constant = view.vertices[static_cast<size_t>(edge.from)].kind == GraphView::Kind::Constant;
    if (op && constant && edge.input < op->constants.size() && op->constants[edge.input]) {
      graph.vertices[static_cast<size_t>(edge.from)]["value"] = *op->constants[edge.input];
    }
    graph.edge_of[{&consumer, edge.input}] = static_cast<int>(graph.edges.size());
    graph.edges.push_back({{"from", edge.from}, {"to", edge.to}, {"input", edge.input}});
    graph.consumers[static_cast<size_t>(edge.from)].push_back(edge.to);
    graph.inputs[static_cast<size_t>(edge.to)].push_back(edge.from);
  }
  return graph;
}

// ---- groups ----

// The vertices of `group`: the ops reachable from its output's op without passing through its inputs'
// ops, then each leaf or constant whose every consumer is among them.
std::vector<bool> group_members(const GraphGroup& group, const Graph& graph) {
  const GraphView& view = graph.view;
  auto vertex_of = [&](const Variable& v) {
    if (!v.defined() || !v.grad_fn()) return -1;
    const auto it = view.vertex_of_node.find(v.grad_fn().get());
    return it == view.vertex_of_node.end() ? -1 : it->second;
  };
  std::vector<bool> member(view.vertices.size(), false);
  std::vector<bool> stop(view.vertices.size(), false);
  for (const Variable& input : group.inputs) {
    if (const int v = vertex_of(input); v >= 0) stop[static_cast<size_t>(v)] = true;
  }
  std::vector<int> stack;
  if (const int v = vertex_of(group.output); v >= 0 && !stop[static_cast<size_t>(v)]) stack.push_back(v);
  while (!stack.empty()) {
    const auto v = static_cast<size_t>(stack.back());
    stack.pop_back();
    if (member[v]) continue;
    member[v] = true;
    for (int input : graph.inputs[v]) {
      if (view.vertices[static_cast<size_t>(input)].kind == GraphView::Kind::Op &&
          !stop[static_cast<size_t>(input)])
        stack.push_back(input);
    }
  }
  for (size_t v = 0; v < view.vertices.size(); ++v) {
    const std::vector<int>& users = graph.consumers[v];
    if (view.vertices[v].kind == GraphView::Kind::Op || users.empty()) continue;
    bool all = true;
    for (int user : users) all = all && member[static_cast<size_t>(user)];
    member[v] = all;
  }
  return member;
}

// Each group's parent and size, and each vertex's innermost group ("group" in its JSON). Groups nest when
// one's vertices contain another's; smaller groups are inner ones, and equal ones nest in the order given.
json read_groups(const std::vector<GraphGroup>& groups, Graph& graph) {
  const size_t n = graph.view.vertices.size();
  std::vector<std::vector<bool>> member;
  std::vector<size_t> size;
  for (const GraphGroup& group : groups) {
    member.push_back(group_members(group, graph));
    size.push_back(static_cast<size_t>(std::count(member.back().begin(), member.back().end(), true)));
  }
  auto inner = [&](size_t a, size_t b) { return size[a] < size[b] || (size[a] == size[b] && a > b); };
  auto contains = [&](size_t outer, size_t g) {
    for (size_t v = 0; v < n; ++v) {
      if (member[g][v] && !member[outer][v]) return false;
    }
    return true;
  };
  json result = json::array();
  for (size_t g = 0; g < groups.size(); ++g) {
    int parent = -1;
    for (size_t p = 0; p < groups.size(); ++p) {
      if (p == g || inner(p, g) || size[g] == 0 || !contains(p, g)) continue;
      if (parent < 0 || inner(p, static_cast<size_t>(parent))) parent = static_cast<int>(p);
    }
    result.push_back({{"label", groups[g].label}, {"parent", parent}, {"size", size[g]}});
  }
  for (size_t v = 0; v < n; ++v) {
    int innermost = -1;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (member[g][v] && (innermost < 0 || inner(g, static_cast<size_t>(innermost))))
        innermost = static_cast<int>(g);
    }
    graph.vertices[v]["group"] = innermost;
  }
  return result;
}

// ---- the pass, as the engine reports it ----

// A step per node the engine runs: the gradient it received, what it sent along each input edge, and
// what reached a leaf. A leaf with hooks is reported after the walk: that goes with the last step.
class PassRecorder : public BackwardObserver {
 public:
  explicit PassRecorder(const Graph& graph) : graph_(graph) {}
  json steps = json::array();

  void on_node(const Node& node, const Variable& grad_output) override {
    steps.push_back({{"vertex", graph_.view.vertex_of_node.at(&node)},
                     {"grad", to_json(grad_output)},
                     {"sends", json::array()},
                     {"leaves", json::array()}});
  }
  void on_edge(const Node& node, size_t input, const Variable& grad) override {
    steps.back()["sends"].push_back({{"edge", graph_.edge_of.at({&node, input})}, {"grad", to_json(grad)}});
  }
  void on_leaf(const VariableImpl& leaf, const Variable& grad) override {
    if (steps.empty()) return;  // a backward from a leaf itself runs no node
    steps.back()["leaves"].push_back(
        {{"vertex", graph_.view.vertex_of_leaf.at(&leaf)}, {"grad", to_json(grad)}});
  }

 private:
  const Graph& graph_;
};

// ---- layout ----

// The boxes' sizes in points, the same for Graphviz and for the page's own layout.
constexpr double kCharWidth = 7.0;
constexpr double kBoxHeight = 36.0;

double box_width(const std::string& line1, const std::string& line2) {
  return std::max(64.0, kCharWidth * static_cast<double>(std::max(line1.size(), line2.size())) + 16.0);
}

// The page's first view, with every group collapsed: each vertex shows as itself or as its outermost
// group. Returns the view's box for each vertex ("v3" or "g0").
std::vector<std::string> first_view(const Graph& graph, const json& groups) {
  std::vector<std::string> box;
  for (const json& vertex : graph.vertices) {
    int g = vertex.value("group", -1);
    while (g >= 0 && groups[static_cast<size_t>(g)]["parent"].get<int>() >= 0) {
      g = groups[static_cast<size_t>(g)]["parent"].get<int>();
    }
    box.push_back(g >= 0 ? "g" + std::to_string(g) : "v" + vertex["id"].dump());
  }
  return box;
}

// Runs `dot -Tplain` on the first view and reads the boxes' centres and the edges' splines, in points
// with y down; null if dot is not installed or fails.
json graphviz_layout(const Graph& graph, const json& groups) {
  const std::vector<std::string> box = first_view(graph, groups);
  std::ostringstream dot;
  dot << "digraph minigrad {\n  node [shape=box, fixedsize=true, label=\"\"];\n";
  std::unordered_set<std::string> drawn;
  for (size_t v = 0; v < box.size(); ++v) {
    if (!drawn.insert(box[v]).second) continue;
    const bool is_group = box[v][0] == 'g';
    const json& item = is_group ? groups[std::stoul(box[v].substr(1))] : graph.vertices[v];
    const double width =
        is_group ? box_width(item["label"], "group") : box_width(item["name"], item["shape"]);
    dot << "  " << box[v] << " [width=" << width / 72 << ", height=" << kBoxHeight / 72 << "];\n";
  }
  std::unordered_set<std::string> joined;
  for (const json& edge : graph.edges) {
    const std::string& from = box[edge["from"].get<size_t>()];
    const std::string& to = box[edge["to"].get<size_t>()];
    if (from != to && joined.insert(from + " " + to).second) dot << "  " << from << " -> " << to << ";\n";
  }
  dot << "}\n";

  const std::optional<std::string> plain = run_dot(dot.str(), "plain");
  if (!plain) return nullptr;

  // -Tplain: "graph scale width height", "node name x y width height ...", "edge tail head n x1 y1 ...",
  // in inches with y up.
  json layout = {{"engine", "dot"}, {"boxes", json::object()}, {"edges", json::object()}};
  std::istringstream lines(*plain);
  double height = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "graph") {
      double scale, width;
      words >> scale >> width >> height;
      layout["width"] = width * 72;
      layout["height"] = height * 72;
    } else if (kind == "node") {
      std::string name;
      double x, y;
      words >> name >> x >> y;
      layout["boxes"][name] = {x * 72, (height - y) * 72};
    } else if (kind == "edge") {
      std::string tail, head;
      int count;
      words >> tail >> head >> count;
      json points = json::array();
      for (int i = 0; i < count; ++i) {
        double x, y;
        words >> x >> y;
        points.push_back({x * 72, (height - y) * 72});
      }
      layout["edges"][tail + " " + head] = points;
    }
  }
  return layout;
}

}  // namespace

std::string backward_page(const Variable& loss, const HtmlPageOptions& options) {
  if (!loss.defined()) throw ValueError("backward_page", "the Variable is undefined");
  Graph graph = read_graph(loss, options.recording);
  const json groups = read_groups(options.groups, graph);

  PassRecorder pass(graph);
  {
    ObserveBackward watch(pass);
    loss.backward();
  }
  json leaf_grads = json::object();
  for (size_t v = 0; v < graph.view.vertices.size(); ++v) {
    const std::shared_ptr<VariableImpl>& leaf = graph.view.vertices[v].leaf;
    if (leaf && leaf->extras && leaf->extras->grad)
      leaf_grads[std::to_string(v)] = summarize(leaf->extras->grad->data);
  }
  for (json& vertex : graph.vertices) vertex["width"] = box_width(vertex["name"], vertex["shape"]);
  json groups_out = groups;
  for (json& group : groups_out) group["width"] = box_width(group["label"], "group");

  const json layout = options.graphviz ? graphviz_layout(graph, groups) : json(nullptr);
  const char* layout_note =
      layout.is_null()
          ? (options.graphviz ? "minigrad's own layered layout (Graphviz's dot is not on PATH, or it failed)"
                              : "minigrad's own layered layout")
          : "Graphviz (dot)";
  const json data = {{"title", options.title},     {"values_recorded", options.recording != nullptr},
                     {"vertices", graph.vertices}, {"edges", graph.edges},
                     {"groups", groups_out},       {"steps", pass.steps},
                     {"leaf_grads", leaf_grads},   {"layout", layout},
                     {"layout_note", layout_note}, {"box_height", kBoxHeight}};
  // Inside <script>, "</script>" or "<!--" in a name would end or change the script: no '<' at all
  // (it appears only inside JSON strings, where \u003c means the same).
  std::string text = data.dump();
  std::string safe;
  safe.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }

  std::string page(detail::html_page_template);
  const std::string slot = "/*MINIGRAD_PAGE_DATA*/null";
  const size_t at = page.find(slot);
  if (at == std::string::npos) throw Error("backward_page", "the page template has no data slot");
  page.replace(at, slot.size(), safe);
  return page;
}

void write_html(const Variable& loss, const std::string& path, const HtmlPageOptions& options) {
  write_file_atomically(path, backward_page(loss, options));
}

}  // namespace minigrad
