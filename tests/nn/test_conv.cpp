// Conv1d and Conv2d: values against hand-computed ones, shapes, PyTorch's initialisation, and errors. Its
// gradients are checked in the gradcheck catalogue (tests/gradcheck/).
#include <limits>
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(conv)

BOOST_AUTO_TEST_CASE(conv1d_is_pytorchs_cross_correlation) {
  // y[t] = Σ_k w[k]·x[t + k - 1] with padding 1: w = [1, 0, -1] gives x[t-1] - x[t+1].
  const Variable x(Tensor::from_values({1, 2, 3, 4}, {1, 1, 4}, DType::Float64));
  const Variable w(Tensor::from_values({1, 0, -1}, {1, 1, 3}, DType::Float64));
  expect_equal(conv1d(x, w, Variable(), {.padding = 1}).data(), {-2, -2, -2, 3});
  // stride 2, no padding: windows at 0 and 2 of [1,2,3,4,5]
  const Variable x5(Tensor::from_values({1, 2, 3, 4, 5}, {1, 1, 5}, DType::Float64));
  expect_equal(conv1d(x5, w, Variable(Tensor::from_values({10}, {1}, DType::Float64)), {.stride = 2}).data(),
               {1 - 3 + 10, 3 - 5 + 10});
  // dilation 2: x[t] - x[t + 4]
  expect_equal(conv1d(x5, w, Variable(), {.dilation = 2}).data(), {1 - 5});
  // 'same' with an even kernel: the extra zero goes on the right, y[t] = x[t] + 2·x[t + 1]
  const Variable w2(Tensor::from_values({1, 2}, {1, 1, 2}, DType::Float64));
  expect_equal(conv1d(x, w2, Variable(), {.padding_same = true}).data(), {5, 8, 11, 4});
}

BOOST_AUTO_TEST_CASE(groups_see_only_their_channels) {
  // Two groups of one channel each: output 0 reads channel 0 only, output 1 channel 1 only.
  const Variable x(Tensor::from_values({1, 2, 3, 10, 20, 30}, {1, 2, 3}, DType::Float64));
  const Variable w(Tensor::from_values({1, 1}, {2, 1, 1}, DType::Float64));
  expect_equal(conv1d(x, w, Variable(), {.groups = 2}).data(), {1, 2, 3, 10, 20, 30});
}

BOOST_AUTO_TEST_CASE(the_layer_has_pytorchs_names_shapes_and_initialisation) {
  Generator gen(4);
  Conv1d conv({.in_channels = 6,
               .out_channels = 4,
               .kernel_size = 5,
               .padding_same = true,
               .groups = 2,
               .generator = &gen});
  BOOST_TEST(conv.named_parameters()[0].first == "weight");
  BOOST_TEST(conv.named_parameters()[1].first == "bias");
  BOOST_TEST(conv.weight.shape() == Shape({4, 3, 5}));
  const double bound = 1 / std::sqrt(3.0 * 5.0);  // fan_in = in_channels / groups · kernel_size
  for (const Variable& p : conv.parameters()) {
    for (double v : p.data().to_vector<double>()) BOOST_TEST(std::abs(v) <= bound);
  }
  BOOST_TEST(max(abs(conv.weight.data())).item() > 0.8 * bound);  // spread over the whole range
  const Variable x(Tensor::normal({2, 6, 7}, 0, 1, DType::Float32, &gen));
  BOOST_TEST(conv(x).shape() == Shape({2, 4, 7}));
  std::ostringstream printed;
  printed << conv;
  BOOST_TEST(printed.str() == "Conv1d(6, 4, kernel_size=(5,), stride=(1,), padding=same, groups=2)");
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_layer_and_the_shapes) {
  Conv1d conv({.in_channels = 2, .out_channels = 3, .kernel_size = 5});
  expect_error<ShapeError>(
      [&] {
        conv(Variable(Tensor::zeros({1, 2, 3})));
      },
      "Conv1d: the kernel spans 5 positions, more than the padded input's 3; got input "
      "[1,2,3], weight [3,2,5], bias [3]");
  expect_error<ShapeError>(
      [&] {
        conv(Variable(Tensor::zeros({1, 4, 9})));
      },
      "Conv1d: expects input (N, 2, L) or (2, L), got [1,4,9]");
  expect_error<ValueError>(
      [] { Conv1d({.in_channels = 3, .out_channels = 4, .kernel_size = 3, .groups = 2}); },
      "Conv1d: in_channels (3) and out_channels (4) must be divisible by groups (2)");
  const Variable x(Tensor::zeros({1, 2, 8}));
  expect_error<ValueError>([&] { conv1d(x, conv.weight, conv.bias, {.stride = 2, .padding_same = true}); },
                           "conv1d: padding 'same' needs stride 1, got stride 2");
}

