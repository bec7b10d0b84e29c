// Forward mode (autograd/forward_ad.h): dual numbers by hand, every case of the gradient-check catalogue
// against reverse mode and against central differences, and the level's rules.
#include <cmath>
#include <sstream>

#include "minigrad/minigrad.h"
#include "test_helpers.h"
#include "tests/gradcheck/cases.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

}  // namespace

BOOST_AUTO_TEST_SUITE(forward_mode)

BOOST_AUTO_TEST_CASE(dual_numbers_by_hand) {
  // x = 3 + ε: x³ = 27 + 27ε (d x³ / dx = 3x² = 27). a = 2 + 5ε, b = 7 - ε: ab = 14 + (2·(-1) + 5·7)ε.
  forward_ad::DualLevel level;
  const Variable x = forward_ad::make_dual(Tensor::full({}, 3.0, F64), Tensor::full({}, 1.0, F64));
  const auto [cube, d_cube] = forward_ad::unpack_dual(x * x * x);
  BOOST_TEST(cube.item() == 27.0);
  BOOST_TEST(d_cube.item() == 27.0);
  const Variable a = forward_ad::make_dual(Tensor::full({}, 2.0, F64), Tensor::full({}, 5.0, F64));
  const Variable b = forward_ad::make_dual(Tensor::full({}, 7.0, F64), Tensor::full({}, -1.0, F64));
  BOOST_TEST(forward_ad::unpack_dual(a * b).tangent.item() == 33.0);
  // A value computed from no dual carries no tangent.
  BOOST_TEST(!forward_ad::unpack_dual(Variable(Tensor::ones({2}, F64)) * 2.0).tangent.defined());
}

BOOST_AUTO_TEST_CASE(every_catalogue_case_against_reverse_mode_and_central_differences) {
  // forward_gradcheck: J·v along a random tangent of every input and parameter, against central
  // differences and against reverse mode's ⟨Jᵀ·u, v⟩.
  Generator g(2024);
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    const checks::Check check = c.make(g);
    const GradcheckResult r = forward_gradcheck(check.f, check.inputs);
    BOOST_TEST(r.passed, c.name << ": " << r.report());
    // Every op in it used a tangent rule of its own: none fell back to its backward.
    BOOST_TEST(r.tangents_through_backward == 0, c.name << ": " << r.tangents_through_backward
                                                        << " ops took their tangent through their backward");
  }
}

BOOST_AUTO_TEST_CASE(every_catalogue_case_forward_over_reverse) {
  // The tangents of each case's gradient, grad(f(x), x, v, create_graph), whose ops are the backward
  // functions' ops and the named backward ops (tanh_backward, ...): their tangent rules, second order.
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    Generator generator(7);
    const checks::Check check = c.make(generator);
    const GradcheckResult r = gradgradcheck(check.f, check.inputs, {.seed = 3, .check_forward_ad = true});
    BOOST_TEST(r.passed, c.name << " on " << checks::shapes_of(check) << ": " << r.report());
    BOOST_TEST(r.check == "gradgradcheck and forward over reverse", c.name << ": " << r.check);
  }
}

BOOST_AUTO_TEST_CASE(an_op_without_a_rule_takes_its_tangent_through_its_backward) {
  // The fallback: an op that gives record() no tangent rule still carries the right tangent, computed
  // from its backward, and forward_gradcheck counts it.
  const auto cube = [](const std::vector<Variable>& in) {
    return record("cube", pow(in[0].data(), 3.0), {in[0]},
                  [sx = SavedTensor(in[0])](const Variable& g, NeedsGrad) -> VariableGrads {
                    return {g * sx.variable() * sx.variable() * 3.0};
                  });
  };
  const Variable x = random_normal({4}, 10, /*requires_grad=*/true);
  const GradcheckResult r =
      forward_gradcheck([&](const std::vector<Variable>& in) { return exp(cube(in)); }, {x});
  BOOST_TEST(r.passed, r.report());
  BOOST_TEST(r.tangents_through_backward == 1);
}

