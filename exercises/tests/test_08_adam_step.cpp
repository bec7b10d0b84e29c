// Task 8's checks: MyAdam against optim::Adam, step by step in float64, on a loss whose gradient changes
// with the parameters.
#define BOOST_TEST_MODULE exercise_08_adam_step
#include <boost/test/unit_test.hpp>

#include <map>

#include "exercises/08_adam_step.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

// Two parameters, p (3, 4) and q (5), and loss = Σ c·(p − t)² + Σ q⁴, the same values in every copy.
struct Problem {
  Problem() {
    Generator gen(11);
    p = random_leaf({3, 4}, gen);
    q = random_leaf({5}, gen);
    target = Tensor::normal({3, 4}, 0, 1, DType::Float64, &gen);
    scale = Tensor::uniform({3, 4}, 0.1, 2, DType::Float64, &gen);
  }
  // One backward pass, after zero_grad; without q, q takes no part and gets no gradient.
  void backward(optim::Optimizer& optimizer, bool with_q = true) const {
    optimizer.zero_grad();
    Variable loss = sum(Variable(scale) * pow(p - Variable(target), 2));
    if (with_q) loss = loss + sum(pow(q, 4));
    loss.backward();
  }
  Variable p, q;
  Tensor target, scale;
};

// `steps` steps of MyAdam and of optim::Adam with the same options, each checked against the other.
void check_steps_against_adam(const MyAdamOptions& options, int steps, const std::string& hint) {
  Problem yours, reference;
  MyAdam mine({yours.p, yours.q}, options);
  optim::Adam adam({reference.p, reference.q},
                   {.lr = options.lr, .betas = {options.beta1, options.beta2}, .eps = options.eps});
  for (int step = 1; step <= steps; ++step) {
    yours.backward(mine);
    reference.backward(adam);
    mine.step();
    adam.step();
    BOOST_TEST_CONTEXT("after step " << step) {
      BOOST_TEST(close(yours.p.data(), reference.p.data()), "p differs from optim::Adam's: " << hint);
      BOOST_TEST(close(yours.q.data(), reference.q.data()), "q differs from optim::Adam's: " << hint);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_step_matches_adam) {
  check_steps_against_adam(
      {.lr = 0.1}, 1,
      "on the first step m̂ = g and v̂ = g², so each weight moves by about lr (0.1) against "
      "its gradient's sign");
}

BOOST_AUTO_TEST_CASE(ten_steps_match_adam) {
  check_steps_against_adam({.lr = 0.05}, 10, "with t counting each parameter's steps, m̂ = m / (1 − β1^t)");
  check_steps_against_adam({.lr = 0.02, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-3}, 10,
                           "with other betas and eps: use options.beta1, options.beta2 and options.eps");
}

BOOST_AUTO_TEST_CASE(a_parameter_without_a_gradient_is_skipped) {
  Problem yours, reference;
  MyAdam mine({yours.p, yours.q}, {.lr = 0.05});
  optim::Adam adam({reference.p, reference.q}, {.lr = 0.05});
  for (int step = 1; step <= 6; ++step) {
    const bool with_q = step < 3 || step > 4;  // q gets no gradient on steps 3 and 4
    yours.backward(mine, with_q);
    reference.backward(adam, with_q);
    mine.step();
    adam.step();
    BOOST_TEST_CONTEXT("after step " << step << (with_q ? "" : ", where q had no gradient")) {
      BOOST_TEST(
          close(yours.q.data(), reference.q.data()),
          "q differs from optim::Adam's: skip a parameter whose grad() is undefined, and leave its m, v and "
          "step count as they are");
      BOOST_TEST(close(yours.p.data(), reference.p.data()), "p differs from optim::Adam's");
    }
  }
}

BOOST_AUTO_TEST_CASE(keeps_its_state_as_adam_does) {
  Problem yours, reference;
  MyAdam mine({yours.p, yours.q}, {.lr = 0.05});
  optim::Adam adam({reference.p, reference.q}, {.lr = 0.05});
  for (int step = 1; step <= 3; ++step) {
    yours.backward(mine);
    reference.backward(adam);
    mine.step();
    adam.step();
  }
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : mine.state_tensors()) state[name] = t;
  for (const auto& [name, t] : adam.state_tensors()) {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(
          (state.count(name) && close(state[name].to(DType::Float64), t.to(DType::Float64))),
          "state_[i] should hold \"step\" (an int64 scalar: 3), \"exp_avg\" (m) and \"exp_avg_sq\" (v), as "
          "optim::Adam's does");
    }
  }
}
