// operator<< for tensors, in PyTorch's layout:
//
//   tensor([[ 0.1000, -2.0000],
//           [ 3.0000,  4.0000]], shape=[2,2], dtype=float32)
//
// Big tensors (more than 1000 elements) show the first and last three entries of each long dimension
// with "..." between, as PyTorch does. One number format serves the whole tensor so that columns line up:
// integers as "3.", otherwise four decimals, or scientific notation when the magnitudes call for it.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kPrefixWidth = 7;  // "tensor("

struct Printer {
  const Tensor& t;
  bool summarize;
  bool integers = true;     // every finite value is a whole number: print "3."
  bool scientific = false;  // print "1.2346e+08"
  size_t width = 0;

  double value_at(int64_t offset) const {
    return dispatch_all(t.dtype(), [&]<typename T>() {
      return static_cast<double>(static_cast<const T*>(t.storage()->data())[offset]);
    });
  }

  bool elided(int depth) const { return summarize && t.shape()[depth] > 2 * kEdgeItems; }

  // Calls fn(offset) for every element that will be shown, in order.
  template <typename F>
  void for_each_shown(int depth, int64_t offset, F&& fn) const {
    const int64_t size = t.shape()[depth];
    for (int64_t i = 0; i < size; ++i) {
      if (elided(depth) && i == kEdgeItems) i = size - kEdgeItems;
      const int64_t at = offset + i * t.strides()[depth];
      if (depth + 1 == t.rank()) {
        fn(at);
      } else {
        for_each_shown(depth + 1, at, fn);
      }
    }
  }

  // Chooses one format for all shown values, PyTorch's way.
  void choose_format(int64_t start) {
    double max_abs = 0, min_abs = INFINITY;
    auto look = [&](int64_t offset) {
      const double v = value_at(offset);
      if (!std::isfinite(v)) return;
      if (v != std::round(v)) integers = false;
      max_abs = std::max(max_abs, std::abs(v));
      if (v != 0) min_abs = std::min(min_abs, std::abs(v));
    };
    if (t.rank() == 0) {
      look(start);
    } else {
      for_each_shown(0, start, look);
    }
    if (max_abs >= 1e8) integers = false;
    scientific = !integers && max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e5);
    if (t.rank() > 0)
      for_each_shown(0, start, [&](int64_t offset) { width = std::max(width, format(offset).size()); });
  }

  std::string format(int64_t offset) const {
    const double v = value_at(offset);
    if (t.dtype() == DType::Bool) return v != 0 ? "True" : "False";
    if (t.dtype() == DType::Int64) return std::to_string(static_cast<int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, scientific ? "%.4e" : integers ? "%.0f." : "%.4f", v);
    return buf;
  }

  // "[a, b, c]" for the last dimension; nested brackets, one per line, above it.
  std::string render(int depth, int64_t offset) const {
    const int64_t size = t.shape()[depth];
    const bool last = depth + 1 == t.rank();
    // Rows of a matrix are one newline apart, matrices of a 3-D tensor two, and so on.
    std::string separator = ",";
    if (last) {
      separator += ' ';
    } else {
      separator.append(t.rank() - 1 - depth, '\n');
      separator.append(kPrefixWidth + depth + 1, ' ');
    }
    std::string out = "[";
    for (int64_t i = 0; i < size; ++i) {
      if (i > 0) out += separator;
      if (elided(depth) && i == kEdgeItems) {
        out += "...";
        out += separator;
        i = size - kEdgeItems;
      }
      const int64_t at = offset + i * t.strides()[depth];
      if (last) {
        const std::string s = format(at);
        out.append(width - s.size(), ' ');
        out += s;
      } else {
        out += render(depth + 1, at);
      }
    }
    return out + "]";
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (t.is_row_sparse()) {  // as PyTorch prints a sparse tensor: its parts, then the layout
    return os << "tensor(row_indices=" << t.row_indices() << ",\n       row_values=" << t.row_values()
              << ",\n       shape=" << t.shape().str() << ", dtype=" << dtype_name(t.dtype())
              << ", layout=row_sparse)";
  }
  const std::string suffix =
      "shape=" + t.shape().str() + ", dtype=" + std::string(dtype_name(t.dtype())) + ")";
  if (t.numel() == 0) return os << "tensor([], " << suffix;
  Printer printer{t, t.numel() > kSummarizeAbove};
  printer.choose_format(t.offset());
  const std::string body = t.rank() == 0 ? printer.format(t.offset()) : printer.render(0, t.offset());
  return os << "tensor(" << body << ", " << suffix;
}

}  // namespace minigrad
