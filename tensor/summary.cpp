#include "minigrad/tensor/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minigrad {

TensorSummary summarize(const Tensor& t, int64_t max_complete, int64_t first) {
  TensorSummary s;
  s.shape = t.shape();
  s.dtype = t.dtype();
  std::vector<double> all = t.to_dense().to_vector<double>();
  if (!all.empty()) {
    // Summed in double, in order: good enough to look at, and the same on every run.
    double sum = 0.0;
    s.min = s.max = all[0];
    for (double v : all) {
      sum += v;
      if (std::isnan(v) || std::isnan(s.min)) {
        s.min = s.max = std::numeric_limits<double>::quiet_NaN();  // NaN propagates, as in torch.min
      } else {
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
      }
    }
    s.mean = sum / static_cast<double>(all.size());
  }
  s.complete = static_cast<int64_t>(all.size()) <= max_complete;
  if (!s.complete)
    all.resize(static_cast<size_t>(std::min<int64_t>(first, static_cast<int64_t>(all.size()))));
  s.values = std::move(all);
  return s;
}

}  // namespace minigrad
