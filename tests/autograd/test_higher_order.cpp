// Higher-order gradients (create_graph, grad, gradgradcheck), the one capture rule (every saved tensor
// is checked for in-place modification), and anomaly mode.
#include <algorithm>
#include <cmath>

#include "minigrad/autograd/testing.h"
#include "test_helpers.h"
#include "tests/gradcheck/cases.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {
constexpr DType F64 = DType::Float64;
Variable random_leaf(const Shape& shape, uint64_t seed) {
  return random_normal(shape, seed, /*requires_grad=*/true);
}
// cube with a gradient 1% too large.
Variable slightly_wrong_cube(const Variable& x) {
  return record("slightly_wrong_cube", pow(x.data(), 3.0), {x},
                [sx = SavedTensor(x)](const Tensor& g, NeedsGrad) -> Grads {
                  return {mul(mul(g, mul(sx.get(), sx.get())), 3.03)};
                });
}
}  // namespace

BOOST_AUTO_TEST_SUITE(higher_order)

BOOST_AUTO_TEST_CASE(grad_of_a_grad_by_hand) {
  // y = Σ x³: dy/dx = 3x², and d(Σ 3x²)/dx = 6x.
  Variable x = leaf({1, -2, 3}, {3});
  Variable y = sum(x * x * x);
  Variable dy = grad({y}, {x}, {}, {.create_graph = true})[0];
  BOOST_TEST(!dy.is_leaf());  // it has a graph of its own
  expect_close(dy.data(), {3, 12, 27});
  Variable d2y = grad({sum(dy)}, {x})[0];
  expect_close(d2y.data(), {6, -12, 18});
  BOOST_TEST(!x.grad().defined());  // grad() returns gradients, it does not accumulate them
}

BOOST_AUTO_TEST_CASE(backward_with_create_graph_gives_a_differentiable_grad) {
  Variable x = leaf({0.5, 2}, {2});
  exp(x * x).backward(Tensor::ones({2}, F64), {.create_graph = true});  // d/dx = 2x·e^{x²}
  Variable g = x.grad_variable();
  BOOST_TEST(!g.is_leaf());
  expect_close(x.grad(), {2 * 0.5 * std::exp(0.25), 4 * std::exp(4.0)});
  x.zero_grad();
  sum(g).backward();  // d/dx (2x·e^{x²}) = (2 + 4x²)·e^{x²}
  expect_close(x.grad(), {3 * std::exp(0.25), 18 * std::exp(4.0)}, 1e-9);
}

BOOST_AUTO_TEST_CASE(a_first_order_backward_adds_to_a_gradient_with_a_graph_out_of_place) {
  // One gradient value per leaf: after create_graph it is a Variable with a graph; a first-order pass
  // then makes a new sum and leaves that Variable (and the graph's saved values) as they were.
  Variable x = leaf({0.5, 2}, {2});
  sum(x * x).backward(Tensor::scalar(1, F64), {.create_graph = true});  // 2x, with a graph
  const Variable first = x.grad_variable();
  BOOST_TEST(!first.is_leaf());
  sum(x * 3.0).backward();  // + 3
  expect_equal(x.grad(), {4, 7});
  BOOST_TEST(x.grad_variable().is_leaf());  // the sum has no graph
  expect_equal(first.data(), {1, 4});
  x.zero_grad();
  sum(first).backward();  // d/dx Σ 2x = 2: the first gradient's graph still works
  expect_equal(x.grad(), {2, 2});
  // A gradient without a graph under create_graph (it depends on no input) is kept as a copy, so the
  // seed passed in is not written by the next pass.
  Variable w = leaf({1, 2}, {2});
  const Tensor seed = Tensor::from_values({5, 6}, {2}, F64);
  w.backward(seed, {.create_graph = true});
  w.backward(seed);
  expect_equal(w.grad(), {10, 12});
  expect_equal(seed, {5, 6});
}

BOOST_AUTO_TEST_CASE(grad_of_a_non_leaf_input_and_unused_inputs) {
  Variable x = leaf({1, 2}, {2}), unused = leaf({1}, {1});
  Variable h = x * 3.0;
  Variable y = sum(h * h);
  const std::vector<Variable> g = grad({y}, {h, x, unused}, {}, {.allow_unused = true});
  expect_close(g[0].data(), {6, 12});   // 2h
  expect_close(g[1].data(), {18, 36});  // 2h·3
  BOOST_TEST(!g[2].defined());
  Variable y2 = sum(x * x);
  expect_error_containing<ValueError>([&] { grad({y2}, {unused}); }, "was not used to compute the outputs");
}

