// Module hooks (nn/module_hooks.h): a forward hook that sees and replaces an output, full backward hooks
// that see d loss / d input and d loss / d output and replace the former, hooks removed before the call
// or before backward, several inputs, inputs that need no gradient, a module called twice, a module of
// one's own with no hook code, and the errors.
#include <memory>
#include <string>
#include <vector>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

std::shared_ptr<nn::Linear> linear_3_to_2() {
  auto fc = std::make_shared<nn::Linear>(3, 2);
  fc->to(DType::Float64);
  return fc;
}

Variable random_input(const Shape& shape, bool requires_grad = true) {
  return Variable(Tensor::normal(shape, 0.0, 1.0, DType::Float64), requires_grad);
}

// sum(y · u) for a fixed random u: its gradient with respect to y is u, which no sum() seed would test.
Variable weighted_sum(const Variable& y, const Tensor& u) {
  return sum(y * Variable(u));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module_hooks)

BOOST_AUTO_TEST_CASE(a_forward_hook_sees_the_call_and_may_replace_the_output) {
  auto fc = linear_3_to_2();
  const Variable x = random_input({4, 3});
  std::vector<Shape> seen;
  HookHandle look = fc->register_forward_hook(
      [&](const nn::Module& module, std::span<const Variable> inputs, const Variable& output) {
        BOOST_TEST(module.name() == "Linear");
        BOOST_REQUIRE_EQUAL(inputs.size(), 1U);
        BOOST_TEST(inputs[0].is_same(x));
        seen.push_back(output.shape());
        return Variable();
      });
  const Variable plain = (*fc)(x);
  BOOST_REQUIRE_EQUAL(seen.size(), 1U);
  BOOST_TEST(seen[0] == Shape({4, 2}));

  // A second hook doubles the output; the gradient flows through the replacement.
  HookHandle twice = fc->register_forward_hook(
      [](const nn::Module&, std::span<const Variable>, const Variable& output) { return output * 2.0; });
  const Variable doubled = (*fc)(x);
  BOOST_TEST(seen.size() == 2U);
  expect_close(doubled.data(), (plain.data() * 2.0).to_vector<double>(), 1e-15);
  sum(doubled).backward();
  expect_close(x.grad(), (sum(fc->weight.data(), Shape{0}, true) * 2.0).expand({4, 3}).to_vector<double>(),
               1e-14);

  // Removed, each stops; removing twice does nothing.
  twice.remove();
  twice.remove();
  expect_close((*fc)(x).data(), plain.data().to_vector<double>(), 0);
  look.remove();
  (*fc)(x);
  BOOST_TEST(seen.size() == 3U);
}

BOOST_AUTO_TEST_CASE(a_full_backward_hook_sees_the_input_and_output_gradients) {
  auto fc = linear_3_to_2();
  const Variable x = random_input({4, 3});
  const Tensor u = Tensor::normal({4, 2}, 0.0, 1.0, DType::Float64);
  std::vector<Tensor> grad_inputs, grad_outputs;
  fc->register_full_backward_hook([&](const nn::Module& module, std::span<const Variable> grad_input,
                                      std::span<const Variable> grad_output) {
    BOOST_TEST(module.name() == "Linear");
    BOOST_REQUIRE_EQUAL(grad_input.size(), 1U);
    BOOST_REQUIRE_EQUAL(grad_output.size(), 1U);
    grad_inputs.push_back(grad_input[0].data().clone());
    grad_outputs.push_back(grad_output[0].data().clone());
    return std::vector<Variable>();
  });
  weighted_sum((*fc)(x), u).backward();
  BOOST_REQUIRE_EQUAL(grad_inputs.size(), 1U);
  // d loss / d y = u, and d loss / d x = u·W, which is also what reached x.grad.
  expect_close(grad_outputs[0], u.to_vector<double>(), 0);
  expect_close(grad_inputs[0], matmul(u, fc->weight.data()).to_vector<double>(), 1e-14);
  expect_close(x.grad(), grad_inputs[0].to_vector<double>(), 0);
}