BOOST_AUTO_TEST_CASE(a_wrong_tangent_rule_is_caught_and_a_misshapen_one_named) {
  // A cube whose rule is 1% off: reverse mode passes, forward_gradcheck does not.
  const auto cube_with_rule = [](double factor, bool misshapen) {
    return [=](const std::vector<Variable>& in) {
      const Variable& x = in[0];
      return record(
          "cube", pow(x.data(), 3.0), {x},
          [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
            return {g * sx.variable() * sx.variable() * 3.0};
          },
          [&](const Tangents& t) { return misshapen ? sum(t[0]) : t[0] * x * x * factor; });
    };
  };
  const Variable x = random_normal({4}, 11, /*requires_grad=*/true);
  BOOST_TEST(forward_gradcheck(cube_with_rule(3.0, false), {x}).passed);
  BOOST_TEST(gradcheck(cube_with_rule(3.03, false), {x}).passed);
  const GradcheckResult wrong = forward_gradcheck(cube_with_rule(3.03, false), {x});
  BOOST_TEST(!wrong.passed);
  BOOST_TEST(wrong.tangents_through_backward == 0);
  expect_error<Error>(
      [&] { forward_gradcheck(cube_with_rule(3.0, true), {x}); },
      "cube: its tangent rule gave a float64 tangent of shape [] for a float64 output of shape [4]");
  const auto undefined_rule = [](const std::vector<Variable>& in) {
    return record(
        "cube", pow(in[0].data(), 3.0), {in[0]},
        [](const Variable& g, NeedsGrad) -> VariableGrads { return {g}; },
        [](const Tangents&) { return Variable(); });
  };
  expect_error<Error>([&] { forward_gradcheck(undefined_rule, {x}); },
                      "cube: its tangent rule returned an undefined Variable");
}

BOOST_AUTO_TEST_CASE(a_rule_is_told_which_inputs_carry_tangents) {
  // t[i] gives zeros for an input without a tangent; has(i) still says it carries none afterwards.
  forward_ad::DualLevel level;
  const Variable a = forward_ad::make_dual(random_normal({2}, 12), random_normal({2}, 13));
  const Variable b = random_normal({2}, 14);
  std::vector<bool> seen;
  record(
      "probe", a.data() + b.data(), {a, b},
      [](const Variable& g, NeedsGrad) -> VariableGrads {
        return {g, g};
      },
      [&](const Tangents& t) {
        const Variable zeros = t[1];
        seen = {t.has(0), t.has(1), max(abs(zeros)).item() == 0.0};
        return t[0];
      });
  BOOST_TEST(seen == (std::vector<bool>{true, false, true}));
}

BOOST_AUTO_TEST_CASE(forward_gradcheck_catches_a_wrong_tangent) {
  // A cube whose backward is 1% too large: gradcheck fails it, and so does forward_gradcheck, whose
  // tangents come from that backward.
  const auto wrong_cube = [](const std::vector<Variable>& in) {
    return record("wrong_cube", pow(in[0].data(), 3.0), {in[0]},
                  [sx = SavedTensor(in[0])](const Variable& g, NeedsGrad) -> VariableGrads {
                    return {g * sx.variable() * sx.variable() * 3.03};
                  });
  };
  const Variable x = random_normal({4}, 8, /*requires_grad=*/true);
  const GradcheckResult r = forward_gradcheck(wrong_cube, {x});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.report().find("forward_gradcheck failed at J·v at output") == 0u, r.report());
  // A cube whose backward is right but not differentiable in its upstream gradient (it takes g's values
  // as a constant): reverse mode passes, and only check_forward_ad sees the tangents it cannot give.
  const auto opaque_cube = [](const std::vector<Variable>& in) {
    return record("opaque_cube", pow(in[0].data(), 3.0), {in[0]},
                  [sx = SavedTensor(in[0])](const Variable& g, NeedsGrad) -> VariableGrads {
                    return {Variable(g.data() * sx.get() * sx.get() * 3.0)};
                  });
  };
  BOOST_TEST(gradcheck(opaque_cube, {x}).passed);
  const GradcheckResult both = gradcheck(opaque_cube, {x}, {.check_forward_ad = true});
  BOOST_TEST(!both.passed);
  BOOST_TEST(both.check == "forward_gradcheck");
  const GradcheckResult good =
      gradcheck([](const std::vector<Variable>& in) { return sum(exp(in[0]) * in[0]); }, {x},
                {.check_forward_ad = true});
  BOOST_TEST(good.passed);
  BOOST_TEST(good.check == "gradcheck and forward_gradcheck");
}

