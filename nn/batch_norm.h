// BatchNorm1d and BatchNorm2d, as PyTorch's: each channel normalised with the batch's mean and variance in
// training, and with the running statistics (buffers, saved with the model) in evaluation.
//
//   nn::BatchNorm2d norm({.num_features = 32});   // (N, 32, H, W) -> the same shape
//
// Parameters and buffers have PyTorch's names: weight (ones) and bias (zeros) when affine; running_mean
// (zeros), running_var (ones) and num_batches_tracked (int64) when track_running_stats. Each training
// step moves the running statistics toward the batch's by `momentum` (the variance unbiased), or, with
// momentum unset, keeps their cumulative average over the num_batches_tracked batches seen. Without
// track_running_stats the batch's statistics are used in evaluation too.
#pragma once

#include <optional>

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/positional_options.h"

namespace minigrad::nn {

struct BatchNormOptions {
  int64_t num_features = 0;
  double eps = 1e-5;
  std::optional<double> momentum = 0.1;  // unset: a cumulative average (PyTorch's momentum=None)
  bool affine = true;
  bool track_running_stats = true;
};

// What BatchNorm1d and BatchNorm2d share; they differ in the inputs they take.
class BatchNorm : public Layer<BatchNorm> {
 public:
  // x (N, num_features, ...) -> the same shape
  Variable forward(const Variable& x) const;

  std::string extra_repr() const override;

  Variable weight, bias;                                    // (num_features), when affine
  Variable running_mean, running_var, num_batches_tracked;  // buffers, when track_running_stats
  BatchNormOptions options;

 protected:
  // `layout` names the inputs taken, for the error message; `ranks` their ranks.
  BatchNorm(const BatchNormOptions& options, std::vector<int> ranks, std::string layout);
  // The options with PyTorch's positional num_features written in.
  static BatchNormOptions with_features(BatchNormOptions options, int64_t num_features, const char* layer) {
    detail::set_positional(options, &BatchNormOptions::num_features, num_features, layer, "num_features");
    return options;
  }

 private:
  std::vector<int> ranks_;
  std::string layout_;
};

// Over (N, C) or (N, C, L): each of C features normalised over the batch (and the positions).
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(const BatchNormOptions& options) : BatchNorm(options, {2, 3}, "(N, C) or (N, C, L)") {}
  // PyTorch's BatchNorm1d(num_features, ...): nn::BatchNorm1d(8, {.momentum = 0.01}).
  explicit BatchNorm1d(int64_t num_features, BatchNormOptions options = {})
      : BatchNorm1d(with_features(options, num_features, "BatchNorm1d")) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      BatchNorm1d,
      ConstructorLines<void(const BatchNormOptions&), void(int64_t), void(int64_t, BatchNormOptions)>, A...>
  explicit BatchNorm1d(A&&...) : BatchNorm1d(BatchNormOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::BatchNorm1d takes (num_features), then {options}; or (BatchNormOptions)");
  }
  std::string name() const override { return "BatchNorm1d"; }
};

// Over (N, C, H, W): each of C channels normalised over the batch and the image.
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(const BatchNormOptions& options) : BatchNorm(options, {4}, "(N, C, H, W)") {}
  // PyTorch's BatchNorm2d(num_features, ...): nn::BatchNorm2d(16).
  explicit BatchNorm2d(int64_t num_features, BatchNormOptions options = {})
      : BatchNorm2d(with_features(options, num_features, "BatchNorm2d")) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      BatchNorm2d,
      ConstructorLines<void(const BatchNormOptions&), void(int64_t), void(int64_t, BatchNormOptions)>, A...>
  explicit BatchNorm2d(A&&...) : BatchNorm2d(BatchNormOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::BatchNorm2d takes (num_features), then {options}; or (BatchNormOptions)");
  }
  std::string name() const override { return "BatchNorm2d"; }
};

}  // namespace minigrad::nn
