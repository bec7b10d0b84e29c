#include "minigrad/tensor/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// The flat index (ih·W + iw) of the first pixel that output (oh, ow)'s window covers.
int32_t first_covered(const Conv2dGeometry& g, int64_t oh, int64_t ow, const Shape& shape) {
  const int64_t h = shape[2], w = shape[3];
  for (int64_t kh = 0; kh < g.height.kernel; ++kh) {
    const int64_t ih = oh * g.height.stride + kh * g.height.dilation - g.height.pad_left;
    for (int64_t kw = 0; kw < g.width.kernel && ih >= 0 && ih < h; ++kw) {
      const int64_t iw = ow * g.width.stride + kw * g.width.dilation - g.width.pad_left;
      if (iw >= 0 && iw < w) return static_cast<int32_t>(ih * w + iw);
    }
  }
  const auto pair = [](int64_t a, int64_t b) { return std::to_string(a) + "×" + std::to_string(b); };
  throw ShapeError("max_pool2d", "the window of output (" + std::to_string(oh) + ", " + std::to_string(ow) +
                                     ") covers only padding in an input of shape " + shape.str() +
                                     " (kernel " + pair(g.height.kernel, g.width.kernel) + ", stride " +
                                     pair(g.height.stride, g.width.stride) + ", padding " +
                                     pair(g.height.pad_left, g.width.pad_left) + ", dilation " +
                                     pair(g.height.dilation, g.width.dilation) + ")");
}

// MaxPool2d(2), nearly every CNN's: each window of plane p is two pixels of two rows, all inside the
// image. A function of its own, on plain pointers and sizes, so that the loop over a row vectorizes.
template <typename T>
void argmax_2x2(const T* x, int64_t* out, int64_t p, int64_t h, int64_t w, int64_t ho, int64_t wo) {
  for (int64_t oh = 0; oh < ho; ++oh) {
    const T* top = x + p * h * w + 2 * oh * w;
    const T* bottom = top + w;
    int64_t* out_row = out + (p * ho + oh) * wo;
    const int64_t first = p * h * w + 2 * oh * w;  // flat index of the window row's first pixel
    for (int64_t ow = 0; ow < wo; ++ow) {
      // The four in reading order; a later one wins if greater or NaN, as in PyTorch's CPU kernel (of
      // equal values the first wins, of NaNs the last). Written as selects over a small array, which GCC
      // vectorizes (as ifs, it keeps the branches).
      T best = top[2 * ow];
      int64_t at = first + 2 * ow;
      const T others[3] = {top[2 * ow + 1], bottom[2 * ow], bottom[2 * ow + 1]};
      const int64_t offsets[3] = {1, w, w + 1};
      for (int k = 0; k < 3; ++k) {
        const T v = others[k];
        const bool take = v > best || v != v;
        best = take ? v : best;
        at = take ? first + 2 * ow + offsets[k] : at;
      }
      out_row[ow] = at;
    }
  }
}

}  // namespace

Tensor max_pool2d_argmax(const Tensor& x, const Conv2dGeometry& g) {
  if (x.rank() != 4) throw ShapeError("max_pool2d", "expects (N, C, H, W), got " + x.shape().str());
  check_window("max_pool2d", g.height, x.shape()[2]);
  check_window("max_pool2d", g.width, x.shape()[3]);
  const Tensor xc = x.contiguous();
  const int64_t planes = x.shape()[0] * x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = std::max<int64_t>(g.height.out_length(h), 0),
                wo = std::max<int64_t>(g.width.out_length(w), 0);
  if (h * w > std::numeric_limits<int32_t>::max()) {
    throw ShapeError("max_pool2d", "an image of more than 2^31 pixels: " + x.shape().str());
  }
  Tensor indices = Tensor::empty({x.shape()[0], x.shape()[1], ho, wo}, DType::Int64);
  const Conv1dGeometry &gh = g.height, &gw = g.width;
  dispatch_float(x.dtype(), "max_pool2d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    int64_t* out = indices.data_ptr<int64_t>();
    if (gh.kernel == 2 && gw.kernel == 2 && gh.stride == 2 && gw.stride == 2 && gh.dilation == 1 &&
        gw.dilation == 1 && gh.pad_left == 0 && gw.pad_left == 0) {
      parallel_for(planes, ho * wo * 4, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) argmax_2x2(px, out, p, h, w, ho, wo);
      });
      return;
    }
    parallel_for(planes, ho * wo * gh.kernel * gw.kernel, [=](int64_t begin, int64_t end) {
      // One output row at a time, window element by window element: the innermost loop runs along the
      // row without a branch (compare and select), so that comparisons of random data cost no
      // mispredictions. Indices within a plane fit in int32, the lanes of a float's width.
      std::vector<T> best(static_cast<size_t>(wo));
      std::vector<int32_t> where(static_cast<size_t>(wo));
      T* best_row = best.data();
      int32_t* where_row = where.data();
      for (int64_t p = begin; p < end; ++p) {
        const T* plane = px + p * h * w;
        for (int64_t oh = 0; oh < ho; ++oh) {
          std::fill(best.begin(), best.end(), -std::numeric_limits<T>::infinity());
          std::fill(where.begin(), where.end(), -1);  // nothing above -inf seen yet
          for (int64_t kh = 0; kh < gh.kernel; ++kh) {
            const int64_t ih = oh * gh.stride + kh * gh.dilation - gh.pad_left;
            if (ih < 0 || ih >= h) continue;
            const T* row = plane + ih * w;
            for (int64_t kw = 0; kw < gw.kernel; ++kw) {
              const int64_t shift = kw * gw.dilation - gw.pad_left, stride = gw.stride;
              // The output columns whose input column ow·stride + shift is inside the row
              int64_t ow_begin = 0, ow_end = wo;
              while (ow_begin < wo && ow_begin * stride + shift < 0) ++ow_begin;
              while (ow_end > ow_begin && (ow_end - 1) * stride + shift >= w) --ow_end;
              const int32_t base = static_cast<int32_t>(ih * w + shift);
#pragma omp simd
              for (int64_t ow = ow_begin; ow < ow_end; ++ow) {
                const T v = row[ow * stride + shift], b = best_row[ow];
                const bool take = (v > b) | (v != v);
                best_row[ow] = take ? v : b;
                where_row[ow] = take ? base + static_cast<int32_t>(ow * stride) : where_row[ow];
              }
            }
          }
          int64_t* out_row = out + (p * ho + oh) * wo;
          for (int64_t ow = 0; ow < wo; ++ow) {
            // Every element the window covers is -inf: the first of them, found again.
            if (where_row[ow] < 0) where_row[ow] = first_covered(g, oh, ow, x.shape());
            out_row[ow] = p * h * w + where_row[ow];
          }
        }
      }
    });
  });
  return indices;
}

}  // namespace minigrad
