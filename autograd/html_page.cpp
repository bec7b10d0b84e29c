// The backward page in three parts: the graph as plain data (vertices for ops, leaves and constants;
// edges from an input to the op that consumed it; groups), the pass as the engine reports it (a step per
// node run), and a layout. They go into html_page.html's script as JSON; the page draws them.
#include "minigrad/autograd/html_page.h"

#include <cxxabi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>

#include "minigrad/autograd/observer.h"
#include "minigrad/tensor/file_io.h"

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
extern const std::string_view html_page_template;  // html_page.html, compiled in (autograd/CMakeLists.txt)
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

// ---- the graph as plain data ----

struct Graph {
  json vertices = json::array();
  json edges = json::array();
  std::unordered_map<const Node*, int> vertex_of_node;
  std::unordered_map<const VariableImpl*, int> vertex_of_leaf;
  std::vector<std::shared_ptr<VariableImpl>> leaves;      // by leaf index, to read their .grad after the pass
  std::map<std::pair<const Node*, size_t>, int> edge_of;  // (consumer, input) -> edge
  std::vector<const Node*> nodes;                         // by vertex, null for leaves and constants
  std::vector<std::vector<int>> consumers;                // by vertex: the op vertices that use it
};

int add_vertex(Graph& graph, json vertex, const Node* node) {
  const int id = static_cast<int>(graph.vertices.size());
  vertex["id"] = id;
  graph.vertices.push_back(std::move(vertex));
  graph.nodes.push_back(node);
  graph.consumers.emplace_back();
  return id;
}

json leaf_vertex(const VariableImpl& leaf) {
  const bool named = leaf.extras && !leaf.extras->name.empty();
  json vertex = {{"kind", "leaf"},
                 {"name", named ? leaf.extras->name : "leaf"},
                 {"shape", describe(leaf.data.shape(), leaf.data.dtype())},
                 {"value", summarize(leaf.data)}};
  if (leaf.extras && leaf.extras->grad) vertex["grad_before"] = summarize(leaf.extras->grad->data);
  return vertex;
}

// Walks the graph from the loss's node, iteratively: every op, leaf and constant input, and the edges.
Graph read_graph(const Variable& loss, const RecordGraph* recording) {
  Graph graph;
  if (loss.is_leaf()) {
    if (loss.requires_grad()) {
      graph.vertex_of_leaf[loss.impl().get()] = add_vertex(graph, leaf_vertex(*loss.impl()), nullptr);
      graph.leaves.push_back(loss.impl());
    }
    return graph;
  }
  auto op_vertex = [&](const Node& node) {
    auto [it, added] = graph.vertex_of_node.try_emplace(&node, 0);
    if (added) {
      json vertex = {{"kind", "op"},
                     {"name", node.op},
                     {"shape", describe(node.output_shape, node.output_dtype)},
                     {"backward", backward_function_name(node)}};
      if (const RecordGraph::Op* op = recording ? recording->find(node) : nullptr) {
        vertex["value"] = op->output;
        json saved = json::array();
        for (const TensorSummary& s : op->saved) saved.push_back(s);
        vertex["saved"] = saved;
      }
      it->second = add_vertex(graph, std::move(vertex), &node);
    }
    return std::pair{it->second, added};
  };
  std::vector<const Node*> stack{loss.grad_fn().get()};
  op_vertex(*stack.back());
  while (!stack.empty()) {
    const Node& node = *stack.back();
    stack.pop_back();
    const int consumer = graph.vertex_of_node.at(&node);
    const RecordGraph::Op* op = recording ? recording->find(node) : nullptr;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const Edge& edge = node.inputs[i];
      int from;
      if (edge.node) {
        const auto [id, added] = op_vertex(*edge.node);
        if (added) stack.push_back(edge.node.get());
        from = id;
      } else if (edge.leaf) {
        auto [it, added] = graph.vertex_of_leaf.try_emplace(edge.leaf.get(), 0);
        if (added) {
          it->second = add_vertex(graph, leaf_vertex(*edge.leaf), nullptr);
          graph.leaves.push_back(edge.leaf);
        }
        from = it->second;
      } else {
        json vertex = {
            {"kind", "constant"}, {"name", "constant"}, {"shape", describe(edge.shape, edge.dtype)}};
        if (op && i < op->constants.size() && op->constants[i]) vertex["value"] = *op->constants[i];
        from = add_vertex(graph, std::move(vertex), nullptr);
      }
      graph.edge_of[{&node, i}] = static_cast<int>(graph.edges.size());
      graph.edges.push_back({{"from", from}, {"to", consumer}, {"input", i}});
      graph.consumers[static_cast<size_t>(from)].push_back(consumer);
    }
  }
  return graph;
}

