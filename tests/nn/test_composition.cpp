// Composing a model without writing a class: Sequential, activation modules, ModuleList, gathering the
// parameters of several modules.
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(composition)

BOOST_AUTO_TEST_CASE(sequential_numbers_its_children_and_applies_them_in_order) {
  Generator gen(3);
  auto fc1 = std::make_shared<Linear>(LinearOptions{.in_features = 3, .out_features = 4, .generator = &gen});
  auto fc2 = std::make_shared<Linear>(LinearOptions{.in_features = 4, .out_features = 2, .generator = &gen});
  Sequential model(fc1, std::make_shared<ReLU>(), fc2);
  BOOST_TEST(model.size() == 3u);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  BOOST_TEST(names == (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}),
             boost::test_tools::per_element());
  const Variable x(Tensor::normal({5, 3}, 0, 1, DType::Float32, &gen));
  const Tensor expected = (*fc2)(relu((*fc1)(x))).data();
  expect_equal(model(x).data(), expected.to_vector<double>());
  // an empty Sequential is the identity
  BOOST_TEST(Sequential()(x).is_same(x));
}

BOOST_AUTO_TEST_CASE(sequential_prints_as_a_tree_as_pytorch_does) {
  Sequential model(std::make_shared<Linear>(2, 16), std::make_shared<Tanh>(), std::make_shared<Linear>(16, 1),
                   std::make_shared<Sigmoid>());
  std::ostringstream out;
  out << model;
  BOOST_TEST(out.str() ==
             "Sequential(\n"
             "  (0): Linear(in_features=2, out_features=16, bias=True)\n"
             "  (1): Tanh()\n"
             "  (2): Linear(in_features=16, out_features=1, bias=True)\n"
             "  (3): Sigmoid()\n"
             ")");
}

BOOST_AUTO_TEST_CASE(the_modules_print_and_compute_as_pytorchs) {
  Sequential model(std::make_shared<Flatten>(), std::make_shared<LeakyReLU>(0.2), std::make_shared<SiLU>(),
                   std::make_shared<ELU>(), std::make_shared<Softplus>(), std::make_shared<Identity>(),
                   std::make_shared<LogSoftmax>(1), std::make_shared<Softmax>(-1));
  std::ostringstream out;
  out << model;
  const std::string printed = out.str();
  for (const char* line : {"(0): Flatten(start_dim=1, end_dim=-1)", "(1): LeakyReLU(negative_slope=0.2)",
                           "(2): SiLU()", "(3): ELU(alpha=1)", "(4): Softplus(beta=1, threshold=20)",
                           "(5): Identity()", "(6): LogSoftmax(dim=1)", "(7): Softmax(dim=-1)"}) {
    BOOST_TEST(printed.find(line) != std::string::npos, line << " in\n" << printed);
  }
  const Variable x(Tensor::normal({2, 3, 2}, 0, 1, DType::Float64));
  const Variable expected =
      softmax(log_softmax(softplus(elu(silu(leaky_relu(reshape(x, {2, 6}), 0.2)))), 1), -1);
  expect_close(model(x).data(), expected.data().to_vector(), 0);
}

BOOST_AUTO_TEST_CASE(activation_modules_compute_their_functions) {
  const Variable x(Tensor::from_values({-2, -0.5, 0.5, 2}, {4}, DType::Float64));
  expect_equal(ReLU()(x).data(), relu(x).data().to_vector<double>());
  expect_equal(Tanh()(x).data(), tanh(x).data().to_vector<double>());
  expect_equal(Sigmoid()(x).data(), sigmoid(x).data().to_vector<double>());
  expect_equal(GELU()(x).data(), gelu(x).data().to_vector<double>());
  BOOST_TEST(ReLU().parameters().empty());
}

BOOST_AUTO_TEST_CASE(a_null_module_is_refused) {
  Sequential model;
  expect_error_containing<ValueError>([&] { model.push_back(std::shared_ptr<Linear>()); },
                                      "Sequential: cannot add a null module");
}

BOOST_AUTO_TEST_CASE(parameters_of_several_modules_in_order_and_by_prefix) {
  Linear a(2, 3), b(3, 1, /*bias=*/false);
  const std::vector<Variable> all = parameters_of({&a, &b});
  BOOST_TEST(all.size() == 3u);
  BOOST_TEST(all[0].is_same(a.weight));
  BOOST_TEST(all[1].is_same(a.bias));
  BOOST_TEST(all[2].is_same(b.weight));
  const auto named = named_parameters_of({{"encoder", &a}, {"head", &b}});
  BOOST_TEST(named.size() == 3u);
  BOOST_TEST(named[0].first == "encoder.weight");
  BOOST_TEST(named[2].first == "head.weight");
  BOOST_TEST(named[2].second.is_same(b.weight));
}

BOOST_AUTO_TEST_CASE(a_module_list_and_register_module_are_public) {
  ModuleList list;
  list.push_back(std::make_shared<Linear>(2, 2));
  list.push_back(std::make_shared<Linear>(2, 2));
  list.push_back(std::make_shared<ReLU>());
  BOOST_TEST(list.size() == 3u);
  BOOST_TEST(list.named_parameters()[2].first == "1.weight");
  // Each module as the type it is, as PyTorch's ModuleList::at<T>.
  BOOST_TEST(list.at<Linear>(1).weight.is_same(list.named_parameters()[2].second));
  expect_error<ValueError>([&] { list.at<Linear>(2); },
                           "ModuleList: module 2 is a ReLU, not the type asked for");
  expect_error<ValueError>([&] { list.at<Linear>(3); }, "ModuleList: has no module 3: it holds 3");
  ModuleList holder;
  holder.register_module("head", std::make_shared<Linear>(2, 1));
  BOOST_TEST(holder.named_parameters()[0].first == "head.weight");
}

BOOST_AUTO_TEST_SUITE_END()