BOOST_AUTO_TEST_CASE(a_full_backward_hook_may_replace_the_input_gradient) {
  auto fc = linear_3_to_2();
  const Variable x = random_input({4, 3});
  const Tensor u = Tensor::normal({4, 2}, 0.0, 1.0, DType::Float64);
  weighted_sum((*fc)(x), u).backward();
  const Tensor plain_x = x.grad().clone(), plain_w = fc->weight.grad().clone();
  x.zero_grad();
  fc->zero_grad();

  fc->register_full_backward_hook(
      [](const nn::Module&, std::span<const Variable> grad_input, std::span<const Variable>) {
        return std::vector<Variable>{grad_input[0] * 3.0};
      });
  weighted_sum((*fc)(x), u).backward();
  expect_close(x.grad(), (plain_x * 3.0).to_vector<double>(), 1e-14);
  expect_close(fc->weight.grad(), plain_w.to_vector<double>(), 1e-14);  // computed inside: unchanged
}

BOOST_AUTO_TEST_CASE(a_backward_hook_removed_before_backward_is_not_called) {
  auto fc = linear_3_to_2();
  const Variable x = random_input({2, 3});
  int calls = 0;
  HookHandle handle = fc->register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        ++calls;
        return std::vector<Variable>();
      });
  const Variable loss = sum((*fc)(x));
  handle.remove();  // after the forward that set the call up
  loss.backward();
  BOOST_TEST(calls == 0);
  BOOST_TEST(x.grad().defined());
}

BOOST_AUTO_TEST_CASE(several_inputs_reach_the_hook_together) {
  // Self-attention called with the same x three times: three input gradients, whose sum is x.grad, and a
  // replacement of one of them that reaches x.
  nn::MultiHeadAttention attention(4, 2, 0.0);
  attention.to(DType::Float64);
  const Variable x = random_input({2, 3, 4});
  const Tensor u = Tensor::normal({2, 3, 4}, 0.0, 1.0, DType::Float64);
  std::vector<Tensor> grads;
  bool zero_the_keys = false;
  attention.register_full_backward_hook([&](const nn::Module&, std::span<const Variable> grad_input,
                                            std::span<const Variable> grad_output) {
    BOOST_REQUIRE_EQUAL(grad_input.size(), 3U);
    BOOST_TEST(grad_output[0].shape() == Shape({2, 3, 4}));
    grads.clear();
    for (const Variable& g : grad_input) grads.push_back(g.data().clone());
    if (!zero_the_keys) return std::vector<Variable>();
    return std::vector<Variable>{Variable(), Variable(Tensor::zeros({2, 3, 4}, DType::Float64)), Variable()};
  });
  weighted_sum(attention(x, x, x), u).backward();
  BOOST_REQUIRE_EQUAL(grads.size(), 3U);
  expect_close(x.grad(), (grads[0] + grads[1] + grads[2]).to_vector<double>(), 1e-14);

  x.zero_grad();
  zero_the_keys = true;
  weighted_sum(attention(x, x, x), u).backward();
  expect_close(x.grad(), (grads[0] + grads[2]).to_vector<double>(), 1e-14);
}

BOOST_AUTO_TEST_CASE(inputs_that_need_no_gradient_are_undefined_in_grad_input) {
  // A first layer's input is data: the hook is called as the output's gradient arrives.
  auto fc = linear_3_to_2();
  const Variable x = random_input({2, 3}, /*requires_grad=*/false);
  int calls = 0;
  fc->register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable> grad_input, std::span<const Variable> grad_output) {
        ++calls;
        BOOST_TEST(!grad_input[0].defined());
        BOOST_TEST(grad_output[0].defined());
        return std::vector<Variable>();
      });
  sum((*fc)(x)).backward();
  BOOST_TEST(calls == 1);
  BOOST_TEST(fc->weight.grad().defined());
}

