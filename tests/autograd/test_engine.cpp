// The backward engine: accumulation, graph lifetime, grad mode, version counters, long chains, export.
#include <thread>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
}  // namespace

BOOST_AUTO_TEST_SUITE(engine)

BOOST_AUTO_TEST_CASE(gradient_of_a_small_expression_by_hand) {
  // y = sum(w·x + b) with w = [[1,2],[3,4]], x = [5,6]ᵀ: dy/dw = [[5,6],[5,6]], dy/dx = [4,6], dy/db = [1,1]
  Variable w = leaf({1, 2, 3, 4}, {2, 2}), x = leaf({5, 6}, {2, 1}), b = leaf({0.5, -0.5}, {2, 1});
  Variable y = sum(matmul(w, x) + b);
  BOOST_TEST(y.item() == 1 * 5 + 2 * 6 + 3 * 5 + 4 * 6);
  y.backward();
  expect_equal(w.grad(), {5, 6, 5, 6});
  expect_equal(x.grad(), {4, 6});
  expect_equal(b.grad(), {1, 1});
}

BOOST_AUTO_TEST_CASE(a_value_used_twice_gets_both_contributions) {
  // The classic bug: overwriting instead of accumulating. d(x·x + x)/dx = 2x + 1
  Variable x = leaf({3}, {1});
  Variable y = sum(x * x + x);
  y.backward();
  expect_equal(x.grad(), {7});
  // The same through a shared intermediate: z = t + t with t = 2x
  Variable x2 = leaf({1, 2}, {2});
  Variable t = x2 * 2.0;
  sum(t + t).backward();
  expect_equal(x2.grad(), {4, 4});
}

BOOST_AUTO_TEST_CASE(broadcast_gradients_are_summed_to_the_input_shape) {
  Variable a = leaf({1, 2, 3}, {3}), b = leaf({10, 20}, {2, 1});
  Variable y = a * b;  // [2,3]
  y.backward(Tensor::from_values({1, 2, 3, 4, 5, 6}, {2, 3}, F64));
  expect_equal(a.grad(), {1 * 10 + 4 * 20, 2 * 10 + 5 * 20, 3 * 10 + 6 * 20});
  expect_equal(b.grad(), {1 * 1 + 2 * 2 + 3 * 3, 4 * 1 + 5 * 2 + 6 * 3});
}

BOOST_AUTO_TEST_CASE(leaf_gradients_accumulate_across_calls_until_zeroed) {
  Variable x = leaf({1, 2}, {2});
  sum(x * 3.0).backward();
  sum(x * 3.0).backward();
  expect_equal(x.grad(), {6, 6});
  x.zero_grad();
  BOOST_TEST(!x.grad().defined());
  sum(x * 3.0).backward();
  expect_equal(x.grad(), {3, 3});
}

BOOST_AUTO_TEST_CASE(leaf_gradients_do_not_share_buffers) {
  // add's backward hands the same tensor to both inputs; each leaf must still own its .grad.
  Variable a = leaf({1}, {1}), b = leaf({2}, {1});
  sum(a + b).backward();
  BOOST_TEST(!a.grad().shares_storage_with(b.grad()));
  a.grad().fill_(100);
  expect_equal(b.grad(), {1});
}

