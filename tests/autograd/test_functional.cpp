// The function transforms (autograd/functional.h): Jacobians and Hessians against the formulas and
// against central differences, the products against the Jacobians they multiply, both ways of building
// a Jacobian, create_graph and strict, and the errors.
#include <cmath>
#include <limits>

#include "minigrad/minigrad.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

// d f(x) / d x by central differences (step 1e-6), of shape f(x).shape + x.shape, from the tensors alone.
Tensor numerical_jacobian(const functional::UnaryFunction& f, const Tensor& x) {
  NoGradGuard no_grad;
  const Tensor base = x.contiguous();
  const Tensor y = f(Variable(base)).data();
  Shape shape = y.shape();
  for (int64_t d : x.shape()) shape.push_back(d);
  Tensor jacobian = Tensor::zeros({y.numel(), x.numel()}, F64);
  const double h = 1e-6;
  for (int64_t e = 0; e < x.numel(); ++e) {
    Tensor plus = base.clone(), minus = base.clone();
    plus.reshape({-1}).select(0, e).add_(Tensor::full({}, h, F64));
    minus.reshape({-1}).select(0, e).add_(Tensor::full({}, -h, F64));
    const Tensor column = (f(Variable(plus)).data() - f(Variable(minus)).data()).reshape({-1}) / (2 * h);
    jacobian.select(1, e).copy_(column);
  }
  return jacobian.reshape(shape);
}

// The (n, n) matrix with d on its diagonal.
Tensor diagonal(const Tensor& d) {
  const int64_t n = d.numel();
  Tensor out = Tensor::zeros({n, n}, F64);
  const Tensor flat = d.contiguous().reshape({n});
  for (int64_t i = 0; i < n; ++i) out.data_ptr<double>()[i * n + i] = flat.at({i});
  return out;
}

double max_difference(const Tensor& a, const Tensor& b) {
  BOOST_TEST_REQUIRE(a.shape() == b.shape(), a.shape().str() << " against " << b.shape().str());
  return max(abs(a - b)).item();
}

// w·x for a matrix w and a vector x.
Variable mv(const Variable& w, const Variable& x) {
  return reshape(matmul(w, reshape(x, {x.numel(), 1})), {w.shape()[0]});
}

// A function of R^4 -> R^3 that uses matmul, tanh, products and a sum.
Variable mixed(const Variable& x) {
  const Variable w = random_normal({3, 4}, 11);
  return tanh(mv(w, x)) * sum(x * x) + x.slice(0, 0, 3);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_transforms)

BOOST_AUTO_TEST_CASE(jacobian_of_a_linear_map_is_its_matrix_both_ways) {
  const Variable a = random_normal({3, 4}, 1);
  const auto f = [&](const Variable& x) { return mv(a, x); };
  const Variable x = random_normal({4}, 2);
  for (functional::Mode mode : {functional::Mode::Reverse, functional::Mode::Forward}) {
    const Variable j = functional::jacobian(f, x, {.mode = mode});
    BOOST_TEST(max_difference(j.data(), a.data()) == 0.0);
    BOOST_TEST(!j.requires_grad());
  }
}

BOOST_AUTO_TEST_CASE(jacobian_matches_central_differences_and_both_ways_agree) {
  const Variable x = random_normal({4}, 3);
  const Tensor numerical = numerical_jacobian(mixed, x.data());
  const Variable reverse = functional::jacobian(mixed, x);
  const Variable forward = functional::jacobian(mixed, x, {.mode = functional::Mode::Forward});
  BOOST_TEST(reverse.shape() == (Shape{3, 4}));
  BOOST_TEST(max_difference(reverse.data(), numerical) < 1e-8);
  BOOST_TEST(max_difference(forward.data(), reverse.data()) < 1e-14);
}

