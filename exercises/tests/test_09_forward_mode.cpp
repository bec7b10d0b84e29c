// Task 9's checks: my_logsumexp's tangent rule against central differences and reverse mode, along a
// row's shift, and at large inputs; my_jvp against the double-backward jvp, on a composition.
#define BOOST_TEST_MODULE exercise_09_forward_mode
#include <boost/test/unit_test.hpp>

#include "exercises/09_forward_mode.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

const char* const kRuleHint =
    "ẏ[n] = Σ_c softmax(x)[n][c]·ẋ[n][c]: the weights the backward spreads g by, summed against t[0] over "
    "each row (sum over dim 1), a tangent of shape (N)";

// f(x) = my_logsumexp(tanh(x·W)): a composition of minigrad's ops and yours.
struct Composition {
  Variable w;
  Variable operator()(const Variable& x) const { return my_logsumexp(tanh(matmul(x, w))); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(tangent_matches_central_differences_and_reverse_mode) {
  Generator gen(1);
  GradcheckResult r;
  const Variable x = random_leaf({3, 5}, gen, 2.0);
  const auto f = [](const std::vector<Variable>& in) { return my_logsumexp(in[0]); };
  if (runs_without_error(kRuleHint, [&] { r = forward_gradcheck(f, {x}); })) {
    BOOST_TEST(r.passed, r.report() << ". " << kRuleHint);
  }
}

BOOST_AUTO_TEST_CASE(moving_a_row_by_c_moves_its_value_by_c) {
  // log Σ exp(x + c) = c + log Σ exp(x): along ẋ = c on every entry of a row, ẏ = c, whatever x is
  // (the weights sum to 1).
  Generator gen(2);
  const Tensor x = Tensor::normal({2, 4}, 0, 3, DType::Float64, &gen);
  const Tensor v = Tensor::from_values({2, 2, 2, 2, -0.5, -0.5, -0.5, -0.5}, {2, 4}, DType::Float64);
  forward_ad::DualLevel level;
  Variable tangent;
  if (!runs_without_error(kRuleHint, [&] {
        tangent = forward_ad::unpack_dual(my_logsumexp(forward_ad::make_dual(x, v))).tangent;
      })) {
    return;
  }
  BOOST_TEST(close(tangent.data(), Tensor::from_values({2, -0.5}, {2}, DType::Float64)),
             "along a direction of 2 on row 0 and -0.5 on row 1 the tangent is "
                 << tangent.data() << ", not [2, -0.5]: " << kRuleHint);
}

BOOST_AUTO_TEST_CASE(large_inputs_give_finite_tangents) {
  // Rows of size 1000 and more: exp(x) overflows, softmax (which subtracts each row's largest) does not.
  const Tensor x = Tensor::from_values({1000, 1001, 999, -5, 0, 5}, {2, 3}, DType::Float64);
  const Tensor v = Tensor::from_values({1, 2, 3, 1, 1, 1}, {2, 3}, DType::Float64);
  forward_ad::DualLevel level;
  Variable tangent;
  if (!runs_without_error(kRuleHint, [&] {
        tangent = forward_ad::unpack_dual(my_logsumexp(forward_ad::make_dual(x, v))).tangent;
      })) {
    return;
  }
  // Row 0: softmax weights of (1000, 1001, 999) against (1, 2, 3); row 1: v is 1 everywhere, so 1.
  const Tensor weights = softmax(Tensor::from_values({0, 1, -1}, {1, 3}, DType::Float64), 1);
  const double row0 = sum(mul(weights, Tensor::from_values({1, 2, 3}, {1, 3}, DType::Float64))).item();
  BOOST_TEST(close(tangent.data(), Tensor::from_values({row0, 1}, {2}, DType::Float64)),
             "the tangent at large x is " << tangent.data() << ": " << kRuleHint
                                          << ", with softmax (not exp(x) / Σ exp(x), which overflows)");
}

BOOST_AUTO_TEST_CASE(jvp_of_a_composition_matches_the_double_backward_one) {
  Generator gen(3);
  const Composition f{Variable(Tensor::normal({4, 3}, 0, 1, DType::Float64, &gen))};
  const Variable x(Tensor::normal({2, 4}, 0, 1, DType::Float64, &gen));
  const Variable v(Tensor::normal({2, 4}, 0, 1, DType::Float64, &gen));
  // functional::jvp takes J·v by two backward passes (the double-backward trick), not by forward mode.
  const Tensor expected = functional::jvp(f, x, v).product.data();
  const Variable jv = my_jvp(f, x, v);
  BOOST_TEST(close(jv.data(), expected),
             "my_jvp gave " << describe(jv.data()) << " " << jv.data() << ", not J·v " << expected
                            << ": make_dual(x, v), call f, unpack_dual's tangent");
}

BOOST_AUTO_TEST_CASE(jvp_is_forward_mode) {
  // An op whose backward is first order only (on Tensors): two backward passes (functional::jvp) cannot
  // go through it, forward mode, by its tangent rule, can.
  const auto cube = [](const Variable& x) {
    return record(
        "first_order_cube", pow(x.data(), 3.0), {x},
        [sx = SavedTensor(x)](const Tensor& g, NeedsGrad) -> Grads {
          return {mul(mul(g, pow(sx.get(), 2.0)), 3.0)};
        },
        [&](const Tangents& t) { return t[0] * x * x * 3.0; });
  };
  const Variable x(Tensor::from_values({1, 2, -1}, {3}, DType::Float64));
  const Variable v(Tensor::from_values({1, 0.5, 2}, {3}, DType::Float64));
  Variable jv;
  if (!runs_without_error("my_jvp threw: carry v as x's tangent (make_dual) through one call of f; two "
                          "backward passes (functional::jvp) cannot go through a first-order-only op",
                          [&] { jv = my_jvp(cube, x, v); })) {
    return;
  }
  BOOST_TEST(close(jv.data(), Tensor::from_values({3, 6, 6}, {3}, DType::Float64)),
             "J·v of x³ along v is 3x²·v = [3, 6, 6], got " << jv.data());
}

BOOST_AUTO_TEST_CASE(jvp_ends_its_level_and_handles_a_constant_function) {
  const Variable x(Tensor::from_values({1, 2}, {1, 2}, DType::Float64));
  const Variable v(Tensor::from_values({1, 0}, {1, 2}, DType::Float64));
  // f does not depend on x: J = 0.
  const Variable zero =
      my_jvp([](const Variable&) { return Variable(Tensor::ones({3}, DType::Float64)); }, x, v);
  BOOST_TEST(close(zero.data(), Tensor::zeros({3}, DType::Float64)),
             "for an f that does not read x, J·v is zeros of f(x)'s shape, got " << describe(zero.data()));
  // The level ended with my_jvp: a new one can start (one alive already would make this throw).
  BOOST_CHECK_NO_THROW(forward_ad::DualLevel another);
}
