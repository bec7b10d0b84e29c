// A PyTorch user's lines, typed as PyTorch spells them (docs/from-pytorch.md): the layers' constructors,
// positional sizes first and the rest of the options braced after (each builds the layer the options form
// builds, and a field given both ways is refused, naming it); cat, the *_like functions, zero_grad's
// set_to_none.
#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(pytorch_constructors)

BOOST_AUTO_TEST_CASE(convolutions_take_in_out_and_kernel_first) {
  manual_seed(0);
  const auto conv = std::make_shared<nn::Conv2d>(1, 16, 3, nn::Conv2dOptions{.padding = 1, .bias = false});
  BOOST_TEST(conv->options.in_channels == 1);
  BOOST_TEST(conv->options.out_channels == 16);
  BOOST_TEST((conv->options.kernel_size == Size2d(3)));
  BOOST_TEST((conv->options.padding == Size2d(1)));
  BOOST_TEST(!conv->bias.defined());
  BOOST_TEST(conv->weight.shape() == Shape({16, 1, 3, 3}));
  const Variable y = (*conv)(Variable(Tensor::ones({2, 1, 8, 8})));
  BOOST_TEST(y.shape() == Shape({2, 16, 8, 8}));

  nn::Conv2d wide(3, 4, {3, 5});  // a kernel 3 high and 5 wide
  BOOST_TEST(wide.weight.shape() == Shape({4, 3, 3, 5}));
  nn::Conv1d conv1d(4, 8, 3, {.stride = 2});
  BOOST_TEST(conv1d.weight.shape() == Shape({8, 4, 3}));
  BOOST_TEST(conv1d.options.stride == 2);
  BOOST_TEST(conv1d(Variable(Tensor::ones({1, 4, 9}))).shape() == Shape({1, 8, 4}));
}

BOOST_AUTO_TEST_CASE(batch_norm_pooling_and_recurrent_layers_take_their_sizes_first) {
  const auto bn = std::make_shared<nn::BatchNorm2d>(8);
  BOOST_TEST(bn->options.num_features == 8);
  BOOST_TEST(bn->weight.shape() == Shape({8}));
  nn::BatchNorm1d bn1(5, {.momentum = 0.01, .affine = false});
  BOOST_TEST(bn1.options.num_features == 5);
  BOOST_TEST(*bn1.options.momentum == 0.01);
  BOOST_TEST(!bn1.weight.defined());

  nn::MaxPool2d pool(2);
  BOOST_TEST((pool.options.kernel_size == Size2d(2)));
  BOOST_TEST(pool(Variable(Tensor::ones({1, 1, 4, 6}))).shape() == Shape({1, 1, 2, 3}));
  nn::AvgPool2d avg(3, {.stride = 1, .padding = 1});
  BOOST_TEST(avg(Variable(Tensor::ones({1, 1, 4, 6}))).shape() == Shape({1, 1, 4, 6}));
  nn::MaxPool1d pool1(2);
  BOOST_TEST(pool1(Variable(Tensor::ones({1, 2, 8}))).shape() == Shape({1, 2, 4}));
  nn::AvgPool1d avg1(4, {.stride = 2});
  BOOST_TEST(avg1(Variable(Tensor::ones({1, 2, 8}))).shape() == Shape({1, 2, 3}));
  const nn::MaxPool2dOptions options{.kernel_size = 2};  // the options by the layer's namespace too
  BOOST_TEST((nn::MaxPool2d(options).options.kernel_size == Size2d(2)));

  const auto lstm = std::make_shared<nn::LSTM>(8, 16, nn::LSTMOptions{.num_layers = 2});
  BOOST_TEST(lstm->options.input_size == 8);
  BOOST_TEST(lstm->options.hidden_size == 16);
  BOOST_TEST(lstm->weights.size() == 2u);
  nn::GRU gru(4, 6);
  BOOST_TEST(gru((Variable(Tensor::ones({5, 2, 4})))).output.shape() == Shape({5, 2, 6}));
  nn::RNN rnn(4, 6, {.nonlinearity = nn::Nonlinearity::ReLU, .bidirectional = true});
  BOOST_TEST(rnn((Variable(Tensor::ones({5, 2, 4})))).output.shape() == Shape({5, 2, 12}));
}

