#include "minigrad/nn/batch_norm.h"

#include <algorithm>
#include <cstdio>

namespace minigrad::nn {

BatchNorm::BatchNorm(const BatchNormOptions& opts, std::vector<int> ranks, std::string layout)
    : options(opts), ranks_(std::move(ranks)), layout_(std::move(layout)) {
  if (opts.num_features <= 0) {
    throw ValueError("BatchNorm", "num_features must be positive, got " + std::to_string(opts.num_features));
  }
  if (opts.momentum && !(*opts.momentum >= 0 && *opts.momentum <= 1)) {
    throw ValueError("BatchNorm",
                     "momentum must be in [0, 1] or unset, got " + std::to_string(*opts.momentum));
  }
  const int64_t c = opts.num_features;
  if (opts.affine) {
    weight = register_parameter("weight", Tensor::ones({c}));
    bias = register_parameter("bias", Tensor::zeros({c}));
  }
  if (opts.track_running_stats) {
    running_mean = register_buffer("running_mean", Tensor::zeros({c}));
    running_var = register_buffer("running_var", Tensor::ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", Tensor::zeros({}, DType::Int64));
  }
}

Variable BatchNorm::forward(const Variable& x) const {
  if (!x.defined() || std::find(ranks_.begin(), ranks_.end(), x.rank()) == ranks_.end() ||
      x.shape()[1] != options.num_features) {
    throw ShapeError(name(), "expects " + layout_ + " with C = " + std::to_string(options.num_features) +
                                 ", got " +
                                 (x.defined() ? x.shape().str() : std::string("an undefined Variable")));
  }
  // PyTorch's rule: the batch's statistics in training, and in evaluation too without running ones.
  const bool batch_statistics = is_training() || !options.track_running_stats;
  double momentum = 0;
  if (is_training() && options.track_running_stats) {
    const double batches = num_batches_tracked.data().item() + 1;
    num_batches_tracked.data().fill_(batches);
    momentum = options.momentum ? *options.momentum : 1.0 / batches;  // unset: the cumulative average
  }
  const bool running = options.track_running_stats;
  return batch_norm(x, running ? running_mean.data() : Tensor(), running ? running_var.data() : Tensor(),
                    weight, bias, {.training = batch_statistics, .momentum = momentum, .eps = options.eps});
}

std::string BatchNorm::extra_repr() const {
  char eps[32], momentum[32];
  std::snprintf(eps, sizeof eps, "%g", options.eps);
  if (options.momentum) {
    std::snprintf(momentum, sizeof momentum, "%g", *options.momentum);
  } else {
    std::snprintf(momentum, sizeof momentum, "None");
  }
  return std::to_string(options.num_features) + ", eps=" + eps + ", momentum=" + momentum +
         ", affine=" + (options.affine ? "True" : "False") +
         ", track_running_stats=" + (options.track_running_stats ? "True" : "False");
}

}  // namespace minigrad::nn