BOOST_AUTO_TEST_CASE(an_op_without_a_differentiable_backward_says_so) {
  Variable x = leaf({1, 2}, {2});
  Variable y = record("first_order_only", x.data().clone(), {x},
                      [](const Tensor& g, NeedsGrad) -> Grads { return {g.clone()}; });
  expect_error_containing<Error>([&] { grad({sum(y)}, {x}, {}, {.create_graph = true}); },
                                 "backward of first_order_only: this op has only a first-order backward");
  expect_close(grad({sum(y)}, {x})[0].data(), {1, 1});  // first order still works
}

BOOST_AUTO_TEST_CASE(every_op_and_layer_passes_gradgradcheck) {
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    Generator generator(7);
    const checks::Check check = c.make(generator);
    const GradcheckResult r = gradgradcheck(check.f, check.inputs, {.seed = 3});
    BOOST_TEST(r.passed, c.name << " on " << checks::shapes_of(check) << ": " << r.report());
  }
}

BOOST_AUTO_TEST_CASE(ops_with_backward_ops_of_their_own_have_third_derivatives) {
  // These ops compute their gradients with named backward ops (gelu_backward, tanh_backward, ...), each
  // an op with a derivative of its own. gradgradcheck of f's gradient checks f's third derivatives, so it
  // goes through those ops' own backward and through their gradients again.
  const Tensor ids = Tensor::from_vector<int64_t>({0, 2, 1, 2, 3}, {5});
  const Tensor targets = Tensor::from_vector<int64_t>({2, 0, 1, 2}, {4});
  auto positive = [](const Variable& x) { return add(mul(x, x), 0.5); };
  const std::vector<std::pair<std::string, GradcheckFunction>> cases = {
      {"gelu", [](const std::vector<Variable>& in) { return gelu(in[0]); }},
      {"tanh", [](const std::vector<Variable>& in) { return tanh(in[0]); }},
      {"sigmoid", [](const std::vector<Variable>& in) { return sigmoid(in[0]); }},
      {"sqrt", [&](const std::vector<Variable>& in) { return sqrt(positive(in[0])); }},
      {"pow", [&](const std::vector<Variable>& in) { return pow(positive(in[0]), 2.5); }},
      {"softmax", [](const std::vector<Variable>& in) { return softmax(in[0], 1); }},
      {"log_softmax", [](const std::vector<Variable>& in) { return log_softmax(in[0], 0); }},
      {"cross_entropy", [&](const std::vector<Variable>& in) { return cross_entropy(in[0], targets); }},
      {"max", [](const std::vector<Variable>& in) { return mul(max(in[0], 1), max(in[0], 1)); }},
      {"embedding",
       [&](const std::vector<Variable>& in) {
         const Variable rows = embedding(in[0], ids, /*padding_idx=*/1);
         return mul(rows, mul(rows, rows));
       }},
      {"slice",
       [](const std::vector<Variable>& in) {
         const Variable part = slice(in[0], 1, 1, 3);
         return mul(part, mul(part, part));
       }},
  };
  for (const auto& [name, f] : cases) {
    Generator generator(11);
    const Variable x = Variable(Tensor::normal({4, 3}, 0, 1, F64, &generator), true);
    const Variable v = Variable(Tensor::normal(f({x}).shape(), 0, 1, F64, &generator));
    auto gradient = [&, f = f](const std::vector<Variable>& in) {  // ∇(Σ v·f(x)), with its graph
      return grad({sum(mul(f(in), v))}, {in[0]}, {}, {.create_graph = true})[0];
    };
    const GradcheckResult r = gradgradcheck(gradient, {x}, {.seed = 5});
    BOOST_TEST(r.passed, name << ": " << r.report());
  }
}

// square's named backward op, 2·g·x, with a wrong derivative of its own: d/dx should be 2g, this says
// g·(x + 2). Right values, wrong second derivative everywhere.
Variable bad_square_backward(const Variable& g, const Variable& x) {
  return record(
      "bad_square_backward", mul(mul(g.data(), x.data()), 2.0), {g, x},
      [sg = SavedTensor(g), sx = SavedTensor(x)](const Variable& gg, NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? bad_square_backward(gg, sx.variable()) : Variable(),
                needs[1] ? mul(mul(gg, sg.variable()), add(sx.variable(), 2.0)) : Variable()};
      });
}

