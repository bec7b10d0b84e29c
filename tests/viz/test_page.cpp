// The backward page (viz/page.h) and the forward recording behind it (viz/recorder.h): what
// is recorded, and that the steps the page replays are the engine's own values in its own order, with
// the gradients that meet at a value used twice. The page in a browser: tests/html/test_page.py.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using nlohmann::json;

namespace {

// The data a page was written with: the JSON after "const DATA = " in its script.
json page_data(const std::string& page) {
  const std::string start = "const DATA = ";
  const size_t from = page.find(start) + start.size();
  return json::parse(page.substr(from, page.find(";\n", from) - from));
}

std::vector<double> values(const json& summary) {
  return summary["values"].get<std::vector<double>>();
}

// The used_twice program's graph: h = x·w used twice by h·h, and w used by matmul and by + w.
struct UsedTwice {
  Variable x{Tensor::from_values({1, 2, 0, 1}, {2, 2}, DType::Float64)};
  Variable w = leaf({1, -1, 0.5, 2}, {2, 2});
  Variable h, square, loss;
  void forward() {
    w.set_name("w");
    h = matmul(x, w);
    square = h * h;
    loss = sum(square + w);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(html_page)

BOOST_AUTO_TEST_CASE(nothing_is_recorded_without_a_record_graph) {
  BOOST_TEST(detail::forward_observer == nullptr);
  UsedTwice graph;
  graph.forward();  // the same values as with a recording: nothing changes
  expect_equal(graph.loss.data(), {19.75});
  {
    RecordGraph outer;
    BOOST_TEST(detail::forward_observer != nullptr);
    Variable seen_by_inner, seen_by_outer;
    {
      RecordGraph inner;  // the innermost recording hears the ops
      seen_by_inner = graph.h * 2.0;
      BOOST_TEST(inner.find(*seen_by_inner.grad_fn()) != nullptr);
    }
    seen_by_outer = graph.h * 3.0;  // the outer one hears again
    BOOST_TEST(outer.find(*seen_by_inner.grad_fn()) == nullptr);
    BOOST_TEST(outer.find(*seen_by_outer.grad_fn()) != nullptr);
    BOOST_TEST(outer.find(*graph.h.grad_fn()) == nullptr);  // made before it began
  }
  BOOST_TEST(detail::forward_observer == nullptr);
}

BOOST_AUTO_TEST_CASE(a_recording_keeps_each_ops_output_saved_tensors_and_constant_inputs) {
  RecordGraph recording;
  UsedTwice graph;
  const Variable unrecorded = matmul(graph.x, graph.x);  // no input requires grad: its saved x is dropped
  graph.forward();
  const RecordGraph::Op* matmul_op = recording.find(*graph.h.grad_fn());
  BOOST_REQUIRE(matmul_op != nullptr);
  BOOST_TEST(values(json{{"values", matmul_op->output.values}}) == (std::vector<double>{2, 3, 0.5, 2}));
  // matmul saves x (for d/dw) only: w's gradient needs x, x's would need w but x requires none.
  BOOST_REQUIRE(matmul_op->saved.size() == 1u);
  BOOST_TEST(matmul_op->saved[0].values == (std::vector<double>{1, 2, 0, 1}));
  BOOST_REQUIRE(matmul_op->constants.size() == 2u);
  BOOST_TEST(matmul_op->constants[0].has_value());   // x, a constant
  BOOST_TEST(!matmul_op->constants[1].has_value());  // w, a leaf that requires grad
  // h·h saves both factors.
  BOOST_TEST(recording.find(*graph.square.grad_fn())->saved.size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_page_replays_the_engines_pass_with_its_values) {
  RecordGraph recording;
  UsedTwice graph;
  graph.forward();
  graph.h.retain_grad();  // the engine's d loss / d h, to compare with what the page shows
  const json data = page_data(backward_page(graph.loss, {.recording = &recording, .title = "used twice"}));
  BOOST_TEST(data["title"] == "used twice");
  BOOST_TEST(data["values_recorded"] == true);

  // The engine's order, one step per node.
  std::vector<std::string> ran;
  for (const json& step : data["steps"])
    ran.push_back(data["vertices"][step["vertex"].get<size_t>()]["name"]);
  BOOST_TEST(ran == (std::vector<std::string>{"sum", "add", "mul", "matmul"}),
             boost::test_tools::per_element());

  // matmul's step received the sum of what mul sent along its two edges from h: the engine's h.grad().
  const json& steps = data["steps"];
  const size_t matmul = steps[3]["vertex"];
  std::vector<std::vector<double>> sent_to_h;
  for (const json& send : steps[2]["sends"]) {
    if (data["edges"][send["edge"].get<size_t>()]["from"] == matmul)
      sent_to_h.push_back(values(send["grad"]));
  }
  BOOST_REQUIRE(sent_to_h.size() == 2u);
  expect_equal(graph.h.grad(), values(steps[3]["grad"]));
  for (size_t i = 0; i < 4; ++i) BOOST_TEST(sent_to_h[0][i] + sent_to_h[1][i] == values(steps[3]["grad"])[i]);

  // Two gradients reach w (from add, then from matmul); the page's total is w.grad().
  std::vector<std::vector<double>> at_w;
  for (const json& step : steps) {
    for (const json& arrival : step["leaves"]) at_w.push_back(values(arrival["grad"]));
  }
  BOOST_REQUIRE(at_w.size() == 2u);
  BOOST_TEST(at_w[0] == (std::vector<double>{1, 1, 1, 1}));
  const json& total = data["leaf_grads"].begin().value();
  expect_equal(graph.w.grad(), values(total));
  BOOST_TEST(values(total) == (std::vector<double>{5, 7, 10, 17}));

  // Each op shows its value and the lambda that is its backward.
  const json& matmul_vertex = data["vertices"][matmul];
  BOOST_TEST(values(matmul_vertex["value"]) == (std::vector<double>{2, 3, 0.5, 2}));
  BOOST_TEST(matmul_vertex["backward"].get<std::string>().find("matmul(") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_a_recording_the_page_shows_shapes) {
  UsedTwice graph;
  graph.forward();
  const json data = page_data(backward_page(graph.loss, {.graphviz = false}));
  BOOST_TEST(data["values_recorded"] == false);
  BOOST_TEST(data["layout"].is_null());  // the page lays itself out
  for (const json& vertex : data["vertices"])
    BOOST_TEST((vertex["kind"] != "op" || !vertex.contains("value")));
  BOOST_TEST(data["steps"].size() == 4u);
}

BOOST_AUTO_TEST_CASE(groups_hold_the_ops_between_their_inputs_and_output_and_nest) {
  UsedTwice graph;
  graph.forward();
  const json data = page_data(
      backward_page(graph.loss, {.groups = {{.label = "square", .inputs = {graph.h}, .output = graph.square},
                                            {.label = "everything", .inputs = {}, .output = graph.loss}}}));
  BOOST_TEST(data["groups"][0]["parent"] == 1);  // square lies inside everything
  BOOST_TEST(data["groups"][1]["parent"] == -1);
  for (const json& vertex : data["vertices"]) {
    const std::string name = vertex["name"];
    BOOST_TEST_INFO(name);
    // mul is square's; matmul, its input's op, is not; the constant x joins matmul's group.
    BOOST_TEST(vertex["group"] == (name == "mul" ? 0 : 1));
  }
}

BOOST_AUTO_TEST_CASE(names_cannot_break_out_of_the_script) {
  UsedTwice graph;
  graph.forward();
  graph.w.set_name("</script><b>x</b>");
  const std::string page = backward_page(graph.loss, {.graphviz = false});
  BOOST_TEST(page.find("<b>x") == std::string::npos);
  BOOST_TEST(page_data(page)["vertices"].dump().find("</script><b>x</b>") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_bad_path_is_named) {
  UsedTwice graph;
  graph.forward();
  try {
    write_html(graph.loss, "/no/such/folder/page.html", {.graphviz = false});
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("/no/such/folder/page.html") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
