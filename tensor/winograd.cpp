#include "minigrad/tensor/winograd.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "minigrad/tensor/matmul.h"

namespace minigrad::detail {

namespace {

bool kernel_fits(const Conv1dGeometry& axis) {
  return axis.kernel == 3 && axis.stride == 1 && axis.dilation == 1;
}

}  // namespace

bool winograd_applies(const Conv2dGeometry& g, int64_t in_channels_per_group) {
  return kernel_fits(g.height) && kernel_fits(g.width) && in_channels_per_group >= kWinogradMinChannels;
}

bool winograd_applies_to_input_grad(const Conv2dGeometry& g, int64_t in_channels_per_group,
                                    int64_t out_channels_per_group) {
  auto padding_fits = [](const Conv1dGeometry& axis) { return axis.pad_left <= 2 && axis.pad_right <= 2; };
  return winograd_applies(g, out_channels_per_group) && in_channels_per_group >= kWinogradMinChannels &&
         padding_fits(g.height) && padding_fits(g.width);
}

template <typename T>
WinogradConv<T>::WinogradConv(const T* weight, const WinogradSizes& sizes, WinogradFilters filters)
    : s_(sizes),
      tiles_h_((sizes.out_h + 1) / 2),
      tiles_w_((sizes.out_w + 1) / 2),
      padded_h_(2 * tiles_h_ + 2),  // every tile's 4 rows, the image at row pad_top, zeros around it
      padded_w_(2 * tiles_w_ + 2) {
  const int64_t c_in_g = s_.c_in / s_.groups, c_out_g = s_.c_out / s_.groups;
  u_.resize(static_cast<size_t>(16 * s_.c_out * c_in_g));
  for (int64_t o = 0; o < s_.c_out; ++o) {
    for (int64_t c = 0; c < c_in_g; ++c) {
      T g[9];  // (3, 3): filter (o, c)
      if (filters == WinogradFilters::forward) {
        std::copy_n(weight + (o * c_in_g + c) * 9, 9, g);
      } else {  // the forward's weight (C_in, C_out/G, 3, 3): its filter (group·C_in/G + c, o % C_out/G)
        const T* rotated = weight + ((o / c_out_g * c_in_g + c) * c_out_g + o % c_out_g) * 9;
        for (int k = 0; k < 9; ++k) g[k] = rotated[8 - k];
      }
      T gg[4][3];  // G g: (4, 3)
      for (int j = 0; j < 3; ++j) {
        gg[0][j] = g[j];
        gg[1][j] = T(0.5) * (g[j] + g[3 + j] + g[6 + j]);
        gg[2][j] = T(0.5) * (g[j] - g[3 + j] + g[6 + j]);
        gg[3][j] = g[6 + j];
      }
      for (int i = 0; i < 4; ++i) {  // (G g) Gᵀ: (4, 4)
        const T row[4] = {gg[i][0], T(0.5) * (gg[i][0] + gg[i][1] + gg[i][2]),
                          T(0.5) * (gg[i][0] - gg[i][1] + gg[i][2]), gg[i][2]};
        for (int j = 0; j < 4; ++j) {
          u_[static_cast<size_t>((((i * 4 + j) * s_.groups + o / c_out_g) * c_in_g + c) * c_out_g +
                                 o % c_out_g)] = row[j];
          if (!std::isfinite(row[j])) usable_ = false;
        }
      }
    }
  }
}

template <typename T>
int64_t WinogradConv<T>::scratch_per_image() const {
  const int64_t tiles = tiles_h_ * tiles_w_;
  return 16 * (s_.c_in + s_.c_out) * tiles + s_.c_in * padded_h_ * padded_w_;
}

template <typename T>
bool WinogradConv<T>::run_chunk(const T* x, int64_t b, T* scratch, T* y) const {
  const int64_t tiles = b * tiles_h_ * tiles_w_;
  T* v = scratch;                         // (16, tiles, C_in): Bᵀ d B of every tile, position ξ first
  T* m = v + 16 * tiles * s_.c_in;        // (16, tiles, C_out): the products
  T* padded = m + 16 * s_.c_out * tiles;  // (b, PH, PW, C_in): the images with their padding's zeros
  if (!images_usable(x, b)) return false;
  pad_channels_last(x, b, padded);
  transform_input(padded, b, v);
  multiply(v, tiles, m);
  transform_output(m, b, y);
  return true;
}

template <typename T>
bool WinogradConv<T>::images_usable(const T* x, int64_t b) const {
  // The images' check, in one pass over them (a reduction per row would cost more than the row): x·0 is
  // NaN for an inf or a NaN and 0 for any finite x; a pixel above a sixteenth of T's largest value could
  // make an infinite sum in the transform (of up to four pixels).
  T non_finite = 0, largest = 0;
  const int64_t entries = b * s_.c_in * s_.height * s_.width;
#pragma omp simd reduction(+ : non_finite) reduction(max : largest)
  for (int64_t e = 0; e < entries; ++e) {
    non_finite += x[e] * T(0);
    largest = std::max(largest, std::abs(x[e]));
  }
  return !std::isnan(non_finite) && largest <= std::numeric_limits<T>::max() / 16;
}

template <typename T>
void WinogradConv<T>::pad_channels_last(const T* x, int64_t b, T* padded) const {
  const int64_t c_in = s_.c_in, h = s_.height, w = s_.width, ph = padded_h_, pw = padded_w_;
  // The images, padded, channels last: the transform below then runs along the channels, rows as long
  // as C_in (at least 32), where along a tile row it would run 7 tiles long in a 14×14 layer.
  std::fill_n(padded, b * ph * pw * c_in, T(0));
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t r = 0; r < h; ++r) {
      T* out = padded + ((i * ph + r + s_.pad_top) * pw + s_.pad_left) * c_in;
      for (int64_t c = 0; c < c_in; ++c) {
        const T* in = x + ((i * c_in + c) * h + r) * w;
        for (int64_t col = 0; col < w; ++col) out[col * c_in + c] = in[col];
      }
    }
  }
}