BOOST_AUTO_TEST_CASE(gradgradcheck_catches_a_wrong_second_derivative) {
  auto bad_square = [](const std::vector<Variable>& in) {
    const Variable& x = in[0];
    return record("bad_square", mul(x.data(), x.data()), {x},
                  [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                    return {bad_square_backward(g, sx.variable())};
                  });
  };
  BOOST_TEST(gradcheck(bad_square, {random_leaf({3}, 1)}).passed);  // first order is right
  const GradcheckResult r = gradgradcheck(bad_square, {random_leaf({3}, 1)});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.report().rfind("gradgradcheck failed at ", 0) == 0, r.report());
}

BOOST_AUTO_TEST_CASE(gradgradcheck_checks_the_first_derivatives_too_and_says_so) {
  // A wrong first derivative fails gradgradcheck at its first stage, whose report names it.
  const GradcheckResult r = gradgradcheck(
      [](const std::vector<Variable>& in) { return slightly_wrong_cube(in[0]); }, {random_leaf({3}, 2)});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.check == "gradgradcheck (first derivatives)");
  BOOST_TEST(r.report().rfind("gradgradcheck (first derivatives) failed at ", 0) == 0, r.report());
  const GradcheckResult ok =
      gradgradcheck([](const std::vector<Variable>& in) { return tanh(in[0]); }, {random_leaf({3}, 2)});
  BOOST_TEST(ok.report().rfind("gradgradcheck passed", 0) == 0, ok.report());
}

// docs/writing-an-op.md's example: a user's op with the same mechanism as minigrad's.
Variable cube(const Variable& x) {
  return record("cube", pow(x.data(), 3.0), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  const Variable x = sx.variable();
                  return {mul(mul(g, mul(x, x)), 3.0)};  // d(x³)/dx = 3x²
                });
}

BOOST_AUTO_TEST_CASE(a_user_op_checked_with_the_testing_header) {
  Variable x = random_leaf({3, 2}, 31);
  auto f = [](const std::vector<Variable>& in) { return cube(in[0]); };
  BOOST_TEST(minigrad::testing::gradients_match(f, {x}));
  BOOST_TEST(minigrad::testing::second_derivatives_match(f, {x}));
  // A wrong op fails, and the message names the worst element.
  auto wrong = [](const std::vector<Variable>& in) { return slightly_wrong_cube(in[0]); };
  auto result = minigrad::testing::gradients_match(wrong, {x});
  BOOST_TEST(!result);
  BOOST_TEST(result.message().str().find("input 0") != std::string::npos, result.message().str());
}

BOOST_AUTO_TEST_CASE(readme_hessian_vector_product_matches_finite_differences) {
  auto f = [](const Variable& x) { return sum(tanh(x) * x); };
  Variable x = random_leaf({5}, 11);
  Variable v(Tensor::normal({5}, 0, 1, F64));
  // H·v for f(x) = Σ tanh(x)·x: differentiate (∂f/∂x)·v once more.
  Variable g = grad({f(x)}, {x}, {}, {.create_graph = true})[0];
  Variable hv = grad({sum(g * v)}, {x})[0];
  // Finite differences of the gradient along v: (∇f(x + εv) - ∇f(x - εv)) / 2ε.
  const double eps = 1e-6;
  auto gradient_at = [&](double step) {
    Variable xs(add(x.data(), mul(v.data(), step)), true);
    return grad({f(xs)}, {xs})[0].data();
  };
  const Tensor numeric = div(sub(gradient_at(eps), gradient_at(-eps)), 2 * eps);
  const std::vector<double> a = hv.data().to_vector<double>(), n = numeric.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) BOOST_TEST(std::abs(a[i] - n[i]) <= 1e-5 + 1e-3 * std::abs(n[i]));
}

BOOST_AUTO_TEST_CASE(readme_gradient_penalty_is_minimised) {
  // loss(w) = f² + 0.1·‖∂f/∂x‖², f = Σ tanh(x·w): plain gradient descent on w lowers it, and the penalty
  // term's own gradient (a second derivative) is part of w.grad().
  Variable x = random_leaf({4, 3}, 21), w = random_leaf({3, 2}, 22);
  auto loss_of = [&] {
    Variable fx = sum(tanh(matmul(x, w)));
    Variable dx = grad({fx}, {x}, {}, {.create_graph = true})[0];
    return fx * fx + 0.1 * sum(dx * dx);
  };
  const double first = loss_of().item();
  for (int step = 0; step < 50; ++step) {
    w.zero_grad();
    loss_of().backward();
    NoGradGuard no_grad;
    w.data().add_(w.grad(), -0.05);
  }
  const double last = loss_of().item();
  BOOST_TEST(last < 0.5 * first, "loss " << first << " -> " << last);
  // The penalty's gradient is really there: it differs from the gradient of f² alone.
  w.zero_grad();
  loss_of().backward();
  const Tensor with_penalty = w.grad().clone();
  w.zero_grad();
  Variable fx = sum(tanh(matmul(x, w)));
  (fx * fx).backward();
  BOOST_TEST(max(abs(sub(with_penalty, w.grad()))).item() > 1e-6);
}

