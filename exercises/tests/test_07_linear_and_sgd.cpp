// Task 7's checks: MyLinear against nn::Linear, and train_with_sgd against nn::Linear trained by
// optim::SGD, on data generated from a known linear map.
#define BOOST_TEST_MODULE exercise_07_linear_and_sgd
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>

#include "exercises/07_linear_and_sgd.h"
#include "exercises/tests/checks.h"

using namespace minigrad;
using namespace minigrad::exercises;

namespace {

// y = x·Aᵀ + c + noise of stddev 0.01, for x (64, 3) and A (2, 3): the best loss is about 1e-4.
struct Data {
  Variable x, y;
};
Data generated_data() {
  Generator gen(7);
  const Tensor x = Tensor::normal({64, 3}, 0, 1, DType::Float64, &gen);
  const Tensor a = Tensor::from_values({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3}, DType::Float64);
  const Tensor c = Tensor::from_values({0.3, -0.2}, {2}, DType::Float64);
  const Tensor noise = Tensor::normal({64, 2}, 0, 0.01, DType::Float64, &gen);
  return {Variable(x), Variable(add(add(matmul(x, a.t()), c), noise))};
}

// MyLinear(3, 2) in float64, its parameters drawn from Generator(seed).
std::unique_ptr<MyLinear> float64_model(uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_unique<MyLinear>(3, 2, &gen);
  model->to(DType::Float64);
  return model;
}

// nn::Linear(3, 2) in float64 with `model`'s weight and bias.
std::unique_ptr<nn::Linear> copy_as_nn_linear(const MyLinear& model) {
  auto linear = std::make_unique<nn::Linear>(3, 2);
  linear->to(DType::Float64);
  linear->weight.data().copy_(model.weight.data());
  linear->bias.data().copy_(model.bias.data());
  return linear;
}

}  // namespace

BOOST_AUTO_TEST_CASE(registers_weight_and_bias) {
  Generator gen(1);
  const MyLinear model(3, 2, &gen);
  const auto named = model.named_parameters();
  BOOST_TEST_REQUIRE(named.size() == 2u,
                     "MyLinear has " << named.size() << " parameters: register two, with register_parameter");
  BOOST_TEST(
      (named[0].first == "weight" && named[1].first == "bias"),
      "the parameters are named " << named[0].first << " and " << named[1].first << ": weight, then bias");
  BOOST_TEST((model.weight.shape() == Shape{2, 3} && model.bias.shape() == Shape{2}),
             "weight " << model.weight.shape().str() << ", bias " << model.bias.shape().str()
                       << ": they should be (out, in) = [2,3] and (out) = [2]");
  const double bound = 1 / std::sqrt(3.0);
  const Tensor w = model.weight.data();
  BOOST_TEST((max(abs(w)).item() <= bound && max(w).item() > min(w).item()),
             "the weights should be drawn from U(-1/√in, 1/√in), with the generator given");
}

BOOST_AUTO_TEST_CASE(forward_matches_nn_linear) {
  const auto model = float64_model(2);
  const auto linear = copy_as_nn_linear(*model);
  const Data data = generated_data();
  const Variable y = (*model)(data.x);
  BOOST_TEST(close(y.data(), (*linear)(data.x).data()),
             "forward(x) is " << describe(y.data()) << ": it should be x·Wᵀ + b, (64, 3) -> [64,2]");
}

BOOST_AUTO_TEST_CASE(gradients_reach_the_input_and_both_parameters) {
  const auto model = float64_model(3);
  Generator gen(3);
  const GradcheckResult r = gradcheck([&](const std::vector<Variable>& in) { return (*model)(in[0]); },
                                      {random_leaf({4, 3}, gen), model->weight, model->bias});
  BOOST_TEST(r.passed, r.report() << ". Build forward from ops on Variables (matmul, transpose, +)");
}

BOOST_AUTO_TEST_CASE(training_reaches_a_small_loss) {
  const auto model = float64_model(4);
  const Data data = generated_data();
  const std::vector<double> losses = train_with_sgd(*model, data.x, data.y, 300, 0.1);
  BOOST_TEST_REQUIRE(losses.size() == 300u,
                     "train_with_sgd returned " << losses.size() << " losses for 300 steps");
  BOOST_TEST(losses.back() < 1e-3, "after 300 steps of lr 0.1 the loss is "
                                       << losses.back() << " (first " << losses.front()
                                       << "): it should be below 1e-3. Did "
                                          "you zero the gradients each step?");
}

BOOST_AUTO_TEST_CASE(training_matches_nn_linear_and_sgd) {
  const auto model = float64_model(5);
  const auto linear = copy_as_nn_linear(*model);
  const Data data = generated_data();
  const std::vector<double> losses = train_with_sgd(*model, data.x, data.y, 20, 0.1);
  optim::SGD sgd(linear->named_parameters(), {.lr = 0.1});
  for (int step = 0; step < 20 && step < static_cast<int>(losses.size()); ++step) {
    const Variable loss = mse_loss((*linear)(data.x), data.y);
    sgd.zero_grad();
    loss.backward();
    sgd.step();
    BOOST_TEST_CONTEXT("step " << step) {
      BOOST_TEST(std::abs(losses[step] - loss.item()) <= 1e-10,
                 "your loss " << losses[step] << ", nn::Linear with optim::SGD's " << loss.item()
                              << ": each step is p ← p − lr·p.grad() after zero_grad and backward");
    }
  }
  BOOST_TEST(close(model->weight.data(), linear->weight.data(), 1e-10),
             "after 20 steps the weights differ from SGD's");
}