template <typename T>
void WinogradConv<T>::transform_input(const T* padded, int64_t b, T* v) const {
  const int64_t c_in = s_.c_in, ph = padded_h_, pw = padded_w_, tiles = b * tiles_h_ * tiles_w_;
  // The input transform: tile (tr, tc) of image i reads padded rows 2·tr..2·tr+3 and columns 2·tc..2·tc+3.
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t tr = 0; tr < tiles_h_; ++tr) {
      for (int64_t tc = 0; tc < tiles_w_; ++tc) {
        const T* p = padded + ((i * ph + 2 * tr) * pw + 2 * tc) * c_in;  // d[r][j] at p[(r·PW + j)·C_in]
        T* out = v + ((i * tiles_h_ + tr) * tiles_w_ + tc) * c_in;       // + ξ·tiles·C_in for position ξ
#pragma omp simd
        for (int64_t c = 0; c < c_in; ++c) {
          T d[4][4];
          for (int r = 0; r < 4; ++r) {
            for (int j = 0; j < 4; ++j) d[r][j] = p[(r * pw + j) * c_in + c];
          }
          T e[4][4];  // Bᵀ d
          for (int j = 0; j < 4; ++j) {
            e[0][j] = d[0][j] - d[2][j];
            e[1][j] = d[1][j] + d[2][j];
            e[2][j] = d[2][j] - d[1][j];
            e[3][j] = d[1][j] - d[3][j];
          }
          for (int r = 0; r < 4; ++r) {  // (Bᵀ d) B
            out[(r * 4 + 0) * tiles * c_in + c] = e[r][0] - e[r][2];
            out[(r * 4 + 1) * tiles * c_in + c] = e[r][1] + e[r][2];
            out[(r * 4 + 2) * tiles * c_in + c] = e[r][2] - e[r][1];
            out[(r * 4 + 3) * tiles * c_in + c] = e[r][1] - e[r][3];
          }
        }
      }
    }
  }
}

template <typename T>
void WinogradConv<T>::multiply(const T* v, int64_t tiles, T* m) const {
  const int64_t c_in = s_.c_in, c_out = s_.c_out;
  // The products: per position ξ and group, m_ξ (tiles, C_out/G) = v_ξ (tiles, C_in/G) · u_ξ (C_in/G,
  // C_out/G), the group's columns of v_ξ and m_ξ.
  const int64_t c_in_g = c_in / s_.groups, c_out_g = c_out / s_.groups;
  for (int64_t xi = 0; xi < 16; ++xi) {
    for (int64_t gr = 0; gr < s_.groups; ++gr) {
      gemm(false, false, tiles, c_out_g, c_in_g, T(1), v + xi * tiles * c_in + gr * c_in_g, c_in,
           u_.data() + (xi * s_.groups + gr) * c_in_g * c_out_g, c_out_g, T(0),
           m + xi * tiles * c_out + gr * c_out_g, c_out);
    }
  }
}

template <typename T>
void WinogradConv<T>::transform_output(const T* m, int64_t b, T* y) const {
  const int64_t c_out = s_.c_out, tiles = b * tiles_h_ * tiles_w_;
  // The output transform, Aᵀ m A, along the channels into y; a tile past an odd height or width writes
  // what falls inside.
  const int64_t oh = s_.out_h, ow = s_.out_w, plane = oh * ow;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t tr = 0; tr < tiles_h_; ++tr) {
      for (int64_t tc = 0; tc < tiles_w_; ++tc) {
        const T* in = m + ((i * tiles_h_ + tr) * tiles_w_ + tc) * c_out;  // + ξ·tiles·C_out for position ξ
        T* top = y + (i * c_out * oh + 2 * tr) * ow + 2 * tc;             // + o·H_out·W_out for channel o
        const bool right = 2 * tc + 1 < ow, bottom = 2 * tr + 1 < oh;
#pragma omp simd
        for (int64_t o = 0; o < c_out; ++o) {
          T s0[4], s1[4];  // Aᵀ m: (2, 4)
          for (int j = 0; j < 4; ++j) {
            const T m0 = in[j * tiles * c_out + o], m1 = in[(4 + j) * tiles * c_out + o],
                    m2 = in[(8 + j) * tiles * c_out + o], m3 = in[(12 + j) * tiles * c_out + o];
            s0[j] = m0 + m1 + m2;
            s1[j] = m1 - m2 - m3;
          }
          T* out = top + o * plane;
          out[0] = s0[0] + s0[1] + s0[2];
          if (right) out[1] = s0[1] - s0[2] - s0[3];
          if (bottom) {
            out[ow] = s1[0] + s1[1] + s1[2];
            if (right) out[ow + 1] = s1[1] - s1[2] - s1[3];
          }
        }
      }
    }
  }
}

template class WinogradConv<float>;
template class WinogradConv<double>;

}  // namespace minigrad::detail
