// The rows of an image's columns (im2col), worked out once per row: what unfold2d and fold2d
// (tensor/unfold.cpp) and conv2d's kernels (tensor/conv2d.cpp) share. A private header: not installed.
#pragma once

#include <algorithm>
#include <cstdint>

#include "minigrad/tensor/unfold.h"

namespace minigrad::detail {

// Row r = (c·KH + kh)·KW + kw of an image's columns holds, for each output pixel (oh, ow), the input
// pixel that window offset (kh, kw) of channel c reads, (oh·stride_h + shift_h, ow·stride_w + shift_w)
// with shift = k·dilation - padding, and 0 where that falls on the padding. What a row needs, worked out
// once (the divisions and the bounds) for all the images that share it:
struct WindowRow {
  int64_t height, width, out_h, out_w, stride_h, stride_w;
  int64_t channel, shift_h, shift_w;
  int64_t oh_begin, oh_end, ow_begin, ow_end;  // the output rows and columns that read inside the image
};
inline WindowRow window_row(int64_t r, int64_t height, int64_t width, const Conv2dGeometry& g) {
  const Conv1dGeometry &gh = g.height, &gw = g.width;
  const int64_t kh = r / gw.kernel % gh.kernel, kw = r % gw.kernel;
  const int64_t out_h = std::max<int64_t>(gh.out_length(height), 0),
                out_w = std::max<int64_t>(gw.out_length(width), 0);
  WindowRow row{.height = height,
                .width = width,
                .out_h = out_h,
                .out_w = out_w,
                .stride_h = gh.stride,
                .stride_w = gw.stride,
                .channel = r / (gh.kernel * gw.kernel),
                .shift_h = kh * gh.dilation - gh.pad_left,
                .shift_w = kw * gw.dilation - gw.pad_left,
                .oh_begin = 0,
                .oh_end = out_h,
                .ow_begin = 0,
                .ow_end = out_w};
  while (row.oh_begin < row.out_h && row.oh_begin * gh.stride + row.shift_h < 0) ++row.oh_begin;
  while (row.oh_end > row.oh_begin && (row.oh_end - 1) * gh.stride + row.shift_h >= height) --row.oh_end;
  while (row.ow_begin < row.out_w && row.ow_begin * gw.stride + row.shift_w < 0) ++row.ow_begin;
  while (row.ow_end > row.ow_begin && (row.ow_end - 1) * gw.stride + row.shift_w >= width) --row.ow_end;
  return row;
}

// A run of n entries copied inline: the runs here are a few floats, too short for a call to memcpy to
// pay. (GCC turns a plain loop into that call; an omp simd loop it vectorizes.)
template <typename T>
void copy_run(const T* in, int64_t n, T* out) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}

// image (C, H, W) -> out (H_out·W_out): the row's entries. With `zeros_in_place`, the entries that fall
// on the padding are not written: out already holds zeros there (a buffer zeroed once and refilled with
// rows of the same geometry, as conv2d's kernels do).
template <typename T>
void unfold_row(const T* image, const WindowRow& row, T* out, bool zeros_in_place = false) {
  const int64_t w = row.width, wo = row.out_w, pixels = row.out_h * wo;
  const T* plane = image + row.channel * row.height * w;
  if (!zeros_in_place) {  // the rows above and below the image
    std::fill(out, out + row.oh_begin * wo, T(0));
    std::fill(out + row.oh_end * wo, out + pixels, T(0));
  }
  if (row.stride_h == 1 && row.stride_w == 1 && wo == w) {
    // A 'same' convolution's: output pixel o = oh·W + ow reads input pixel o + shift, so the rows inside
    // the image are one flat copy (long enough to vectorize, where an image row of 14 is not), which
    // reads a neighbouring row's pixel where a window falls on the left or right padding; those columns
    // are zeroed after. The copy is clipped to the plane at its two ends.
    const int64_t shift = row.shift_h * w + row.shift_w;
    const int64_t begin = std::max(row.oh_begin * w, -shift),
                  end = std::max(begin, std::min(row.oh_end * w, row.height * w - shift));
    if (!zeros_in_place) {
      std::fill(out + row.oh_begin * wo, out + begin, T(0));
      std::fill(out + end, out + row.oh_end * wo, T(0));
    }
    copy_run(plane + (shift + begin), end - begin, out + begin);
    for (int64_t ow = 0; ow < row.ow_begin; ++ow) {
      for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) out[oh * wo + ow] = T(0);
    }
    for (int64_t ow = row.ow_end; ow < wo; ++ow) {
      for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) out[oh * wo + ow] = T(0);
    }
    return;
  }
  for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) {
    T* out_row = out + oh * wo;
    const T* in = plane + (oh * row.stride_h + row.shift_h) * w + row.shift_w;
    if (!zeros_in_place) std::fill(out_row, out_row + row.ow_begin, T(0));
    if (row.stride_w == 1) {
      copy_run(in + row.ow_begin, row.ow_end - row.ow_begin, out_row + row.ow_begin);
    } else {
      for (int64_t ow = row.ow_begin; ow < row.ow_end; ++ow) out_row[ow] = in[ow * row.stride_w];
    }
    if (!zeros_in_place) std::fill(out_row + row.ow_end, out_row + wo, T(0));
  }
}

// Its adjoint: cols_row (H_out·W_out) added back onto the pixels of image (C, H, W) it was read from.
template <typename T>
void fold_row(const T* cols_row, const WindowRow& row, T* image) {
  const int64_t w = row.width, wo = row.out_w, stride_w = row.stride_w;
  T* plane = image + row.channel * row.height * w;
  for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) {
    const T* in = cols_row + oh * wo;
    T* out = plane + (oh * row.stride_h + row.shift_h) * w + row.shift_w;
    if (stride_w == 1) {  // the common case, contiguous: vectorized
      for (int64_t ow = row.ow_begin; ow < row.ow_end; ++ow) out[ow] += in[ow];
    } else {
      for (int64_t ow = row.ow_begin; ow < row.ow_end; ++ow) out[ow * stride_w] += in[ow];
    }
  }
}

// fold_row for a row the caller may overwrite (conv2d's scratch): in a 'same' convolution, its entries
// that fall on the left or right padding are zeroed, and then the rest is one flat add, as unfold_row's
// flat copy.
template <typename T>
void fold_scratch_row(T* cols_row, const WindowRow& row, T* image) {
  const int64_t w = row.width, wo = row.out_w;
  if (!(row.stride_h == 1 && row.stride_w == 1 && wo == w)) {
    fold_row(cols_row, row, image);
    return;
  }
  for (int64_t ow = 0; ow < row.ow_begin; ++ow) {
    for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) cols_row[oh * wo + ow] = T(0);
  }
  for (int64_t ow = row.ow_end; ow < wo; ++ow) {
    for (int64_t oh = row.oh_begin; oh < row.oh_end; ++oh) cols_row[oh * wo + ow] = T(0);
  }
  const int64_t shift = row.shift_h * w + row.shift_w;
  const int64_t begin = std::max(row.oh_begin * w, -shift),
                end = std::max(begin, std::min(row.oh_end * w, row.height * w - shift));
  T* plane = image + row.channel * row.height * w;
#pragma omp simd
  for (int64_t o = begin; o < end; ++o) plane[o + shift] += cols_row[o];
}

}  // namespace minigrad::detail