BOOST_AUTO_TEST_CASE(conv2d_is_pytorchs_cross_correlation_over_images) {
  // A 2×2 kernel [[1, 0], [0, -1]] on a 3×3 image 1..9: y[i, j] = x[i, j] - x[i+1, j+1] = -4 everywhere.
  const Variable x(Tensor::arange(1, 10, 1, DType::Float64).reshape({1, 1, 3, 3}));
  const Variable w(Tensor::from_values({1, 0, 0, -1}, {1, 1, 2, 2}, DType::Float64));
  expect_equal(conv2d(x, w, Variable()).data(), {-4, -4, -4, -4});
  // Padding 1 on both axes: the 4×4 output sees the zeros around the image (corners: 0 - 1 and 9 - 0).
  expect_equal(conv2d(x, w, Variable(), {.padding = 1}).data(),
               {-1, -2, -3, 0, -4, -4, -4, 3, -7, -4, -4, 6, 0, 7, 8, 9});
  // Stride (2, 1) and a bias: rows 0 only (row 2 has no row below it), every column pair.
  expect_equal(
      conv2d(x, w, Variable(Tensor::from_values({10}, {1}, DType::Float64)), {.stride = {2, 1}}).data(),
      {6, 6});
  // 'same' with an even kernel: the extra zero row and column go after the image.
  expect_equal(conv2d(x, w, Variable(), {.padding_same = true}).data(), {-4, -4, 3, -4, -4, 6, 7, 8, 9});
}

