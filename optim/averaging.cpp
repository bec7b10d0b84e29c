#include "minigrad/optim/averaging.h"

#include <algorithm>
#include <map>

#include "minigrad/tensor/ops.h"

namespace minigrad::optim {

ExponentialMovingAverage::ExponentialMovingAverage(ParameterList parameters,
                                                   const ExponentialMovingAverageOptions& options)
    : options(options), parameters_(std::move(parameters.variables)), names_(std::move(parameters.names)) {
  if (!(options.decay >= 0 && options.decay < 1)) {
    throw ValueError("ExponentialMovingAverage",
                     "decay must be in [0, 1), got " + std::to_string(options.decay));
  }
  for (const Variable& p : parameters_) {
    if (!p.defined()) throw ValueError("ExponentialMovingAverage", "a parameter is undefined");
    averages_.push_back(p.data().clone());
  }
}

void ExponentialMovingAverage::update() {
  ++updates_;
  const double n = static_cast<double>(updates_);
  const double decay = options.warmup ? std::min(options.decay, (1 + n) / (10 + n)) : options.decay;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor p = parameters_[i].data().contiguous();
    const Tensor& average = averages_[i];
    dispatch_float(average.dtype(), "ExponentialMovingAverage", [&]<typename T>() {
      T* a = average.data_ptr<T>();
      const T* v = p.data_ptr<const T>();
      const T keep = T(decay);
      parallel_for(average.numel(), 8, [=](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) a[k] += (T(1) - keep) * (v[k] - a[k]);
      });
    });
  }
}

void ExponentialMovingAverage::swap() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor& value = parameters_[i].data();
    const Tensor training = value.clone();
    value.copy_(averages_[i]);
    value.bump_version();
    averages_[i] = training;
  }
}

std::vector<std::pair<std::string, Tensor>> ExponentialMovingAverage::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < parameters_.size(); ++i) out.emplace_back(names_[i], averages_[i]);
  out.emplace_back("updates", Tensor::from_vector<int64_t>({updates_}, {}));
  return out;
}

void ExponentialMovingAverage::load_state_tensors(
    const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::map<std::string, const Tensor*, std::less<>> given;
  for (const auto& [name, t] : tensors) given[name] = &t;
  auto missing = [](const std::string& name) {
    return ValueError("ExponentialMovingAverage", "the saved averages have no '" + name + "'");
  };
  if (!given.count("updates")) throw missing("updates");
  const Tensor& count = *given.at("updates");
  if (count.dtype() != DType::Int64 || count.numel() != 1 || count.item() < 0) {
    throw ValueError("ExponentialMovingAverage", "'updates' must be a non-negative int64 scalar");
  }
  if (given.size() != parameters_.size() + 1) {
    throw ValueError("ExponentialMovingAverage",
                     "the saved averages hold " + std::to_string(given.size() - 1) + " tensors; there are " +
                         std::to_string(parameters_.size()) + " parameters");
  }
  std::vector<Tensor> loaded;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!given.count(names_[i])) throw missing(names_[i]);
    const Tensor& t = *given.at(names_[i]);
    const Tensor& p = parameters_[i].data();
    if (t.shape() != p.shape() || t.dtype() != p.dtype()) {
      throw ShapeError("ExponentialMovingAverage",
                       "'" + names_[i] + "' is " + std::string(dtype_name(t.dtype())) + " " +
                           t.shape().str() + " but the parameter is " + std::string(dtype_name(p.dtype())) +
                           " " + p.shape().str());
    }
    loaded.push_back(t.clone());
  }
  averages_ = std::move(loaded);
  updates_ = static_cast<int64_t>(count.item());
}

}  // namespace minigrad::optim