// The rest of docs/from-pytorch.md's constructor lines, each as the page writes it.
BOOST_AUTO_TEST_CASE(the_other_layers_take_pytorchs_first_arguments) {
  nn::Linear linear(2, 8, false);  // nn.Linear(2, 8, bias=False)
  BOOST_TEST(!linear.bias.defined());
  nn::Embedding embedding(1000, 64, 0);  // nn.Embedding(1000, 64, padding_idx=0)
  BOOST_TEST(embedding.options.padding_idx == 0);
  BOOST_TEST(nn::LayerNorm(64, 1e-6).eps == 1e-6);
  BOOST_TEST(nn::Dropout(0.1).p == 0.1);
  BOOST_TEST(nn::Dropout2d(0.2).p == 0.2);
  nn::AdaptiveAvgPool2d global_average({1, 1});
  BOOST_TEST(global_average(Variable(Tensor::ones({2, 3, 5, 4}))).shape() == Shape({2, 3, 1, 1}));
  BOOST_TEST(nn::LeakyReLU(0.2).negative_slope == 0.2);
  BOOST_TEST(nn::ELU(1.0).alpha == 1.0);
  BOOST_TEST(nn::Softplus(2).beta == 2.0);
  BOOST_TEST(nn::Softmax(-1).dim == -1);
  BOOST_TEST(nn::LogSoftmax(1).dim == 1);
  BOOST_TEST(nn::Flatten()(Variable(Tensor::ones({2, 3, 4}))).shape() == Shape({2, 12}));
  BOOST_TEST(nn::ReLU()(Variable(Tensor::full({2}, -1.0))).data().to_vector() == std::vector<double>({0, 0}));
}

BOOST_AUTO_TEST_CASE(the_positional_and_the_options_form_build_the_same_layer) {
  manual_seed(3);
  nn::Conv2d positional(2, 3, 3, {.stride = 2});
  manual_seed(3);
  nn::Conv2d braced({.in_channels = 2, .out_channels = 3, .kernel_size = 3, .stride = 2});
  expect_equal(positional.weight.data(), braced.weight.data().to_vector<double>());
  // Giving a field both ways agrees or is refused, naming the field.
  nn::Conv2d agreeing(2, 3, 3, {.in_channels = 2});
  BOOST_TEST(agreeing.options.in_channels == 2);
  expect_error<ValueError>([] { nn::Conv2d(2, 3, 3, {.in_channels = 4}); },
                           "Conv2d: in_channels is given twice, as an argument and in the options");
  expect_error<ValueError>([] { nn::BatchNorm2d(8, {.num_features = 4}); },
                           "BatchNorm2d: num_features is given twice, as an argument and in the options");
  expect_error<ValueError>([] { nn::LSTM(8, 16, {.hidden_size = 32}); },
                           "LSTM: hidden_size is given twice, as an argument and in the options");
  expect_error<ValueError>([] { nn::MaxPool2d(2, {.kernel_size = 3}); },
                           "MaxPool2d: kernel_size is given twice, as an argument and in the options");
}

// Three reflexes of an earlier list: class indices in a Variable as a loss's target, a braced list into
// from_vector, and a function inside a Sequential.
BOOST_AUTO_TEST_CASE(a_variable_target_a_braced_list_and_a_function_in_a_sequential) {
  const Tensor labels = Tensor::from_vector({2, 0, 1}, {3});  // int64, as torch.tensor([2, 0, 1])
  BOOST_TEST(labels.dtype() == DType::Int64);
  BOOST_TEST(Tensor::from_vector({0.5, 1.5}, {2}).dtype() == DType::Float64);
  BOOST_TEST(Tensor::from_vector({0.5f, 1.5f}, {2}).dtype() == DType::Float32);
  BOOST_TEST(Tensor::from_vector({true, false}, {2}).dtype() == DType::Bool);
  const Variable logits(Tensor::normal({3, 4}, 0, 1, DType::Float64), true);
  BOOST_TEST(cross_entropy(logits, Variable(labels)).item() == cross_entropy(logits, labels).item());
  BOOST_TEST(nll_loss(log_softmax(logits, 1), Variable(labels)).item() ==
             nll_loss(log_softmax(logits, 1), labels).item());
  manual_seed(2);
  nn::Sequential model(std::make_shared<nn::Linear>(4, 3), nn::Functional(relu),
                       std::make_shared<nn::Linear>(3, 2),
                       nn::Functional([](const Variable& x) { return x * 2.0; }, "Double"));
  BOOST_TEST(model.size() == 4u);
  const Variable x(Tensor::normal({5, 4}));
  const auto& first = static_cast<const nn::Linear&>(*model.children()[0].second);
  const auto& second = static_cast<const nn::Linear&>(*model.children()[2].second);
  BOOST_TEST(model(x).data().to_vector() == (second(relu(first(x))) * 2.0).data().to_vector());
  BOOST_TEST(model.children()[3].second->name() == "Double");
  BOOST_TEST(model.parameters().size() == 4u);  // the functions have none
}