BOOST_AUTO_TEST_CASE(the_2d_layer_has_pytorchs_names_shapes_initialisation_and_errors) {
  Generator gen(4);
  Conv2d conv({.in_channels = 4,
               .out_channels = 6,
               .kernel_size = {3, 5},
               .padding = {1, 2},
               .groups = 2,
               .generator = &gen});
  BOOST_TEST(conv.named_parameters()[0].first == "weight");
  BOOST_TEST(conv.named_parameters()[1].first == "bias");
  BOOST_TEST(conv.weight.shape() == Shape({6, 2, 3, 5}));
  const double bound = 1 / std::sqrt(2.0 * 3 * 5);  // fan_in = in_channels / groups · KH · KW
  for (const Variable& p : conv.parameters()) {
    for (double v : p.data().to_vector<double>()) BOOST_TEST(std::abs(v) <= bound);
  }
  BOOST_TEST(conv(Variable(Tensor::normal({2, 4, 7, 9}))).shape() == Shape({2, 6, 7, 9}));
  std::ostringstream printed;
  printed << conv;
  BOOST_TEST(printed.str() == "Conv2d(4, 6, kernel_size=(3, 5), stride=(1, 1), padding=(1, 2), groups=2)");
  expect_error<ShapeError>(
      [&] {
        conv(Variable(Tensor::zeros({2, 4, 7})));
      },
      "Conv2d: expects input (N, 4, H, W) or (4, H, W), got [2,4,7]");
  expect_error<ShapeError>(
      [] {
        conv2d(Variable(Tensor::zeros({1, 2, 2, 4})), Variable(Tensor::zeros({1, 2, 3, 3})), Variable());
      },
      "conv2d: the kernel spans 3 positions, more than the padded input's 2; got input [1,2,2,4], weight "
      "[1,2,3,3]");
  expect_error<ValueError>(
      [] { Conv2d({.in_channels = 3, .out_channels = 4, .kernel_size = 3, .groups = 2}); },
      "Conv2d: in_channels (3) and out_channels (4) must be divisible by groups (2)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pooling)

BOOST_AUTO_TEST_CASE(max_pool1d_takes_each_windows_maximum) {
  const Variable x(Tensor::from_values({1, 5, 2, 4, 3, 0}, {1, 1, 6}, DType::Float64));
  expect_equal(max_pool1d(x, {.kernel_size = 2}).data(), {5, 4, 3});  // stride = kernel
  expect_equal(max_pool1d(x, {.kernel_size = 3, .stride = 1}).data(), {5, 5, 4, 4});
  expect_equal(max_pool1d(x, {.kernel_size = 2, .padding = 1}).data(), {1, 5, 4, 0});  // -inf padding
  expect_error<ValueError>([&] { max_pool1d(x, {.kernel_size = 2, .padding = 2}); },
                           "max_pool1d: kernel_size, stride and dilation must be positive and padding at "
                           "most half the kernel, got "
                           "kernel_size 2, stride 2, padding 2, dilation 1");
}

BOOST_AUTO_TEST_CASE(avg_pool1d_takes_each_windows_mean_as_pytorch) {
  // F.avg_pool1d on [1, 5, 2, 4, 3, 0], PyTorch 1.13's values.
  const Variable x(Tensor::from_values({1, 5, 2, 4, 3, 0}, {1, 1, 6}, DType::Float64), true);
  expect_equal(avg_pool1d(x, {.kernel_size = 2}).data(), {3, 3, 1.5});
  expect_close(avg_pool1d(x, {.kernel_size = 3, .stride = 1}).data(), {8.0 / 3, 11.0 / 3, 3, 7.0 / 3}, 1e-15);
  expect_equal(avg_pool1d(x, {.kernel_size = 2, .padding = 1}).data(), {0.5, 3.5, 3.5, 0});  // zeros counted
  Variable y = avg_pool1d(x, {.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
  expect_close(y.data(), {3, 11.0 / 3, 7.0 / 3}, 1e-15);  // the first window holds 2 inputs: (1 + 5) / 2
  y.backward(Tensor::ones({1, 1, 3}, DType::Float64));
  expect_close(x.grad(), {0.5, 0.5 + 1.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15);
  expect_error_containing<ValueError>([&] { avg_pool1d(x, {.kernel_size = 0}); }, "avg_pool1d: kernel_size");
}

BOOST_AUTO_TEST_CASE(pooling_modules_print_and_compute_as_pytorchs) {
  const Variable x(Tensor::from_values({1, 5, 2, 4, 3, 0}, {1, 1, 6}, DType::Float64));
  nn::MaxPool1d max_pool({.kernel_size = 2});
  nn::AvgPool1d avg_pool({.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
  std::ostringstream out;
  out << max_pool << " " << avg_pool;
  BOOST_TEST(out.str() ==
             "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False) "
             "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))");
  expect_equal(max_pool(x).data(), {5, 4, 3});
  expect_close(avg_pool(x).data(), {3, 11.0 / 3, 7.0 / 3}, 1e-15);
}

BOOST_AUTO_TEST_CASE(pooling_over_time_honours_valid_lengths) {
  // Two sequences of one channel: [1, 7, 3, 9] whole, and [4, 2, 8, 6] of which 2 positions are valid.
  const Variable x(Tensor::from_values({1, 7, 3, 9, 4, 2, 8, 6}, {2, 1, 4}, DType::Float64), true);
  const Tensor lens = Tensor::from_vector<int64_t>({4, 2}, {2});
  expect_equal(max_over_time(x, lens).data(), {9, 4});
  expect_equal(mean_over_time(x, lens).data(), {5, 3});
  expect_equal(max_over_time(x).data(), {9, 8});
  // The gradient reaches only valid positions: the maximum's, or every valid one evenly.
  sum(mean_over_time(x, lens)).backward();
  expect_equal(x.grad(), {0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0, 0});
  expect_error<ValueError>(
      [&] {
        max_over_time(x, Tensor::from_vector<int64_t>({4, -1}, {2}));
      },
      "max_over_time: valid_lens[1] = -1 is not in 0..4 for an input of shape [2,1,4]");
  expect_error<ValueError>(
      [&] {
        mean_over_time(x, Tensor::from_vector<int64_t>({5, 1}, {2}));
      },
      "mean_over_time: valid_lens[0] = 5 is not in 0..4 for an input of shape [2,1,4]");
  expect_error<ValueError>(
      [&] { mean_over_time(x, lens, 0); },
      "mean_over_time: dim is the time axis, 1 for x (N, L, C) or 2 for x (N, C, L), got 0");
  expect_error<ShapeError>(
      [&] {
        max_over_time(Variable(Tensor::zeros({2, 4})), {}, 1);
      },
      "max_over_time: expects (N, L, C) with dim 1, got [2,4]");
}

BOOST_AUTO_TEST_CASE(pooling_over_time_along_dim_1_pools_an_empty_sequence_to_zeros) {
  // A Transformer's layout (B, T, d) with the time axis at 1: x[b, t, :] = t + 1.
  const Variable x(
      (Tensor::arange(0, 4, 1, DType::Float64) + 1.0).reshape({1, 4, 1}).expand({2, 4, 2}).contiguous(),
      true);
  const Tensor lens = Tensor::from_vector<int64_t>({3, 0}, {2});
  const Variable mean = mean_over_time(x, lens, /*dim=*/1), top = max_over_time(x, lens, /*dim=*/1);
  expect_equal(mean.data(), {2, 2, 0, 0});  // (1+2+3)/3; an empty sequence gives 0
  expect_equal(top.data(), {3, 3, 0, 0});
  // The gradient: 1/3 to each valid position and 1 to the maximum's; nothing to an empty sequence.
  sum(mean + top).backward();
  expect_close(x.grad(), {1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 4.0 / 3, 4.0 / 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
               1e-15);
}

BOOST_AUTO_TEST_CASE(pooling_over_images_gives_pytorchs_values_and_passes_nan) {
  // F.max_pool2d(x, 2) of 1..16 as 4×4 with a NaN at (0, 1), and F.avg_pool2d(1..16, 3, 1, 1,
  // count_include_pad=False): PyTorch 1.13's values.
  Tensor x = Tensor::arange(1, 17, 1, DType::Float64).reshape({1, 1, 4, 4});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor with_nan = x.clone();
  with_nan.select(2, 0).select(2, 1).fill_(nan);
  expect_equal(MaxPool2d({.kernel_size = 2})(Variable(with_nan)).data(), {nan, 8, 14, 16});
  // The general kernel (a 3×3 window) passes the NaN too, and each window's gradient goes to its maximum.
  expect_equal(MaxPool2d({.kernel_size = 3})(Variable(with_nan)).data(), {nan});
  const Variable leaf(x, true);
  sum(MaxPool2d({.kernel_size = 2})(leaf)).backward();
  expect_equal(leaf.grad(), {0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1});
  expect_equal(
      AvgPool2d({.kernel_size = 3, .stride = 1, .padding = 1, .count_include_pad = false})(Variable(x))
          .data(),
      {3.5, 4, 5, 5.5, 5.5, 6, 7, 7.5, 9.5, 10, 11, 11.5, 11.5, 12, 13, 13.5});
  expect_equal(AdaptiveAvgPool2d(1)(Variable(x)).data(), {8.5});
  BOOST_TEST(AdaptiveAvgPool2d({2, 1})(Variable(x)).shape() == Shape({1, 1, 2, 1}));
  // 3×3 bins of a 4×4 image overlap: rows (and columns) {0, 1}, {1, 2}, {2, 3}; x[r][c] = 4r + c + 1, so
  // bin (i, j) averages to 4·(i + 0.5) + (j + 0.5) + 1.
  expect_equal(AdaptiveAvgPool2d(3)(Variable(x)).data(), {3.5, 4.5, 5.5, 7.5, 8.5, 9.5, 11.5, 12.5, 13.5});
}

BOOST_AUTO_TEST_CASE(a_nan_reaches_only_the_pools_that_hold_it) {
  // PyTorch's CPU kernels: a NaN makes NaN the outputs whose window or bin holds it, and no others.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = Tensor::arange(1, 17, 1, DType::Float64).reshape({1, 1, 4, 4});  // x[r][c] = 4r + c + 1
  x.select(2, 0).select(2, 0).fill_(nan);
  // 2×2 tiles (the divisible case) and 3×3 bins that overlap by a row and a column: only bin (0, 0) holds
  // pixel (0, 0).
  expect_equal(AdaptiveAvgPool2d(2)(Variable(x)).data(), {nan, 5.5, 11.5, 13.5});
  expect_equal(AdaptiveAvgPool2d(3)(Variable(x)).data(), {nan, 4.5, 5.5, 7.5, 8.5, 9.5, 11.5, 12.5, 13.5});
  // Bins of two sizes along the width (4 into 3), equal tiles along the height (4 into 2).
  expect_equal(AdaptiveAvgPool2d({2, 3})(Variable(x)).data(), {nan, 4.5, 5.5, 11.5, 12.5, 13.5});
  // Two NaNs in one window: the gradient goes to the last, in the 2×2 kernel and in the general one.
  Tensor two = Tensor::from_values({nan, 1, 2, nan}, {1, 1, 2, 2}, DType::Float64);
  for (const MaxPool2dOptions& window :
       {MaxPool2dOptions{.kernel_size = 2}, MaxPool2dOptions{.kernel_size = 3, .stride = 2, .padding = 1}}) {
    const Variable leaf(two, true);
    sum(max_pool2d(leaf, window)).backward();
    BOOST_TEST_CONTEXT("kernel " << window.kernel_size.h) {
      expect_equal(leaf.grad(), {0, 0, 0, 1});
    }
  }
}

BOOST_AUTO_TEST_CASE(max_pool_kernel_refuses_windows_that_do_not_fit) {
  // The tensor-level kernel checks its geometry itself: a 2×2 window does not fit an image one row high,
  // a stride of 0 is refused, and a window over padding alone names the input and the window.
  const Tensor row = Tensor::zeros({1, 1, 1, 4});
  const Conv1dGeometry pair{.kernel = 2, .stride = 2};
  expect_error<ShapeError>([&] { max_pool2d_argmax(row, {.height = pair, .width = pair}); },
                           "max_pool2d: the kernel spans 2 positions, more than the padded input's 1");
  expect_error<ValueError>(
      [&] { max_pool2d_argmax(row, {.height = {.kernel = 1, .stride = 0}, .width = pair}); },
      "max_pool2d: kernel, stride and dilation must be positive and padding non-negative, got kernel 1, "
      "stride 0, dilation 1, padding 0 and 0");
  const Conv1dGeometry around{.kernel = 2, .stride = 1, .dilation = 2, .pad_left = 1, .pad_right = 1};
  expect_error<ShapeError>(
      [&] { max_pool2d_argmax(row, {.height = around, .width = {.kernel = 1}}); },
      "max_pool2d: the window of output (0, 0) covers only padding in an input of shape [1,1,1,4] "
      "(kernel 2×1, stride 1×1, padding 1×0, dilation 2×1)");
  expect_error<ShapeError>(
      [] {
        adaptive_avg_pool2d(Variable(Tensor::zeros({1, 1, 0, 4})), 1);
      },
      "adaptive_avg_pool2d: has no pixels to average in an input of shape [1,1,0,4] "
      "(expected H and W of at least 1)");
}

BOOST_AUTO_TEST_CASE(pooling_layers_print_as_pytorchs_and_refuse_bad_windows) {
  auto printed = [](const Module& m) {
    std::ostringstream out;
    out << m;
    return out.str();
  };
  BOOST_TEST(printed(MaxPool2d({.kernel_size = 2})) ==
             "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  BOOST_TEST(printed(MaxPool2d({.kernel_size = {2, 3}})) ==
             "MaxPool2d(kernel_size=(2, 3), stride=(2, 3), padding=0, dilation=1, ceil_mode=False)");
  BOOST_TEST(printed(AvgPool2d({.kernel_size = 3, .stride = 1, .padding = 1})) ==
             "AvgPool2d(kernel_size=3, stride=1, padding=1)");
  BOOST_TEST(printed(AdaptiveAvgPool2d({2, 1})) == "AdaptiveAvgPool2d(output_size=(2, 1))");
  const Variable x(Tensor::zeros({1, 2, 4, 5}));
  expect_error<ValueError>(
      [&] {
        max_pool2d(x, {.kernel_size = 2, .padding = {0, 2}});
      },
      "max_pool2d: kernel_size, stride and dilation must be positive and padding at most "
      "half the kernel, got kernel_size 2, stride 2, padding 2, dilation 1");
  expect_error<ShapeError>(
      [&] {
        avg_pool2d(x, {.kernel_size = {5, 1}});
      },
      "avg_pool2d: the window spans 5 positions, more than the padded input's 4; input "
      "[1,2,4,5]");
  expect_error<ShapeError>(
      [] {
        max_pool2d(Variable(Tensor::zeros({2, 4, 5})), {.kernel_size = 2});
      },
      "max_pool2d: expects (N, C, H, W), got [2,4,5]");
  expect_error<ValueError>(
      [&] {
        max_pool2d(x, {.kernel_size = 2, .stride = {-1, 1}});
      },
      "max_pool2d: kernel_size, stride and dilation must be positive and padding at most "
      "half the kernel, got kernel_size 2, stride -1, padding 0, dilation 1");
  // unfold2d itself refuses a window larger than the padded image (PyTorch's F.unfold does too).
  expect_error<ShapeError>(
      [] {
        unfold2d(Tensor::zeros({1, 1, 2, 2}),
                 Conv2dGeometry{.height = {.kernel = 3, .stride = 2}, .width = {.kernel = 3, .stride = 2}});
      },
      "unfold2d: the kernel spans 3 positions, more than the padded input's 2");
  expect_error<ValueError>(
      [] {
        conv2d(Variable(Tensor::zeros({1, 1, 4, 4})), Variable(Tensor::zeros({1, 1, 3, 3})), Variable(),
               {.padding = 1, .padding_same = true});
      },
      "conv2d: padding 'same' replaces the padding, got padding 1 too");
  expect_error<ValueError>(
      [&] {
        adaptive_avg_pool2d(x, {0, 1});
      },
      "adaptive_avg_pool2d: the output size must be positive, got 0×1");
  // Refused when the layer is made, as PyTorch's constructor does, not at the first forward.
  expect_error<ValueError>(
      [] {
        Conv2d(
            {.in_channels = 1, .out_channels = 1, .kernel_size = 3, .stride = {1, 2}, .padding_same = true});
      },
      "Conv2d: padding 'same' needs stride 1, got stride 2");
  expect_error<ValueError>(
      [] { Conv1d({.in_channels = 1, .out_channels = 1, .kernel_size = 3, .padding = -1}); },
      "Conv1d: stride and dilation must be positive and padding non-negative, got stride 1, "
      "padding -1, dilation 1");
}

BOOST_AUTO_TEST_SUITE_END()