// ---- the capture rule ----

BOOST_AUTO_TEST_CASE(modifying_any_saved_tensor_in_place_makes_backward_throw) {
  struct Case {
    const char* name;
    std::function<Variable(std::vector<Variable>&, std::vector<Tensor>&)> build;  // fills inputs, constants
    std::vector<size_t> not_saved = {};  // inputs whose data no gradient needs (layer_norm's bias)
  };
  auto p = [](const Shape& s, uint64_t seed) { return random_leaf(s, seed); };
  auto positive = [](const Shape& s) { return Variable(Tensor::full(s, 2.0, F64), true); };
  const std::vector<Case> cases = {
      {"mul",
       [&](auto& v, auto&) {
         v = {p({3}, 1), p({3}, 2)};
         return mul(v[0], v[1]);
       }},
      {"div",
       [&](auto& v, auto&) {
         v = {p({3}, 1), positive({3})};
         return div(v[0], v[1]);
       }},
      {"rdiv_scalar",
       [&](auto& v, auto&) {
         v = {positive({3})};
         return rdiv(1.0, v[0]);
       }},
      {"pow",
       [&](auto& v, auto&) {
         v = {positive({3})};
         return pow(v[0], 3.0);
       }},
      {"log",
       [&](auto& v, auto&) {
         v = {positive({3})};
         return log(v[0]);
       }},
      {"relu",
       [&](auto& v, auto&) {
         v = {p({3}, 1)};
         return relu(v[0]);
       }},
      {"gelu",
       [&](auto& v, auto&) {
         v = {p({3}, 1)};
         return gelu(v[0]);
       }},
      {"matmul",
       [&](auto& v, auto&) {
         v = {p({2, 3}, 1), p({3, 2}, 2)};
         return matmul(v[0], v[1]);
       }},
      {"layer_norm",
       [&](auto& v, auto&) {
         v = {p({2, 3}, 1), p({3}, 2), p({3}, 3)};
         return layer_norm(v[0], v[1], v[2]);
       },
       {2}},
      {"binary_cross_entropy_with_logits",
       [&](auto& v, auto&) {
         v = {p({3}, 1), Variable(Tensor::full({3}, 0.5, F64), true)};
         return binary_cross_entropy_with_logits(v[0], v[1]);
       }},
      // Saved constants: ids, targets, masks.
      {"embedding",
       [&](auto& v, auto& t) {
         v = {p({4, 2}, 1)};
         t = {Tensor::from_vector<int64_t>({0, 3, 1}, {3})};
         return embedding(v[0], t[0]);
       },
       {0}},
      {"cross_entropy",
       [&](auto& v, auto& t) {
         v = {p({2, 3}, 1)};
         t = {Tensor::from_vector<int64_t>({2, 0}, {2})};
         return cross_entropy(v[0], t[0]);
       }},
      {"cross_entropy",  // with label smoothing and an ignored row
       [&](auto& v, auto& t) {
         v = {p({3, 3}, 1)};
         t = {Tensor::from_vector<int64_t>({2, -100, 0}, {3})};
         return cross_entropy(v[0], t[0], {.label_smoothing = 0.3});
       }},
      {"masked_fill",
       [&](auto& v, auto& t) {
         v = {p({3}, 1)};
         t = {gt(Tensor::from_values({1, -1, 1}, {3}, F64), 0.0)};
         return masked_fill(v[0], t[0], 0.0);
       },
       {0}},
  };
  for (const Case& c : cases) {
    // Each saved input (and each saved constant), modified in place after the forward.
    for (size_t which = 0;; ++which) {
      std::vector<Variable> inputs;
      std::vector<Tensor> constants;
      Variable y = c.build(inputs, constants);
      if (which >= inputs.size() + constants.size()) break;
      if (std::find(c.not_saved.begin(), c.not_saved.end(), which) != c.not_saved.end()) continue;
      const Tensor target = which < inputs.size() ? inputs[which].data() : constants[which - inputs.size()];
      if (!is_floating(target.dtype())) {
        target.fill_(0);  // any in-place write counts
      } else {
        target.add_(Tensor::zeros(target.shape(), target.dtype()));
      }
      bool threw = false;
      try {
        sum(y * Variable(Tensor::normal(y.shape(), 0, 1, F64))).backward();
      } catch (const ModifiedInPlaceError& e) {
        threw = true;
        BOOST_TEST(std::string(e.what()).find(std::string("backward of ") + c.name) != std::string::npos,
                   e.what());
      }
      BOOST_TEST(threw, c.name << ": modifying saved tensor " << which << " in place was not detected");
    }
  }
}