BOOST_AUTO_TEST_CASE(a_backward_pass_inside_a_level_carries_no_tangents) {
  // backward() runs with grad mode off: its ops take the duals' values and give plain gradients.
  const Variable x(random_normal({3}, 9).data(), true);
  forward_ad::DualLevel level;
  const Variable dual = forward_ad::make_dual(x, Tensor::ones({3}, F64));
  sum(dual * dual).backward();
  BOOST_TEST(max(abs(x.grad() - x.data() * 2.0)).item() == 0.0);
  // Inside a NoGradGuard a dual still requires grad, so that its ops record and carry its tangent.
  NoGradGuard no_grad;
  BOOST_TEST(forward_ad::make_dual(x, Tensor::ones({3}, F64)).requires_grad());
}

BOOST_AUTO_TEST_CASE(agrees_with_the_double_backward_jvp) {
  const Variable w = random_normal({3, 4}, 1), x = random_normal({2, 4}, 2), v = random_normal({2, 4}, 3);
  const auto f = [&](const Variable& z) { return softmax(matmul(tanh(z), w.t()), 1) * sum(z * z); };
  const Tensor expected = functional::jvp(f, x, v).product.data();
  forward_ad::DualLevel level;
  const Tensor tangent = forward_ad::unpack_dual(f(forward_ad::make_dual(x, v))).tangent.data();
  BOOST_TEST(max(abs(tangent - expected)).item() < 1e-14);
}

BOOST_AUTO_TEST_CASE(unbinds_pieces_carry_their_part_of_the_tangent) {
  forward_ad::DualLevel level;
  const Variable x =
      forward_ad::make_dual(random_normal({3, 2}, 4), Tensor::from_values({1, 2, 3, 4, 5, 6}, {3, 2}, F64));
  const std::vector<Variable> rows = unbind(x, 0);
  expect_equal(forward_ad::unpack_dual(rows[1]).tangent.data(), {3, 4});
  expect_equal(forward_ad::unpack_dual(rows[2] * 2.0).tangent.data(), {10, 12});
}

BOOST_AUTO_TEST_CASE(the_level_owns_the_tangents_and_gradients_still_flow) {
  const Variable x(random_normal({3}, 5).data(), true);
  Variable y;
  {
    forward_ad::DualLevel level;
    const Variable dual = forward_ad::make_dual(x, Tensor::ones({3}, F64));
    y = dual * dual;
    BOOST_TEST(forward_ad::unpack_dual(y).tangent.defined());
    expect_error<Error>([] { forward_ad::DualLevel another; },
                        "forward_ad::DualLevel: a level is already alive on this thread: one at a time");
  }
  BOOST_TEST(!forward_ad::unpack_dual(y).tangent.defined());  // the level's end took it away
  sum(y).backward();                                          // a dual of x passes gradients on to x
  BOOST_TEST(max(abs(x.grad() - x.data() * 2.0)).item() == 0.0);
}

BOOST_AUTO_TEST_CASE(bad_calls_are_named) {
  const Variable x = random_normal({3}, 6);
  expect_error<Error>([&] { forward_ad::make_dual(x, x); },
                      "make_dual: needs a forward_ad::DualLevel alive on this thread");
  forward_ad::DualLevel level;
  expect_error<ShapeError>([&] { forward_ad::make_dual(x, random_normal({2}, 7)); },
                           "make_dual: the tangent has shape [2] but the primal [3]");
  expect_error<DTypeError>(
      [&] { forward_ad::make_dual(Tensor::zeros({2}, DType::Int64), Tensor::zeros({2}, DType::Int64)); },
      "make_dual: the primal is int64: tangents need float32 or float64");
  const Variable dual = forward_ad::make_dual(x, x);
  NoGradGuard no_grad;
  expect_error_containing<Error>([&] { exp(dual); },
                                 "exp: an input carries a tangent, but the op records nothing");
}

BOOST_AUTO_TEST_SUITE_END()
