#include "minigrad/tensor/unfold.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"
#include "minigrad/tensor/window_rows.h"

namespace minigrad {

using detail::window_row;
using detail::WindowRow;

int64_t Conv1dGeometry::out_length(int64_t length) const {
  return (length + pad_left + pad_right - dilation * (kernel - 1) - 1) / stride + 1;
}

void check_window(std::string_view op, const Conv1dGeometry& g, int64_t length) {
  if (g.kernel < 1 || g.stride < 1 || g.dilation < 1 || g.pad_left < 0 || g.pad_right < 0) {
    throw ValueError(op,
                     "kernel, stride and dilation must be positive and padding non-negative, got kernel " +
                         std::to_string(g.kernel) + ", stride " + std::to_string(g.stride) + ", dilation " +
                         std::to_string(g.dilation) + ", padding " + std::to_string(g.pad_left) + " and " +
                         std::to_string(g.pad_right));
  }
  const int64_t span = g.dilation * (g.kernel - 1) + 1, padded = length + g.pad_left + g.pad_right;
  if (span > padded) {
    throw ShapeError(op, "the kernel spans " + std::to_string(span) +
                             " positions, more than the padded input's " + std::to_string(padded));
  }
}

namespace {

// Calls visit(column row r = c·K + k, output position t, input position p) for every window element
// that falls inside the sequence [0, length).
template <typename Visit>
void for_each_window_element(int64_t channels, int64_t length, int64_t out_length, const Conv1dGeometry& g,
                             Visit visit) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k = 0; k < g.kernel; ++k) {
      const int64_t r = c * g.kernel + k, shift = k * g.dilation - g.pad_left;
      for (int64_t t = 0; t < out_length; ++t) {
        const int64_t p = t * g.stride + shift;
        if (p >= 0 && p < length) visit(r, t, c, p);
      }
    }
  }
}

}  // namespace

Tensor unfold1d(const Tensor& x, const Conv1dGeometry& g) {
  if (x.rank() != 3) throw ShapeError("unfold1d", "expects (N, C, L), got " + x.shape().str());
  check_window("unfold1d", g, x.shape()[2]);
  const Tensor xc = x.contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[1], l = x.shape()[2], lo = g.out_length(l);
  Tensor cols = Tensor::zeros({n, c * g.kernel, std::max<int64_t>(lo, 0)}, x.dtype());
  if (lo <= 0) return cols;
  dispatch_float(x.dtype(), "unfold1d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    T* pc = cols.data_ptr<T>();
    parallel_for(n, c * g.kernel * lo, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* xb = px + b * c * l;        // (C, L)
        T* cb = pc + b * c * g.kernel * lo;  // (C·K, L_out)
        for_each_window_element(c, l, lo, g, [&](int64_t r, int64_t t, int64_t ch, int64_t p) {
          cb[r * lo + t] = xb[ch * l + p];
        });
      }
    });
  });
  return cols;
}

Tensor fold1d(const Tensor& cols, int64_t length, const Conv1dGeometry& g) {
  check_window("fold1d", g, length);
  if (cols.rank() != 3 || cols.shape()[1] % g.kernel != 0) {
    throw ShapeError("fold1d",
                     "expects (N, C·" + std::to_string(g.kernel) + ", L_out), got " + cols.shape().str());
  }
  const Tensor cc = cols.contiguous();
  const int64_t n = cols.shape()[0], c = cols.shape()[1] / g.kernel, lo = cols.shape()[2];
  if (lo != std::max<int64_t>(g.out_length(length), 0)) {
    throw ShapeError("fold1d", "columns of shape " + cols.shape().str() +
                                   " do not fit a sequence of length " + std::to_string(length));
  }
  Tensor x = Tensor::zeros({n, c, length}, cols.dtype());
  dispatch_float(cols.dtype(), "fold1d", [&]<typename T>() {
    const T* pc = cc.data_ptr<const T>();
    T* px = x.data_ptr<T>();
    parallel_for(n, c * g.kernel * lo, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* cb = pc + b * c * g.kernel * lo;
        T* xb = px + b * c * length;
        for_each_window_element(c, length, lo, g, [&](int64_t r, int64_t t, int64_t ch, int64_t p) {
          xb[ch * length + p] += cb[r * lo + t];
        });
      }
    });
  });
  return x;
}

Tensor unfold2d(const Tensor& x, const Conv2dGeometry& g) {
  if (x.rank() != 4) throw ShapeError("unfold2d", "expects (N, C, H, W), got " + x.shape().str());
  check_window("unfold2d", g.height, x.shape()[2]);
  check_window("unfold2d", g.width, x.shape()[3]);
  const Tensor xc = x.contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = std::max<int64_t>(g.height.out_length(h), 0),
                wo = std::max<int64_t>(g.width.out_length(w), 0);
  const int64_t rows = c * g.height.kernel * g.width.kernel;
  Tensor cols = Tensor::empty({n, rows, ho * wo}, x.dtype());
  if (ho * wo == 0 || n * rows == 0) return cols;
  dispatch_float(x.dtype(), "unfold2d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    T* pc = cols.data_ptr<T>();
    parallel_for(rows * n, ho * wo, [&](int64_t begin, int64_t end) {
      WindowRow row = window_row(begin / n, h, w, g);
      for (int64_t item = begin; item < end; ++item) {  // item = r·N + b: row r of image b
        const int64_t r = item / n, b = item % n;
        if (b == 0) row = window_row(r, h, w, g);
        unfold_row(px + b * c * h * w, row, pc + (b * rows + r) * ho * wo);
      }
    });
  });
  return cols;
}

Tensor fold2d(const Tensor& cols, int64_t height, int64_t width, const Conv2dGeometry& g) {
  check_window("fold2d", g.height, height);
  check_window("fold2d", g.width, width);
  const int64_t window = g.height.kernel * g.width.kernel;
  const int64_t ho = std::max<int64_t>(g.height.out_length(height), 0),
                wo = std::max<int64_t>(g.width.out_length(width), 0);
  if (cols.rank() != 3 || cols.shape()[1] % window != 0 || cols.shape()[2] != ho * wo) {
    throw ShapeError("fold2d", "columns of shape " + cols.shape().str() + " do not fit (N, C·" +
                                   std::to_string(window) + ", " + std::to_string(ho * wo) +
                                   ") for an image of " + std::to_string(height) + "×" +
                                   std::to_string(width));
  }
  const Tensor cc = cols.contiguous();
  const int64_t n = cols.shape()[0], c = cols.shape()[1] / window, rows = cols.shape()[1];
  Tensor x = Tensor::zeros({n, c, height, width}, cols.dtype());
  dispatch_float(cols.dtype(), "fold2d", [&]<typename T>() {
    const T* pc = cc.data_ptr<const T>();
    T* px = x.data_ptr<T>();
    parallel_for(n, rows * ho * wo, [&](int64_t begin, int64_t end) {
      for (int64_t r = 0; r < rows; ++r) {
        const WindowRow row = window_row(r, height, width, g);
        for (int64_t b = begin; b < end; ++b) {
          fold_row(pc + (b * rows + r) * ho * wo, row, px + b * c * height * width);
        }
      }
    });
  });
  return x;
}

}  // namespace minigrad