BOOST_AUTO_TEST_CASE(jacobian_blocks_have_output_shape_then_input_shape) {
  // f(a, b) = (a ⊙ b, Σ a): d(a⊙b)/da = diag(b), d(a⊙b)/db = diag(a), dΣa/da = 1, dΣa/db = 0.
  const Variable a = random_normal({2, 3}, 4), b = random_normal({2, 3}, 5);
  const functional::Function f = [](const std::vector<Variable>& in) {
    return std::vector<Variable>{in[0] * in[1], sum(in[0])};
  };
  for (functional::Mode mode : {functional::Mode::Reverse, functional::Mode::Forward}) {
    const auto j = functional::jacobian(f, {a, b}, {.mode = mode});
    BOOST_TEST(j[0][0].shape() == (Shape{2, 3, 2, 3}));
    BOOST_TEST(j[1][0].shape() == (Shape{2, 3}));
    const Tensor diag_b = diagonal(b.data()).reshape({2, 3, 2, 3});
    const Tensor diag_a = diagonal(a.data()).reshape({2, 3, 2, 3});
    BOOST_TEST(max_difference(j[0][0].data(), diag_b) == 0.0);
    BOOST_TEST(max_difference(j[0][1].data(), diag_a) == 0.0);
    BOOST_TEST(max_difference(j[1][0].data(), Tensor::ones({2, 3}, F64)) == 0.0);
    BOOST_TEST(max_difference(j[1][1].data(), Tensor::zeros({2, 3}, F64)) == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(vjp_and_jvp_are_the_jacobian_times_a_vector) {
  const Variable x = random_normal({4}, 6), u = random_normal({3}, 7), v = random_normal({4}, 8);
  const Tensor j = functional::jacobian(mixed, x).data();  // (3, 4)
  const auto [y1, uj] = functional::vjp(mixed, x, u);
  const auto [y2, jv] = functional::jvp(mixed, x, v);
  BOOST_TEST(max_difference(y1.data(), mixed(x).data()) == 0.0);
  BOOST_TEST(max_difference(y2.data(), y1.data()) == 0.0);
  BOOST_TEST(max_difference(uj.data(), matmul(u.data().reshape({1, 3}), j).reshape({4})) < 1e-14);
  BOOST_TEST(max_difference(jv.data(), matmul(j, v.data().reshape({4, 1})).reshape({3})) < 1e-14);
}

BOOST_AUTO_TEST_CASE(hessian_of_a_cubic_and_of_a_quadratic_form) {
  // Σ x³: H = diag(6x). xᵀAx: H = A + Aᵀ.
  const Variable x = random_normal({5}, 9), a = random_normal({5, 5}, 10);
  const Tensor six_x = diagonal(x.data() * 6.0);
  const auto quadratic = [&](const Variable& z) { return sum(z * mv(a, z)); };
  for (functional::Mode mode : {functional::Mode::Reverse, functional::Mode::Forward}) {
    const Variable cubic_h =
        functional::hessian([](const Variable& z) { return sum(z * z * z); }, x, {.mode = mode});
    BOOST_TEST(max_difference(cubic_h.data(), six_x) < 1e-14);
    const Variable h = functional::hessian(quadratic, x, {.mode = mode});
    BOOST_TEST(max_difference(h.data(), a.data() + a.data().transpose(0, 1)) < 1e-14);
  }
}

BOOST_AUTO_TEST_CASE(hessian_matches_central_differences_of_the_gradient) {
  // log Σ exp((w·x) ⊙ x): softmax's family, with a Hessian full of off-diagonal terms.
  const Variable w = random_normal({4, 4}, 12);
  const auto f = [&](const Variable& x) { return log(sum(exp(mv(w, x) * x))); };
  const auto gradient = [&](const Variable& x) { return functional::vjp(f, x).product; };
  const Variable x = random_normal({4}, 13);
  const Variable h = functional::hessian(f, x);
  BOOST_TEST(h.shape() == (Shape{4, 4}));
  BOOST_TEST(max_difference(h.data(), numerical_jacobian(gradient, x.data())) < 1e-8);
}

BOOST_AUTO_TEST_CASE(hvp_and_vhp_are_the_hessian_times_a_vector) {
  const Variable w = random_normal({4, 4}, 14);
  const auto f = [&](const Variable& x) { return sum(tanh(mv(w, x)) * x * x); };
  const Variable x = random_normal({4}, 15), v = random_normal({4}, 16);
  const Tensor h = functional::hessian(f, x).data();
  const Tensor hv = matmul(h, v.data().reshape({4, 1})).reshape({4});
  const Tensor vh = matmul(v.data().reshape({1, 4}), h).reshape({4});
  const auto [value, hvp] = functional::hvp(f, x, v);
  BOOST_TEST(value.shape() == Shape{});
  BOOST_TEST(value.item() == f(x).item());
  BOOST_TEST(max_difference(hvp.data(), hv) < 1e-13);
  BOOST_TEST(max_difference(functional::vhp(f, x, v).product.data(), vh) < 1e-13);
  // Forward over reverse: v as x's tangent, carried through f and its gradient.
  const auto [forward_value, forward_hvp] = functional::hvp(f, x, v, {.mode = functional::Mode::Forward});
  BOOST_TEST(forward_value.item() == f(x).item());
  BOOST_TEST(max_difference(forward_hvp.data(), hv) < 1e-13);
  BOOST_TEST(!forward_ad::unpack_dual(forward_hvp).tangent.defined());
  expect_error<ValueError>(
      [&] { functional::hvp(f, x, v, {.create_graph = true, .mode = functional::Mode::Forward}); },
      "hvp: create_graph is not supported with Mode::Forward: forward mode's tangents carry no graph");
  expect_error<ValueError>(
      [&] { functional::hvp(f, x, v, {.strict = true, .mode = functional::Mode::Forward}); },
      "hvp: strict is not supported with Mode::Forward (as in PyTorch)");
}

BOOST_AUTO_TEST_CASE(several_inputs_in_the_hessian_and_the_products) {
  // f(a, b) = Σ a² b: H_aa = diag(2b), H_ab = diag(2a), H_bb = 0.
  const Variable a = random_normal({3}, 17), b = random_normal({3}, 18), va = random_normal({3}, 19),
                 vb = random_normal({3}, 20);
  const functional::Function f = [](const std::vector<Variable>& in) {
    return std::vector<Variable>{sum(in[0] * in[0] * in[1])};
  };
  const auto h = functional::hessian(f, {a, b});
  BOOST_TEST(max_difference(h[0][0].data(), diagonal(b.data() * 2.0)) < 1e-15);
  BOOST_TEST(max_difference(h[0][1].data(), diagonal(a.data() * 2.0)) < 1e-15);
  BOOST_TEST(max_difference(h[1][1].data(), Tensor::zeros({3, 3}, F64)) == 0.0);
  const auto [values, hv] = functional::hvp(f, {a, b}, {va, vb});
  BOOST_TEST(values.size() == 1u);
  // (H v)_a = 2b ⊙ va + 2a ⊙ vb, (H v)_b = 2a ⊙ va.
  BOOST_TEST(max_difference(hv[0].data(), (b.data() * va.data() + a.data() * vb.data()) * 2.0) < 1e-15);
  BOOST_TEST(max_difference(hv[1].data(), a.data() * va.data() * 2.0) < 1e-15);
  const auto [forward_values, forward_hv] =
      functional::hvp(f, {a, b}, {va, vb}, {.mode = functional::Mode::Forward});
  BOOST_TEST(max_difference(forward_hv[0].data(), hv[0].data()) < 1e-15);
  BOOST_TEST(max_difference(forward_hv[1].data(), hv[1].data()) < 1e-15);
}

BOOST_AUTO_TEST_CASE(create_graph_lets_a_result_be_differentiated_again) {
  // f = Σ x⁴: H·v = 12x² ⊙ v, and d Σ(H·v) / dx = 24 x ⊙ v.
  const Variable x(random_normal({3}, 21).data(), true);
  const Variable v = random_normal({3}, 22);
  const auto f = [](const Variable& z) { return sum(z * z * z * z); };
  const auto [value, hv] = functional::hvp(f, x, v, {.create_graph = true});
  BOOST_TEST(hv.requires_grad());
  BOOST_TEST(value.requires_grad());
  sum(hv).backward();
  BOOST_TEST(max_difference(x.grad(), x.data() * v.data() * 24.0) < 1e-13);
  // Without it, the results are plain values and the caller's graph is untouched.
  const Variable y(random_normal({3}, 23).data(), true);
  const auto [plain_value, plain] = functional::hvp(f, y, v);
  BOOST_TEST(!plain.requires_grad());
  BOOST_TEST(!plain_value.requires_grad());
  BOOST_TEST(!y.grad().defined());
}

BOOST_AUTO_TEST_CASE(create_graph_jacobian_and_jvp_keep_their_graphs) {
  // J of x ↦ x² is diag(2x): d Σ J / dx = 2. jvp(tanh, v) = (1 - tanh²x) ⊙ v: d Σ / dx =
  // -2 tanh x (1 - tanh²x) ⊙ v.
  const Variable x(random_normal({3}, 24).data(), true);
  sum(functional::jacobian([](const Variable& z) { return z * z; }, x, {.create_graph = true})).backward();
  BOOST_TEST(max_difference(x.grad(), Tensor::full({3}, 2.0, F64)) == 0.0);
  const Variable v = random_normal({3}, 25);
  const Variable x2(random_normal({3}, 26).data(), true);
  sum(functional::jvp([](const Variable& z) { return tanh(z); }, x2, v, {.create_graph = true}).product)
      .backward();
  const Tensor t = tanh(x2.data());
  BOOST_TEST(max_difference(x2.grad(), t * (1.0 - t * t) * v.data() * -2.0) < 1e-15);
}

BOOST_AUTO_TEST_CASE(an_output_that_ignores_an_input_gives_zeros_or_with_strict_an_error) {
  const Variable a = random_normal({2}, 27), b = random_normal({3}, 28);
  const functional::Function f = [](const std::vector<Variable>& in) {
    return std::vector<Variable>{in[0] * 2.0};
  };
  const auto j = functional::jacobian(f, {a, b});
  BOOST_TEST(max_difference(j[0][1].data(), Tensor::zeros({2, 3}, F64)) == 0.0);
  const auto [ys, jv] = functional::jvp(f, {a, b}, {random_normal({2}, 29), random_normal({3}, 30)});
  BOOST_TEST(max_difference(jv[0].data(), random_normal({2}, 29).data() * 2.0) == 0.0);
  expect_error_containing<ValueError>(
      [&] {
        functional::jacobian(f, {a, b}, {.strict = true});
      },
      "jacobian: no output depends on input 1 (strict)");
  const auto constant = [](const Variable&) { return Variable(Tensor::ones({2}, F64)); };
  BOOST_TEST(max_difference(functional::jacobian(constant, a).data(), Tensor::zeros({2, 2}, F64)) == 0.0);
  BOOST_TEST(max_difference(functional::jvp(constant, a, random_normal({2}, 31)).product.data(),
                            Tensor::zeros({2}, F64)) == 0.0);
  expect_error_containing<ValueError>(
      [&] { functional::vjp(constant, a, random_normal({2}, 32), {.strict = true}); },
      "vjp: output 0 does not depend on the inputs (strict)");
}

BOOST_AUTO_TEST_CASE(each_input_is_differentiated_on_its_own) {
  // f(a, b) = a ⊙ b with the same x passed twice, and with b = 2a computed from a: d/da is diag(b) either
  // way, as in PyTorch, with or without create_graph.
  const Variable x(random_normal({3}, 40).data(), true);
  const Variable twice_x = x * 2.0;
  const functional::Function f = [](const std::vector<Variable>& in) {
    return std::vector<Variable>{in[0] * in[1]};
  };
  for (bool create_graph : {false, true}) {
    const auto same = functional::jacobian(f, {x, x}, {.create_graph = create_graph});
    BOOST_TEST(max_difference(same[0][0].data(), diagonal(x.data())) == 0.0);
    const auto computed = functional::jacobian(f, {x, twice_x}, {.create_graph = create_graph});
    BOOST_TEST(max_difference(computed[0][0].data(), diagonal(twice_x.data())) == 0.0);
    BOOST_TEST(max_difference(computed[0][1].data(), diagonal(x.data())) == 0.0);
  }
  BOOST_TEST(!x.grad().defined());
}

BOOST_AUTO_TEST_CASE(create_graph_keeps_the_graph_inside_no_grad_and_strict_refuses_columns) {
  const Variable x(random_normal({3}, 41).data(), true);
  const auto square = [](const Variable& z) { return z * z; };
  {
    NoGradGuard no_grad;
    BOOST_TEST(functional::jacobian(square, x, {.create_graph = true}).requires_grad());
    BOOST_TEST(
        functional::hessian([](const Variable& z) { return sum(z * z * z); }, x, {.create_graph = true})
            .requires_grad());
  }
  expect_error<ValueError>(
      [&] { functional::jacobian(square, x, {.strict = true, .mode = functional::Mode::Forward}); },
      "jacobian: strict is not supported with Mode::Forward (as in PyTorch)");
}

BOOST_AUTO_TEST_CASE(works_inside_no_grad_and_propagates_nan) {
  NoGradGuard no_grad;
  const Variable x(Tensor::from_values({1.0, std::numeric_limits<double>::quiet_NaN()}, {2}, F64));
  const Variable j = functional::jacobian([](const Variable& z) { return z * z; }, x);
  // Row 0 is the gradient of z₀² with the seed (1, 0): 2·1, and 0·NaN. As in PyTorch, the NaN reaches
  // every entry that multiplies it, zeros included.
  BOOST_TEST(j.data().at({0, 0}) == 2.0);
  BOOST_TEST(std::isnan(j.data().at({0, 1})));
  BOOST_TEST(j.data().at({1, 0}) == 0.0);
  BOOST_TEST(std::isnan(j.data().at({1, 1})));
}

BOOST_AUTO_TEST_CASE(bad_calls_name_the_transform_and_the_shapes) {
  const Variable x = random_normal({3}, 33);
  const auto f = [](const Variable& z) { return z * 2.0; };
  expect_error<ShapeError>([&] { functional::vjp(f, x, random_normal({4}, 34)); },
                           "vjp: v[0] has shape [4] but output 0 has shape [3]");
  expect_error<ShapeError>(
      [&] {
        functional::jvp(f, x, random_normal({2, 3}, 35));
      },
      "jvp: v[0] has shape [2,3] but input 0 has shape [3]");
  expect_error<ValueError>([&] { functional::vjp(f, x); },
                           "vjp: v is needed: output 0 has shape [3], not one element");
  expect_error<ValueError>([&] { functional::hessian(f, x); },
                           "hessian: the function must return one output of one element, not 1 of shape [3]");
  expect_error<DTypeError>([&] { functional::jacobian(f, Variable(Tensor::zeros({2}, DType::Int64))); },
                           "jacobian: input 0 is int64: derivatives need float32 or float64");
  expect_error<ValueError>([&] { functional::jacobian(f, Variable()); }, "jacobian: input 0 is undefined");
  expect_error<ValueError>([&] { functional::jacobian([](const Variable&) { return Variable(); }, x); },
                           "jacobian: the function's output 0 is undefined");
}

BOOST_AUTO_TEST_SUITE_END()