// One example without its batch dimension, as PyTorch 1.13 takes it: the result is the batch of one's,
// without the batch dimension.
BOOST_AUTO_TEST_CASE(layers_take_an_unbatched_example) {
  manual_seed(6);
  auto same_as_batch_of_one = [](const Variable& unbatched, const Variable& batched, int batch_dim) {
    BOOST_TEST(unbatched.shape() == batched.data().squeeze(batch_dim).shape());
    BOOST_TEST(unbatched.data().to_vector() == batched.data().squeeze(batch_dim).to_vector());
  };
  const Tensor image = Tensor::normal({3, 8, 8}), signal = Tensor::normal({3, 10});
  nn::Conv2d conv2(3, 4, 3, {.padding = 1});
  same_as_batch_of_one(conv2(image), conv2(image.unsqueeze(0)), 0);
  BOOST_TEST((conv2(image).shape() == Shape{4, 8, 8}));
  nn::Conv1d conv1(3, 5, 3);
  same_as_batch_of_one(conv1(signal), conv1(signal.unsqueeze(0)), 0);
  nn::MaxPool2d max2(2);
  same_as_batch_of_one(max2(image), max2(image.unsqueeze(0)), 0);
  nn::AvgPool2d avg2(2);
  same_as_batch_of_one(avg2(image), avg2(image.unsqueeze(0)), 0);
  nn::MaxPool1d max1(2);
  same_as_batch_of_one(max1(signal), max1(signal.unsqueeze(0)), 0);
  nn::AvgPool1d avg1(2);
  same_as_batch_of_one(avg1(signal), avg1(signal.unsqueeze(0)), 0);
  nn::AdaptiveAvgPool2d adaptive({2, 3});
  same_as_batch_of_one(adaptive(image), adaptive(image.unsqueeze(0)), 0);
  // Recurrent: input (L, input_size), h0 (layers · directions, H); output (L, directions · H).
  for (const bool batch_first : {false, true}) {
    nn::LSTM lstm(3, 4, {.num_layers = 2, .batch_first = batch_first, .bidirectional = true});
    const Tensor sequence = Tensor::normal({5, 3}), h0 = Tensor::normal({4, 4}), c0 = Tensor::normal({4, 4});
    const nn::RecurrentOutput one = lstm(sequence, {h0, c0});
    const nn::RecurrentOutput batch =
        lstm(sequence.unsqueeze(batch_first ? 0 : 1), {h0.unsqueeze(1), c0.unsqueeze(1)});
    BOOST_TEST((one.output.shape() == Shape{5, 8}));
    same_as_batch_of_one(one.output, batch.output, batch_first ? 0 : 1);
    same_as_batch_of_one(one.h_n, batch.h_n, 1);
    same_as_batch_of_one(one.c_n, batch.c_n, 1);
  }
  nn::GRU gru(3, 4);
  BOOST_TEST((gru(Tensor::normal({5, 3})).h_n.shape() == Shape{1, 4}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pytorch_everyday_functions)

BOOST_AUTO_TEST_CASE(cat_and_the_like_functions_as_pytorch_spells_them) {
  const Tensor a = Tensor::from_values({1, 2}, {1, 2}, DType::Float64);
  const Tensor b = Tensor::from_values({3, 4}, {1, 2}, DType::Float64);
  expect_equal(cat({a, b}), {1, 2, 3, 4});  // dim 0 by default, as torch.cat
  BOOST_TEST(cat({a, b}).shape() == Shape({2, 2}));
  BOOST_TEST(cat({a, b}, 1).shape() == Shape({1, 4}));
  const Variable x(a, true), y(b);
  const Variable joined = cat({x, y});
  sum(joined * joined).backward();
  expect_equal(x.grad(), {2, 4});  // d/dx of Σ x² over x's rows

  const Tensor strided = Tensor::from_values({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64).transpose(0, 1);
  const Tensor z = zeros_like(strided);
  BOOST_TEST(z.shape() == Shape({3, 2}));
  BOOST_TEST((z.dtype() == DType::Float64));
  BOOST_TEST(z.is_contiguous());
  expect_equal(z, {0, 0, 0, 0, 0, 0});
  expect_equal(ones_like(x), {1, 1});
  expect_equal(full_like(x, 7), {7, 7});
  Generator g1(5), g2(5);
  expect_equal(randn_like(x, &g1), Tensor::normal({1, 2}, 0, 1, DType::Float64, &g2).to_vector<double>());
  const Tensor u = rand_like(strided);
  BOOST_TEST((u.dtype() == DType::Float64));
  for (double v : u.to_vector<double>()) BOOST_TEST((v >= 0 && v < 1));
  expect_error<ValueError>([] { zeros_like(Tensor()); }, "zeros_like: the tensor is undefined");
  expect_error<ValueError>([] { randn_like(Tensor()); }, "randn_like: the tensor is undefined");
}

BOOST_AUTO_TEST_CASE(zero_grad_sets_to_none_or_zeroes_in_place) {
  nn::Linear layer(2, 1);
  const Variable input(Tensor::ones({3, 2}));
  sum(layer(input)).backward();
  const Tensor kept = layer.weight.grad();
  layer.zero_grad(/*set_to_none=*/false);  // PyTorch 1.13's default: the buffer stays, filled with zeros
  BOOST_TEST(layer.weight.grad().defined());
  BOOST_TEST(layer.weight.grad().data_ptr<float>() == kept.data_ptr<float>());
  expect_equal(layer.weight.grad(), {0, 0});
  sum(layer(input)).backward();
  expect_equal(layer.weight.grad(), {3, 3});  // added into the zeroed buffer
  layer.zero_grad();                          // set to none, as PyTorch 2's default
  BOOST_TEST(!layer.weight.grad().defined());
  optim::SGD optimizer(layer.named_parameters(), {.lr = 0.1});
  sum(layer(input)).backward();
  optimizer.zero_grad(false);
  expect_equal(layer.bias.grad(), {0});
}

BOOST_AUTO_TEST_CASE(one_hot_and_equal_as_pytorch_answers_them) {
  const Tensor labels = Tensor::from_vector<int64_t>({2, 0, 1, 2}, {2, 2});
  const Tensor hot = one_hot(labels);  // num_classes inferred: 3
  BOOST_TEST(hot.shape() == Shape({2, 2, 3}));
  BOOST_TEST((hot.dtype() == DType::Int64));
  BOOST_TEST(hot.to_vector<int64_t>() == (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  BOOST_TEST(one_hot(Tensor::from_vector<int64_t>({1}, {1}), 4).to_vector<int64_t>() ==
             (std::vector<int64_t>{0, 1, 0, 0}));
  expect_error<IndexError>(
      [] {
        one_hot(Tensor::from_vector<int64_t>({0, 5}, {2}), 3);
      },
      "one_hot: class 5 at position 1 is outside [0, 3)");
  expect_error<DTypeError>([] { one_hot(Tensor::ones({2})); },
                           "one_hot: expects int64 class indices, got float32");

  const Tensor a = Tensor::from_values({1, 2}, {2});
  BOOST_TEST(equal(a, Tensor::from_values({1, 2}, {2})));
  BOOST_TEST(equal(a, Tensor::from_values({1, 2}, {2}, DType::Float64)));  // numbers, across dtypes
  BOOST_TEST(!equal(a, Tensor::from_values({1, 3}, {2})));
  BOOST_TEST(!equal(a, Tensor::from_values({1, 2}, {1, 2})));  // no broadcasting
  const Tensor nan = Tensor::from_values({std::nan("")}, {1});
  BOOST_TEST(!equal(nan, nan));
}

// x.sum(), x.norm(), x == y ...: one set of methods (tensor/methods.h), the same on a Tensor (a gradient,
// a prediction) and on a Variable, each what the free function of its name computes.
BOOST_AUTO_TEST_CASE(a_tensor_and_a_variable_answer_the_same_methods) {
  const Variable w(Tensor::from_values({3, -4}, {2}, DType::Float64), true);
  sum(mul(w, w)).backward();  // w.grad() = 2w = (6, -8)
  BOOST_TEST(w.grad().norm().item() == 10.0);
  BOOST_TEST(w.grad().mean().item() == -1.0);
  BOOST_TEST(w.grad().norm(1).item() == 14.0);
  BOOST_TEST(w.grad().norm(INFINITY).item() == 8.0);
  BOOST_TEST(w.norm().item() == 5.0);
  const Tensor pred = Tensor::from_vector<int64_t>({1, 0, 2, 2}, {4}),
               y = Tensor::from_vector<int64_t>({1, 1, 2, 0}, {4});
  BOOST_TEST((pred == y).to(DType::Float32).mean().item() == 0.5);
  BOOST_TEST((pred != y).to_vector<bool>() == std::vector<bool>({false, true, false, true}));
  BOOST_TEST((pred >= 2.0).to_vector<bool>() == std::vector<bool>({false, false, true, true}));
  BOOST_TEST((1.0 < pred).to_vector<bool>() == std::vector<bool>({false, false, true, true}));
  BOOST_TEST((w > 0.0).to_vector<bool>() == std::vector<bool>({true, false}));  // a Variable's: a bool Tensor
  BOOST_TEST((w == Variable(Tensor::from_values({3, 4}, {2}, DType::Float64))).to_vector<bool>() ==
             std::vector<bool>({true, false}));
  // As PyTorch 1.13: a zero vector's norm has gradient 0 (not NaN), p = inf shares it between ties, and
  // an integer tensor has no norm.
  for (const double p : std::vector<double>{1.0, 2.0, 3.0, INFINITY}) {
    const Variable zero(Tensor::zeros({3}, DType::Float64), true);
    zero.norm(p).backward();
    BOOST_TEST(zero.grad().to_vector() == std::vector<double>(3, 0.0), "p = " << p);
  }
  const Variable ties(Tensor::from_values({3, -3, 1, 0}, {4}, DType::Float64), true);
  ties.norm(INFINITY).backward();
  BOOST_TEST(ties.grad().to_vector() == std::vector<double>({0.5, -0.5, 0, 0}));
  expect_error<ValueError>([] { Tensor::arange(3).norm(); }, "norm: takes a floating tensor, got int64");
  // The reductions and queries, method against function, on a Tensor and on a Variable.
  manual_seed(4);
  const Variable x(Tensor::normal({3, 4}, 0, 1, DType::Float64), true);
  const Tensor& t = x.data();
  BOOST_TEST(t.sum({1}).to_vector() == sum(t, {1}).to_vector());
  BOOST_TEST(x.sum({1}, true).data().to_vector() == sum(x, {1}, true).data().to_vector());
  BOOST_TEST(t.max(0).to_vector() == max(t, 0).to_vector());
  BOOST_TEST(x.min().item() == min(t).item());
  BOOST_TEST(t.argmax().item() == argmax(t).item());
  BOOST_TEST(x.argmin(1).to_vector<int64_t>() == argmin(t, 1).to_vector<int64_t>());
  BOOST_TEST(t.norm(3, {0}, true).to_vector() == norm(t, 3, {0}, true).to_vector());
  BOOST_TEST(x.norm(2, {1}).data().to_vector() == norm(t, 2, {1}).to_vector());
  BOOST_TEST((x > 0.0).any());
  BOOST_TEST(!(t > 10.0).any());
  BOOST_TEST((t == t).all());
  const Tensor mask = t > 0.0;
  BOOST_TEST(t.masked_fill(mask, 0).to_vector() == masked_fill(t, mask, 0).to_vector());
  const Variable filled = x.masked_fill(mask, 0);  // differentiable
  filled.sum().backward();
  BOOST_TEST(x.grad().to_vector<double>() == logical_not(mask).to(DType::Float64).to_vector<double>());
}

// The shape methods have the same names and arguments on a Tensor (views) and on a Variable (ops): one
// generic function of them compiles for both and gives the same shapes and values.
template <typename T>
std::vector<Shape> shapes_through_the_shape_methods(const T& x) {  // x: (2, 3, 4)
  return {x.reshape({6, -1}).shape(),  x.view({4, 6}).shape(),
          x.flatten().shape(),         x.flatten(1).shape(),
          x.flatten(0, 1).shape(),     x.transpose(0, 2).shape(),
          x.select(0, 1).t().shape(),  x.permute({2, 0, 1}).shape(),
          x.unsqueeze(1).shape(),      x.unsqueeze(0).squeeze(0).shape(),
          x.slice(2, 1, 3).shape(),    x.select(1, 0).expand({3, 2, 4}).shape(),
          x.to(DType::Float64).shape()};
}

BOOST_AUTO_TEST_CASE(a_tensor_and_a_variable_answer_the_same_shape_methods) {
  const Tensor t = Tensor::arange(0, 24).to(DType::Float32).reshape({2, 3, 4});
  const Variable v(t, true);
  const std::vector<Shape> expected = {{6, 4},    {4, 6},    {24},      {2, 12},      {6, 4},
                                       {4, 3, 2}, {4, 3},    {4, 2, 3}, {2, 1, 3, 4}, {2, 3, 4},
                                       {2, 3, 2}, {3, 2, 4}, {2, 3, 4}};
  BOOST_TEST(shapes_through_the_shape_methods(t) == expected, boost::test_tools::per_element());
  BOOST_TEST(shapes_through_the_shape_methods(v) == expected, boost::test_tools::per_element());
  BOOST_TEST(t.flatten(1).to_vector() == v.flatten(1).data().to_vector());
  BOOST_TEST(t.permute({2, 0, 1}).contiguous().to_vector() == v.permute({2, 0, 1}).data().to_vector());
  v.flatten(1).sum().backward();  // the Variable's are differentiable
  expect_equal(v.grad(), std::vector<double>(24, 1.0));
  // A scalar flattens to [1], as torch.flatten; a bad range names flatten and the shape.
  BOOST_TEST(Tensor::scalar(2.0).flatten().shape() == Shape({1}));
  expect_error<ShapeError>([&] { t.flatten(2, 1); },
                           "flatten: start_dim 2 comes after end_dim 1 for shape [2,3,4]");
  expect_error<ShapeError>([&] { v.flatten(0, 3); }, "flatten: dim 3 is out of range for a tensor of rank 3");
}

// The lines a PyTorch user types in a first hour, each as typed, in one program: that it compiles is half
// of the test; each value is checked against the computation spelled out.
BOOST_AUTO_TEST_CASE(a_pytorch_users_first_hour_compiles_as_typed) {
  manual_seed(1);
  const Tensor a = Tensor::normal({2, 3}), b = Tensor::normal({1, 3});
  const Tensor joined = cat({a, b});  // torch.cat([a, b])
  BOOST_TEST(joined.slice(0, 0, 2).to_vector() == a.to_vector());
  const Tensor pred = Tensor::from_vector({1, 0, 2, 2}, {4}), y = Tensor::from_vector({1, 1, 2, 2}, {4});
  BOOST_TEST((pred == y).to(DType::Float32).mean().item() == 0.75);  // (pred == y).float().mean()
  const Tensor noise = randn_like(a);                                // torch.randn_like(a)
  BOOST_TEST(noise.shape() == a.shape());
  const Tensor hot = one_hot(y, 3);  // F.one_hot(y, 3)
  BOOST_TEST(hot.to(DType::Float32).sum({0}).to_vector() == std::vector<double>({0, 2, 2}));

  nn::Linear layer(3, 2);
  sum(layer(Variable(a))).backward();
  const Tensor g = layer.weight.grad();
  BOOST_TEST(g.norm().item() == std::sqrt(sum(g * g).item()),
             boost::test_tools::tolerance(1e-6));                                        // w.grad.norm()
  BOOST_TEST(g.mean().item() == sum(g).item() / 6, boost::test_tools::tolerance(1e-6));  // w.grad.mean()
  layer.zero_grad(true);  // model.zero_grad(set_to_none=True)
  BOOST_TEST(!layer.weight.grad().defined());
  const Variable x(a, true);
  const Variable clipped = x.masked_fill(x > 0, 0);  // x.masked_fill(x > 0, 0)
  BOOST_TEST(clipped.data().to_vector() == minimum(a, zeros_like(a)).to_vector());

  const auto bn = std::make_shared<nn::BatchNorm2d>(8);  // nn.BatchNorm2d(8)
  nn::MaxPool2d pool(2);                                 // nn.MaxPool2d(2)
  BOOST_TEST(pool((*bn)(Variable(Tensor::normal({2, 8, 4, 4})))).shape() == Shape({2, 8, 2, 2}));
  nn::TransformerEncoderLayer encoder(8, 2, {.dim_feedforward = 16});  // nn.TransformerEncoderLayer(8, 2, 16)
  BOOST_TEST(encoder.options.d_model == 8);
  BOOST_TEST(encoder.options.nhead == 2);
  expect_error<ValueError>(
      [] { nn::TransformerEncoderLayer(8, 2, {.nhead = 4}); },
      "TransformerEncoderLayer: nhead is given twice, as an argument and in the options");

  // The three older ones: a Variable target, a braced list, a function in a Sequential.
  const Variable logits(Tensor::normal({4, 3}), true);
  BOOST_TEST(cross_entropy(logits, Variable(y)).item() == cross_entropy(logits, y).item());
  BOOST_TEST(Tensor::from_vector({1, 2, 3}, {3}).to_vector<int64_t>() == std::vector<int64_t>({1, 2, 3}));
  nn::Sequential model(std::make_shared<nn::Linear>(3, 4), nn::Functional(relu));
  BOOST_TEST(model(Variable(a)).min().item() >= 0.0);
}

// The last release's names, kept for this one (their warnings: tests/layers/check_deprecation_messages.py),
// compute what their successors do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
BOOST_AUTO_TEST_CASE(the_last_release_names_compute_what_their_successors_do) {
  manual_seed(3);
  const Variable x(Tensor::normal({2, 4, 3}, 0, 1, DType::Float64), true);
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{4, 2}, {2});
  BOOST_TEST(nn::masked_mean(x, lengths).data().to_vector() ==
             mean_over_time(x, lengths, 1).data().to_vector());
  BOOST_TEST(nn::masked_max(x, lengths).data().to_vector() ==
             max_over_time(x, lengths, 1).data().to_vector());
  static_assert(std::is_same_v<nn::EncoderLayerOptions, nn::TransformerLayerOptions>);
  // beta1 and beta2 become the betas; given alone, each replaces its half.
  const Variable w(Tensor::ones({3}), true);
  BOOST_TEST(
      (optim::Adam({w}, {.lr = 0.1, .beta1 = 0.8, .beta2 = 0.99}).options().betas == std::pair(0.8, 0.99)));
  BOOST_TEST((optim::AdamW({w}, {.beta2 = 0.98}).options().betas == std::pair(0.9, 0.98)));
  BOOST_TEST((optim::SparseAdam({w}, {.beta1 = 0.5}).options().betas == std::pair(0.5, 0.999)));
  expect_error_containing<ValueError>([&] { optim::Adam({w}, {.beta1 = 1.5}); }, "betas[0]");
  // One step with the old spelling moves the weights as with the new.
  Variable a(Tensor::ones({3}), true), b(Tensor::ones({3}), true);
  optim::Adam old_names({a}, {.lr = 0.1, .beta1 = 0.5}), new_names({b}, {.lr = 0.1, .betas = {0.5, 0.999}});
  for (int k = 0; k < 3; ++k) {
    for (auto& [p, opt] : {std::pair<Variable*, optim::Adam*>{&a, &old_names}, {&b, &new_names}}) {
      opt->zero_grad();
      sum(mul(*p, *p)).backward();
      opt->step();
    }
  }
  BOOST_TEST(a.data().to_vector() == b.data().to_vector());
  // clip_grad_norm is clip_grad_norm_.
  a.grad().fill_(3.0);
  BOOST_TEST(optim::clip_grad_norm({a}, 1.0) == std::sqrt(27.0), boost::test_tools::tolerance(1e-6));
  expect_close(a.grad(), std::vector<double>(3, 3.0 / (std::sqrt(27.0) + 1e-6)), 1e-6);
}
#pragma GCC diagnostic pop

BOOST_AUTO_TEST_SUITE_END()