BOOST_AUTO_TEST_CASE(a_leaf_never_keeps_a_gradient_that_someone_else_holds) {
  // The engine keeps a gradient nothing else holds as the leaf's .grad instead of copying it. The
  // caller's upstream gradient, passed straight through by reshape's backward or to a leaf root, is held
  // by the caller: writing into it later must not change .grad, and .grad must not write into it.
  Tensor upstream = Tensor::from_values({1, 2, 3, 4}, {2, 2}, F64);
  Variable x = leaf({1, 2, 3, 4}, {4});
  reshape(x, {2, 2}).backward(upstream);  // reshape's backward is a view of `upstream`
  BOOST_TEST(!x.grad().shares_storage_with(upstream));
  upstream.fill_(-1);
  expect_equal(x.grad(), {1, 2, 3, 4});

  Variable root = leaf({5, 6}, {2});
  Tensor seed = Tensor::from_values({7, 8}, {2}, F64);
  root.backward(seed);
  root.backward(seed);  // accumulates in place into .grad: seed must stay as it was
  expect_equal(seed, {7, 8});
  expect_equal(root.grad(), {14, 16});

  // A fresh gradient is kept, and later calls still accumulate into it.
  Variable table = leaf({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor ids = Tensor::from_values({0, 2, 0}, {3}, DType::Int64);
  sum(embedding(table, ids)).backward();
  sum(embedding(table, ids) * 2.0).backward();
  expect_equal(table.grad(), {6, 6, 0, 0, 3, 3});
}

BOOST_AUTO_TEST_CASE(gradients_are_summed_in_place_only_into_buffers_nobody_else_holds) {
  // A value with several consumers sums their gradients, in place into the running total when nothing
  // else holds it (autograd/engine.cpp, add_into). Here loss = sum((y1 + y2)·1) + sum(y1·y2) with y1 = 2x,
  // y2 = 3x, so dloss/dx = 5 + 12x. The ·1 makes the gradient g of y1 + y2 a buffer of its own, and add
  // hands g to both y1 and y2. y1·y2's gradient then reaches y1 while g still waits at y2 (y2's node runs
  // after y1·y2's): summed into g in place, it would reach y2 as well. Twice: with y1 and y2 reshaped on
  // the way (each reshape passes on a view of g, a Variable of its own on g's buffer: the check on the
  // buffer), and directly (y1 and y2 wait on the same Variable: the check on the Variable). Both orders of
  // the two terms.
  for (const bool reshaped : {true, false}) {
    for (const bool s_first : {true, false}) {
      Variable x = leaf({1, 2, 3, 4}, {4});
      Variable y1 = x * 2.0, y2 = x * 3.0;
      Variable s = reshaped ? (reshape(y1, {2, 2}) + reshape(y2, {2, 2})) * 1.0 : (y1 + y2) * 1.0;
      Variable t = y1 * y2;
      (s_first ? sum(s) + sum(t) : sum(t) + sum(s)).backward();
      expect_equal(x.grad(), {17, 29, 41, 53});
    }
  }
}

BOOST_AUTO_TEST_CASE(unbind_pieces_send_their_gradients_to_their_rows) {
  // x (3, 2) split into rows r0, r1, r2; y = sum(r0·r2) + sum(r2): dy/dr0 = r2, dy/dr1 = 0, dy/dr2 = r0 + 1
  Variable x = leaf({1, 2, 3, 4, 5, 6}, {3, 2});
  const std::vector<Variable> rows = unbind(x, 0);
  BOOST_TEST(rows.size() == 3u);
  expect_equal(rows[1].data(), {3, 4});
  sum(rows[0] * rows[2] + rows[2]).backward();
  expect_equal(x.grad(), {5, 6, 0, 0, 2, 3});

  // A piece as the root, and as an input of grad(): its gradient lands in its own row only.
  Variable x2 = leaf({1, 2, 3, 4}, {2, 2});
  const std::vector<Variable> columns = unbind(x2 * 1.0, 1);
  Tensor upstream = Tensor::from_values({7, 8}, {2}, F64);
  columns[1].backward(upstream, {.retain_graph = true});
  expect_equal(x2.grad(), {0, 7, 0, 8});
  expect_equal(upstream, {7, 8});  // the caller's gradient is not written into
  const std::vector<Variable> g = grad({sum(columns[0] * 3.0)}, {columns[0]});
  expect_equal(g[0].data(), {3, 3});
}

BOOST_AUTO_TEST_CASE(the_graph_is_freed_after_backward_unless_retained) {
  Variable x = leaf({1, 2}, {2});
  Variable y = sum(exp(x));
  y.backward(BackwardOptions{.retain_graph = true});
  y.backward();  // second pass through the retained graph
  expect_close(x.grad(), {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-12);
  expect_error<Error>(
      [&] { y.backward(); },
      "backward: the graph through sum was freed by an earlier backward(); call "
      "backward(BackwardOptions{.retain_graph = true}) the first time to go through it again");
  // A second root sharing a freed subgraph is refused too.
  Variable t = x * 2.0;
  Variable z1 = sum(t), z2 = sum(t * t);
  z1.backward();
  expect_error_containing<Error>([&] { z2.backward(); }, "the graph through mul_scalar was freed");
  // A node that receives no gradient (its consumer's backward returned none) is freed all the same.
  Variable h = exp(x);
  Variable stop = record("no_gradient", h.data().clone(), {h},
                         [](const Tensor&, NeedsGrad) -> Grads { return {Tensor()}; });
  sum(stop).backward();
  BOOST_TEST(h.grad_fn()->released());
}

BOOST_AUTO_TEST_CASE(backward_on_a_leaf_and_with_an_explicit_gradient) {
  Variable x = leaf({1, 2}, {2});
  x.backward(Tensor::from_values({3, 4}, {2}, F64));
  expect_equal(x.grad(), {3, 4});
  expect_error<ShapeError>(
      [&] { (x * 2.0).backward(); },
      "backward: a gradient can be implied only for a one-element value, got shape [2]; reduce it to one "
      "first (sum(y) or mean(y)), or pass the upstream gradient: y.backward(grad) with grad of that shape");
  expect_error<ShapeError>([&] { (x * 2.0).backward(Tensor::ones({3}, F64)); },
                           "backward: the upstream gradient is [3] float64 but the value is [2] float64");
}

BOOST_AUTO_TEST_CASE(no_grad_guard_and_detach_stop_recording) {
  Variable x = leaf({1, 2}, {2});
  {
    NoGradGuard no_grad;
    BOOST_TEST(!GradMode::is_enabled());
    Variable y = x * 2.0;
    BOOST_TEST(!y.requires_grad());
    BOOST_TEST(y.is_leaf());
    { NoGradGuard nested; }
    BOOST_TEST(!GradMode::is_enabled());  // restored to the outer guard's state
  }
  BOOST_TEST(GradMode::is_enabled());
  Variable d = (x * 2.0).detach();
  BOOST_TEST(d.is_leaf());
  BOOST_TEST(!d.requires_grad());
  Variable y = sum(d * x);  // d is a constant here
  y.backward();
  expect_equal(x.grad(), {2, 4});
  expect_error<Error>(
      [&] { sum(d).backward(); },
      "backward: the value does not require grad: no input to it requires grad, or it was computed "
      "under NoGradGuard");
}

BOOST_AUTO_TEST_CASE(the_grad_mode_is_per_thread) {
  NoGradGuard no_grad;
  bool other_thread_enabled = false;
  std::thread([&] { other_thread_enabled = GradMode::is_enabled(); }).join();
  BOOST_TEST(other_thread_enabled);
}

BOOST_AUTO_TEST_CASE(modifying_a_saved_tensor_in_place_makes_backward_throw) {
  Variable x = leaf({1, 2}, {2});
  Variable w = leaf({3, 4}, {2});
  Variable y = sum(x * w);  // mul saved x and w
  w.data().mul_(2.0);       // an "optimizer step" between forward and backward
  expect_error<ModifiedInPlaceError>(
      [&] { y.backward(); },
      "backward of mul: a tensor of shape [2] saved for the gradient was modified in place after it was "
      "saved (version "
      "0, now 1); modify a clone() instead, or do the in-place update before the forward pass");
  // exp saves its output; writing into the output is caught the same way.
  Variable e = exp(x);
  Variable s = sum(e);
  e.data().add_(Tensor::ones({2}, F64));
  expect_error_containing<ModifiedInPlaceError>([&] { s.backward(); }, "backward of exp: ");
}

BOOST_AUTO_TEST_CASE(a_chain_of_100000_ops_neither_overflows_nor_leaks) {
  Variable x = leaf({1}, {1});
  Variable y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.00001;
  sum(y).backward();
  expect_close(x.grad(), {std::pow(1.00001, 100000)}, 1e-9);
  // Building and dropping a long chain without backward must not recurse in destructors either.
  Variable z = x;
  for (int i = 0; i < 100000; ++i) z = z + 1.0;
  z = Variable();
  y = Variable();
  BOOST_TEST(x.impl().use_count() == 1);  // both graphs are gone and have let go of the leaf
}

BOOST_AUTO_TEST_CASE(only_float_leaves_can_require_grad) {
  expect_error<DTypeError>([] { Variable(Tensor::arange(3), true); },
                           "set_requires_grad: only float tensors can require grad, got int64");
  Variable x = leaf({1}, {1});
  Variable y = x * 2.0;
  expect_error<ValueError>(
      [&] { y.set_requires_grad(false); },
      "set_requires_grad: only leaves can be marked; this value was computed by mul_scalar (use "
      "detach() first)");
}

BOOST_AUTO_TEST_SUITE_END()