BOOST_AUTO_TEST_CASE(each_call_of_a_module_gets_its_own_hook_call_and_children_run_theirs) {
  auto fc = linear_3_to_2();
  auto second = std::make_shared<nn::Linear>(2, 2);
  second->to(DType::Float64);
  nn::Sequential model(fc, std::make_shared<nn::ReLU>(), second);
  std::vector<std::string> order;
  fc->register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        order.push_back("fc");
        return std::vector<Variable>();
      });
  second->register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        order.push_back("second");
        return std::vector<Variable>();
      });
  model.register_forward_hook([&](const nn::Module& m, std::span<const Variable>, const Variable&) {
    order.push_back(m.name());
    return Variable();
  });
  const Variable x = random_input({2, 3});
  sum(model(x) + model(x)).backward();
  const std::vector<std::string> expected{"Sequential", "Sequential", "second", "fc", "second", "fc"};
  BOOST_TEST(order == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_unhooked_module_records_nothing_extra) {
  auto fc = linear_3_to_2();
  const Variable y = (*fc)(random_input({2, 3}));
  BOOST_TEST(std::string(y.grad_fn()->op) == "linear");
  HookHandle h =
      fc->register_full_backward_hook([](const nn::Module&, std::span<const Variable>,
                                         std::span<const Variable>) { return std::vector<Variable>(); });
  BOOST_TEST(std::string((*fc)(random_input({2, 3})).grad_fn()->op) == "module_output");
  h.remove();
  BOOST_TEST(std::string((*fc)(random_input({2, 3})).grad_fn()->op) == "linear");
}

BOOST_AUTO_TEST_CASE(a_wrong_replacement_is_an_error_naming_the_module) {
  auto fc = linear_3_to_2();
  HookHandle h = fc->register_full_backward_hook(
      [](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        return std::vector<Variable>{Variable(Tensor::zeros({3}, DType::Float64))};
      });
  expect_error<ShapeError>(
      [&] {
        sum((*fc)(random_input({2, 3}))).backward();
      },
      "Linear full backward hook: returned a gradient of shape [3] for input 0 of shape [2,3]");
  h.remove();
  fc->register_full_backward_hook(
      [](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        return std::vector<Variable>{Variable(), Variable()};
      });
  expect_error<ValueError>(
      [&] {
        sum((*fc)(random_input({2, 3}))).backward();
      },
      "Linear full backward hook: returned 2 gradients for a call with 1 inputs");
  expect_error<ValueError>([&] { fc->register_forward_hook(nn::ForwardHook()); },
                           "Linear.register_forward_hook: the hook is empty");
}

BOOST_AUTO_TEST_CASE(a_module_destroyed_before_backward_is_an_error_not_a_crash) {
  auto fc = linear_3_to_2();
  fc->register_full_backward_hook([](const nn::Module&, std::span<const Variable>,
                                     std::span<const Variable>) { return std::vector<Variable>(); });
  const Variable loss = sum((*fc)(random_input({2, 3})));
  fc.reset();
  expect_error<ValueError>(
      [&] { loss.backward(); },
      "full backward hook: the module was destroyed before the backward pass reached it");
}

BOOST_AUTO_TEST_CASE(a_hooked_module_differentiates_once_and_twice_as_the_unhooked_one) {
  // The identity ops a backward hook adds (one input, and several joined) keep first and second
  // derivatives: gradcheck and gradgradcheck in float64 (a random upstream gradient inside both).
  nn::MultiHeadAttention attention(4, 2, 0.0);
  attention.to(DType::Float64);
  int calls = 0;
  attention.register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable>, std::span<const Variable>) {
        ++calls;
        return std::vector<Variable>();
      });
  auto f = [&](const std::vector<Variable>& x) { return attention(x[0], x[1], x[1]); };
  const std::vector<Variable> inputs{random_input({2, 3, 4}), random_input({2, 3, 4})};
  BOOST_TEST(gradcheck(f, inputs).passed);
  BOOST_TEST(gradgradcheck(f, inputs).passed);
  BOOST_TEST(calls > 0);
  auto fc = linear_3_to_2();
  fc->register_full_backward_hook([](const nn::Module&, std::span<const Variable>,
                                     std::span<const Variable>) { return std::vector<Variable>(); });
  BOOST_TEST(
      gradgradcheck([&](const std::vector<Variable>& x) { return (*fc)(x[0]); }, {random_input({2, 3})})
          .passed);
}

