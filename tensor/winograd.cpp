#include "minigrad/tensor/winograd.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "minigrad/tensor/matmul.h"

namespace minigrad::detail {

bool winograd_applies(const Conv2dGeometry& g, int64_t channels_per_group) {
  auto fits = [](const Conv1dGeometry& axis) {
    return axis.kernel == 3 && axis.stride == 1 && axis.dilation == 1;
  };
  return fits(g.height) && fits(g.width) && channels_per_group >= kWinogradMinChannels;
}

template <typename T>
WinogradForward<T>::WinogradForward(const T* weight, const WinogradSizes& sizes)
    : s_(sizes),
      tiles_h_((sizes.out_h + 1) / 2),
      tiles_w_((sizes.out_w + 1) / 2),
      padded_h_(2 * tiles_h_ + 2),  // every tile's 4 rows, the image at row pad_top, zeros around it
      padded_w_(2 * tiles_w_ + 2) {
  const int64_t c_in_g = s_.c_in / s_.groups;
  u_.resize(static_cast<size_t>(16 * s_.c_out * c_in_g));
  for (int64_t o = 0; o < s_.c_out; ++o) {
    for (int64_t c = 0; c < c_in_g; ++c) {
      const T* g = weight + (o * c_in_g + c) * 9;  // (3, 3)
      T gg[4][3];                                  // G g: (4, 3)
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
          u_[static_cast<size_t>(((i * 4 + j) * s_.c_out + o) * c_in_g + c)] = row[j];
          if (!std::isfinite(row[j])) usable_ = false;
        }
      }
    }
  }
}

template <typename T>
int64_t WinogradForward<T>::scratch_per_image() const {
  const int64_t tiles = tiles_h_ * tiles_w_;
  return 16 * (s_.c_in + s_.c_out) * tiles + s_.c_in * padded_h_ * padded_w_;
}

template <typename T>
bool WinogradForward<T>::run_chunk(const T* x, int64_t b, T* scratch, T* y) const {
  const int64_t c_in = s_.c_in, c_out = s_.c_out, h = s_.height, w = s_.width;
  const int64_t ph = padded_h_, pw = padded_w_, tiles = b * tiles_h_ * tiles_w_;
  T* v = scratch;                      // (16, C_in, tiles): Bᵀ d B of every tile, position ξ first
  T* m = v + 16 * c_in * tiles;        // (16, C_out, tiles): the products
  T* padded = m + 16 * c_out * tiles;  // (b, C_in, PH, PW): the images with their padding's zeros

  // The images, padded. x·0 is NaN for an inf or a NaN and 0 for any finite x; a pixel above a sixteenth
  // of T's largest value could make an infinite sum in the transform (of up to four pixels).
  std::fill_n(padded, b * c_in * ph * pw, T(0));
  T non_finite = 0, largest = 0;
  for (int64_t plane = 0; plane < b * c_in; ++plane) {
    for (int64_t r = 0; r < h; ++r) {
      const T* in = x + (plane * h + r) * w;
      T* out = padded + (plane * ph + r + s_.pad_top) * pw + s_.pad_left;
#pragma omp simd reduction(+ : non_finite) reduction(max : largest)
      for (int64_t col = 0; col < w; ++col) {
        out[col] = in[col];
        non_finite += in[col] * T(0);
        largest = std::max(largest, std::abs(in[col]));
      }
    }
  }
  if (std::isnan(non_finite) || largest > std::numeric_limits<T>::max() / 16) return false;

  // The input transform: tile (tr, tc) of image i, channel c, reads padded rows 2·tr..2·tr+3 and columns
  // 2·tc..2·tc+3.
  for (int64_t c = 0; c < c_in; ++c) {
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t tr = 0; tr < tiles_h_; ++tr) {
        const T* p = padded + ((i * c_in + c) * ph + 2 * tr) * pw;
        T* out = v + c * tiles + (i * tiles_h_ + tr) * tiles_w_;  // + ξ·C_in·tiles for position ξ
#pragma omp simd
        for (int64_t tc = 0; tc < tiles_w_; ++tc) {
          T d[4][4];
          for (int r = 0; r < 4; ++r) {
            for (int j = 0; j < 4; ++j) d[r][j] = p[r * pw + 2 * tc + j];
          }
          T e[4][4];  // Bᵀ d
          for (int j = 0; j < 4; ++j) {
            e[0][j] = d[0][j] - d[2][j];
            e[1][j] = d[1][j] + d[2][j];
            e[2][j] = d[2][j] - d[1][j];
            e[3][j] = d[1][j] - d[3][j];
          }
          for (int r = 0; r < 4; ++r) {  // (Bᵀ d) B
            out[((r * 4 + 0) * c_in) * tiles + tc] = e[r][0] - e[r][2];
            out[((r * 4 + 1) * c_in) * tiles + tc] = e[r][1] + e[r][2];
            out[((r * 4 + 2) * c_in) * tiles + tc] = e[r][2] - e[r][1];
            out[((r * 4 + 3) * c_in) * tiles + tc] = e[r][1] - e[r][3];
          }
        }
      }
    }
  }

  // The products: per position ξ and group, m_ξ (C_out/G, tiles) = u_ξ (C_out/G, C_in/G) · v_ξ (C_in/G,
  // tiles).
  const int64_t c_in_g = c_in / s_.groups, c_out_g = c_out / s_.groups;
  for (int64_t xi = 0; xi < 16; ++xi) {
    for (int64_t gr = 0; gr < s_.groups; ++gr) {
      gemm(false, false, c_out_g, tiles, c_in_g, T(1), u_.data() + (xi * c_out + gr * c_out_g) * c_in_g,
           c_in_g, v + (xi * c_in + gr * c_in_g) * tiles, tiles, T(0),
           m + (xi * c_out + gr * c_out_g) * tiles, tiles);
    }
  }

  // The output transform, Aᵀ m A, into y; a tile past an odd height or width writes what falls inside.
  const int64_t oh = s_.out_h, ow = s_.out_w;
  for (int64_t o = 0; o < c_out; ++o) {
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t tr = 0; tr < tiles_h_; ++tr) {
        const T* in = m + o * tiles + (i * tiles_h_ + tr) * tiles_w_;  // + ξ·C_out·tiles for position ξ
        T* top = y + ((i * c_out + o) * oh + 2 * tr) * ow;
        T* bottom = 2 * tr + 1 < oh ? top + ow : nullptr;
        for (int64_t tc = 0; tc < tiles_w_; ++tc) {
          T s0[4], s1[4];  // Aᵀ m: (2, 4)
          for (int j = 0; j < 4; ++j) {
            const T m0 = in[(j * c_out) * tiles + tc], m1 = in[((4 + j) * c_out) * tiles + tc],
                    m2 = in[((8 + j) * c_out) * tiles + tc], m3 = in[((12 + j) * c_out) * tiles + tc];
            s0[j] = m0 + m1 + m2;
            s1[j] = m1 - m2 - m3;
          }
          const int64_t col = 2 * tc;
          const bool right = col + 1 < ow;
          top[col] = s0[0] + s0[1] + s0[2];
          if (right) top[col + 1] = s0[1] - s0[2] - s0[3];
          if (bottom != nullptr) {
            bottom[col] = s1[0] + s1[1] + s1[2];
            if (right) bottom[col + 1] = s1[1] - s1[2] - s1[3];
          }
        }
      }
    }
  }
  return true;
}

template class WinogradForward<float>;
template class WinogradForward<double>;

}  // namespace minigrad::detail