// ---- groups ----

// Each group's vertices, and each vertex's innermost group. A group's ops are those reachable from its
// output's node without passing through its inputs' nodes; a leaf or constant joins the innermost group
// holding every op that uses it.
json read_groups(const std::vector<GraphGroup>& groups, Graph& graph) {
  const size_t n = graph.vertices.size();
  std::vector<std::vector<bool>> member(groups.size(), std::vector<bool>(n, false));
  std::vector<size_t> size(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    const GraphGroup& group = groups[g];
    std::unordered_set<const Node*> stop;
    for (const Variable& input : group.inputs) {
      if (input.defined() && input.grad_fn()) stop.insert(input.grad_fn().get());
    }
    std::vector<const Node*> stack;
    if (group.output.defined() && group.output.grad_fn() && !stop.contains(group.output.grad_fn().get())) {
      stack.push_back(group.output.grad_fn().get());
    }
    while (!stack.empty()) {
      const Node* node = stack.back();
      stack.pop_back();
      const auto it = graph.vertex_of_node.find(node);
      if (it == graph.vertex_of_node.end() || member[g][static_cast<size_t>(it->second)]) continue;
      member[g][static_cast<size_t>(it->second)] = true;
      for (const Edge& edge : node->inputs) {
        if (edge.node && !stop.contains(edge.node.get())) stack.push_back(edge.node.get());
      }
    }
    for (size_t v = 0; v < n; ++v) {
      const std::vector<int>& users = graph.consumers[v];
      if (graph.nodes[v] || users.empty()) continue;
      bool all = true;
      for (int user : users) all = all && member[g][static_cast<size_t>(user)];
      member[g][v] = all;
    }
    for (size_t v = 0; v < n; ++v) size[g] += member[g][v];
  }
  // Smaller groups are inner ones; equal ones nest in the order given.
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
    steps.push_back({{"vertex", graph_.vertex_of_node.at(&node)},
                     {"grad", to_json(grad_output)},
                     {"sends", json::array()},
                     {"leaves", json::array()}});
  }
  void on_edge(const Node& node, size_t input, const Variable& grad) override {
    steps.back()["sends"].push_back({{"edge", graph_.edge_of.at({&node, input})}, {"grad", to_json(grad)}});
  }
  void on_leaf(const VariableImpl& leaf, const Variable& grad) override {
    if (steps.empty()) return;  // a backward from a leaf itself runs no node
    steps.back()["leaves"].push_back({{"vertex", graph_.vertex_of_leaf.at(&leaf)}, {"grad", to_json(grad)}});
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

  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/minigrad-page-XXXXXX";
  if (path.find('\'') != std::string::npos) return nullptr;  // it goes between single quotes to the shell
  const int fd = mkstemp(path.data());
  if (fd < 0) return nullptr;
  const std::string text = dot.str();
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  std::string plain;
  if (written) {
    if (FILE* out = popen(("dot -Tplain '" + path + "' 2>/dev/null").c_str(), "r")) {
      char buffer[4096];
      for (size_t got; (got = fread(buffer, 1, sizeof buffer, out)) > 0;) plain.append(buffer, got);
      if (pclose(out) != 0) plain.clear();
    }
  }
  std::remove(path.c_str());
  if (plain.empty()) return nullptr;

  // -Tplain: "graph scale width height", "node name x y width height ...", "edge tail head n x1 y1 ...",
  // in inches with y up.
  json layout = {{"engine", "dot"}, {"boxes", json::object()}, {"edges", json::object()}};
  std::istringstream lines(plain);
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
  for (const std::shared_ptr<VariableImpl>& leaf : graph.leaves) {
    if (leaf->extras && leaf->extras->grad) {
      leaf_grads[std::to_string(graph.vertex_of_leaf.at(leaf.get()))] = summarize(leaf->extras->grad->data);
    }
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
