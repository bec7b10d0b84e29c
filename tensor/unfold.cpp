#include "minigrad/tensor/unfold.h"

#include <algorithm>
#include <string>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

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

namespace {

// Calls visit(column row r, output pixel index o, channel c, input pixel index i) for every window
// element that falls inside the image: row r = (c·KH + kh)·KW + kw, o = oh·W_out + ow, i = ih·W + iw.
template <typename Visit>
void for_each_window_pixel(int64_t channels, int64_t height, int64_t width, int64_t out_h, int64_t out_w,
                           const Conv2dGeometry& g, Visit visit) {
  const Conv1dGeometry &gh = g.height, &gw = g.width;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kh = 0; kh < gh.kernel; ++kh) {
      for (int64_t kw = 0; kw < gw.kernel; ++kw) {
        const int64_t r = (c * gh.kernel + kh) * gw.kernel + kw;
        const int64_t shift_h = kh * gh.dilation - gh.pad_left, shift_w = kw * gw.dilation - gw.pad_left;
        // The output columns whose input column iw = ow·stride + shift_w is inside [0, width): found once
        // per kernel column, so the innermost loop has no test and vectorizes.
        int64_t ow_begin = 0, ow_end = out_w;
        while (ow_begin < out_w && ow_begin * gw.stride + shift_w < 0) ++ow_begin;
        while (ow_end > ow_begin && (ow_end - 1) * gw.stride + shift_w >= width) --ow_end;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          const int64_t ih = oh * gh.stride + shift_h;
          if (ih < 0 || ih >= height) continue;
          for (int64_t ow = ow_begin; ow < ow_end; ++ow) {
            visit(r, oh * out_w + ow, c, ih * width + ow * gw.stride + shift_w);
          }
        }
      }
    }
  }
}

}  // namespace

Tensor unfold2d(const Tensor& x, const Conv2dGeometry& g) {
  if (x.rank() != 4) throw ShapeError("unfold2d", "expects (N, C, H, W), got " + x.shape().str());
  check_window("unfold2d", g.height, x.shape()[2]);
  check_window("unfold2d", g.width, x.shape()[3]);
  const Tensor xc = x.contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = std::max<int64_t>(g.height.out_length(h), 0),
                wo = std::max<int64_t>(g.width.out_length(w), 0);
  const int64_t rows = c * g.height.kernel * g.width.kernel;
  // Every entry is written once, the padding's zeros included: no zero-filling pass first.
  Tensor cols = Tensor::empty({n, rows, ho * wo}, x.dtype());
  if (ho * wo == 0 || n * rows == 0) return cols;
  const Conv1dGeometry &gh = g.height, &gw = g.width;
  dispatch_float(x.dtype(), "unfold2d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    T* pc = cols.data_ptr<T>();
    // One item per column row (b, r), r = (ch·KH + kh)·KW + kw: H_out runs of W_out entries.
    parallel_for(n * rows, ho * wo, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / rows, r = item % rows;
        const int64_t ch = r / (gh.kernel * gw.kernel), kh = r / gw.kernel % gh.kernel, kw = r % gw.kernel;
        const T* plane = px + (b * c + ch) * h * w;  // (H, W)
        T* out = pc + item * ho * wo;                // (H_out, W_out)
        const int64_t shift_h = kh * gh.dilation - gh.pad_left, shift_w = kw * gw.dilation - gw.pad_left;
        // The output columns whose input column ow·stride + shift_w is inside [0, width)
        int64_t ow_begin = 0, ow_end = wo;
        while (ow_begin < wo && ow_begin * gw.stride + shift_w < 0) ++ow_begin;
        while (ow_end > ow_begin && (ow_end - 1) * gw.stride + shift_w >= w) --ow_end;
        for (int64_t oh = 0; oh < ho; ++oh, out += wo) {
          const int64_t ih = oh * gh.stride + shift_h;
          if (ih < 0 || ih >= h) {
            std::fill(out, out + wo, T(0));
            continue;
          }
          const T* row = plane + ih * w;
          std::fill(out, out + ow_begin, T(0));
          for (int64_t ow = ow_begin; ow < ow_end; ++ow) out[ow] = row[ow * gw.stride + shift_w];
          std::fill(out + ow_end, out + wo, T(0));
        }
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
      for (int64_t b = begin; b < end; ++b) {
        const T* cb = pc + b * rows * ho * wo;
        T* xb = px + b * c * height * width;
        for_each_window_pixel(c, height, width, ho, wo, g, [&](int64_t r, int64_t o, int64_t ch, int64_t i) {
          xb[ch * height * width + i] += cb[r * ho * wo + o];
        });
      }
    });
  });
  return x;
}

}  // namespace minigrad
