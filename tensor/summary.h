// A tensor in a few numbers, for a person to look at (the backward page, viz/page.h): a small
// tensor's every entry, a large one's mean, min, max and first entries.
//
//   TensorSummary s = summarize(t);  // t (1000, 512): s.values empty, s.mean, s.min, s.max, s.first
#pragma once

#include <cstdint>
#include <vector>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

struct TensorSummary {
  Shape shape;
  DType dtype = DType::Float32;
  bool complete = false;       // values holds every entry (row-major); otherwise only `first` does
  std::vector<double> values;  // the first entries, or all of them when complete
  // Over all entries; NaN if any entry is NaN (as PyTorch's min and max), 0 for an empty tensor.
  double mean = 0.0;
  double min = 0.0;
  double max = 0.0;
};

// Every entry when t has at most `max_complete` of them, otherwise the first `first` entries. A
// row-sparse tensor is summarised as its dense self.
TensorSummary summarize(const Tensor& t, int64_t max_complete = 64, int64_t first = 8);

}  // namespace minigrad
