// conv2d's forward and its input's gradient by Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015), for 3×3 kernels at stride 1: each 2×2 tile
// of outputs from the 4×4 tile of the input it reads, as 16 products per group of (tiles × C_in/G) by
// (C_in/G × C_out/G) where im2col makes one of (C_out/G × 9·C_in/G) by (9·C_in/G × pixels): 2.25 times
// fewer multiply-adds, each product through gemm() (matmul.h), and no columns 9 times the input's size to
// write and read back. The transforms run along the channels (the images are copied channels last): the
// input's along all C_in (at least 32), the output's along all C_out, where along a row of tiles they would
// run 7 long in a 14×14 layer. A private header of tensor/ (not installed): conv2d_forward and
// conv2d_input_grad (tensor/unfold.cpp) run it on each chunk of images they can.
//
// The input's gradient is itself such a convolution: of the output's gradient gy, padded by 2 - p where
// the forward pads by p, with the filters rotated by 180° and each group's two channel axes swapped:
//   gx[n, c, i, j] = Σ_o Σ_u Σ_v w[o, c, u, v] · gy[n, o, i + p - u, j + p - v]
//                  = Σ_o Σ_u Σ_v w[o, c, 2 - u, 2 - v] · gy[n, o, i - (2 - p) + u, j - (2 - p) + v].
//
// With d the 4×4 input tile, g a 3×3 filter and Y the 2×2 outputs: Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A, with
//        ⎡1  0  0⎤          ⎡1  0 -1  0⎤         ⎡1  1  1  0⎤
//    G = ⎢½  ½  ½⎥     Bᵀ = ⎢0  1  1  0⎥    Aᵀ = ⎣0  1 -1 -1⎦
//        ⎢½ -½  ½⎥          ⎢0 -1  1  0⎥
//        ⎣0  0  1⎦          ⎣0  1  0 -1⎦
// The sum of the ⊙ over input channels, for each of the 16 positions ξ of the 4×4 tile: those are the
// products. Each output's arithmetic reads only the pixels its own 3×3 window reads (Bᵀ's first three rows
// hold d0..d2 and Aᵀ's first row takes only those; the same for the second), so a large or non-finite
// pixel does not spill into outputs that do not read it. But an inf that an output does read can come out
// NaN, where the direct sum gives ±inf (rows 1 and 2 of Bᵀ d make both d1 + d2 and d2 - d1 infinite), and
// a finite pixel near the type's largest value can overflow there: a call whose images or weights hold
// such a value is left to im2col (tensor/unfold.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "minigrad/tensor/unfold.h"

namespace minigrad::detail {

// Input channels a group needs for Winograd's forward to beat im2col: with fewer, its 16 products are too
// shallow (one input channel: products 1 deep, against im2col's 9), and at 16 (the Fashion-MNIST example's
// second layer: 16 -> 64 channels, 14×14) one step of the example's CNN was no faster (measured:
// docs/history/performance.md, "conv2d with Winograd's forward alone"). The input's gradient needs as
// many on both sides (below).
inline constexpr int64_t kWinogradMinChannels = 32;

// True for the forwards it computes: a 3×3 kernel, stride 1, dilation 1, any padding, and at least
// kWinogradMinChannels input channels a group (the products' depth).
bool winograd_applies(const Conv2dGeometry& g, int64_t in_channels_per_group);
// True for the input gradients it computes: the same kernels with at least kWinogradMinChannels output
// channels a group (the depth of the gradient's products) and as many input channels (their width: with
// 16, in the Fashion-MNIST example's second layer, one step of its CNN gained nothing; docs/performance.md,
// "Image layers"), padded by at most 2 on every side (the gradient's convolution pads by 2 - p).
bool winograd_applies_to_input_grad(const Conv2dGeometry& g, int64_t in_channels_per_group,
                                    int64_t out_channels_per_group);

// The sizes of the convolution it computes, as conv2d_forward or conv2d_input_grad has checked them:
// x (N, C_in, H, W) with pad_top rows and pad_left columns of zeros before, y (N, C_out, H_out, W_out);
// for the input's gradient, x is gy and y the gradient.
struct WinogradSizes {
  int64_t c_in, height, width, c_out, groups, pad_top, pad_left, out_h, out_w;
};

// Whose filters a WinogradConv applies: the forward's weight (C_out, C_in/G, 3, 3) as it is, or, for the
// input's gradient, a forward's weight (C_in, C_out/G, 3, 3) in the sizes' terms (C_in being the
// forward's output channels), rotated and transposed as above.
enum class WinogradFilters { forward, input_grad };

template <typename T>
class WinogradConv {
 public:
  // Transforms the filters once for all the chunks.
  WinogradConv(const T* weight, const WinogradSizes& sizes, WinogradFilters filters);

  // False if the weight holds a non-finite value, or one that G g Gᵀ takes past the type's range: then
  // no chunk runs here.
  bool usable() const { return usable_; }
  // The scratch one image of a chunk takes, in entries of T.
  int64_t scratch_per_image() const;
  // y (b, C_out, H_out, W_out) for the b images at x (b, C_in, H, W), with `scratch` of b·scratch_per_image()
  // entries; called from a task of a parallel region, its products run on that thread (tensor/matmul.h).
  // Returns false, y untouched, if the images hold a non-finite value or one above a sixteenth of the
  // type's largest.
  bool run_chunk(const T* x, int64_t b, T* scratch, T* y) const;

 private:
  // run_chunk's phases, in order. `tiles` is b·tiles_h_·tiles_w_.
  // False if the images x (b, C_in, H, W) hold a value run_chunk refuses.
  bool images_usable(const T* x, int64_t b) const;
  // x -> padded (b, PH, PW, C_in): the images with their padding's zeros, channels last.
  void pad_channels_last(const T* x, int64_t b, T* padded) const;
  // padded -> v (16, tiles, C_in): Bᵀ d B of every 4×4 tile d, position ξ first.
  void transform_input(const T* padded, int64_t b, T* v) const;
  // v -> m (16, tiles, C_out): per position ξ and group, v_ξ · u_ξ.
  void multiply(const T* v, int64_t tiles, T* m) const;
  // m -> y (b, C_out, H_out, W_out): Aᵀ m A of every tile.
  void transform_output(const T* m, int64_t b, T* y) const;

  WinogradSizes s_;
  int64_t tiles_h_, tiles_w_, padded_h_, padded_w_;
  std::vector<T> u_;  // (16, G, C_in/G, C_out/G): G g Gᵀ of every filter, position ξ = 4·row + column
  bool usable_ = true;
};

extern template class WinogradConv<float>;
extern template class WinogradConv<double>;

}  // namespace minigrad::detail
