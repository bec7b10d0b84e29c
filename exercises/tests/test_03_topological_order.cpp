// Task 3's checks: the order's properties on a graph where a value is used three times, and backward's
// gradients from a walk of it in reverse.
#define BOOST_TEST_MODULE exercise_03_topological_order
#include <boost/test/unit_test.hpp>

#include <pthread.h>

#include <exception>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "exercises/03_topological_order.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

// loss = Σ (h·h + h)·v with h = tanh(x·w): h's node is reached along three edges, two of them from mul.
struct Graph {
  Variable x, w, loss;
};
Graph used_twice(uint64_t seed) {
  Generator gen(seed);
  Graph graph{random_leaf({4, 3}, gen), random_leaf({3, 2}, gen), {}};
  const Variable h = tanh(matmul(graph.x, graph.w));
  graph.loss = sum((h * h + h) * Variable(Tensor::normal({4, 2}, 0, 1, DType::Float64, &gen)));
  return graph;
}

// Every node reachable from root's, found without any order.
std::unordered_set<Node*> reachable(const Variable& root) {
  std::unordered_set<Node*> seen{root.grad_fn().get()};
  std::vector<Node*> to_visit{root.grad_fn().get()};
  while (!to_visit.empty()) {
    Node* node = to_visit.back();
    to_visit.pop_back();
    for (const Edge& edge : node->inputs) {
      if (edge.node && seen.insert(edge.node.get()).second) to_visit.push_back(edge.node.get());
    }
  }
  return seen;
}

// backward() from a one-element root with the nodes run in the reverse of `order`, as engine.cpp's step 2
// does: each node's backward function gets the sum of what its consumers sent, so a node run before one
// of its consumers sends on a partial gradient.
void walk_in_reverse(const Variable& root, const std::vector<Node*>& order) {
  NoGradGuard no_grad;
  std::unordered_map<const Node*, Variable> waiting{
      {root.grad_fn().get(), Tensor::ones(root.shape(), root.dtype())}};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node& node = **it;
    const Variable g = std::exchange(waiting[&node], Variable());
    if (!g.defined()) continue;
    const VariableGrads grads = node.backward(g, NeedsGrad(node));
    for (size_t i = 0; i < grads.size(); ++i) {
      const Edge& edge = node.inputs[i];
      if (!grads[i].defined()) continue;
      if (edge.leaf) {
        const Variable leaf(edge.leaf);
        leaf.set_grad(leaf.grad().defined() ? add(leaf.grad(), grads[i].data()) : grads[i].data().clone());
      } else if (edge.node) {
        Variable& total = waiting[edge.node.get()];
        total = total.defined() ? add(total, grads[i]) : grads[i];
      }
    }
  }
}

// Runs f on a thread of its own with a stack of `bytes`, and waits for it; rethrows what f threw. The main
// thread's 8 MB would take a recursive walk of a long chain; a thread's stack is as small as asked.
template <typename F>
void run_on_a_stack_of(size_t bytes, F f) {
  struct Job {
    F f;
    std::exception_ptr error;
  } job{std::move(f), nullptr};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, bytes);
  pthread_t thread;
  const int created = pthread_create(
      &thread, &attributes,
      [](void* arg) -> void* {
        Job& job = *static_cast<Job*>(arg);
        try {
          job.f();
        } catch (...) {
          job.error = std::current_exception();
        }
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attributes);
  if (created != 0) throw std::runtime_error("pthread_create failed");
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_leaf_has_an_empty_order) {
  Generator gen(1);
  BOOST_TEST(topological_order(random_leaf({2}, gen)).empty(),
             "a leaf has no grad_fn: return an empty order");
}

BOOST_AUTO_TEST_CASE(lists_every_node_once) {
  const Graph graph = used_twice(2);
  const std::vector<Node*> order = topological_order(graph.loss);
  std::map<Node*, int> times;
  for (Node* node : order) ++times[node];
  for (const auto& [node, count] : times) {
    BOOST_TEST(count == 1, "node " << node->op << " is listed " << count
                                   << " times: a value used twice is reached along two edges; remember the "
                                      "nodes already seen");
  }
  for (Node* node : reachable(graph.loss)) {
    BOOST_TEST(times.count(node) == 1,
               "node " << node->op << " is missing: follow every input edge (node->inputs[i].node)");
  }
  BOOST_TEST(times.size() == reachable(graph.loss).size(), "the order lists nodes the loss does not reach");
}

BOOST_AUTO_TEST_CASE(puts_each_node_after_its_inputs) {
  const Graph graph = used_twice(3);
  const std::vector<Node*> order = topological_order(graph.loss);
  std::unordered_map<const Node*, size_t> place;
  for (size_t i = 0; i < order.size(); ++i) place.emplace(order[i], i);
  for (Node* node : order) {
    for (const Edge& edge : node->inputs) {
      if (!edge.node || !place.count(edge.node.get())) continue;
      BOOST_TEST(place[edge.node.get()] < place[node], "node "
                                                           << edge.node->op << " comes after " << node->op
                                                           << ", which takes its output: place a node only "
                                                              "after all its inputs' nodes");
    }
  }
  BOOST_TEST((!order.empty() && order.back() == graph.loss.grad_fn().get()),
             "the loss's own node comes last");
}

BOOST_AUTO_TEST_CASE(walked_in_reverse_it_gives_backwards_gradients) {
  const Graph yours = used_twice(4), reference = used_twice(4);
  walk_in_reverse(yours.loss, topological_order(yours.loss));
  reference.loss.backward();
  BOOST_TEST(
      close(yours.w.grad(), reference.w.grad(), 1e-10),
      "w's gradient from your order differs from backward()'s: a node ran before all its consumers had "
      "sent their share of its gradient");
  BOOST_TEST(close(yours.x.grad(), reference.x.grad(), 1e-10), "x's gradient differs from backward()'s");
}

BOOST_AUTO_TEST_CASE(a_chain_of_100000_ops) {
  // Built and freed on the main thread: only the walk runs on the small stack.
  Variable y(Tensor::ones({1}, DType::Float64), true);
  for (int i = 0; i < 100000; ++i) y = y * 1.00001;
  std::vector<Node*> order;
  // The kernel ends a thread that overflows its stack before Boost.Test can report it, so the hint is
  // logged beforehand (scripts/exercises.sh shows the log's last lines when a task crashes).
  BOOST_TEST_MESSAGE(
      "if this crashes, topological_order recurses: a chain of 100,000 ops overflows a "
      "256 KB stack; walk with a loop and a std::vector as the stack");
  BOOST_TEST_CHECKPOINT("the walk of a chain of 100,000 ops on a 256 KB stack");
  run_on_a_stack_of(256 << 10, [&] { order = topological_order(y); });
  BOOST_TEST(order.size() == 100000u, "a chain of 100,000 mul nodes: each once");
}