BOOST_AUTO_TEST_CASE(modifying_a_saved_output_in_place_makes_backward_throw) {
  for (auto op : std::vector<std::function<Variable(const Variable&)>>{
           [](const Variable& x) { return exp(x); }, [](const Variable& x) { return tanh(x); },
           [](const Variable& x) { return sigmoid(x); }, [](const Variable& x) { return sqrt(x); },
           [](const Variable& x) { return softmax(x, -1); },
           [](const Variable& x) { return log_softmax(x, -1); }}) {
    Variable x(Tensor::full({3}, 2.0, F64), true);
    Variable y = op(x);
    y.data().add_(Tensor::zeros({3}, F64));
    BOOST_CHECK_THROW(sum(y).backward(), ModifiedInPlaceError);
  }
}

BOOST_AUTO_TEST_CASE(an_operand_is_kept_only_if_the_other_needs_a_gradient) {
  // In w·x with a constant x, only dL/dw = x is needed, so w's data is not kept and changing w after
  // the forward does not affect (or block) the gradient.
  Variable w = leaf({1, 2}, {2});
  Variable x(Tensor::from_values({3, 4}, {2}, F64));
  Variable y = sum(w * x);
  w.data().add_(Tensor::ones({2}, F64));  // an optimizer step between forward and backward
  y.backward();
  expect_close(w.grad(), {3, 4});
  // x is kept: changing it does make backward throw.
  Variable y2 = sum(w * x);
  x.data().add_(Tensor::ones({2}, F64));
  BOOST_CHECK_THROW(y2.backward(), ModifiedInPlaceError);
}

// ---- anomaly mode ----

BOOST_AUTO_TEST_CASE(anomaly_mode_names_the_op_that_made_a_nan_and_its_inputs_chain) {
  Variable x = random_leaf({4, 3}, 5);
  Variable w = random_leaf({3, 2}, 6);
  auto model = [&] {
    Variable h = relu(matmul(x, w));
    return mean(log(h - 10.0));  // log of a negative number, deep in the model
  };
  BOOST_TEST(!AnomalyMode::is_enabled());  // off by default: the NaN passes silently
  BOOST_TEST(std::isnan(model().item()));
  DetectAnomalyGuard anomaly;
  expect_error_containing<AnomalyError>(model, "log: the forward pass produced a NaN or infinity");
  expect_error_containing<AnomalyError>(model, "computed by: add_scalar <- relu <- matmul");
}

BOOST_AUTO_TEST_CASE(anomaly_mode_catches_a_nan_made_by_a_backward) {
  Variable x = leaf({0, 1}, {2});
  Variable y = sum(sqrt(x * 1.0));  // sqrt(0) = 0 is fine; its gradient 1/(2·0) is not
  {
    DetectAnomalyGuard anomaly;
    expect_error_containing<AnomalyError>([&] { y.backward({.retain_graph = true}); },
                                          "backward of sqrt: returned a NaN or infinity in the gradient for "
                                          "input 0; the op's input was computed by: mul_scalar");
  }
  y.backward();  // off again: no check
  BOOST_TEST(std::isinf(x.grad().to_vector<double>()[0]));
}

BOOST_AUTO_TEST_CASE(attention_gradients_with_a_graph_for_the_values_alone) {
  // Only V requires grad and the upstream gradient is a constant: the weights are a constant too, and
  // dV = Pᵀ·g needs neither Q nor K (which were not saved).
  Generator gen(9);
  const Variable q(Tensor::normal({1, 2, 3}, 0, 1, F64, &gen)), k(Tensor::normal({1, 4, 3}, 0, 1, F64, &gen));
  const Variable v(Tensor::normal({1, 4, 2}, 0, 1, F64, &gen), true);
  const Variable y = scaled_dot_product_attention(q, k, v).output;
  const Variable dv = grad({sum(y)}, {v}, {}, {.create_graph = true})[0];
  const Variable plain = grad({sum(scaled_dot_product_attention(q, k, v).output)}, {v})[0];
  expect_close(dv.data(), plain.data().to_vector<double>(), 1e-12);
}

BOOST_AUTO_TEST_SUITE_END()
