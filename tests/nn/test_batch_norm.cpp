// BatchNorm1d, BatchNorm2d and Dropout2d: training and evaluation, the running statistics, PyTorch's
// names, and errors. The numbers against PyTorch 1.13 (output, gradients, running statistics after a
// step) are checked by conv_parity_with_pytorch, the gradients by the gradcheck catalogue.
#include <unistd.h>
#include <filesystem>
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

// Each channel's mean and biased variance over every dimension but 1, as (C) tensors.
std::pair<Tensor, Tensor> channel_statistics(const Tensor& x) {
  Shape dims;
  for (int d = 0; d < x.rank(); ++d)
    if (d != 1) dims.push_back(d);
  const Tensor m = mean(x, dims, true);
  const Tensor v = mean((x - m) * (x - m), dims);
  return {m.reshape({x.shape()[1]}), v};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_norm)

BOOST_AUTO_TEST_CASE(training_normalises_each_channel_and_moves_the_running_statistics) {
  BatchNorm2d norm({.num_features = 3, .momentum = 0.25});
  norm.to(F64);
  const Tensor x = Tensor::normal({4, 3, 5, 6}, 2, 3, F64);
  const Tensor y = norm(Variable(x)).data();
  const auto [y_mean, y_var] = channel_statistics(y);
  BOOST_TEST(allclose(y_mean, Tensor::zeros({3}, F64), {.rtol = 0, .atol = 1e-12}));
  BOOST_TEST(allclose(y_var, Tensor::ones({3}, F64), {.rtol = 0, .atol = 1e-4}));  // var / (var + eps)
  // running = 0.75·initial + 0.25·batch, the variance unbiased: n = 4·5·6 values per channel.
  const auto [x_mean, x_var] = channel_statistics(x);
  const double n = 4 * 5 * 6;
  BOOST_TEST(allclose(norm.running_mean.data(), x_mean * 0.25, {.rtol = 1e-12, .atol = 0}));
  BOOST_TEST(allclose(norm.running_var.data(), Tensor::ones({3}, F64) * 0.75 + x_var * (0.25 * n / (n - 1)),
                      {.rtol = 1e-12, .atol = 0}));
  BOOST_TEST(norm.num_batches_tracked.data().item() == 1);
  BOOST_TEST(norm.num_batches_tracked.dtype() == DType::Int64);  // to(F64) leaves the count an integer
}

BOOST_AUTO_TEST_CASE(evaluation_uses_the_running_statistics) {
  BatchNorm1d norm({.num_features = 2});
  norm.to(F64);
  norm.running_mean.data().copy_(Tensor::from_values({1, -2}, {2}, F64));
  norm.running_var.data().copy_(Tensor::from_values({4, 0.25}, {2}, F64));
  norm.weight.data().copy_(Tensor::from_values({2, 3}, {2}, F64));
  norm.bias.data().copy_(Tensor::from_values({0.5, -1}, {2}, F64));
  norm.eval();
  const Tensor x = Tensor::from_values({3, 0, -1, -2.5}, {2, 2}, F64);  // (N, C)
  // (x - mean) / √(var + eps) · weight + bias per channel
  const double e = 1e-5;
  expect_close(norm(Variable(x)).data(),
               {2 * 2 / std::sqrt(4 + e) + 0.5, 3 * 2 / std::sqrt(0.25 + e) - 1,
                2 * -2 / std::sqrt(4 + e) + 0.5, 3 * -0.5 / std::sqrt(0.25 + e) - 1},
               1e-12);
  BOOST_TEST(norm.num_batches_tracked.data().item() == 0);  // evaluation moves nothing
  expect_equal(norm.running_mean.data(), {1, -2});
}

BOOST_AUTO_TEST_CASE(without_momentum_the_running_statistics_are_a_cumulative_average) {
  BatchNorm1d norm({.num_features = 2, .momentum = std::nullopt, .affine = false});
  norm.to(F64);
  const Tensor a = Tensor::normal({5, 2, 3}, 1, 1, F64), b = Tensor::normal({5, 2, 3}, -2, 1, F64);
  norm(Variable(a));
  norm(Variable(b));
  BOOST_TEST(norm.num_batches_tracked.data().item() == 2);
  BOOST_TEST(allclose(norm.running_mean.data(),
                      (channel_statistics(a).first + channel_statistics(b).first) * 0.5,
                      {.rtol = 1e-12, .atol = 1e-15}));
}