BOOST_AUTO_TEST_CASE(record_module_calls_lists_each_call_with_its_path_innermost_first) {
  auto fc = linear_3_to_2();
  nn::Sequential model(fc, std::make_shared<nn::ReLU>());
  nn::Linear stranger(2, 2);
  stranger.to(DType::Float64);
  const Variable x = random_input({2, 3});
  Variable y;
  std::vector<std::string> labels;
  {
    nn::RecordModuleCalls recording(model);
    y = stranger(model(x));
    for (const auto& call : recording.calls()) labels.push_back(call.label);
    BOOST_REQUIRE_EQUAL(recording.calls().size(), 4U);
    BOOST_TEST(recording.calls()[0].inputs[0].is_same(x));
    BOOST_TEST(recording.calls()[3].output.is_same(y));
  }
  const std::vector<std::string> expected{"0 (Linear)", "1 (ReLU)", "Sequential", "Linear"};
  BOOST_TEST(labels == expected, boost::test_tools::per_element());
  BOOST_TEST(nn::detail::recording_module_calls == nullptr);  // the guard is gone
}

// A module of one's own, written as docs/writing-a-layer.md shows it: forward() and nothing about hooks.
class Residual : public nn::Layer<Residual> {
 public:
  explicit Residual(int64_t features)
      : alpha(register_parameter("alpha", Tensor::full({1}, 0.5))),
        fc(register_module("fc", std::make_shared<nn::Linear>(features, features))) {}
  // x (batch, features) -> (batch, features)
  Variable forward(const Variable& x) const { return x + alpha * (*fc)(x); }
  std::string name() const override { return "Residual"; }
  Variable alpha;
  std::shared_ptr<nn::Linear> fc;
};

BOOST_AUTO_TEST_CASE(a_module_of_ones_own_gets_its_hooks_and_its_box_without_hook_code) {
  Residual block(3);
  block.to(DType::Float64);
  const Variable x = random_input({4, 3});
  const Tensor u = Tensor::normal({4, 3}, 0.0, 1.0, DType::Float64);
  // y = x + α·(x·Wᵀ + b); d loss / d y = u, so d loss / d x = u + α·u·W.
  const Tensor W = block.fc->weight.data(), b = block.fc->bias.data();
  const Tensor expected_y = add(x.data(), mul(add(matmul(x.data(), W.t()), b), 0.5));
  const Tensor expected_dx = add(u, mul(matmul(u, W), 0.5));

  std::vector<Tensor> seen_input, seen_output, grad_input, grad_output;
  block.register_forward_hook([&](const nn::Module& m, std::span<const Variable> inputs, const Variable& y) {
    BOOST_TEST(m.name() == "Residual");
    BOOST_REQUIRE_EQUAL(inputs.size(), 1U);  // x, or the identity of x where the backward hook catches d/dx
    seen_input.push_back(inputs[0].data().clone());
    seen_output.push_back(y.data().clone());
    return Variable();
  });
  block.register_full_backward_hook(
      [&](const nn::Module&, std::span<const Variable> gi, std::span<const Variable> go) {
        grad_input.push_back(gi[0].data().clone());
        grad_output.push_back(go[0].data().clone());
        return std::vector<Variable>();
      });
  RecordGraph values;
  nn::RecordModuleCalls calls(block);
  const Variable y = block(x);
  const Variable loss = weighted_sum(y, u);
  BOOST_REQUIRE_EQUAL(seen_output.size(), 1U);
  expect_close(seen_input[0], x.data().to_vector<double>(), 0);
  expect_close(seen_output[0], expected_y.to_vector<double>(), 1e-15);

  // Its box on the backward page: the recorded call, innermost first, and a group of the page.
  BOOST_REQUIRE_EQUAL(calls.calls().size(), 2U);
  BOOST_TEST(calls.calls()[0].label == "fc (Linear)");
  BOOST_TEST(calls.calls()[1].label == "Residual");
  BOOST_TEST(calls.calls()[1].output.is_same(y));
  HtmlPageOptions page{.recording = &values};
  for (const auto& call : calls.calls()) page.groups.push_back({call.label, call.inputs, call.output});
  const std::string html = backward_page(loss, page);  // runs loss.backward()
  BOOST_TEST(html.find("\"label\":\"Residual\"") != std::string::npos);
  BOOST_TEST(html.find("\"label\":\"fc (Linear)\"") != std::string::npos);

  BOOST_REQUIRE_EQUAL(grad_input.size(), 1U);
  expect_close(grad_output[0], u.to_vector<double>(), 1e-15);
  expect_close(grad_input[0], expected_dx.to_vector<double>(), 1e-14);
  expect_close(x.grad(), expected_dx.to_vector<double>(), 1e-14);
}

BOOST_AUTO_TEST_SUITE_END()
