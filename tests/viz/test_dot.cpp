// The graph as Graphviz DOT (viz/dot.h), and running dot itself with no shell in between.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
}  // namespace

BOOST_AUTO_TEST_SUITE(dot)

BOOST_AUTO_TEST_CASE(graphviz_export_shows_ops_shapes_and_parameters) {
  Variable w = leaf({1, 2, 3, 4}, {2, 2});
  w.set_name("W");
  Variable x(Tensor::ones({3, 2}, F64));
  Variable loss = mean(relu(matmul(x, w)));
  const std::string dot = to_dot(loss);
  BOOST_TEST(dot.rfind("digraph minigrad {", 0) == 0);
  BOOST_TEST(dot.find("label=\"mean\\n[] float64\"") != std::string::npos);
  BOOST_TEST(dot.find("label=\"relu\\n[3,2] float64\"") != std::string::npos);
  BOOST_TEST(dot.find("label=\"matmul\\n[3,2] float64\"") != std::string::npos);
  BOOST_TEST(dot.find("label=\"W\\n[2,2] float64\\nrequires_grad\"") != std::string::npos);
  BOOST_TEST(dot.find("label=\"constant\\n[3,2] float64\"") != std::string::npos);
  // 3 ops, 1 parameter, 1 constant -> 4 edges
  size_t edges = 0;
  for (size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++edges;
  BOOST_TEST(edges == 4);
  const std::string path = "graph_export_test.dot";
  write_dot(loss, path);
  std::ifstream in(path);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(written == dot);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(one_walk_meets_each_op_and_leaf_once_and_each_constant_use_apart) {
  // w feeds matmul and add; h feeds mul twice; the constant x is used once, 2.0 is a scalar (no edge).
  Variable w = leaf({1, -1, 0.5, 2}, {2, 2});
  Variable x(Tensor::from_values({1, 2, 0, 1}, {2, 2}, DType::Float64));
  Variable h = matmul(x, w);
  Variable loss = sum(h * h + w);
  const GraphView view = view_graph(loss);
  int ops = 0, leaves = 0, constants = 0;
  for (const GraphView::Vertex& v : view.vertices) {
    ops += v.kind == GraphView::Kind::Op;
    leaves += v.kind == GraphView::Kind::Leaf;
    constants += v.kind == GraphView::Kind::Constant;
  }
  BOOST_TEST(ops == 4);  // sum, add, mul, matmul
  BOOST_TEST(leaves == 1);
  BOOST_TEST(constants == 1);
  BOOST_TEST(view.edges.size() == 7u);  // sum<-add, add<-mul, add<-w, mul<-h twice, matmul<-x, matmul<-w
  BOOST_TEST(view.vertices[0].node == loss.grad_fn().get());
  BOOST_TEST(view.vertex_of_leaf.at(w.impl().get()) > 0);
}

BOOST_AUTO_TEST_CASE(dot_runs_without_a_shell_even_where_the_temporary_folder_has_a_quote) {
  const std::optional<std::string> probe = run_dot("digraph g { a -> b; }\n", "plain");
  if (!probe) {
    BOOST_TEST_MESSAGE("Graphviz's dot is not installed: only the missing-program answer is checked");
    BOOST_TEST(!run_dot("digraph g { a -> b; }\n", "plain").has_value());
    return;
  }
  BOOST_TEST(probe->rfind("graph ", 0) == 0);
  BOOST_TEST(probe->find("edge a b") != std::string::npos);
  // The page's old popen put the path between single quotes for the shell; now no shell reads it.
  const std::filesystem::path odd = std::filesystem::temp_directory_path() / "minigrad it's here";
  std::filesystem::create_directories(odd);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", odd.c_str(), 1);
  const std::optional<std::string> quoted = run_dot("digraph g { a -> b; }\n", "plain");
  if (old)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  BOOST_TEST(quoted.has_value());
  BOOST_TEST(std::filesystem::is_empty(odd));  // its temporary file is gone
  std::filesystem::remove(odd);
  // Bad DOT: dot fails, and the answer is none (the page then lays itself out).
  BOOST_TEST(!run_dot("digraph g { a -> ; }\n", "plain").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