BOOST_AUTO_TEST_CASE(without_running_statistics_evaluation_uses_the_batch) {
  BatchNorm2d norm({.num_features = 2, .track_running_stats = false});
  BOOST_TEST(norm.named_buffers().empty());
  norm.eval();
  const Tensor y = norm(Variable(Tensor::normal({3, 2, 4, 4}, 5, 2))).data();
  BOOST_TEST(max(abs(channel_statistics(y).first)).item() < 1e-5);
}

BOOST_AUTO_TEST_CASE(names_are_pytorchs_and_the_buffers_are_saved_and_loaded) {
  BatchNorm2d norm({.num_features = 3});
  std::vector<std::string> names;
  for (const auto& [name, p] : norm.named_parameters()) names.push_back(name);
  for (const auto& [name, b] : norm.named_buffers()) names.push_back(name);
  BOOST_TEST(names == (std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                                "num_batches_tracked"}),
             boost::test_tools::per_element());
  std::ostringstream printed;
  printed << norm;
  BOOST_TEST(printed.str() ==
             "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  norm(Variable(Tensor::normal({2, 3, 2, 2})));
  const std::string path =
      (std::filesystem::temp_directory_path() / ("batch_norm_" + std::to_string(getpid()) + ".safetensors"))
          .string();
  optim::save_weights(norm, path);
  BatchNorm2d loaded({.num_features = 3});
  optim::load_weights(loaded, path);
  std::filesystem::remove(path);
  BOOST_TEST(allclose(loaded.running_mean.data(), norm.running_mean.data(), {.rtol = 0, .atol = 0}));
  BOOST_TEST(allclose(loaded.running_var.data(), norm.running_var.data(), {.rtol = 0, .atol = 0}));
  BOOST_TEST(loaded.num_batches_tracked.data().item() == 1);
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_refused_by_name) {
  const BatchNorm2d norm({.num_features = 3});
  expect_error<ShapeError>(
      [&] {
        norm(Variable(Tensor::zeros({2, 3, 4})));
      },
      "BatchNorm2d: expects (N, C, H, W) with C = 3, got [2,3,4]");
  expect_error<ShapeError>(
      [] {
        BatchNorm1d({.num_features = 4})(Variable(Tensor::zeros({2, 3})));
      },
      "BatchNorm1d: expects (N, C) or (N, C, L) with C = 4, got [2,3]");
  expect_error<ValueError>(
      [] {
        BatchNorm1d({.num_features = 3})(Variable(Tensor::zeros({1, 3})));
      },
      "batch_norm: training needs more than 1 value per channel, got an input of shape [1,3]");
  expect_error<ValueError>([] { BatchNorm1d({.num_features = 3, .momentum = 1.5}); },
                           "BatchNorm: momentum must be in [0, 1] or unset, got 1.500000");
}

BOOST_AUTO_TEST_CASE(dropout2d_zeroes_whole_channels_in_training_only) {
  Dropout2d drop(0.5);
  const Tensor x = Tensor::ones({8, 6, 3, 3}, F64);
  const Tensor y = drop(Variable(x)).data();
  int zeroed = 0;
  for (int64_t n = 0; n < 8; ++n) {
    for (int64_t c = 0; c < 6; ++c) {
      const Tensor channel = y.select(0, n).select(0, c);
      const double lo = min(channel).item(), hi = max(channel).item();
      BOOST_TEST(lo == hi);              // a channel is kept or dropped whole
      BOOST_TEST((hi == 0 || hi == 2));  // kept channels scaled by 1/(1 - p)
      zeroed += hi == 0;
    }
  }
  BOOST_TEST(zeroed > 0);
  BOOST_TEST(zeroed < 48);
  drop.eval();
  BOOST_TEST(allclose(drop(Variable(x)).data(), x, {.rtol = 0, .atol = 0}));
  expect_error<ShapeError>(
      [] {
        Dropout2d(0.5)(Variable(Tensor::ones({2, 3, 4})));
      },
      "dropout2d: expects (N, C, H, W), got [2,3,4]");
}

BOOST_AUTO_TEST_SUITE_END()
